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

/// The benchmark's users' request limits, per second and burst, for both classes.
const LIMIT: f64 = 100_000.0;

/// Groups the describing and scaling rows act on.
const GROUPS: usize = 20;

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

/// Times `n` calls of one action (`call(i)`), printing its line at once.
macro_rules! timed {
    ($label:expr, $action:expr, $n:expr, $out:expr, |$i:ident| $call:expr) => {{
        let mut errors: Vec<String> = Vec::new();
        let mut times = Vec::with_capacity($n);
        for $i in 0..$n {
            let t = Instant::now();
            if let Err(e) = $call.await {
                errors.push(format!("{e:?}"));
            }
            times.push(t.elapsed());
        }
        $out.push(summarize($label, $action, times, &errors));
    }};
}

async fn run(c: &Client, n: usize, label: &str) -> Vec<Result> {
    let mut out = Vec::new();
    let lc = |i: usize| format!("bench-{label}-{i:05}@hotel");
    // Each one but the groups' is deleted again at once, so the user stays under its 200
    // launch configurations however many are timed.
    let (mut made, mut gone) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut made_errors, mut gone_errors) = (Vec::new(), Vec::new());
    for i in 0..n {
        let t = Instant::now();
        if let Err(e) = c
            .create_launch_configuration()
            .launch_configuration_name(lc(i))
            .image_id("ami-1e749f67")
            .instance_type("t2.micro")
            .security_groups("sg-1")
            .send()
            .await
        {
            made_errors.push(format!("{e:?}"));
        }
        made.push(t.elapsed());
        if i > 0 {
            let t = Instant::now();
            let deleted = c
                .delete_launch_configuration()
                .launch_configuration_name(lc(i))
                .send()
                .await;
            if let Err(e) = deleted {
                gone_errors.push(format!("{e:?}"));
            }
            gone.push(t.elapsed());
        }
    }
    out.push(summarize(
        label,
        "CreateLaunchConfiguration",
        made,
        &made_errors,
    ));
    out.push(summarize(
        label,
        "DeleteLaunchConfiguration",
        gone,
        &gone_errors,
    ));
    timed!(label, "CreateAutoScalingGroup", n, out, |i| c
        .create_auto_scaling_group()
        .auto_scaling_group_name(format!("bench-once-{i:05}"))
        .launch_configuration_name(lc(0))
        .min_size(0)
        .max_size(1)
        .desired_capacity(0)
        .availability_zones("us-east-1a")
        .send());
    timed!(label, "DeleteAutoScalingGroup", n, out, |i| c
        .delete_auto_scaling_group()
        .auto_scaling_group_name(format!("bench-once-{i:05}"))
        .send());
    for g in 0..GROUPS {
        c.create_auto_scaling_group()
            .auto_scaling_group_name(format!("bench-{g:02}"))
            .launch_configuration_name(lc(0))
            .min_size(0)
            .max_size(2)
            .desired_capacity(0)
            .availability_zones("us-east-1a")
            .send()
            .await
            .expect("CreateAutoScalingGroup");
    }
    timed!(label, "DescribeAutoScalingGroups", n, out, |_i| async {
        let o = c.describe_auto_scaling_groups().send().await?;
        assert!(o.auto_scaling_groups().len() >= GROUPS);
        Ok::<_, aws_sdk_autoscaling::Error>(())
    });
    let group = |i: usize| format!("bench-{:02}", i % GROUPS);
    timed!(label, "SetDesiredCapacity", n, out, |i| c
        .set_desired_capacity()
        .auto_scaling_group_name(group(i))
        .desired_capacity(((i / GROUPS) % 2) as i32)
        .send());
    timed!(label, "UpdateAutoScalingGroup", n, out, |i| c
        .update_auto_scaling_group()
        .auto_scaling_group_name(group(i))
        .max_size(2 + ((i / GROUPS) % 2) as i32)
        .send());
    timed!(label, "DescribeAutoScalingInstances", n, out, |_i| c
        .describe_auto_scaling_instances()
        .send());
    timed!(label, "DescribeScalingActivities", n, out, |i| c
        .describe_scaling_activities()
        .auto_scaling_group_name(group(i))
        .send());
    timed!(label, "PutScalingPolicy", n, out, |i| c
        .put_scaling_policy()
        .auto_scaling_group_name(group(i))
        .policy_name("bench-out")
        .adjustment_type("ChangeInCapacity")
        .scaling_adjustment(1 + ((i / GROUPS) % 2) as i32)
        .send());
    out
}

/// Sums up one phase, printing it at once (a later failure loses nothing).
fn summarize(
    label: &str,
    action: &'static str,
    mut times: Vec<Duration>,
    errors: &[String],
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
    r
}

/// Phantom's own account of each action's time, from the api's request lines: the medians of
/// the signature check, the store's calls and time, the queue's time.
fn split(log: &[serde_json::Value]) -> Vec<(String, Split)> {
    let mut by: std::collections::BTreeMap<String, Vec<&serde_json::Value>> = Default::default();
    for line in log {
        let f = line;
        if f["message"] == "request" && f["store_calls"].is_number() {
            if let Some(a) = f["action"].as_str() {
                by.entry(a.to_string()).or_default().push(f);
            }
        }
    }
    by.into_iter()
        .map(|(a, lines)| {
            let median = |k: &str| {
                let mut v: Vec<f64> = lines.iter().filter_map(|f| f[k].as_f64()).collect();
                v.sort_by(f64::total_cmp);
                v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
            };
            let split = Split {
                total: median("ms"),
                auth: median("auth_ms"),
                store_calls: median("store_calls"),
                store: median("store_ms"),
                queue_calls: median("queue_calls"),
                queue: median("queue_ms"),
                cloud: median("cloud_ms"),
            };
            (a, split)
        })
        .collect()
}

struct Split {
    total: f64,
    auth: f64,
    store_calls: f64,
    store: f64,
    queue_calls: f64,
    queue: f64,
    cloud: f64,
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
    // Each user its own limits, high enough that no request is throttled: p99 is Phantom's, not
    // the SDK's backoff.
    let (ours, theirs, other, log) = if gateway {
        let s = localstack_stack();
        let user = s.new_user("bench");
        // Each run its own user: both create the same names.
        let second = s.new_user("bench");
        s.set_limits(&user, LIMIT, LIMIT);
        s.set_limits(&second, LIMIT, LIMIT);
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
            s.api_log(),
        )
    } else {
        let s = stack();
        let user = s.new_user("bench");
        s.set_limits(&user, LIMIT, LIMIT);
        let phantom = client(&s.url, &user.access_key_id, &user.secret);
        let ours = run(&phantom, n, "phantom").await;
        let log = s.api_log();
        let moto = client(&s.env["AWS_ENDPOINT_URL"], "bench", "bench");
        (ours, run(&moto, n, "moto").await, "moto", log)
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
    println!("\nPhantom's own account (medians of the api's request lines; a call's time is its SDK call's, signing and parsing included):\n");
    println!("| action | total ms | signature check ms | store calls | store ms | queue calls | queue ms | cloud ms |");
    println!("|---|---|---|---|---|---|---|---|");
    for (action, t) in split(&log) {
        println!(
            "| {action} | {:.2} | {:.2} | {} | {:.2} | {} | {:.2} | {:.2} |",
            t.total, t.auth, t.store_calls, t.store, t.queue_calls, t.queue, t.cloud
        );
    }
}
