//! Benchmark (not a test): what a warm pool costs and what a scale-out from it takes.
//!
//!   cargo run -p phantom-e2e --example warm
//!
//! 1. In process (the memory store and cloud, which count their calls as the SDKs would): a group
//!    of 10 InService VMs (MaxSize 20); the calls to fill a pool of 10 stopped VMs, to scale out
//!    by 10 from it and, for comparison, by 10 without a pool; and what a minute of health sweeps
//!    (one a second) costs with the pool and without.
//! 2. On the local stack (moto's EC2, 1 s health sweep): the time from SetDesiredCapacity 10 -> 20
//!    until 20 are InService, from a pool and without one.

use aws_sdk_autoscaling::types::{LifecycleState, WarmPoolState};
use aws_sdk_autoscaling::Client as Asg;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_seams::metrics::{calls, Calls};
use phantom_seams::store::Fleet;
use std::time::{Duration, Instant};

const VMS: i32 = 10;

async fn group(asg: &Asg, name: &str) {
    let _ = asg
        .create_launch_configuration()
        .launch_configuration_name("bench@hotel")
        .image_id(phantom_e2e::world::IMAGE)
        .instance_type("t2.micro")
        .send()
        .await;
    asg.create_group(name, "bench@hotel", (0, 2 * VMS, VMS))
        .await;
}

async fn put_pool(asg: &Asg, name: &str) {
    asg.put_warm_pool()
        .auto_scaling_group_name(name)
        .pool_state(WarmPoolState::Stopped)
        .send()
        .await
        .expect("put-warm-pool");
}

async fn scale(asg: &Asg, name: &str, n: i32) {
    asg.desire(name, n).await;
}

/// How many of the group's records are in each state: (InService, ready in the pool).
async fn counts(w: &World, user: &str, name: &str) -> (usize, usize) {
    let members = w.store.instances(user, name).await.expect("the store");
    let count = |l| members.iter().filter(|m| m.lifecycle == l).count();
    (
        count(phantom_rules::reconcile::Lifecycle::InService),
        count(phantom_rules::reconcile::Lifecycle::WarmedStopped),
    )
}

/// Runs the world a second at a time until `done` holds on the store's records (read directly,
/// so the polling is not counted); the calls made and the seconds it took.
async fn measure(
    w: &World,
    user: &str,
    name: &str,
    done: impl Fn((usize, usize)) -> bool,
) -> (Calls, u64) {
    w.settle().await;
    let before = calls();
    let mut secs = 0;
    while !done(counts(w, user, name).await) {
        w.run_for(1).await;
        secs += 1;
        assert!(secs < 600, "timed out");
    }
    (calls() - before, secs)
}

fn per_vm(what: &str, c: Calls, secs: u64) {
    let per = |n: u64| n as f64 / f64::from(VMS);
    println!(
        "in process, {what}: {secs} s of the world's clock; per VM {:.1} DynamoDB, {:.1} EC2, \
         {:.1} SQS calls (totals {} / {} / {}), health sweeps included",
        per(c.dynamodb),
        per(c.ec2),
        per(c.sqs),
        c.dynamodb,
        c.ec2,
        c.sqs
    );
}

async fn in_process() {
    let n = VMS as usize;
    for pooled in [true, false] {
        let w = World::new().await;
        let u = w.user("wbench").await;
        let asg = w.sdk(&u);
        group(&asg, "web").await;
        measure(&w, &u.name, "web", |(s, _)| s == n).await;
        if pooled {
            put_pool(&asg, "web").await;
            let (c, secs) = measure(&w, &u.name, "web", |(_, p)| p == n).await;
            per_vm("filling a pool of 10 stopped VMs", c, secs);
        }
        // A minute of sweeps, the group and its pool (if any) settled.
        let before = calls();
        w.run_for(60).await;
        let c = calls() - before;
        println!(
            "in process, a minute of 1 s sweeps {}: {} DynamoDB, {} EC2, {} SQS calls",
            if pooled {
                "with the pool"
            } else {
                "without a pool"
            },
            c.dynamodb,
            c.ec2,
            c.sqs
        );
        scale(&asg, "web", 2 * VMS).await;
        let (c, secs) = measure(&w, &u.name, "web", |(s, _)| s == 2 * n).await;
        let what = if pooled {
            "scale-out 10 -> 20 from the pool (none launched; the pool empties: MaxSize 20)"
        } else {
            "scale-out 10 -> 20 without a pool"
        };
        per_vm(what, c, secs);
    }
}

async fn on_the_stack(pooled: bool) -> Duration {
    let s = phantom_e2e::stack();
    let u = s.new_user("wbench");
    let asg = s.sdk(&u);
    let name = if pooled { "warm-pooled" } else { "warm-cold" };
    group(&asg, name).await;
    let state = async |want: LifecycleState, pool: bool| -> usize {
        if pool {
            asg.warm_pool(name)
                .await
                .instances()
                .iter()
                .filter(|i| i.lifecycle_state() == Some(&want))
                .count()
        } else {
            asg.describe_auto_scaling_groups()
                .auto_scaling_group_names(name)
                .send()
                .await
                .expect("describe-auto-scaling-groups")
                .auto_scaling_groups()[0]
                .instances()
                .iter()
                .filter(|i| i.lifecycle_state() == Some(&want))
                .count()
        }
    };
    let wait = async |want: LifecycleState, pool: bool, n: usize| {
        let t = Instant::now();
        while state(want.clone(), pool).await != n {
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(t.elapsed() < Duration::from_secs(300), "timed out");
        }
    };
    wait(LifecycleState::InService, false, VMS as usize).await;
    if pooled {
        put_pool(&asg, name).await;
        wait(LifecycleState::WarmedStopped, true, VMS as usize).await;
    }
    let t = Instant::now();
    scale(&asg, name, 2 * VMS).await;
    wait(LifecycleState::InService, false, 2 * VMS as usize).await;
    t.elapsed()
}

#[tokio::main]
async fn main() {
    in_process().await;
    for pooled in [true, false] {
        let took = on_the_stack(pooled).await;
        println!(
            "local stack, scale-out 10 -> 20 {}: {:.1} s",
            if pooled {
                "from the pool"
            } else {
                "without a pool"
            },
            took.as_secs_f64()
        );
    }
}
