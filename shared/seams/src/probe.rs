//! The probe seam: calling a VM's application as a group's probe says (`phantom_rules::probe`):
//! HTTP or HTTPS GET of its path, whose status must be within the probe's range, or a TCP
//! connection; each within the probe's timeout. `NetProber` makes the calls over the network; the
//! tests point it at real servers of their own (a memory cloud's VMs have loopback addresses).

use async_trait::async_trait;
use phantom_rules::probe::{Call, Outcome, Probe};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[async_trait]
pub trait Prober: Send + Sync {
    /// One probe of the VM at `host`: passed, or what it got instead.
    async fn probe(&self, probe: &Probe, host: &str) -> Outcome;
}

/// Probes over the network.
pub struct NetProber {
    tls: tokio_rustls::TlsConnector,
}

impl Default for NetProber {
    fn default() -> Self {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth();
        Self {
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
        }
    }
}

#[async_trait]
impl Prober for NetProber {
    async fn probe(&self, probe: &Probe, host: &str) -> Outcome {
        let timeout = Duration::from_millis(probe.timeout_ms as u64);
        match tokio::time::timeout(timeout, self.call(probe, host)).await {
            Ok(Ok(())) => Outcome::Pass,
            Ok(Err(why)) => Outcome::Fail(why),
            Err(_) => Outcome::Fail(format!("no answer within {} s", probe.timeout_ms / 1000)),
        }
    }
}

impl NetProber {
    async fn call(&self, probe: &Probe, host: &str) -> Result<(), String> {
        let tcp = TcpStream::connect((host, probe.port))
            .await
            .map_err(|e| format!("connection failed: {e}"))?;
        let Call::Http { tls, path, status } = &probe.call else {
            return Ok(());
        };
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {host}:{}\r\nUser-Agent: phantom-health-probe\r\nConnection: close\r\n\r\n",
            probe.port
        );
        let head = if *tls {
            let name = rustls::pki_types::ServerName::try_from(host.to_string())
                .map_err(|e| format!("not an address TLS can name: {e}"))?;
            let mut stream = self
                .tls
                .connect(name, tcp)
                .await
                .map_err(|e| format!("TLS handshake failed: {e}"))?;
            exchange(&mut stream, &request).await?
        } else {
            let mut tcp = tcp;
            exchange(&mut tcp, &request).await?
        };
        let code = status_of(&head)?;
        if (status.0..=status.1).contains(&code) {
            Ok(())
        } else {
            Err(format!("HTTP {code}"))
        }
    }
}

/// Sends the request and reads the answer's first line.
async fn exchange<S: AsyncReadExt + AsyncWriteExt + Unpin>(
    stream: &mut S,
    request: &str,
) -> Result<String, String> {
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("sending failed: {e}"))?;
    let mut head = Vec::with_capacity(64);
    let mut buf = [0u8; 256];
    while !head.contains(&b'\n') && head.len() < 1024 {
        let n = stream
            .read(&mut buf)
            .await
            .map_err(|e| format!("reading failed: {e}"))?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// The status code of an HTTP answer's first line (`HTTP/1.1 200 OK`).
fn status_of(head: &str) -> Result<u16, String> {
    let line = head.lines().next().unwrap_or_default();
    line.strip_prefix("HTTP/")
        .and_then(|rest| rest.split_whitespace().nth(1))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| {
            if line.is_empty() {
                "the connection closed with no answer".to_string()
            } else {
                format!("not an HTTP answer: {line:.60}")
            }
        })
}

/// A VM's certificate is taken as it is: a probe asks whether its application answers, not who it
/// is (load balancers' HTTPS health checks do the same). The handshake's signatures are still
/// checked.
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_is_read_from_the_first_line() {
        assert_eq!(status_of("HTTP/1.1 503 Service Unavailable\r\n"), Ok(503));
        assert_eq!(status_of("HTTP/1.0 200\r\n"), Ok(200));
        assert!(status_of("").unwrap_err().contains("no answer"));
        assert!(status_of("SSH-2.0-OpenSSH\r\n")
            .unwrap_err()
            .contains("not an HTTP answer"));
    }
}
