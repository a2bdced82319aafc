//! Benchmark (not a test): an hour of churn on the local stack, as issue 64 names it.
//!
//!   [PHANTOM_PROFILE=release] cargo run -p phantom-e2e --example churn -- [MINUTES [GROUPS [KILLS_AN_HOUR]]]
//!
//! GROUPS users (20 unless given) each get a group of 5 VMs on hotel. For MINUTES (60), a VM of a
//! group that is whole is terminated on the cloud every 3600 / KILLS_AN_HOUR seconds (10,000 an
//! hour: 10,000 terminations and as many launches). Each kill is timed until DescribeAutoScalingGroups
//! shows its group with 5 VMs InService again, the victim gone. Printed: each tenth of the run's
//! p50 and p90, and the last tenth's p50 against the first's. Terminated VMs stay on the cloud
//! for an hour (localstack/moto/serve.py), as on EC2, so the last tenth's clouds hold about
//! 10,000 more than the first's.

use aws_sdk_autoscaling::types::LifecycleState;
use aws_sdk_autoscaling::Client as Asg;
use phantom_e2e::stack;
use phantom_e2e::steps::Steps;
use phantom_rules::reconcile::CloudState;
use phantom_seams::cloud::ec2_cloud::Ec2Clouds;
use phantom_seams::cloud::{Cloud, Connect};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SIZE: i32 = 5;
/// A kill whose group is not whole this long after is counted as not healed.
const GIVE_UP: Duration = Duration::from_secs(120);

/// The group's VMs when it is whole (SIZE InService), or None.
async fn whole(asg: &Asg, group: &str) -> Option<BTreeSet<String>> {
    let out = asg
        .describe_auto_scaling_groups()
        .auto_scaling_group_names(group)
        .send()
        .await
        .ok()?;
    let instances = out.auto_scaling_groups().first()?.instances();
    let in_service: BTreeSet<String> = instances
        .iter()
        .filter(|i| i.lifecycle_state() == Some(&LifecycleState::InService))
        .filter_map(|i| i.instance_id().map(str::to_string))
        .collect();
    (instances.len() == SIZE as usize && in_service.len() == SIZE as usize).then_some(in_service)
}

/// A group of SIZE that is being churned: its user's clients, and whether a kill is healing.
struct Churned {
    asg: Asg,
    ec2: Arc<dyn Cloud>,
    owner: String,
    healing: Mutex<bool>,
}

/// Kills one VM of `g` and times it until the group is whole without it; None if it was not
/// whole to begin with or is not within GIVE_UP.
async fn kill_and_time(g: &Churned) -> Option<Duration> {
    let vms = whole(&g.asg, "churn").await?;
    let victim = vms.iter().next()?.clone();
    // The cloud must still list it running: a VM the group shows may be going already.
    let seen = g.ec2.describe(std::slice::from_ref(&victim)).await.ok()?;
    if seen.first().map(|t| t.seen.state) != Some(CloudState::Running) {
        return None;
    }
    g.ec2
        .terminate(std::slice::from_ref(&victim))
        .await
        .expect("TerminateInstances");
    let t = Instant::now();
    while t.elapsed() < GIVE_UP {
        if whole(&g.asg, "churn")
            .await
            .is_some_and(|vms| !vms.contains(&victim))
        {
            return Some(t.elapsed());
        }
        // Each kill polls its own group, about 3 calls a second: the polls share the 2 cores
        // with the stack they time.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    println!(
        "{}: not whole {} s after a kill",
        g.owner,
        GIVE_UP.as_secs()
    );
    Some(GIVE_UP)
}

fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (
        ms(v[v.len() / 2]),
        ms(v[(v.len() * 9 / 10).min(v.len() - 1)]),
    )
}

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .nth(n)
        .map(|a| {
            a.parse()
                .expect("MINUTES, GROUPS and KILLS_AN_HOUR are whole numbers")
        })
        .unwrap_or(default)
}

#[tokio::main]
async fn main() {
    let minutes = arg(1, 60);
    let groups = arg(2, 20);
    let rate = arg(3, 10_000);
    let s = stack();
    let clouds = Ec2Clouds::default();
    let mut churned = Vec::new();
    for _ in 0..groups {
        let user = s.new_user("churn");
        let asg = s.sdk(&user);
        asg.create_launch_configuration()
            .launch_configuration_name("churn@hotel")
            .image_id("ami-1e749f67")
            .instance_type("t2.micro")
            .send()
            .await
            .expect("CreateLaunchConfiguration");
        asg.create_group("churn", "churn@hotel", (SIZE, SIZE, SIZE))
            .await;
        let (cloud, creds) = phantom_e2e::moto::cloud("hotel", &s.cloud_url("hotel"));
        churned.push(Arc::new(Churned {
            asg,
            ec2: clouds.connect(&cloud, &creds),
            owner: user.name,
            healing: Mutex::new(false),
        }));
    }
    for g in &churned {
        while whole(&g.asg, "churn").await.is_none() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    println!(
        "{groups} groups of {SIZE} InService; churning for {minutes} min, {rate} kills an hour"
    );

    let run = Duration::from_secs(minutes * 60);
    let tenth = run / 10;
    let timed: Arc<Mutex<Vec<(Duration, Duration)>>> = Arc::default();
    let (mut made, mut skipped) = (0u64, 0u64);
    let start = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(3600.0 / rate as f64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut next = 0;
    let mut tasks = Vec::new();
    while start.elapsed() < run {
        tick.tick().await;
        // The next group that is not healing, round the ring.
        let free = (0..churned.len())
            .map(|k| (next + k) % churned.len())
            .find(|&i| !*churned[i].healing.lock().unwrap());
        let Some(i) = free else {
            skipped += 1;
            continue;
        };
        next = i + 1;
        made += 1;
        let g = churned[i].clone();
        *g.healing.lock().unwrap() = true;
        let timed = timed.clone();
        let at = start.elapsed();
        tasks.push(tokio::spawn(async move {
            if let Some(d) = kill_and_time(&g).await {
                timed.lock().unwrap().push((at, d));
            }
            *g.healing.lock().unwrap() = false;
        }));
    }
    for t in tasks {
        t.await.expect("a kill's task");
    }
    let timed = timed.lock().unwrap().clone();

    let profile = std::env::var("PHANTOM_PROFILE").unwrap_or_else(|_| "debug".into());
    let interval = std::env::var("PHANTOM_HEALTH_INTERVAL_SECS").unwrap_or_else(|_| "1".into());
    println!("\ncommand: PHANTOM_PROFILE={profile} PHANTOM_HEALTH_INTERVAL_SECS={interval} cargo run -p phantom-e2e --example churn -- {minutes} {groups} {rate}");
    println!(
        "kills: {} timed, {} not made (the group not whole, or the VM going already), {skipped} ticks with every group healing; {} not whole within {} s",
        timed.len(),
        made - timed.len() as u64,
        timed.iter().filter(|(_, d)| *d >= GIVE_UP).count(),
        GIVE_UP.as_secs()
    );
    println!("\n| minutes | kills | a kill until its group is whole: p50 | p90 |");
    println!("|---|---|---|---|");
    let mut p50s = Vec::new();
    for k in 0..10u32 {
        let part: Vec<Duration> = timed
            .iter()
            .filter(|(at, _)| *at >= tenth * k && *at < tenth * (k + 1))
            .map(|(_, d)| *d)
            .collect();
        let n = part.len();
        let (p50, p90) = stats(part);
        p50s.push(p50);
        println!(
            "| {:.0} to {:.0} | {n} | {p50:.0} ms | {p90:.0} ms |",
            (tenth * k).as_secs_f64() / 60.0,
            (tenth * (k + 1)).as_secs_f64() / 60.0
        );
    }
    println!(
        "\nthe last tenth's p50 against the first's: {:.2}",
        p50s[9] / p50s[0]
    );
}
