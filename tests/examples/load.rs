//! Load (a benchmark, not a test): CLIENTS concurrent aws-sdk-autoscaling clients for SECONDS
//! against the local stack, from this second process, all on loopback.
//!
//!   PHANTOM_PROFILE=release cargo run -p phantom-e2e --example load -- [CLIENTS] [SECONDS]
//!
//! Each client loops over DescribeAutoScalingGroups, DescribeLaunchConfigurations and
//! SetDesiredCapacity (desired 0, so no VMs) on groups of its own user. The users have limits of
//! their own, high enough that none is throttled: the figures are the service's, not the SDK's
//! backoff. Prints requests, errors by code, and p50/p99 latency.

use aws_sdk_autoscaling::error::ProvideErrorMetadata;
use phantom_e2e::stack;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The users' request limits, per second and burst, for both classes.
const LIMIT: f64 = 100_000.0;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let clients: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(50);
    let seconds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(60);
    let s = stack();
    // Five users, ten clients each (by default): several partitions, shared ones too.
    let users: Vec<_> = (0..clients.div_ceil(10))
        .map(|i| s.new_user(&format!("load{i}")))
        .collect();
    for u in &users {
        s.set_limits(u, LIMIT, LIMIT);
        let c = s.sdk(u);
        c.create_launch_configuration()
            .launch_configuration_name("load@hotel")
            .image_id("ami-1e749f67")
            .instance_type("t2.micro")
            .send()
            .await
            .unwrap();
        for g in 0..10 {
            c.create_auto_scaling_group()
                .auto_scaling_group_name(format!("load-{g}"))
                .launch_configuration_name("load@hotel")
                .min_size(0)
                .max_size(0)
                .send()
                .await
                .unwrap();
        }
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for i in 0..clients {
        let c = s.sdk(&users[i / 10 % users.len()]);
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            let mut errors: BTreeMap<String, usize> = BTreeMap::new();
            let mut n = 0usize;
            while Instant::now() < deadline {
                let t = Instant::now();
                let result = match n % 3 {
                    0 => c
                        .describe_auto_scaling_groups()
                        .send()
                        .await
                        .map(|_| ())
                        .map_err(|e| e.code().unwrap_or("transport").to_string()),
                    1 => c
                        .describe_launch_configurations()
                        .send()
                        .await
                        .map(|_| ())
                        .map_err(|e| e.code().unwrap_or("transport").to_string()),
                    _ => c
                        .set_desired_capacity()
                        .auto_scaling_group_name(format!("load-{}", (i + n) % 10))
                        .desired_capacity(0)
                        .send()
                        .await
                        .map(|_| ())
                        .map_err(|e| e.code().unwrap_or("transport").to_string()),
                };
                times.push(t.elapsed());
                if let Err(code) = result {
                    *errors.entry(code).or_default() += 1;
                }
                n += 1;
            }
            (times, errors)
        }));
    }
    let mut all = Vec::new();
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    for t in tasks {
        let (times, errs) = t.await.unwrap();
        all.extend(times);
        for (k, v) in errs {
            *errors.entry(k).or_default() += v;
        }
    }
    all.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let profile = std::env::var("PHANTOM_PROFILE").unwrap_or_else(|_| "debug".into());
    println!("\ncommand: PHANTOM_PROFILE={profile} cargo run -p phantom-e2e --example load -- {clients} {seconds}");
    println!(
        "{clients} clients, {seconds} s: {} requests ({:.0}/s), errors {:?}, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        all.len(),
        all.len() as f64 / seconds as f64,
        errors,
        ms(all[all.len() / 2]),
        ms(all[all.len() * 99 / 100]),
        ms(*all.last().unwrap())
    );
}
