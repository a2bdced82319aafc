//! Real clients the tests drive beyond the AWS CLI: boto3's CloudWatch client in each of the
//! protocols CloudWatch's clients speak (clients/cloudwatch.py).

use crate::{User, REGION};
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

/// A protocol as botocore names it.
pub const JSON: &str = "json";
pub const CBOR: &str = "smithy-rpc-v2-cbor";
pub const QUERY: &str = "query";

/// Runs `calls` (`[{"op": "put_metric_data", "params": {...}}]`, boto3's names) against
/// `endpoint` as `user`, in `protocol`; each answer is `{"ok": ...}` or `{"error": {code,
/// message, status}}`.
pub fn cloudwatch(endpoint: &str, user: &User, protocol: &str, calls: Value) -> Vec<Value> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let mut child = Command::new(&python)
        .args(["-c", include_str!("clients/cloudwatch.py")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{python} runs boto3: {e}"));
    let request = json!({
        "endpoint": endpoint, "region": REGION, "key": user.access_key_id,
        "secret": user.secret, "protocol": protocol, "calls": calls,
    });
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(request.to_string().as_bytes())
        .expect("boto3 reads its calls");
    let out = child.wait_with_output().expect("boto3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "boto3 ({protocol}) failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}
