//! Benchmark (not a test): what a scrape of a user's group metrics costs.
//!
//!   cargo run -p phantom-e2e --example scrape -- [GROUPS...]
//!
//! On the local stack (DynamoDB Local or moto): for each count (default 10 and 500, the most groups a user may have), a user of its
//! own with that many groups (no VMs), every metric enabled on each; then 20 scrapes of
//! `/phantom/v1/metrics` timed by curl (`time_total`), and the answer's size.

use phantom_e2e::stack;
use std::process::Command;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number of groups"))
        .collect();
    let counts = if counts.is_empty() {
        vec![10, 500]
    } else {
        counts
    };
    let s = stack();
    println!("command: cargo run -p phantom-e2e --example scrape -- {counts:?}");
    for n in counts {
        let u = s.new_user("scrape");
        s.set_limits(&u, 1000.0, 1000.0);
        let c = s.sdk(&u);
        c.create_launch_configuration()
            .launch_configuration_name("web@hotel")
            .image_id(phantom_e2e::world::IMAGE)
            .instance_type("t2.micro")
            .send()
            .await
            .expect("a launch configuration");
        let all: Vec<usize> = (0..n).collect();
        for chunk in all.chunks(8) {
            let tasks: Vec<_> = chunk
                .iter()
                .map(|&i| {
                    let c = c.clone();
                    tokio::spawn(async move {
                        let name = format!("g{i:04}");
                        c.create_auto_scaling_group()
                            .auto_scaling_group_name(&name)
                            .launch_configuration_name("web@hotel")
                            .min_size(0)
                            .max_size(4)
                            .desired_capacity(0)
                            .send()
                            .await
                            .expect("a group");
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
                .args(["-u", &format!("{}:{password}", u.name), &url])
                .output()
                .expect("curl runs");
            assert!(out.status.success(), "the scrape succeeds");
            let text = String::from_utf8(out.stdout).unwrap();
            let (t, size) = text.split_once(' ').expect("time and size");
            ms.push(t.parse::<f64>().unwrap() * 1000.0);
            bytes = size.parse().unwrap();
        }
        ms.sort_by(|a, b| a.total_cmp(b));
        println!(
            "{n} groups, 20 metrics each: a scrape p50 {:.1} ms, max {:.1} ms, {bytes} bytes",
            ms[ms.len() / 2],
            ms[ms.len() - 1]
        );
    }
}
