//! Simulation (not a test): the real health check and provisioner code at scale, over the in-memory
//! store, queue and clouds with a round trip injected into every call.
//!
//!   cargo run --release -p phantom-e2e --example simulate -- [SCALE ...]
//!
//! SCALE 1 is 1,000 users, 10,000 groups of 10 VMs (100,000 VMs) over 4 clouds, every user with
//! groups on every cloud (4,000 (user, cloud) pairs); 0.1 and 0.01 shrink users and groups (default:
//! 0.01 0.1 1). The groups are created through the api (aws-sdk-autoscaling in process) and brought
//! up by the provisioner with no latency; then, with latency on (DynamoDB 4 ms a call, each cloud
//! 100 ms a call and a page of 1000 VMs, SQS not delayed), it times:
//! 1. a steady health check: the schedule's run (the list, the sweep messages) and the fleet's
//!    sweeps, run by PHANTOM_SIM_FLEET (200) concurrent workers (Lambda's concurrent invocations,
//!    batches of 10; "until the fleet is idle" includes the 0.3 s it takes to see that it is);
//! 2. the same after 1% of the VMs died on the clouds: sweeps, then the reconciles that replace them.
//!
//! It prints wall time, calls by kind, the fleet's peak concurrency and the process's peak memory.

use phantom::metrics;
use phantom_e2e::world::{World, IMAGE};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CLOUDS: [&str; 4] = ["hotel", "sierra", "tango", "uniform"];
const USERS: f64 = 1000.0;
const GROUPS_PER_USER: usize = 10;
const VMS_PER_GROUP: i32 = 10;
const DYNAMODB_LATENCY: Duration = Duration::from_millis(4);
const CLOUD_LATENCY: Duration = Duration::from_millis(100);

/// Lambda's concurrent provisioner invocations: PHANTOM_SIM_FLEET, 200 unless set.
fn fleet() -> usize {
    std::env::var("PHANTOM_SIM_FLEET")
        .map(|v| v.parse().expect("PHANTOM_SIM_FLEET is a number"))
        .unwrap_or(200)
}

/// Delivers visible messages to `fleet()` workers until none is visible and all are idle.
/// Returns the most workers busy at once.
async fn drain(w: &Arc<World>) -> usize {
    let busy = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..fleet() {
        let (w, busy, peak) = (w.clone(), busy.clone(), peak.clone());
        workers.push(tokio::spawn(async move {
            let mut idle_since: Option<Instant> = None;
            loop {
                let batch = w.queue.receive(10);
                if batch.is_empty() {
                    // Done once nobody has had work for a while (others may still queue some).
                    if busy.load(Ordering::SeqCst) == 0
                        && idle_since.is_some_and(|t| t.elapsed() > Duration::from_millis(300))
                    {
                        return;
                    }
                    idle_since.get_or_insert_with(Instant::now);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
                idle_since = None;
                let now = busy.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                let failed = w.provisioner().handle_batch(batch.clone()).await;
                for (id, body) in batch {
                    if failed.contains(&id) {
                        w.queue.retry(body, 5_000);
                    }
                }
                busy.fetch_sub(1, Ordering::SeqCst);
            }
        }));
    }
    for t in workers {
        t.await.expect("a worker");
    }
    peak.load(Ordering::SeqCst)
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

struct Phase {
    what: &'static str,
    tick: Duration,
    total: Duration,
    calls: metrics::Calls,
    peak: usize,
}

async fn phase(w: &Arc<World>, what: &'static str) -> Phase {
    let before = metrics::calls();
    let t = Instant::now();
    let report = w.health().sweep().await.expect("the health check runs");
    let tick = t.elapsed();
    assert!(report.pairs > 0);
    let peak = drain(w).await;
    Phase {
        what,
        tick,
        total: t.elapsed(),
        calls: metrics::calls() - before,
        peak,
    }
}

async fn run(scale: f64) {
    let users = ((USERS * scale).round() as usize).max(1);
    let w = Arc::new(World::new().await);
    for name in &CLOUDS[2..] {
        w.add_cloud(name).await;
    }
    let setup = Instant::now();
    let mut people = Vec::new();
    for _ in 0..users {
        people.push(w.user("sim").await);
    }
    for u in &people {
        let asg = w.sdk(u);
        for cloud in CLOUDS {
            asg.create_launch_configuration()
                .launch_configuration_name(format!("web@{cloud}"))
                .image_id(IMAGE)
                .instance_type("t2.micro")
                .send()
                .await
                .expect("create-launch-configuration");
        }
        for g in 0..GROUPS_PER_USER {
            asg.create_auto_scaling_group()
                .auto_scaling_group_name(format!("g{g}"))
                .launch_configuration_name(format!("web@{}", CLOUDS[g % CLOUDS.len()]))
                .min_size(0)
                .max_size(VMS_PER_GROUP)
                .desired_capacity(VMS_PER_GROUP)
                .send()
                .await
                .expect("create-auto-scaling-group");
        }
    }
    // Launch, then the follow-ups that see the VMs InService (the world's clock moves only here).
    drain(&w).await;
    while !w.queue.is_empty() {
        w.clock.advance_ms(30_000);
        drain(&w).await;
    }
    let vms: usize = CLOUDS.iter().map(|c| cloud(&w, c).alive().len()).sum();
    println!(
        "\n## scale {scale}: {users} users, {} groups, {vms} VMs, {} clouds ({} pairs); set up in {:.1} s",
        users * GROUPS_PER_USER,
        CLOUDS.len(),
        users * CLOUDS.len(),
        setup.elapsed().as_secs_f64()
    );

    w.store.set_latency(DYNAMODB_LATENCY);
    for c in CLOUDS {
        cloud(&w, c).set_latency(CLOUD_LATENCY);
    }
    let steady = phase(&w, "steady: nothing to do").await;
    // 1% of the VMs die.
    let mut killed = 0;
    for c in CLOUDS {
        for id in cloud(&w, c).alive().iter().step_by(100) {
            cloud(&w, c).terminate_outside(id);
            killed += 1;
        }
    }
    w.clock.advance_ms(1_000);
    let heal = phase(&w, "after 1% of VMs died: sweeps, then replacements").await;
    let after: usize = CLOUDS.iter().map(|c| cloud(&w, c).alive().len()).sum();
    assert_eq!(after, vms, "every dead VM ({killed}) replaced");
    println!("| run | schedule's run | until the fleet is idle | DynamoDB calls | EC2 calls | SQS calls | peak workers busy |");
    println!("|---|---|---|---|---|---|---|");
    for p in [steady, heal] {
        println!(
            "| {} | {:.2} s | {:.1} s | {} | {} | {} | {} of {} |",
            p.what,
            p.tick.as_secs_f64(),
            p.total.as_secs_f64(),
            p.calls.dynamodb,
            p.calls.ec2,
            p.calls.sqs,
            p.peak,
            fleet()
        );
    }
    println!(
        "{killed} VMs killed and replaced; peak memory of this process so far: {:.0} MB",
        peak_rss_mb()
    );
}

fn cloud(w: &World, name: &str) -> Arc<phantom::cloud::memory::MemoryCloud> {
    match name {
        "hotel" | "sierra" => w.cloud(name).clone(),
        other => w.extra_cloud(other),
    }
}

fn main() {
    let scales: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a scale such as 0.1"))
        .collect();
    let scales = if scales.is_empty() {
        vec![0.01, 0.1, 1.0]
    } else {
        scales
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    println!("command: cargo run --release -p phantom-e2e --example simulate -- {scales:?}");
    println!(
        "latency: DynamoDB {} ms a call, cloud {} ms a call and a page of 1000; fleet of {} workers",
        DYNAMODB_LATENCY.as_millis(),
        CLOUD_LATENCY.as_millis(),
        fleet()
    );
    for s in scales {
        rt.block_on(run(s));
    }
}
