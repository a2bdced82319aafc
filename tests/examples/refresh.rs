//! Benchmark (not a test): what an instance refresh of 20 VMs takes.
//!
//!   PHANTOM_PROFILE=release cargo run -p phantom-e2e --example refresh
//!
//! 1. On the local stack (health check every second): a group of 20 InService VMs moved to a new
//!    launch configuration, then StartInstanceRefresh (InstanceWarmup 0) at MinHealthyPercentage
//!    90 and 50: the time until DescribeInstanceRefreshes says Successful.
//! 2. In process (the memory store and cloud, which count their calls as the SDKs would): the
//!    store, cloud and queue calls the same refresh makes, per VM replaced, and the rounds it takes.

use aws_sdk_autoscaling::types::{InstanceRefreshStatus, RefreshPreferences};
use aws_sdk_autoscaling::Client as Asg;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_seams::store::Groups;
use std::time::{Duration, Instant};

const VMS: i32 = 20;

async fn ready(asg: &Asg, group: &str, until_in_service: impl AsyncFn(&Asg) -> bool) {
    for lc in ["bench-old@hotel", "bench-new@hotel"] {
        let _ = asg
            .create_launch_configuration()
            .launch_configuration_name(lc)
            .image_id(phantom_e2e::world::IMAGE)
            .instance_type("t2.micro")
            .send()
            .await;
    }
    asg.create_group(group, "bench-old@hotel", (0, 2 * VMS, VMS))
        .await;
    while !until_in_service(asg).await {}
    asg.update(group, |g| g.launch_configuration_name("bench-new@hotel"))
        .await;
}

async fn all_in_service(asg: &Asg, group: &str) -> bool {
    let out = asg
        .describe_auto_scaling_groups()
        .auto_scaling_group_names(group)
        .send()
        .await
        .expect("describe-auto-scaling-groups");
    let is = out.auto_scaling_groups()[0].instances();
    is.len() == VMS as usize
        && is.iter().all(|i| {
            i.lifecycle_state() == Some(&aws_sdk_autoscaling::types::LifecycleState::InService)
        })
}

async fn start(asg: &Asg, group: &str, min: i32) -> String {
    asg.start_instance_refresh()
        .auto_scaling_group_name(group)
        .preferences(
            RefreshPreferences::builder()
                .min_healthy_percentage(min)
                .instance_warmup(0)
                .build(),
        )
        .send()
        .await
        .expect("start-instance-refresh")
        .instance_refresh_id()
        .unwrap()
        .to_string()
}

async fn status(asg: &Asg, group: &str) -> Option<InstanceRefreshStatus> {
    asg.describe_instance_refreshes()
        .auto_scaling_group_name(group)
        .send()
        .await
        .expect("describe-instance-refreshes")
        .instance_refreshes()
        .first()
        .and_then(|r| r.status().cloned())
}

async fn on_the_stack(min: i32) -> Duration {
    let s = phantom_e2e::stack();
    let u = s.new_user("rbench");
    let asg = s.sdk(&u);
    let group = format!("refresh-{min}");
    ready(&asg, &group, async |a| {
        let ok = all_in_service(a, &group).await;
        if !ok {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        ok
    })
    .await;
    let t = Instant::now();
    start(&asg, &group, min).await;
    loop {
        match status(&asg, &group).await {
            Some(InstanceRefreshStatus::Successful) => return t.elapsed(),
            Some(InstanceRefreshStatus::Failed) => panic!("the refresh failed"),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
        assert!(t.elapsed() < Duration::from_secs(600), "timed out");
    }
}

async fn in_process(min: i32) -> (phantom_seams::metrics::Calls, u64) {
    let w = World::new().await;
    let u = w.user("rbench").await;
    let asg = w.sdk(&u);
    ready(&asg, "web", async |a| {
        let ok = all_in_service(a, "web").await;
        if !ok {
            w.run_for(1).await;
        }
        ok
    })
    .await;
    w.settle().await;
    let before = phantom_seams::metrics::calls();
    start(&asg, "web", min).await;
    let mut seconds = 0;
    loop {
        w.run_for(1).await;
        seconds += 1;
        // Read from the store, not through the API, so the polling is not counted.
        let g = w
            .store
            .group(&u.name, "web")
            .await
            .expect("the store")
            .expect("the group");
        if g.settings.instance_refreshes[0].status == phantom_rules::refresh::Status::Successful {
            break;
        }
        assert!(seconds < 600, "timed out");
    }
    let calls = phantom_seams::metrics::calls() - before;
    (calls, seconds)
}

#[tokio::main]
async fn main() {
    for min in [90, 50] {
        let (calls, secs) = in_process(min).await;
        let per = |n: u64| n as f64 / f64::from(VMS);
        println!(
            "in process, MinHealthyPercentage {min}: {secs} s of the world's clock (1 s sweeps); \
             per VM replaced: {:.1} DynamoDB, {:.1} EC2, {:.1} SQS calls (totals {} / {} / {}), \
             health sweeps included",
            per(calls.dynamodb),
            per(calls.ec2),
            per(calls.sqs),
            calls.dynamodb,
            calls.ec2,
            calls.sqs
        );
    }
    for min in [90, 50] {
        let took = on_the_stack(min).await;
        println!(
            "local stack, MinHealthyPercentage {min}: {VMS} VMs replaced in {:.1} s",
            took.as_secs_f64()
        );
    }
}
