//! Simulation (not a test): the deployment's real schedule at scale, on a simulated clock. The real
//! health check (the minute schedule and the pulse's beats) and provisioner code run over the
//! in-memory store, queues and clouds, with AWS's round trips added to every call; time is
//! tokio's paused clock, so a call's latency takes simulated time and the code's own work none.
//!
//!   cargo run --release -p phantom-e2e --features paused-clock --example simulate -- [SCALE ...]
//!
//! SCALE 1 is 1,000 users, 10,000 groups of 10 VMs (100,000 VMs) over 4 clouds, every user with
//! groups on every cloud (4,000 (user, cloud) pairs); 0.1 and 0.01 shrink users and groups (default:
//! 0.01 0.1 1). The groups are created through the api (aws-sdk-autoscaling in process) and
//! brought up with no latency. Then the deployment runs as template.yaml sets it up: the schedule
//! every minute (it starts the pulse), a beat every 4 s (a look at each pair every 8 s, a busy
//! pair swept every minute, every pair every hour; PHANTOM_PULSE_SECS, PHANTOM_LOOK_SECS and the
//! health check's other settings change them as they do on Lambda), the provisioner's fleet of
//! PHANTOM_SIM_FLEET (50) concurrent invocations taking batches of 10; DynamoDB 5 ms a call, a
//! cloud 150 ms a call (and a page of 1000 VMs), and up to 100 ms before a worker receives a
//! message.
//!
//! Timeline: 2 minutes to warm up (the first beats sweep every pair once), 3 quiet minutes whose
//! calls give the steady bill, 5 minutes in which 1% of the VMs die at random moments, 2 to finish.
//! With PHANTOM_SIM_EVENTS=1 every cloud is an AWS region that sends its EC2 state-change events
//! (a second to the work queue) and is looked at every minute. With PHANTOM_SIM_IMPAIR=<seconds> the
//! 1% turn impaired (their system status check) instead of dying, in groups whose confirmation
//! period is that long, and the times are counted from its end.
//!
//! It prints the death-to-launch times (each death to its group's next launch), the calls per
//! minute by kind, and the monthly bill they imply at AWS's list prices (docs/scale.md).

use health_check::pulse::Pulse;
use health_check::HealthCheck;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::{World, PULSE_VISIBILITY_MS};
use phantom_model::cloud::{CloudCredentials, CloudRecord};
use phantom_model::instance::{CloudState, LaunchedWith};
use phantom_model::time::Clock;
use phantom_rules::template::TemplateRef;
use phantom_seams::cloud::memory::MemoryCloud;
use phantom_seams::cloud::{
    Balancers, Catalog, CloudError, ConnectLookup, FoundTemplate, InstanceStatus, Lookup, Tagged,
};
use phantom_seams::metrics::{self, Calls};
use phantom_seams::queue::pulse::MemoryPulse;
use phantom_seams::store::Directory;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

const CLOUDS: [&str; 4] = ["hotel", "sierra", "tango", "uniform"];
const USERS: f64 = 1000.0;
const GROUPS_PER_USER: usize = 10;
const VMS_PER_GROUP: i32 = 10;
const DYNAMODB_LATENCY: Duration = Duration::from_millis(5);
const CLOUD_LATENCY: Duration = Duration::from_millis(150);
const SQS_RECEIVE_WAIT: Duration = Duration::from_millis(100);
/// The simulated clock's step: the world's clock follows tokio's in steps this long.
const STEP: Duration = Duration::from_millis(20);

const WARM_UP_S: u64 = 120;
const QUIET_S: u64 = 180;
const KILLS_S: u64 = 300;
const FINISH_S: u64 = 120;

// AWS list prices, us-east-1, arm64, November 2026 (docs/scale.md).
const LAMBDA_GB_S: f64 = 0.000_013_333_4;
const LAMBDA_REQUEST: f64 = 0.20 / 1e6;
const HEALTH_GB: f64 = 1.0;
/// Reading a look's answers, a VM at a time (docs/benchmarks.md, "Looks", on this machine's core,
/// answers of 25 VMs): DescribeInstances' and DescribeInstanceStatus'; and the share of a core
/// Lambda gives 1 GB (a whole vCPU at 1,769 MB). The health check spends it on the simulated
/// clock (`Cpu`).
const READ_US_PER_VM: f64 = 17.3;
const READ_STATUS_US_PER_VM: f64 = 3.7;
const VCPU_AT_HEALTH_GB: f64 = 1024.0 / 1769.0;
const PROVISIONER_GB: f64 = 0.25;
const DYNAMODB_READ: f64 = 0.125 / 1e6;
const DYNAMODB_WRITE: f64 = 0.625 / 1e6;
const SQS_REQUEST: f64 = 0.40 / 1e6;
const SQS_FIFO_REQUEST: f64 = 0.50 / 1e6;
const KMS_REQUEST: f64 = 0.03 / 1e4;
const KMS_KEY_MONTH: f64 = 1.0;
const MINUTES_A_MONTH: f64 = 30.0 * 24.0 * 60.0;
/// Lambda's pollers on a queue with nothing to deliver: about 5 long polls of 20 s at a time.
const IDLE_RECEIVES_A_MINUTE: f64 = 15.0;
/// What a WATCH item weighs (user, cloud, count, view), for the read units of the beat's Query.
const WATCH_ITEM_BYTES: f64 = 130.0;

/// PHANTOM_SIM_EVENTS=1: every cloud tells of its VMs' state changes (EC2's events through
/// EventBridge, delivered to the work queue a second after the change), and is looked at every
/// minute instead of every 10 s.
fn with_events() -> bool {
    std::env::var("PHANTOM_SIM_EVENTS").is_ok_and(|v| v == "1")
}
/// PHANTOM_SIM_IMPAIR=<seconds>: the 1% are not killed but turn impaired (their system status
/// check), in groups whose confirmation period is that long (tag
/// `phantom:status-check-confirm-seconds`): the figures are then from the confirmation period's end
/// to the launch.
fn confirm_secs() -> Option<u64> {
    std::env::var("PHANTOM_SIM_IMPAIR").ok().map(|v| {
        v.parse()
            .expect("PHANTOM_SIM_IMPAIR is the confirmation period in seconds")
    })
}

fn impair() -> bool {
    confirm_secs().is_some()
}

/// EventBridge's delivery of an event to the queue.
const EVENT_DELAY: Duration = Duration::from_secs(1);

/// Lambda's concurrent provisioner invocations: PHANTOM_SIM_FLEET, 50 unless set.
fn fleet() -> usize {
    std::env::var("PHANTOM_SIM_FLEET")
        .map(|v| v.parse().expect("PHANTOM_SIM_FLEET is a number"))
        .unwrap_or(50)
}

/// What the functions did, in simulated time.
#[derive(Default)]
struct Work {
    beats: AtomicU64,
    health_ms: AtomicU64,
    /// The health check's CPU reading the looks' answers, in µs (within `health_ms`).
    reading_us: AtomicU64,
    schedule_runs: AtomicU64,
    batches: AtomicU64,
    provisioner_ms: AtomicU64,
}

#[derive(Clone, Copy)]
struct Tally {
    calls: Calls,
    beats: u64,
    health_ms: u64,
    schedule_runs: u64,
    batches: u64,
    provisioner_ms: u64,
    credential_reads: u64,
    reading_us: u64,
}

fn tally(w: &World, work: &Work) -> Tally {
    Tally {
        calls: metrics::calls(),
        beats: work.beats.load(Ordering::SeqCst),
        health_ms: work.health_ms.load(Ordering::SeqCst),
        schedule_runs: work.schedule_runs.load(Ordering::SeqCst),
        batches: work.batches.load(Ordering::SeqCst),
        provisioner_ms: work.provisioner_ms.load(Ordering::SeqCst),
        credential_reads: w.store.credential_reads(),
        reading_us: work.reading_us.load(Ordering::SeqCst),
    }
}

/// Per minute over `minutes`, from two tallies.
struct Rate {
    dynamodb: f64,
    ec2: f64,
    sqs_sends: f64,
    beats: f64,
    health_s: f64,
    reading_s: f64,
    schedule_runs: f64,
    batches: f64,
    provisioner_s: f64,
    credential_reads: f64,
}

fn rate(a: &Tally, b: &Tally, minutes: f64) -> Rate {
    let d = |x: u64, y: u64| (y - x) as f64 / minutes;
    Rate {
        dynamodb: d(a.calls.dynamodb, b.calls.dynamodb),
        ec2: d(a.calls.ec2, b.calls.ec2),
        sqs_sends: d(a.calls.sqs, b.calls.sqs),
        beats: d(a.beats, b.beats),
        health_s: d(a.health_ms, b.health_ms) / 1000.0,
        reading_s: d(a.reading_us, b.reading_us) / 1e6,
        schedule_runs: d(a.schedule_runs, b.schedule_runs),
        batches: d(a.batches, b.batches),
        provisioner_s: d(a.provisioner_ms, b.provisioner_ms) / 1000.0,
        credential_reads: d(a.credential_reads, b.credential_reads),
    }
}

/// The monthly bill a minute's rate implies, by item.
fn bill(r: &Rate, pairs: usize) -> Vec<(&'static str, f64)> {
    let month = |per_minute: f64, price: f64| per_minute * MINUTES_A_MONTH * price;
    // The beat's Query of the list: eventually consistent, 8 KB a read unit; every other call
    // one read unit (small items), the pulse's lease one write a beat.
    let list_units = (pairs as f64 * WATCH_ITEM_BYTES / 8192.0).ceil().max(1.0);
    let other_reads = (r.dynamodb - 2.0 * r.beats).max(0.0);
    vec![
        (
            "Lambda, health-check (round trips, and reading the looks' answers)",
            month(r.health_s * HEALTH_GB, LAMBDA_GB_S)
                + month(r.beats + r.schedule_runs, LAMBDA_REQUEST),
        ),
        (
            "Lambda, provisioner",
            month(r.provisioner_s * PROVISIONER_GB, LAMBDA_GB_S) + month(r.batches, LAMBDA_REQUEST),
        ),
        (
            "DynamoDB",
            month(r.beats * list_units + other_reads, DYNAMODB_READ)
                + month(r.beats, DYNAMODB_WRITE),
        ),
        (
            "SQS (work queue: sends, receives, deletes, idle polls)",
            month(
                r.sqs_sends - r.beats + 2.0 * r.batches + IDLE_RECEIVES_A_MINUTE,
                SQS_REQUEST,
            ),
        ),
        (
            "SQS FIFO (pulse: send, receive, delete a beat)",
            month(3.0 * r.beats + IDLE_RECEIVES_A_MINUTE, SQS_FIFO_REQUEST),
        ),
        (
            "KMS (a Decrypt per credentials read, at most; the looks' hourly re-read; the key)",
            month(r.credential_reads + pairs as f64 / 60.0, KMS_REQUEST) + KMS_KEY_MONTH,
        ),
        ("EventBridge (the minute schedule's rule)", 0.0),
    ]
}

fn percentile(sorted: &[i64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

/// A small deterministic generator (xorshift64*): the same deaths at every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

async fn sleep_until_ms(w: &World, at_ms: i64) {
    while w.clock.now_ms() < at_ms {
        tokio::time::sleep(STEP).await;
    }
}

struct Outcome {
    line: String,
}

async fn run(scale: f64) -> Outcome {
    let users = ((USERS * scale).round() as usize).max(1);
    let w = Arc::new(World::new().await);
    for name in &CLOUDS[2..] {
        w.add_cloud(name).await;
    }
    let mut people = Vec::new();
    for _ in 0..users {
        people.push(w.user("sim").await);
    }
    for u in &people {
        let asg = w.sdk(u);
        for cloud in CLOUDS {
            asg.create_lc(&format!("web@{cloud}")).await;
        }
        for g in 0..GROUPS_PER_USER {
            asg.create_auto_scaling_group()
                .auto_scaling_group_name(format!("g{g}"))
                .launch_configuration_name(format!("web@{}", CLOUDS[g % CLOUDS.len()]))
                .min_size(0)
                .max_size(VMS_PER_GROUP)
                .desired_capacity(VMS_PER_GROUP)
                .set_tags(impair().then(|| {
                    vec![aws_sdk_autoscaling::types::Tag::builder()
                        .resource_id(format!("g{g}"))
                        .resource_type("auto-scaling-group")
                        .key("phantom:status-check-confirm-seconds")
                        .value(confirm_secs().unwrap_or(0).to_string())
                        .propagate_at_launch(false)
                        .build()]
                }))
                .send()
                .await
                .expect("create-auto-scaling-group");
        }
    }
    // Launch, then the follow-ups that see the VMs InService.
    w.settle().await;
    while !w.queue.is_empty() {
        w.clock.advance_ms(30_000);
        w.settle().await;
    }
    let vms: usize = CLOUDS.iter().map(|c| cloud(&w, c).alive().len()).sum();
    let pairs = users * CLOUDS.len();
    println!(
        "\n## scale {scale}: {users} users, {} groups, {vms} VMs, {} clouds ({pairs} pairs)",
        users * GROUPS_PER_USER,
        CLOUDS.len(),
    );

    if with_events() {
        for c in CLOUDS {
            let mut record = w.store.cloud(c).await.unwrap().expect("registered");
            record.events = true;
            w.store.put_cloud(&record).await.unwrap();
            cloud(&w, c).take_events();
        }
    }
    w.store.set_latency(DYNAMODB_LATENCY);
    for c in CLOUDS {
        cloud(&w, c).set_latency(CLOUD_LATENCY);
    }
    let work = Arc::new(Work::default());
    // The pulse as template.yaml sets it up (or as PHANTOM_PULSE_SECS, PHANTOM_LOOK_SECS, ...
    // say, read as the health check reads them).
    let (period_ms, cadence) = Pulse::settings_from_env().expect("the pulse's settings");
    let pulse = Arc::new(MemoryPulse::new(w.clock.clone(), w.trip.clone(), period_ms));
    let h = Arc::new(HealthCheck {
        pulse: Some(Arc::new(Pulse::new(
            Some(pulse.clone()),
            period_ms,
            cadence,
            Arc::new(Reading {
                clouds: w.clouds.clone(),
                cpu: Arc::new(Cpu {
                    free_at: std::sync::Mutex::new(Instant::now()),
                    work: work.clone(),
                }),
            }),
        ))),
        ..w.health()
    });
    let stop = Arc::new(AtomicBool::new(false));
    let t0 = w.clock.now_ms();
    let mut tasks = Vec::new();
    // The world's clock follows tokio's (until every other task has stopped).
    let clock = {
        let w = w.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(STEP).await;
                w.clock.advance_ms(STEP.as_millis() as i64);
            }
        })
    };
    // The minute schedule.
    {
        let (w, h, work, stop) = (w.clone(), h.clone(), work.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut next = t0;
            while !stop.load(Ordering::SeqCst) {
                sleep_until_ms(&w, next).await;
                let start = Instant::now();
                h.run().await.expect("the schedule runs");
                work.schedule_runs.fetch_add(1, Ordering::SeqCst);
                work.health_ms
                    .fetch_add(start.elapsed().as_millis() as u64, Ordering::SeqCst);
                next += 60_000;
            }
        }));
    }
    // The pulse queue's event source: one tick at a time.
    {
        let (pulse, h, work, stop) = (pulse.clone(), h.clone(), work.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                match pulse.receive() {
                    Some(tick) => {
                        let start = Instant::now();
                        match h.tick(tick).await {
                            Ok(_) => {
                                work.beats.fetch_add(1, Ordering::SeqCst);
                            }
                            Err(_) => pulse.redeliver(tick, PULSE_VISIBILITY_MS),
                        }
                        work.health_ms
                            .fetch_add(start.elapsed().as_millis() as u64, Ordering::SeqCst);
                    }
                    None => tokio::time::sleep(SQS_RECEIVE_WAIT).await,
                }
            }
        }));
    }
    // EventBridge, for clouds with events.
    if with_events() {
        let (w, stop) = (w.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                tokio::time::sleep(EVENT_DELAY).await;
                for c in CLOUDS {
                    w.deliver_events(&cloud(&w, c)).await;
                }
            }
        }));
    }
    // The provisioner's fleet.
    for _ in 0..fleet() {
        let (w, work, stop) = (w.clone(), work.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let batch = w.queue.receive(10);
                if batch.is_empty() {
                    tokio::time::sleep(SQS_RECEIVE_WAIT).await;
                    continue;
                }
                let start = Instant::now();
                let failed = w.provisioner().handle_batch(batch.clone()).await;
                w.queue.settle(&batch, &failed);
                work.batches.fetch_add(1, Ordering::SeqCst);
                work.provisioner_ms
                    .fetch_add(start.elapsed().as_millis() as u64, Ordering::SeqCst);
            }
        }));
    }

    sleep_until_ms(&w, t0 + (WARM_UP_S * 1000) as i64).await;
    let quiet_start = tally(&w, &work);
    sleep_until_ms(&w, t0 + ((WARM_UP_S + QUIET_S) * 1000) as i64).await;
    let quiet_end = tally(&w, &work);

    // 1% of the VMs die, each at a random moment of the next minutes.
    let kill_start = w.clock.now_ms();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ vms as u64);
    let mut victims: Vec<(i64, &str, String, String)> = Vec::new();
    for c in CLOUDS {
        for vm in cloud(&w, c).vms() {
            if vm.state.alive() && rng.next().is_multiple_of(100) {
                let at = kill_start + (rng.next() % (KILLS_S * 1000)) as i64;
                let group = vm.tags.get("phantom:group-id").cloned().unwrap_or_default();
                victims.push((at, c, vm.id, group));
            }
        }
    }
    victims.sort();
    for (at, c, id, _) in &victims {
        sleep_until_ms(&w, *at).await;
        if impair() {
            cloud(&w, c).impair(id, phantom_seams::cloud::memory::Which::System);
        } else {
            cloud(&w, c).terminate_outside(id);
        }
    }
    let kills_end = tally(&w, &work);
    let confirm_ms = (confirm_secs().unwrap_or(0) * 1000) as i64;
    sleep_until_ms(
        &w,
        kill_start + ((KILLS_S + FINISH_S) * 1000) as i64 + confirm_ms,
    )
    .await;
    stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.await.expect("a task of the simulation");
    }
    clock.abort();
    let after: usize = CLOUDS.iter().map(|c| cloud(&w, c).alive().len()).sum();

    // Each death against its group's next launch after it.
    let mut launches: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for c in CLOUDS {
        for vm in cloud(&w, c).vms() {
            if vm.launched_ms >= kill_start {
                let group = vm.tags.get("phantom:group-id").cloned().unwrap_or_default();
                launches.entry(group).or_default().push(vm.launched_ms);
            }
        }
    }
    for l in launches.values_mut() {
        l.sort();
        l.reverse();
    }
    let mut waits: Vec<i64> = Vec::new();
    let mut unreplaced = 0;
    for (at, _, _, group) in &victims {
        let next = launches.get_mut(group).and_then(|l| {
            while l.last().is_some_and(|t| t < at) {
                l.pop();
            }
            l.pop()
        });
        match next {
            // An impairment counts from the end of its confirmation period.
            Some(t) => waits.push(t - at - confirm_ms),
            None => unreplaced += 1,
        }
    }
    waits.sort();
    let (p50, p99, max) = (
        percentile(&waits, 0.5),
        percentile(&waits, 0.99),
        waits.last().map_or(f64::NAN, |m| *m as f64 / 1000.0),
    );
    let (died, death) = match impair() {
        true => ("impaired", "confirmed-impairment"),
        false => ("killed", "death"),
    };
    println!(
        "{} VMs {died} over {} minutes, {} replaced ({unreplaced} not), {after} of {vms} alive at the end",
        victims.len(),
        KILLS_S / 60,
        waits.len()
    );
    println!("{death}-to-launch: p50 {p50:.1} s, p99 {p99:.1} s, max {max:.1} s");

    let quiet = rate(&quiet_start, &quiet_end, QUIET_S as f64 / 60.0);
    let churn = rate(&quiet_end, &kills_end, KILLS_S as f64 / 60.0);
    println!("\n| a minute of | DynamoDB calls | EC2 calls | SQS sends | beats | credential reads | provisioner batches | health-check s (of it reading) | provisioner s |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (what, r) in [("quiet", &quiet), ("1% dying over 5 minutes", &churn)] {
        println!(
            "| {what} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} ({:.1}) | {:.1} |",
            r.dynamodb,
            r.ec2,
            r.sqs_sends,
            r.beats,
            r.credential_reads,
            r.batches,
            r.health_s,
            r.reading_s,
            r.provisioner_s
        );
    }
    let items = bill(&quiet, pairs);
    let total: f64 = items.iter().map(|(_, c)| c).sum();
    println!("\n| the quiet minutes' rate, a month | $ |");
    println!("|---|---|");
    for (what, cost) in &items {
        println!("| {what} | {cost:.2} |");
    }
    println!("| **total** | **{total:.2}** |");
    Outcome {
        line: format!(
            "{}-to-launch p50 {p50:.1} s, p99 {p99:.1} s; Phantom's bill ${total:.0} a month",
            if impair() {
                "confirmed-impairment"
            } else {
                "death"
            }
        ),
    }
}

fn cloud(w: &World, name: &str) -> Arc<MemoryCloud> {
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
    println!(
        "command: {}{}cargo run --release -p phantom-e2e --features paused-clock --example simulate -- {scales:?}",
        if with_events() {
            "PHANTOM_SIM_EVENTS=1 "
        } else {
            ""
        },
        confirm_secs().map_or(String::new(), |c| format!("PHANTOM_SIM_IMPAIR={c} "))
    );
    println!(
        "latency: DynamoDB {} ms a call, cloud {} ms a call and a page of 1000, SQS receive up to {} ms; fleet of {} workers",
        DYNAMODB_LATENCY.as_millis(),
        CLOUD_LATENCY.as_millis(),
        SQS_RECEIVE_WAIT.as_millis(),
        fleet()
    );
    let mut last = None;
    for s in scales {
        // Simulated time: tokio's clock is paused and jumps to the next timer when all wait.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("a runtime");
        last = Some(rt.block_on(run(s)).line);
    }
    if let Some(line) = last {
        println!("\n{line}");
    }
}

/// The health check's core on the simulated clock: each look's answers are read one after another
/// (a VM's measured cost, at 1 GB's share of a vCPU), so a look's verdict waits for the reading
/// before it, and a beat lasts as long as its reading or its round trips, whichever is longer.
struct Cpu {
    /// When the core is next free: reads queue behind it, to the microsecond (tokio's timer wakes
    /// the reader at the next whole millisecond, which does not add up).
    free_at: std::sync::Mutex<Instant>,
    work: Arc<Work>,
}

impl Cpu {
    async fn read(&self, vms: usize, us_per_vm: f64) {
        let us = vms as f64 * us_per_vm / VCPU_AT_HEALTH_GB;
        let done = {
            let mut free_at = self.free_at.lock().expect("no panic holding it");
            *free_at = (*free_at).max(Instant::now()) + Duration::from_secs_f64(us / 1e6);
            *free_at
        };
        tokio::time::sleep_until(done).await;
        self.work
            .reading_us
            .fetch_add(us.round() as u64, Ordering::SeqCst);
    }
}

/// The memory clouds as the health check's looks meet them: each answer read on its `Cpu`.
struct Reading {
    clouds: Arc<phantom_seams::cloud::memory::MemoryClouds>,
    cpu: Arc<Cpu>,
}

#[async_trait::async_trait]
impl ConnectLookup for Reading {
    fn lookup(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Lookup> {
        Arc::new(ReadingLookup {
            inner: self.clouds.lookup(cloud, creds),
            cpu: self.cpu.clone(),
        })
    }
    fn balancers(
        &self,
        cloud: &CloudRecord,
        creds: &CloudCredentials,
    ) -> Option<Arc<dyn Balancers>> {
        self.clouds.balancers(cloud, creds)
    }
    fn catalog(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Catalog> {
        self.clouds.catalog(cloud, creds)
    }
    async fn reachable(&self, cloud: &CloudRecord) -> bool {
        self.clouds.reachable(cloud).await
    }
}

struct ReadingLookup {
    inner: Arc<dyn Lookup>,
    cpu: Arc<Cpu>,
}

#[async_trait::async_trait]
impl Lookup for ReadingLookup {
    async fn describe(&self, ids: &[String]) -> Result<Vec<Tagged>, CloudError> {
        self.inner.describe(ids).await
    }
    async fn launched_with(&self, id: &str) -> Result<Option<LaunchedWith>, CloudError> {
        self.inner.launched_with(id).await
    }
    async fn states(&self, owner: &str) -> Result<Vec<(String, CloudState)>, CloudError> {
        let found = self.inner.states(owner).await?;
        self.cpu.read(found.len(), READ_US_PER_VM).await;
        Ok(found)
    }
    async fn template(&self, t: &TemplateRef) -> Result<Option<FoundTemplate>, CloudError> {
        self.inner.template(t).await
    }
    async fn subnet_zones(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        self.inner.subnet_zones(ids).await
    }
    async fn zone_names(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        self.inner.zone_names(ids).await
    }
    async fn reservation_zones(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        self.inner.reservation_zones(ids).await
    }
    async fn statuses(&self, ids: &[String]) -> Result<Vec<InstanceStatus>, CloudError> {
        let found = self.inner.statuses(ids).await?;
        self.cpu.read(found.len(), READ_STATUS_US_PER_VM).await;
        Ok(found)
    }
}
