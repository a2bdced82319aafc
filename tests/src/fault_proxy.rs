//! The fault-injecting proxy (tests/faultproxy.py) in front of a cloud's EC2 endpoint, stopped
//! when dropped: a cloud that fails, throttles, drops or is slow on request.

use serde_json::Value;
use std::io::{Read, Write};
use std::process::{Child, Command};
use std::time::Duration;

pub struct FaultProxy {
    child: Child,
    port: u16,
    /// The endpoint to register as the cloud's.
    pub url: String,
}

impl FaultProxy {
    /// Starts the proxy in front of `target` (a cloud's URL), passing everything through, and
    /// waits until it listens.
    pub fn before(target: &str) -> Self {
        let port = crate::free_port();
        let child = Command::new("python3")
            .arg(crate::root().join("tests/faultproxy.py"))
            .arg(port.to_string())
            .arg(target)
            .spawn()
            .expect("the fault proxy starts");
        crate::moto::wait_for(port, "the fault proxy");
        Self {
            child,
            port,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    /// Sets the fault mode: `{"mode": M, "rate": 0.0-1.0}`, and `"delay"` (seconds) for `slow`.
    pub fn set(&self, fault: Value) {
        self.control(Some(&fault.to_string()));
    }

    /// The proxy's mode and its counts (`forwarded`, `injected`).
    pub fn counts(&self) -> Value {
        self.control(None)
    }

    /// One call to the control endpoint; one that fails must not pass for one that worked (a
    /// mode never set injects nothing): retried, then a failure.
    fn control(&self, body: Option<&str>) -> Value {
        let request = match body {
            Some(b) => format!(
                "POST /__fault HTTP/1.1\r\nHost: proxy\r\nConnection: close\r\n\
                 Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
                b.len()
            ),
            None => "GET /__fault HTTP/1.1\r\nHost: proxy\r\nConnection: close\r\n\r\n".into(),
        };
        let mut last = String::new();
        for _ in 0..3 {
            match self.exchange(&request) {
                Ok(v) => return v,
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("the fault proxy's control call failed: {last}");
    }

    fn exchange(&self, request: &str) -> Result<Value, String> {
        let mut conn =
            std::net::TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        conn.write_all(request.as_bytes())
            .map_err(|e| e.to_string())?;
        let mut answer = String::new();
        conn.read_to_string(&mut answer)
            .map_err(|e| e.to_string())?;
        let (head, body) = answer
            .split_once("\r\n\r\n")
            .ok_or_else(|| format!("no answer: {answer:?}"))?;
        if !head.starts_with("HTTP/1.1 200") {
            return Err(head.to_string());
        }
        serde_json::from_str(body).map_err(|e| format!("{e}: {body:?}"))
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
