//! Benchmark (not a test): what a scrape of a user's group metrics costs.
//!
//!   cargo run -p phantom-e2e --example scrape -- [GROUPS...]
//!
//! On the local stack (DynamoDB Local or moto): for each count (default 10, 500 and 500, the most
//! groups a user may have), a user of its own with that many groups (no VMs), every metric
//! enabled on each; then 20 scrapes of `/phantom/v1/metrics` timed by curl (`time_total`), and
//! the answer's size. Last, 20 of an administrator's scrape of every user's groups
//! (`?users=all`): with the default counts, 1,010 groups.

use phantom_e2e::stack;
use phantom_e2e::steps::Steps;
use std::process::Command;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number of groups"))
        .collect();
    let counts = if counts.is_empty() {
        vec![10, 500, 500]
    } else {
        counts
    };
    let s = stack();
    println!("command: cargo run -p phantom-e2e --example scrape -- {counts:?}");
    for &n in &counts {
        let u = s.new_user("scrape");
        s.set_limits(&u, 1000.0, 1000.0);
        let c = s.sdk(&u);
        c.create_lc("web@hotel").await;
        let all: Vec<usize> = (0..n).collect();
        for chunk in all.chunks(8) {
            let tasks: Vec<_> = chunk
                .iter()
                .map(|&i| {
                    let c = c.clone();
                    tokio::spawn(async move {
                        let name = format!("g{i:04}");
                        c.create_group(&name, "web@hotel", (0, 4, 0)).await;
                        c.enable_metrics_collection()
                            .auto_scaling_group_name(&name)
                            .granularity("1Minute")
                            .send()
                            .await
                            .expect("metrics enabled");
                    })
                })
                .collect();
            for t in tasks {
                t.await.expect("a group made");
            }
        }
        let out = s.phantomctl(&["user", "scrape", &u.name]);
        assert!(out.status.success(), "phantomctl user scrape");
        let password = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let url = format!("{}/phantom/v1/metrics", s.url);
        let (p50, max, bytes) = timed(&u.name, &password, &url);
        println!(
            "{n} groups, 20 metrics each: a scrape p50 {p50:.1} ms, max {max:.1} ms, {bytes} bytes"
        );
    }
    let out = s.phantomctl(&["user", "scrape", "admin"]);
    assert!(out.status.success(), "phantomctl user scrape admin");
    let password = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let url = format!("{}/phantom/v1/metrics?users=all", s.url);
    let (p50, max, bytes) = timed("admin", &password, &url);
    let total: usize = counts.iter().sum();
    println!("every user's {total} groups (users=all): a scrape p50 {p50:.1} ms, max {max:.1} ms, {bytes} bytes");
}

/// 20 scrapes timed by curl: p50 and max in ms, and the answer's size.
fn timed(user: &str, password: &str, url: &str) -> (f64, f64, u64) {
    let mut ms = Vec::new();
    let mut bytes = 0;
    for _ in 0..20 {
        let out = Command::new("curl")
            .args([
                "-sf",
                "-o",
                "/dev/null",
                "-w",
                "%{time_total} %{size_download}",
            ])
            .args(["-u", &format!("{user}:{password}"), url])
            .output()
            .expect("curl runs");
        assert!(out.status.success(), "the scrape succeeds");
        let text = String::from_utf8(out.stdout).unwrap();
        let (t, size) = text.split_once(' ').expect("time and size");
        ms.push(t.parse::<f64>().unwrap() * 1000.0);
        bytes = size.parse().unwrap();
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    (ms[ms.len() / 2], ms[ms.len() - 1], bytes)
}
