//! A metrics exporter the test controls: one gauge per VM (`app_load{instance_id="i-…"}`), served
//! in Prometheus's text format on a loopback port for a real Prometheus to scrape, listed in the
//! local stack's file_sd folder (`PHANTOM_PROMETHEUS_TARGETS`). Stops serving when dropped.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub struct Exporter {
    pub port: u16,
    values: Arc<Mutex<BTreeMap<String, f64>>>,
    stop: Arc<AtomicBool>,
    target: PathBuf,
}

/// The gauge every VM reports.
pub const METRIC: &str = "app_load";

impl Exporter {
    /// Serves on a free port and lists itself in `targets` (a file_sd folder) as job `app`.
    pub fn start(targets: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port for the exporter");
        let port = listener.local_addr().expect("its address").port();
        let values: Arc<Mutex<BTreeMap<String, f64>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (v, s) = (values.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(mut conn) = conn else { continue };
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf);
                let body: String = v
                    .lock()
                    .expect("never poisoned")
                    .iter()
                    .map(|(id, x)| format!("{METRIC}{{instance_id=\"{id}\"}} {x}\n"))
                    .collect();
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        let target = PathBuf::from(targets).join(format!("exporter-{port}.json"));
        std::fs::write(
            &target,
            format!(r#"[{{"targets": ["127.0.0.1:{port}"], "labels": {{"job": "app"}}}}]"#),
        )
        .expect("the exporter listed for Prometheus");
        Self {
            port,
            values,
            stop,
            target,
        }
    }

    /// From now on each of `instances` reports `value`, and no other VM reports anything.
    pub fn set(&self, instances: &[String], value: f64) {
        let mut v = self.values.lock().expect("never poisoned");
        v.clear();
        for i in instances {
            v.insert(i.clone(), value);
        }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = std::fs::remove_file(&self.target);
        // Wakes the accept loop so it sees the stop.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}
