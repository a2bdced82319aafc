//! A metrics exporter the test controls: one gauge per VM (`app_load{instance_id="i-…"}`), and
//! node_exporter's idle CPU counter per VM (`node_cpu_seconds_total{mode="idle",...}`, growing as
//! a CPU as busy as told), served in Prometheus's text format on a loopback port for a real
//! Prometheus to scrape, listed in the local stack's file_sd folder
//! (`PHANTOM_PROMETHEUS_TARGETS`). Stops serving when dropped.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A VM's idle CPU counter: its value when last changed, since when, and how busy the CPU is.
#[derive(Clone, Copy)]
struct Idle {
    seconds: f64,
    since: Instant,
    busy_percent: f64,
}

impl Idle {
    fn now(&self) -> f64 {
        self.seconds + self.since.elapsed().as_secs_f64() * (1.0 - self.busy_percent / 100.0)
    }
}

pub struct Exporter {
    pub port: u16,
    values: Arc<Mutex<BTreeMap<String, f64>>>,
    idle: Arc<Mutex<BTreeMap<String, Idle>>>,
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
        let idle: Arc<Mutex<BTreeMap<String, Idle>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (v, s, cpu) = (values.clone(), stop.clone(), idle.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(mut conn) = conn else { continue };
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf);
                let mut body: String = v
                    .lock()
                    .expect("never poisoned")
                    .iter()
                    .map(|(id, x)| format!("{METRIC}{{instance_id=\"{id}\"}} {x}\n"))
                    .collect();
                for (id, c) in cpu.lock().expect("never poisoned").iter() {
                    body.push_str(&format!(
                        "node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\",instance_id=\"{id}\"}} {}\n",
                        c.now()
                    ));
                }
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
            idle,
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

impl Exporter {
    /// From now on the CPU of each of `instances` is `busy_percent` busy (node_exporter's idle
    /// counter grows by the rest of each second).
    pub fn set_cpu_busy(&self, instances: &[String], busy_percent: f64) {
        let mut idle = self.idle.lock().expect("never poisoned");
        for i in instances {
            let seconds = idle.get(i).map_or(1_000.0, Idle::now);
            idle.insert(
                i.clone(),
                Idle {
                    seconds,
                    since: Instant::now(),
                    busy_percent,
                },
            );
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
