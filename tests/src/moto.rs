//! A moto server of a test's own, for the contract suites (stopped when dropped).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Moto {
    child: Child,
    pub url: String,
}

impl Moto {
    /// Starts `moto_server` on a free port and waits until it listens.
    pub fn start() -> Self {
        Self::on(crate::free_port())
    }

    /// Starts `moto_server` on `port` (again, after a stop: an empty cloud) and waits until it
    /// listens.
    pub fn on(port: u16) -> Self {
        let child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server runs (localstack/install.sh installs it)");
        let moto = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto_server did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        moto
    }

    /// SDK configuration for this server (any credentials do).
    pub async fn sdk(&self) -> aws_config::SdkConfig {
        aws_config::defaults(aws_config::BehaviorVersion::latest())
            .endpoint_url(&self.url)
            .region(aws_config::Region::new(crate::REGION))
            .credentials_provider(aws_credential_types::Credentials::new(
                "contract", "contract", None, None, "test",
            ))
            .load()
            .await
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
