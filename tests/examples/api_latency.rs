//! Benchmark (not a test): API latency on the local stack, Phantom against moto's own Auto Scaling.
//!
//!   PHANTOM_PROFILE=release cargo run -p phantom-e2e --example api_latency -- [REQUESTS]
//!
//! Starts the local stack (release binaries with PHANTOM_PROFILE=release), then runs the same
//! sequence, one request at a time with aws-sdk-autoscaling, against Phantom and against the
//! moto_server that holds Phantom's state (moto implements Auto Scaling itself): REQUESTS x
//! CreateLaunchConfiguration, REQUESTS x DescribeAutoScalingGroups (of 20 groups),
//! REQUESTS x SetDesiredCapacity. Prints p50/p99 per action and the ratio Phantom/moto.
//!
//!   cargo run -p phantom-e2e --example api_latency -- [REQUESTS] gateway
//!
//! instead compares, on the LocalStack stack, Phantom through LocalStack's API Gateway (the
//! deployed shape, PHANTOM_GATEWAY_URL) with Phantom reached directly.

use aws_credential_types::Credentials;
use aws_sdk_autoscaling::Client;
use phantom_e2e::{localstack_stack, stack, REGION};
use std::time::{Duration, Instant};

fn client(url: &str, key: &str, secret: &str) -> Client {
    let config = aws_sdk_autoscaling::Config::builder()
        .http_client(phantom_seams::config::https_client())
        .behavior_version(aws_sdk_autoscaling::config::BehaviorVersion::latest())
        .region(aws_sdk_autoscaling::config::Region::new(REGION))
        .endpoint_url(url)
        .credentials_provider(Credentials::new(key, secret, None, None, "bench"))
        .build();
    Client::from_conf(config)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

struct Result {
    action: &'static str,
    p50: f64,
    p99: f64,
    errors: usize,
}

async fn run(c: &Client, n: usize, label: &str) -> Vec<Result> {
    let mut out = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        if let Err(e) = c
            .create_launch_configuration()
            .launch_configuration_name(format!("bench-{label}-{i:05}@hotel"))
            .image_id("ami-1e749f67")
            .instance_type("t2.micro")
            .security_groups("sg-1")
            .send()
            .await
        {
            errors.push(format!("{e:?}"));
        }
        times.push(t.elapsed());
        // Untimed: each one but the groups' is deleted again, so the user stays under
        // Phantom's 200 launch configurations however many are timed.
        if i > 0 {
            c.delete_launch_configuration()
                .launch_configuration_name(format!("bench-{label}-{i:05}@hotel"))
                .send()
                .await
                .ok();
        }
    }
    out.push(summarize(
        label,
        "CreateLaunchConfiguration",
        times,
        &mut errors,
    ));

    for g in 0..20 {
        c.create_auto_scaling_group()
            .auto_scaling_group_name(format!("bench-{g:02}"))
            .launch_configuration_name(format!("bench-{label}-00000@hotel"))
            .min_size(0)
            .max_size(1)
            .desired_capacity(0)
            .availability_zones("us-east-1a")
            .send()
            .await
            .expect("CreateAutoScalingGroup");
    }
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        match c.describe_auto_scaling_groups().send().await {
            Ok(o) => assert!(o.auto_scaling_groups().len() >= 20),
            Err(e) => errors.push(format!("{e:?}")),
        }
        times.push(t.elapsed());
    }
    out.push(summarize(
        label,
        "DescribeAutoScalingGroups",
        times,
        &mut errors,
    ));

    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        if let Err(e) = c
            .set_desired_capacity()
            .auto_scaling_group_name(format!("bench-{:02}", i % 20))
            .desired_capacity((i % 2) as i32)
            .send()
            .await
        {
            errors.push(format!("{e:?}"));
        }
        times.push(t.elapsed());
    }
    out.push(summarize(label, "SetDesiredCapacity", times, &mut errors));
    out
}

/// Sums up one phase, printing it at once (a later failure loses nothing).
fn summarize(
    label: &str,
    action: &'static str,
    mut times: Vec<Duration>,
    errors: &mut Vec<String>,
) -> Result {
    times.sort();
    let r = Result {
        action,
        p50: percentile(&times, 0.50),
        p99: percentile(&times, 0.99),
        errors: errors.len(),
    };
    println!(
        "{label} {action}: p50 {:.2} ms, p99 {:.2} ms, {} errors{}",
        r.p50,
        r.p99,
        r.errors,
        errors
            .first()
            .map(|e| format!(" (first: {})", &e[..e.len().min(300)]))
            .unwrap_or_default()
    );
    errors.clear();
    r
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let gateway = match std::env::args().nth(2).as_deref() {
        None => false,
        Some("gateway") => true,
        Some(other) => panic!("the second argument is `gateway` or nothing, not {other:?}"),
    };
    let (ours, theirs, other) = if gateway {
        let s = localstack_stack();
        let user = s.new_user("bench");
        // Each run its own user: both create the same names.
        let second = s.new_user("bench");
        let through = client(
            &s.env["PHANTOM_GATEWAY_URL"],
            &user.access_key_id,
            &user.secret,
        );
        let direct = client(&s.url, &second.access_key_id, &second.secret);
        (
            run(&through, n, "gateway").await,
            run(&direct, n, "direct").await,
            "direct",
        )
    } else {
        let s = stack();
        let user = s.new_user("bench");
        let phantom = client(&s.url, &user.access_key_id, &user.secret);
        let moto = client(&s.env["AWS_ENDPOINT_URL"], "bench", "bench");
        (
            run(&phantom, n, "phantom").await,
            run(&moto, n, "moto").await,
            "moto",
        )
    };
    let ours_label = if gateway { "Gateway" } else { "Phantom" };

    println!(
        "\n{n} requests per action, one at a time, aws-sdk-autoscaling; profile {}",
        std::env::var("PHANTOM_PROFILE").unwrap_or_else(|_| "debug".into())
    );
    println!(
        "command: PHANTOM_PROFILE={} cargo run -p phantom-e2e --example api_latency -- {n}{}\n",
        std::env::var("PHANTOM_PROFILE").unwrap_or_else(|_| "debug".into()),
        if gateway { " gateway" } else { "" }
    );
    println!("| action | {ours_label} p50 ms | {ours_label} p99 ms | {other} p50 ms | {other} p99 ms | p50 ratio | p99 ratio | errors ({ours_label}/{other}) |");
    println!("|---|---|---|---|---|---|---|---|");
    for (a, b) in ours.iter().zip(&theirs) {
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {}/{} |",
            a.action,
            a.p50,
            a.p99,
            b.p50,
            b.p99,
            a.p50 / b.p50,
            a.p99 / b.p99,
            a.errors,
            b.errors
        );
    }
}
