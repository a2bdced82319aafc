//! Benchmark (not a test): one user floods the API while another makes its usual calls.
//!
//!   cargo run -p phantom-e2e --example flood -- [SECS]
//!
//! On the local stack (this machine, DynamoDB Local, moto): user `calm` calls
//! DescribeAutoScalingGroups 5 times a second for SECS seconds (default 20) alone, then again
//! while user `flood` calls it from 20 clients at once with retries off. Prints calm's latency
//! (p50, p99, max) both times, and what the flooder was answered.

use phantom_e2e::stack;
use std::time::{Duration, Instant};

async fn calm_calls(c: &aws_sdk_autoscaling::Client, secs: u64) -> (Vec<f64>, usize) {
    let mut ms = Vec::new();
    let mut errors = 0;
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        let t = Instant::now();
        if c.describe_auto_scaling_groups().send().await.is_err() {
            errors += 1;
        }
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    (ms, errors)
}

fn summary(ms: &[f64]) -> String {
    let at = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    format!(
        "{} calls: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        ms.len(),
        at(0.5),
        at(0.99),
        ms[ms.len() - 1]
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() {
    let secs: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("a number of seconds"))
        .unwrap_or(20);
    let s = stack();
    let (flood, calm) = (s.new_user("flood"), s.new_user("calm"));
    let c = s.sdk(&calm);
    println!("command: cargo run -p phantom-e2e --example flood -- {secs}");
    let (alone, alone_errors) = calm_calls(&c, secs).await;
    println!("calm alone: {} ({alone_errors} errors)", summary(&alone));

    let flooder = phantom_e2e::stack::Flood::start(s, &flood, 20);
    let (during, during_errors) = calm_calls(&c, secs).await;
    let answers = flooder.stop().await;
    println!(
        "calm during the flood: {} ({during_errors} errors)",
        summary(&during)
    );
    let total: usize = answers.values().sum();
    println!(
        "the flooder: {total} calls in {secs} s ({:.0} a second): {answers:?}",
        total as f64 / secs as f64
    );
}
