//! A Prometheus server of a test's own (Debian's package, unpacked by localstack/install.sh),
//! loopback only, scraping itself every second, with its data in a directory of its own; stopped
//! when dropped.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

pub struct PrometheusServer {
    child: Child,
    dir: PathBuf,
    pub url: String,
}

/// Where localstack/prometheus/home.sh says the binary is.
pub fn binary() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache")
        });
    cache.join("phantom/prometheus/usr/bin/prometheus")
}

impl PrometheusServer {
    pub fn start() -> Self {
        if !binary().exists() {
            let ok = Command::new(crate::root().join("localstack/install.sh"))
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "localstack/install.sh could not install prometheus");
        }
        let port = crate::free_port();
        let dir = std::env::temp_dir().join(format!("phantom-prometheus-{port}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a directory for Prometheus");
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: self\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
            ),
        )
        .expect("Prometheus's configuration");
        let child = Command::new(binary())
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus runs (localstack/install.sh installs it)");
        crate::moto::wait_for(port, "prometheus (localstack/install.sh installs it)");
        // It answers 503 to queries until its storage is open: wait for /-/ready.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !ready(port) {
            assert!(
                std::time::Instant::now() < deadline,
                "prometheus on port {port} not ready within 60 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Self {
            child,
            dir,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

/// Whether Prometheus on `port` answers 200 to `GET /-/ready`.
fn ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    if stream
        .write_all(b"GET /-/ready HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200")
}

impl Drop for PrometheusServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
