//! Benchmark (not a test): how fast Phantom reacts, and what a health sweep costs.
//!
//!   PHANTOM_PROFILE=release cargo run -p phantom-e2e --example provisioning -- [RUNS]
//!
//! On the local stack (health sweep every 1 s):
//! 1. SetDesiredCapacity 0 -> 5: time from the call returning until all 5 VMs exist on the cloud
//!    (polled every 10 ms with aws-sdk-ec2), RUNS times.
//! 2. A VM of a group of 3 terminated on the cloud: time until its replacement exists, RUNS times.
//! 3. One health sweep (the health-check handler, called here) with 10, 100 and 1000 VMs in a
//!    group: its EC2 and DynamoDB call counts.

use aws_credential_types::Credentials;
use aws_sdk_autoscaling::Client as Asg;
use aws_sdk_ec2::types::Filter;
use aws_sdk_ec2::Client as Ec2;
use phantom_e2e::{stack, REGION};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

async fn live(ec2: &Ec2, owner: &str, group: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut token = None;
    loop {
        let out = ec2
            .describe_instances()
            .filters(
                Filter::builder()
                    .name("tag:phantom:owner")
                    .values(owner)
                    .build(),
            )
            .filters(
                Filter::builder()
                    .name("tag:phantom:group")
                    .values(group)
                    .build(),
            )
            .filters(
                Filter::builder()
                    .name("instance-state-name")
                    .values("pending")
                    .values("running")
                    .build(),
            )
            .set_next_token(token)
            .send()
            .await
            .expect("DescribeInstances");
        for r in out.reservations() {
            for i in r.instances() {
                ids.insert(i.instance_id().unwrap_or_default().to_string());
            }
        }
        match out.next_token() {
            Some(t) if !t.is_empty() => token = Some(t.to_string()),
            _ => return ids,
        }
    }
}

async fn wait_for(
    ec2: &Ec2,
    owner: &str,
    group: &str,
    ok: impl Fn(&BTreeSet<String>) -> bool,
) -> Duration {
    let t = Instant::now();
    loop {
        if ok(&live(ec2, owner, group).await) {
            return t.elapsed();
        }
        assert!(t.elapsed() < Duration::from_secs(120), "timed out");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "p50 {:.0} ms, p90 {:.0} ms, max {:.0} ms (n={})",
        ms(v[v.len() / 2]),
        ms(v[(v.len() * 9 / 10).min(v.len() - 1)]),
        ms(*v.last().unwrap()),
        v.len()
    )
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let s = stack();
    let user = s.new_user("pbench");
    let asg = Asg::from_conf(
        aws_sdk_autoscaling::Config::builder()
            .behavior_version(aws_sdk_autoscaling::config::BehaviorVersion::latest())
            .region(aws_sdk_autoscaling::config::Region::new(REGION))
            .endpoint_url(&s.url)
            .credentials_provider(Credentials::new(
                &user.access_key_id,
                &user.secret,
                None,
                None,
                "b",
            ))
            .build(),
    );
    let ec2 = Ec2::from_conf(
        aws_sdk_ec2::Config::builder()
            .behavior_version(aws_sdk_ec2::config::BehaviorVersion::latest())
            .region(aws_sdk_ec2::config::Region::new(REGION))
            .endpoint_url(s.cloud_url("hotel"))
            .credentials_provider(Credentials::new("bench", "bench", None, None, "b"))
            .build(),
    );
    asg.create_launch_configuration()
        .launch_configuration_name("bench@hotel")
        .image_id("ami-1e749f67")
        .instance_type("t2.micro")
        .send()
        .await
        .unwrap();
    let owner = user.name.as_str();

    // 1. Scale-out latency.
    asg.create_auto_scaling_group()
        .auto_scaling_group_name("out")
        .launch_configuration_name("bench@hotel")
        .min_size(0)
        .max_size(10)
        .desired_capacity(0)
        .send()
        .await
        .unwrap();
    let mut scale_out = Vec::new();
    for _ in 0..runs {
        asg.set_desired_capacity()
            .auto_scaling_group_name("out")
            .desired_capacity(5)
            .send()
            .await
            .unwrap();
        scale_out.push(wait_for(&ec2, owner, "out", |ids| ids.len() >= 5).await);
        asg.set_desired_capacity()
            .auto_scaling_group_name("out")
            .desired_capacity(0)
            .send()
            .await
            .unwrap();
        wait_for(&ec2, owner, "out", |ids| ids.is_empty()).await;
        // Let the terminated VMs' records be forgotten before the next run.
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }

    // 2. Replacement latency.
    asg.create_auto_scaling_group()
        .auto_scaling_group_name("heal")
        .launch_configuration_name("bench@hotel")
        .min_size(3)
        .max_size(3)
        .desired_capacity(3)
        .send()
        .await
        .unwrap();
    wait_for(&ec2, owner, "heal", |ids| ids.len() == 3).await;
    let mut replace = Vec::new();
    for _ in 0..runs {
        let before = live(&ec2, owner, "heal").await;
        let victim = before.iter().next().unwrap().clone();
        ec2.terminate_instances()
            .instance_ids(&victim)
            .send()
            .await
            .unwrap();
        replace.push(
            wait_for(&ec2, owner, "heal", |ids| {
                ids.len() == 3 && !ids.contains(&victim)
            })
            .await,
        );
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }

    // 3. Health sweep cost with the handler itself, against the same stack.
    for (k, v) in &s.env {
        std::env::set_var(k, v);
    }
    std::env::set_var("AWS_ACCESS_KEY_ID", "phantom-local");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "phantom-local");
    let health = health_check::HealthCheck::from_env().await;
    asg.create_auto_scaling_group()
        .auto_scaling_group_name("big")
        .launch_configuration_name("bench@hotel")
        .min_size(0)
        .max_size(1000)
        .desired_capacity(0)
        .send()
        .await
        .unwrap();
    let mut sweeps = Vec::new();
    for n in [10usize, 100, 1000] {
        asg.set_desired_capacity()
            .auto_scaling_group_name("big")
            .desired_capacity(n as i32)
            .send()
            .await
            .unwrap();
        wait_for(&ec2, owner, "big", |ids| ids.len() == n).await;
        tokio::time::sleep(Duration::from_secs(3)).await; // records settle
        let t = Instant::now();
        let r = health.sweep().await.expect("sweep");
        sweeps.push((n, r, t.elapsed()));
    }

    let profile = std::env::var("PHANTOM_PROFILE").unwrap_or_else(|_| "debug".into());
    println!("\ncommand: PHANTOM_PROFILE={profile} cargo run -p phantom-e2e --example provisioning -- {runs}");
    println!(
        "SetDesiredCapacity 0->5 until 5 VMs exist on the cloud: {}",
        stats(scale_out)
    );
    println!(
        "VM terminated on the cloud until its replacement exists (sweep every 1 s): {}",
        stats(replace)
    );
    println!(
        "\n| VMs in the group | VMs seen (all users) | EC2 calls | DynamoDB calls | sweep time |"
    );
    println!("|---|---|---|---|---|");
    for (n, r, t) in sweeps {
        println!(
            "| {n} | {} | {} | {} | {:.0} ms |",
            r.vms_seen,
            r.ec2_calls,
            r.dynamodb_calls,
            t.as_secs_f64() * 1e3
        );
    }
}
