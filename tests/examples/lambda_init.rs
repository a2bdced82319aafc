//! Each function as a Lambda process (x86_64, this machine): its init (start to its first ask for
//! an event), its first event, and its memory's high-water mark after it, over RUNS starts
//! (default 10). The bootstraps are the workspace's builds (PHANTOM_PROFILE=release for the release
//! ones: `cargo build --release -p api -p provisioner -p health-check` first), each with the
//! environment template.yaml gives it on a moto server (`phantom_e2e::lambda`).
//!
//! The events: the api, API Gateway's proxy event of an unsigned DescribeAutoScalingGroups (refused
//! 403 before any read: the request path without DynamoDB); the provisioner, a batch of one sweep
//! of a user with no groups (reads the table); the health check, the schedule's event (fires the
//! due scheduled actions, evaluates target tracking, publishes group metrics and starts the pulse).
//!
//! cargo run -p phantom-e2e --example lambda_init [RUNS]

use phantom_e2e::lambda::{functions_on, run};
use serde_json::json;

fn main() {
    let runs = phantom_e2e::sizes_from_args("RUNS", &[10])[0];
    let moto = phantom_e2e::moto::Moto::start();
    let functions = functions_on(&moto);
    let uri: http::Uri = "http://127.0.0.1:4580/".parse().expect("a URI");
    let body = b"Action=DescribeAutoScalingGroups&Version=2011-01-01";
    let headers = [(
        "content-type".to_string(),
        "application/x-www-form-urlencoded".to_string(),
    )];
    let sweep = json!({"Sweep": {"owner": "nobody", "cloud": "hotel"}}).to_string();
    let events = [
        (
            "api",
            phantom_wire::gateway::rest_event("Prod", "POST", &uri, &headers, body),
        ),
        (
            "provisioner",
            json!({"Records": [{"messageId": "m-1", "receiptHandle": "r-1", "body": sweep,
                "attributes": {"SentTimestamp": phantom_model::time::now_ms().to_string()},
                "messageAttributes": {}, "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:phantom-work",
                "awsRegion": "us-east-1"}]}),
        ),
        (
            "health-check",
            json!({"version": "0", "id": "e-1", "detail-type": "Scheduled Event",
                "source": "aws.events", "account": "123456789012",
                "time": "2026-11-27T00:00:00Z", "region": "us-east-1",
                "resources": ["arn:aws:events:us-east-1:123456789012:rule/phantom-schedule"],
                "detail": {}}),
        ),
    ];
    println!("| function | init p50 | init max | first event p50 | first event max | peak memory (VmHWM) p50 | max |");
    println!("|---|---|---|---|---|---|---|");
    for f in &functions {
        let (_, event) = events
            .iter()
            .find(|(name, _)| *name == f.name)
            .expect("an event for each function");
        let mut init = Vec::new();
        let mut first = Vec::new();
        let mut peak = Vec::new();
        for _ in 0..runs {
            let r = run(f, &f.env, &moto, Some(event)).unwrap_or_else(|e| panic!("{e}"));
            let answer = r.answer.unwrap_or_default();
            assert!(!answer.starts_with("error"), "{}: {answer}", f.name);
            init.push(r.init.as_secs_f64() * 1000.0);
            first.push(r.first.expect("it answered").as_secs_f64() * 1000.0);
            peak.push(r.peak_kb.expect("/proc says") as f64 / 1024.0);
        }
        let (i50, imax) = spread(&mut init);
        let (f50, fmax) = spread(&mut first);
        let (p50, pmax) = spread(&mut peak);
        println!(
            "| {} | {i50:.0} ms | {imax:.0} ms | {f50:.0} ms | {fmax:.0} ms | {p50:.1} MB | {pmax:.1} MB |",
            f.name
        );
    }
}

/// The median and the largest.
fn spread(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[v.len() / 2], v[v.len() - 1])
}
