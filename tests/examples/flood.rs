//! Benchmark (not a test): one user floods the API while another makes its usual calls.
//!
//!   cargo run -p phantom-e2e --example flood -- [SECS]
//!
//! On the local stack (this machine, DynamoDB Local, moto): user `calm` calls
//! DescribeAutoScalingGroups 5 times a second for SECS seconds (default 20) alone, then again
//! while user `flood` calls it from 20 clients at once with retries off. Prints calm's latency
//! (p50, p99, max) both times, and what the flooder was answered.
//!
//! The flooding clients stand for another machine: they run in a process of their own at the
//! lowest priority (`nice -n 19`), so the CPU their SDK spends signing and reading 1,000 calls a
//! second is not taken from the service on this machine's two cores. `NICE=0` runs them at the
//! service's priority.

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
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--flood") {
        return flood_process(&args[1..]).await;
    }
    let secs: u64 = args
        .first()
        .map(|a| a.parse().expect("a number of seconds"))
        .unwrap_or(20);
    let s = stack();
    let (flood, calm) = (s.new_user("flood"), s.new_user("calm"));
    let c = s.sdk(&calm);
    println!("command: cargo run -p phantom-e2e --example flood -- {secs}");
    let (alone, alone_errors) = calm_calls(&c, secs).await;
    println!("calm alone: {} ({alone_errors} errors)", summary(&alone));

    let nice = std::env::var("NICE").unwrap_or_else(|_| "19".into());
    let flooder = std::process::Command::new("nice")
        .args(["-n", &nice])
        .arg(std::env::current_exe().expect("this program's path"))
        .args(["--flood", &s.url, &flood.access_key_id, &flood.secret])
        .arg((secs + 2).to_string())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("nice runs the flooding process");
    // Let the flood reach its rate before calm's calls are timed.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (during, during_errors) = calm_calls(&c, secs).await;
    let answers = flooder.wait_with_output().expect("the flooding process");
    println!(
        "calm during the flood: {} ({during_errors} errors)",
        summary(&during)
    );
    println!(
        "the flooder (nice {nice}): {}",
        String::from_utf8_lossy(&answers.stdout).trim()
    );
}

/// The flooding process: `--flood URL KEY SECRET SECS`.
async fn flood_process(args: &[String]) {
    let [url, key, secret, secs] = args else {
        panic!("--flood URL ACCESS_KEY_ID SECRET SECS");
    };
    let user = phantom_e2e::stack::User {
        name: "flood".into(),
        access_key_id: key.clone(),
        secret: secret.clone(),
    };
    let secs: u64 = secs.parse().expect("a number of seconds");
    let flooder = phantom_e2e::stack::Flood::start(url, &user, 20);
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let answers = flooder.stop().await;
    let total: usize = answers.values().sum();
    println!(
        "{total} calls in {secs} s ({:.0} a second): {answers:?}",
        total as f64 / secs as f64
    );
}
