//! Benchmark (not a test): what load balancers add to the provisioner's work.
//!
//!   cargo run -p phantom-e2e --example balancers
//!
//! In process (the memory store and cloud count the DynamoDB and cloud calls they stand for): a
//! group scaled 0 -> 10 -> 0 without a load balancer, behind a target group (no drain time), and
//! behind one with HealthCheckType ELB; then 60 s of the health check's sweeps with the group at
//! 10, where ELB health makes every sweep a round.

use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_rules::traffic::source;
use phantom_seams::metrics;

const TG: &str =
    "arn:aws:elasticloadbalancing:us-east-1:000000000000:targetgroup/bench/0123456789abcdef";
const N: i32 = 10;

#[derive(Clone, Copy)]
enum Setup {
    Plain,
    TargetGroup,
    ElbHealth,
}

/// (store and cloud calls of the 0 -> N -> 0 run, of a minute's sweeps at N)
async fn run(setup: Setup) -> ((u64, u64), (u64, u64)) {
    let w = World::new().await;
    let u = w.user("bench").await;
    let c = w.sdk(&u);
    w.hotel.add_balancer(&source(TG, None).unwrap(), 0);
    c.create_lc("web@hotel").await;
    let mut create = c
        .create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(0)
        .max_size(N)
        .desired_capacity(0);
    if !matches!(setup, Setup::Plain) {
        create = create.target_group_arns(TG);
    }
    if matches!(setup, Setup::ElbHealth) {
        create = create.health_check_type("ELB");
    }
    create.send().await.unwrap();
    w.settle().await;
    let calls = |w: &World| (w.store.calls(), metrics::calls().ec2);
    let resize = async |n: i32| {
        c.desire("web", n).await;
    };
    let before = calls(&w);
    resize(N).await;
    w.run_without_sweeps(60).await;
    resize(0).await;
    w.run_without_sweeps(60).await;
    let after = calls(&w);
    let scaling = (after.0 - before.0, after.1 - before.1);
    resize(N).await;
    w.run_without_sweeps(60).await;
    let before = calls(&w);
    w.run_for(60).await;
    let after = calls(&w);
    (scaling, (after.0 - before.0, after.1 - before.1))
}

#[tokio::main]
async fn main() {
    println!("group 0 -> {N} -> 0, then {N} VMs swept every second for 60 s, in process");
    println!(
        "{:>28} | scaling: store, cloud calls | a minute's sweeps: store, cloud calls",
        ""
    );
    for (name, setup) in [
        ("no load balancer", Setup::Plain),
        ("behind a target group", Setup::TargetGroup),
        ("and HealthCheckType ELB", Setup::ElbHealth),
    ] {
        let (scaling, sweeps) = run(setup).await;
        println!(
            "{name:>28} | {:>6} {:>6} | {:>6} {:>6}",
            scaling.0, scaling.1, sweeps.0, sweeps.1
        );
    }
}
