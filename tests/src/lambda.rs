//! A function's bootstrap as Lambda starts it, against a Runtime API of this harness's own: the
//! environment template.yaml gives it (`bootstrap.py --functions` on a moto server), Lambda's
//! variables, and at most one event. What `tests/tests/template.rs` checks and
//! `examples/lambda_init.rs` measures: how long its init takes (start to its first ask for an
//! event), how long its first event, and its memory's high-water mark.

use crate::moto::Moto;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A function of template.yaml: its binary and the environment the template gives it.
pub struct Function {
    pub name: String,
    pub env: Vec<(String, String)>,
}

/// The functions as `bootstrap.py --functions` resolves template.yaml's on `moto`.
pub fn functions_on(moto: &Moto) -> Vec<Function> {
    let file = std::env::temp_dir().join(format!("phantom-functions-{}.json", std::process::id()));
    let file_arg = file.to_string_lossy();
    moto.bootstrap(&["--stack", "phantom", "--functions", &file_arg], &moto.url);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("the functions' file"))
            .expect("JSON");
    doc["functions"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|f| Function {
            name: f["name"].as_str().expect("a name").to_string(),
            env: f["env"]
                .as_object()
                .expect("an environment")
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().expect("a value").to_string()))
                .collect(),
        })
        .collect()
}

/// One start of a bootstrap.
#[derive(Debug)]
pub struct Run {
    /// From the process's start to its first ask for an event.
    pub init: Duration,
    /// From handing it the event to its answer, if it was given one.
    pub first: Option<Duration>,
    /// Its answer to the event.
    pub answer: Option<String>,
    /// The resident memory's high-water mark (VmHWM) when it was stopped, in KB, if /proc said.
    pub peak_kb: Option<u64>,
}

/// Starts `f`'s bootstrap with `env` and Lambda's variables (its role's credentials and region:
/// moto's), hands it `event` if given, and stops it: how it went, or what it said as it stopped
/// on its own.
pub fn run(
    f: &Function,
    env: &[(String, String)],
    moto: &Moto,
    event: Option<&serde_json::Value>,
) -> Result<Run, String> {
    let bin = crate::bin_dir().join(&f.name);
    assert!(
        bin.exists(),
        "{} is not built (cargo build -p {})",
        bin.display(),
        f.name
    );
    let runtime = TcpListener::bind("127.0.0.1:0").expect("a port");
    runtime.set_nonblocking(true).expect("non-blocking");
    let started = Instant::now();
    let mut child = Command::new(bin)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .envs(moto.aws_env())
        .env("AWS_LAMBDA_FUNCTION_NAME", &f.name)
        .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256")
        .env(
            "AWS_LAMBDA_RUNTIME_API",
            format!("http://{}", runtime.local_addr().expect("an address")),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the bootstrap runs");
    let deadline = started + Duration::from_secs(30);
    let (mut init, mut given, mut out) = (None, None, None);
    let outcome = loop {
        if let Ok((conn, _)) = runtime.accept() {
            let (line, body) = request(conn.try_clone().expect("a connection"));
            if line.contains("/runtime/invocation/next") {
                init.get_or_insert(started.elapsed());
                match (event, given) {
                    (Some(e), None) => {
                        given = Some(Instant::now());
                        reply(conn, 200, &e.to_string());
                        continue;
                    }
                    // Asked again once it has answered: done.
                    _ => break Ok(()),
                }
            }
            if line.contains("/response") || line.contains("/error") {
                let took = given.map(|g| g.elapsed());
                out = Some((
                    took,
                    format!(
                        "{}{body}",
                        if line.contains("/error") {
                            "error: "
                        } else {
                            ""
                        }
                    ),
                ));
                reply(conn, 202, "{}");
                if !line.contains("/response") {
                    break Ok(());
                }
            }
        }
        if let Some(status) = child.try_wait().expect("waitable") {
            let mut said = String::new();
            let _ = child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut said);
            break Err(format!("{} stopped ({status}): {said}", f.name));
        }
        if Instant::now() > deadline {
            break Err(format!(
                "{} neither asked for an event nor stopped in 30 s",
                f.name
            ));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let peak_kb = peak_kb(child.id());
    let _ = child.kill();
    let _ = child.wait();
    outcome?;
    let (first, answer) = match out {
        Some((took, text)) => (took, Some(text)),
        None => (None, None),
    };
    Ok(Run {
        init: init.expect("asked for an event"),
        first,
        answer,
        peak_kb,
    })
}

/// A request's first line and body (the runtime client sends a Content-Length).
fn request(mut conn: TcpStream) -> (String, String) {
    conn.set_nonblocking(false).expect("blocking");
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = conn.read(&mut buf).unwrap_or(0);
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().to_string())
                })
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            if data.len() >= end + 4 + length || n == 0 {
                let line = text.lines().next().unwrap_or_default().to_string();
                return (line, text[end + 4..].to_string());
            }
        }
        if n == 0 {
            return (
                text.lines().next().unwrap_or_default().to_string(),
                String::new(),
            );
        }
    }
}

/// An answer as Lambda's Runtime API gives it (one request a connection).
fn reply(mut conn: TcpStream, status: u16, body: &str) {
    let head = format!(
        "HTTP/1.1 {status} OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         lambda-runtime-aws-request-id: 8476a536-e9f4-11e8-9739-2dfe598c3fcd\r\n\
         lambda-runtime-deadline-ms: {}\r\n\
         lambda-runtime-invoked-function-arn: arn:aws:lambda:us-east-1:123456789012:function:f\r\n\
         connection: close\r\n\r\n",
        body.len(),
        phantom_model::time::now_ms() + 60_000,
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body.as_bytes());
}

/// The process's resident memory's high-water mark (VmHWM), in KB.
fn peak_kb(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}
