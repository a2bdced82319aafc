//! A deterministic simulation of the whole of Phantom (issue 61): several users' random requests
//! through aws-sdk-autoscaling to the api's handlers, and the provisioner and the health check
//! working their queue and schedule, on the in-process world (memory store, queue and two clouds,
//! a manual clock), in one thread, under random faults. Every choice comes from one seed: the
//! users' requests, which faults strike and when, and the ids Phantom makes (`phantom_rules::ids`).
//! A seed is a run, the same trace every time. Invariants are checked after every step and once
//! the faults stop (`check`); docs/reliability.md says what each means.

mod check;
mod cloudwatch;
mod iam;
mod rest;
pub mod rng;
pub mod work;

use crate::world::World;
use crate::User;
use phantom_model::time::Clock;
use phantom_seams::cloud::memory::{Fault, MemoryCloud, Which};
use phantom_seams::queue::{Reconcile, WorkQueue};
use phantom_seams::store::{Fleet, Groups, StoreFault, Watch};
use rng::Rng;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Where every simulated run's clock starts (2026-01-01T00:00:00Z): the same every run.
const START_MS: i64 = 1_767_225_600_000;
/// The most messages the provisioners may be given in one simulated second (`no-storm`): a few
/// users' groups make tens.
const STORM: usize = 2_000;

/// How long, once the faults stop and the users let go, every group has to be whole again.
pub const SETTLE_BOUND_MS: i64 = 15 * 60_000;

/// The request and fault mixes, by version: a seed found with one mix replays only with it,
/// so a regression test names the mix it was found with. 1: the first (groups, instances, hooks,
/// processes, standby, detach and attach, refresh, maintenance, groups across clouds, scheduled
/// actions, simple policies); 2: and target groups, ELB health checks, warm pools; 3: and the
/// store's and the queue's faults, notifications; 4: and groups of spot and on-demand VMs from
/// launch templates (weighted or not, CapacityRebalance), the clouds' events delivered, spot
/// interruptions, rebalance recommendations, spot running out, scheduled events; 5: and the rest
/// of the 66 actions and Phantom's own API (`rest`), target tracking and predictive policies and
/// alarms on a CPU load that changes, classic load balancers and traffic sources, LaunchInstances,
/// MaxInstanceLifetime, and the clock jumping a day; 6: and a cloud refusing every launch for
/// minutes (`cloud-out`: out of capacity, or the account at its limit); 7: and handlers at work
/// together interleave at each store and cloud call (two provisioners of a split batch, and a
/// request meeting a provisioner's batch: `race`); 8: and the rest of Phantom's own API (the
/// caller's clouds, key pairs, heartbeat URL and scrape credential; administrators' operations,
/// refused to a user); 9: and a request racing its group's own round (`race` queues the group's
/// Reconcile first, so the round it meets is the one that acts on what the request changes); 10:
/// and CloudWatch at Phantom's endpoint (`cloudwatch`: a metric published for each group, alarms
/// on it running the group's policies, target tracking on it, the reads); 11: and alarms telling
/// the user's SNS topic, and the alarms' tags; 12: and alarms, reads and target tracking on the
/// group's `AWS/EC2` `CPUUtilization`, read from the metric source; 13: and GetMetricData's metric
/// math, and DescribeAlarms of the target tracking policies' alarms; 14: and least privilege
/// (`iam`: an IAM user with the cluster-autoscaler's policy sets the sizes of the groups its
/// user tags for it, and is refused on the others); 15: and a cloud's tag filters lagging behind
/// its tags (`tag-lag`: a VM untagged a moment ago still matches its old owner's filter); 16:
/// and the health check at the deployment's cadence (`CADENCE`: the pulse's beats look at the
/// pairs and sweep only those that changed or are busy, every pair once an hour) where it swept
/// every pair every second, so that what the sweeps mended at once must mend itself; 17: the
/// same requests and faults, and `progress` checks groups across clouds too; 18: and the queue
/// refusing to hide a batch's messages while the provisioner's next batch dies
/// (`queue-hide-refused`: its messages stay hidden for the visibility timeout, 6 minutes, not a
/// lease's length).
pub const MIX: u32 = 18;

/// The pulse's cadence from mix 16, in beats of `world::PULSE_MS` (5 s): a look at every pair
/// each beat (every minute on a cloud with events), a busy pair swept every minute, every pair
/// every hour, as template.yaml's defaults (8 s looks) are near.
const CADENCE: phantom_rules::pulse::Cadence = phantom_rules::pulse::Cadence {
    look: 1,
    look_events: 12,
    busy: 12,
    sweep: 720,
};

/// How big a run is, and which mix it draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub users: usize,
    /// Requests and faults, each followed by a few simulated seconds.
    pub steps: usize,
    pub faults: bool,
    pub mix: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            users: 3,
            steps: 170,
            faults: true,
            mix: MIX,
        }
    }
}

/// An invariant that did not hold: its name, when, and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    pub invariant: &'static str,
    pub step: usize,
    pub detail: String,
}

/// What a run (or many) did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub runs: usize,
    pub steps: usize,
    pub simulated_ms: i64,
    /// Requests by action, and faults and invariants checked by kind.
    pub requests: BTreeMap<&'static str, usize>,
    pub faults: BTreeMap<&'static str, usize>,
    pub checks: BTreeMap<&'static str, usize>,
    /// Steps at which a group had each feature on, and each two at once.
    pub features: BTreeMap<&'static str, usize>,
    pub pairs: BTreeMap<(&'static str, &'static str), usize>,
    /// The longest time, once faults stopped, before every group was whole.
    pub longest_settle_ms: i64,
    /// The longest a hook's wait lasted past its timeout.
    pub longest_hook_overrun_ms: i64,
    /// The shortest run's simulated time, the clock's jumps left out (the time it was busy).
    pub shortest_busy_ms: i64,
}

impl Tally {
    pub fn add(&mut self, o: &Tally) {
        self.shortest_busy_ms = if self.runs == 0 {
            o.shortest_busy_ms
        } else {
            self.shortest_busy_ms.min(o.shortest_busy_ms)
        };
        self.runs += o.runs;
        self.steps += o.steps;
        self.simulated_ms += o.simulated_ms;
        for (into, from) in [
            (&mut self.requests, &o.requests),
            (&mut self.faults, &o.faults),
            (&mut self.checks, &o.checks),
            (&mut self.features, &o.features),
        ] {
            for (k, v) in from {
                *into.entry(k).or_default() += v;
            }
        }
        for (k, v) in &o.pairs {
            *self.pairs.entry(*k).or_default() += v;
        }
        self.longest_settle_ms = self.longest_settle_ms.max(o.longest_settle_ms);
        self.longest_hook_overrun_ms = self.longest_hook_overrun_ms.max(o.longest_hook_overrun_ms);
    }

    pub fn faults_total(&self) -> usize {
        self.faults.values().sum()
    }

    pub fn checks_total(&self) -> usize {
        self.checks.values().sum()
    }
}

/// One seed's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub seed: u64,
    pub settings: Settings,
    /// A line a step, VM ids named in the order they appeared (`vm1`, `vm2`, ...).
    pub trace: Vec<String>,
    pub tally: Tally,
    pub broken: Vec<Broken>,
}

/// How often each fault strikes in a run: 0 or a rate per step, as the seed says.
struct Rates {
    cloud_error: f64,
    lost_answer: f64,
    zone_full: f64,
    vm_death: f64,
    impaired: f64,
    provisioner_crash: f64,
    health_check_crash: f64,
    slow_boot: f64,
    describe_lag: f64,
    lb_unhealthy: f64,
    api_crash: f64,
    clock_jump: f64,
    store_refused: f64,
    store_lost_answer: f64,
    queue_duplicate: f64,
    queue_delay: f64,
    queue_split: f64,
    queue_refuse: f64,
    queue_hide_refused: f64,
    spot_interruption: f64,
    rebalance_signal: f64,
    spot_short: f64,
    scheduled_event: f64,
    load: f64,
    day_jump: f64,
    cloud_out: f64,
    tag_lag: f64,
}

impl Rates {
    fn drawn(rng: &mut Rng, on: bool, mix: u32) -> Self {
        let mut rate = |most: f64| {
            if on && rng.chance(0.7) {
                most * (1 + rng.below(100)) as f64 / 100.0
            } else {
                0.0
            }
        };
        let mut rates = Self {
            cloud_error: rate(0.15),
            lost_answer: rate(0.05),
            zone_full: rate(0.05),
            vm_death: rate(0.1),
            impaired: rate(0.05),
            provisioner_crash: rate(0.1),
            health_check_crash: rate(0.05),
            slow_boot: rate(0.03),
            describe_lag: rate(0.03),
            lb_unhealthy: if mix >= 2 { rate(0.05) } else { 0.0 },
            api_crash: rate(0.05),
            clock_jump: rate(0.02),
            store_refused: 0.0,
            store_lost_answer: 0.0,
            queue_duplicate: 0.0,
            queue_delay: 0.0,
            queue_split: 0.0,
            queue_refuse: 0.0,
            queue_hide_refused: 0.0,
            spot_interruption: 0.0,
            rebalance_signal: 0.0,
            spot_short: 0.0,
            scheduled_event: 0.0,
            load: 0.0,
            day_jump: 0.0,
            cloud_out: 0.0,
            tag_lag: 0.0,
        };
        // Drawn only from mix 3 on, so that the earlier mixes' seeds replay as they were found.
        if mix >= 3 {
            rates.store_refused = rate(0.05);
            rates.store_lost_answer = rate(0.05);
            rates.queue_duplicate = rate(0.05);
            rates.queue_delay = rate(0.05);
            rates.queue_split = rate(0.05);
            rates.queue_refuse = rate(0.02);
        }
        if mix >= 4 {
            rates.spot_interruption = rate(0.08);
            rates.rebalance_signal = rate(0.08);
            rates.spot_short = rate(0.04);
            rates.scheduled_event = rate(0.04);
        }
        if mix >= 5 {
            rates.load = rate(0.1);
            rates.day_jump = rate(0.01);
        }
        if mix >= 6 {
            rates.cloud_out = rate(0.04);
        }
        if mix >= 15 {
            rates.tag_lag = rate(0.05);
        }
        if mix >= 18 {
            rates.queue_hide_refused = rate(0.03);
        }
        rates
    }
}

/// What a group wanted at a time (Unix ms), in VMs with what AWS allows above, and whether it
/// was on one cloud (`launched-once`).
type Wanted = (i64, i64, bool);

struct Actor {
    user: User,
    client: aws_sdk_autoscaling::Client,
    /// VMs the user detached from a group, which may be attached again while they run.
    detached: Vec<String>,
}

struct Sim {
    w: World,
    /// From mix 16, the health check with the pulse, kept as a Lambda instance keeps it (its
    /// pairs' views, its opened credentials).
    pulsed: Option<Arc<health_check::HealthCheck>>,
    rng: Rng,
    actors: Vec<Actor>,
    rates: Rates,
    out: Outcome,
    step: usize,
    /// VM ids as the trace names them.
    names: BTreeMap<String, String>,
    /// Armed for the provisioner's next batch: the adapter step it crashes at.
    crash_batch: Option<u64>,
    /// Armed for the health check's next run: the adapter step it crashes at.
    crash_check: Option<u64>,
    /// Zones made full, and the step at which they have room again.
    full: Vec<(&'static str, &'static str, usize)>,
    /// The store's faults not struck yet: armed only while a handler runs (the simulation's own
    /// reads of the store are not the service's).
    store_fault: Option<(StoreFault, usize)>,
    /// Received messages still to be delivered twice, to be delivered late, and batches still to
    /// be split between two provisioners at once (in reverse order).
    queue_duplicate: usize,
    queue_delay: usize,
    queue_split: usize,
    /// The step until which the queue refuses sends.
    queue_refuse_until: Option<usize>,
    /// The step until which the queue refuses to hide received messages.
    hide_refuse_until: Option<usize>,
    /// Spot VMs warned of their interruption: the cloud takes each back at its time (Unix ms).
    doomed: Vec<(&'static str, String, i64)>,
    /// Every VM warned of its interruption, given a rebalance recommendation, impaired, failing
    /// its target group's health check, set unhealthy or scheduled to retire, with when it first
    /// was (Unix ms): on its way out, so letting it go is no flap, and a launch soon after may be
    /// its replacement (`no-flap`).
    ailing: BTreeMap<String, i64>,
    /// VMs a fault ended (they died, or their spot capacity was taken back): a detached one may
    /// go so (`detached-runs`).
    ended: BTreeSet<String>,
    /// The VMs' CPU load as the metric source has it (`load`); from mix 10 each group's
    /// `App`/`Load` in Phantom's CloudWatch too, as a CloudWatch agent publishes it.
    load: f64,
    /// Instance types without spot, and the step at which spot is back.
    no_spot: Vec<(&'static str, &'static str, usize)>,
    /// Clouds refusing every launch, and the step at which they launch again.
    out_clouds: Vec<(&'static str, usize)>,
    /// The clock's jumps: when each ended (Unix ms) and how far it went; a hook's timeout is
    /// judged on the time the service had.
    jumps: Vec<(i64, i64)>,
    /// Since when (Unix ms) each group has told its user's topic, by (user, group id), as seen
    /// after each step.
    told_since: BTreeMap<(String, String), i64>,
    /// Each group's bound on its VMs over time (Unix ms, VMs), by (user, group id): its MaxSize
    /// and maintenance headroom as they were.
    bounds: BTreeMap<(String, String), Vec<(i64, i64)>>,
    /// VMs the users attached (Unix ms), by (user, group name): AWS checks only that the desired
    /// capacity with them stays within MaxSize, so they may land on VMs a move launched above it.
    attached: BTreeMap<(String, String), Vec<i64>>,
    /// When the users changed a group's tags (Unix ms), by (user, group name): `phantom:clouds`
    /// ranks its clouds anew, and VMs move (`no-flap`).
    retagged: BTreeMap<(String, String), Vec<i64>>,
    /// When the users started a group's instance refresh (Unix ms), by (user, group name): its
    /// first launches may follow a move's let-go at once (`no-flap`), and the group may be
    /// gone, its refreshes with it, by the time the check reads them.
    refreshed: BTreeMap<(String, String), Vec<i64>>,
    /// Each group's desired capacity (and what AWS allows above it) over time (Unix ms, VMs,
    /// whether on one cloud), by (user, group id), for `launched-once`.
    wanted: BTreeMap<(String, String), Vec<Wanted>>,
    /// Until when (Unix ms) faults may hold launches back, by cloud or `all` (`progress`).
    disturbed: BTreeMap<&'static str, i64>,
    /// Since when (Unix ms) each group has been short of its desired capacity, by (user, group id).
    short_since: BTreeMap<(String, String), i64>,
    /// Each group's launch backoff as last seen (Unix ms), by (user, group id): a new one means a
    /// launch failed since.
    retry_seen: BTreeMap<(String, String), i64>,
    /// Each group's VMs in each zone as last seen, by (user, group id): a zone that lost one
    /// since had its share when a launch elsewhere failed.
    zones_seen: BTreeMap<(String, String), BTreeMap<String, i64>>,
    /// Each group's desired capacity at the last check (`progress`): a round's failed launch
    /// was for it, not for a desired capacity raised later in the same step.
    desired_checked: BTreeMap<(String, String), i64>,
    /// Each group's desired capacity each simulated second (Unix ms, units), by (user, group
    /// id): a policy may raise and lower it between two steps.
    desired_seen: BTreeMap<(String, String), Vec<(i64, i64)>>,
    /// When each group last had a reason to launch first (Unix ms), by (user, group id).
    launch_first: BTreeMap<(String, String), i64>,
    /// What was found broken already (an invariant, and the group or VM): told once.
    told: std::collections::BTreeSet<(&'static str, String)>,
}

/// Runs seed `seed`.
pub async fn run(seed: u64, settings: Settings) -> Outcome {
    phantom_rules::ids::seed(Some(seed));
    let w = World::starting_at(START_MS).await;
    let mut rng = Rng::new(seed);
    let rates = Rates::drawn(&mut rng, settings.faults, settings.mix);
    if settings.mix >= 4 {
        // Each cloud's template `fleet`; t2.small's spot the cheaper.
        for cloud in ["hotel", "sierra"] {
            w.cloud(cloud)
                .add_template("fleet", crate::world::IMAGE, "t2.micro");
            w.cloud(cloud).set_spot_price("t2.micro", 0.012);
            w.cloud(cloud).set_spot_price("t2.small", 0.006);
        }
    }
    if settings.mix >= 7 {
        // Handlers at work together interleave at each store and cloud call.
        w.store.interleave(true);
        for cloud in ["hotel", "sierra"] {
            w.cloud(cloud).interleave(true);
        }
    }
    if settings.mix >= 5 {
        // Target tracking, predictive policies and alarms read the VMs' CPU, at the target first.
        w.metric_source().await;
        w.metric(rest::CPU, Some(rest::CPU_TARGET));
    }
    let mut actors = Vec::new();
    for _ in 0..settings.users {
        let user = w.user("u").await;
        let client = w.sdk(&user);
        if settings.mix >= 3 {
            w.publisher.create(&topic(&user.name));
            w.publisher.create(&hook_queue(&user.name));
        }
        // A target group of the user's on each cloud, its deregistration delay drawn.
        if settings.mix >= 2 {
            let tg = phantom_rules::traffic::source(&target_group(&user.name), None)
                .expect("a target group's ARN");
            for cloud in ["hotel", "sierra"] {
                w.cloud(cloud).add_balancer(&tg, rng.between(0, 20));
            }
        }
        // And a classic load balancer of the user's name.
        if settings.mix >= 5 {
            let classic = phantom_rules::traffic::source(&user.name, Some("elb"))
                .expect("a classic load balancer's name");
            for cloud in ["hotel", "sierra"] {
                w.cloud(cloud).add_balancer(&classic, rng.between(0, 20));
            }
        }
        for lc in work::LCS {
            client
                .create_launch_configuration()
                .launch_configuration_name(lc)
                .image_id(crate::world::IMAGE)
                .instance_type("t2.micro")
                .send()
                .await
                .expect("a simulated user's launch configuration");
        }
        actors.push(Actor {
            user,
            client,
            detached: Vec::new(),
        });
    }
    let pulsed = (settings.mix >= 16).then(|| Arc::new(w.pulsed(CADENCE)));
    let mut sim = Sim {
        w,
        pulsed,
        rng,
        actors,
        rates,
        out: Outcome {
            seed,
            settings,
            trace: Vec::new(),
            tally: Tally {
                runs: 1,
                ..Tally::default()
            },
            broken: Vec::new(),
        },
        step: 0,
        names: BTreeMap::new(),
        crash_batch: None,
        crash_check: None,
        full: Vec::new(),
        store_fault: None,
        told_since: BTreeMap::new(),
        jumps: Vec::new(),
        queue_duplicate: 0,
        queue_delay: 0,
        queue_split: 0,
        queue_refuse_until: None,
        hide_refuse_until: None,
        doomed: Vec::new(),
        ailing: BTreeMap::new(),
        ended: BTreeSet::new(),
        load: rest::CPU_TARGET,
        no_spot: Vec::new(),
        out_clouds: Vec::new(),
        bounds: BTreeMap::new(),
        attached: BTreeMap::new(),
        retagged: BTreeMap::new(),
        refreshed: BTreeMap::new(),
        wanted: BTreeMap::new(),
        launch_first: BTreeMap::new(),
        desired_seen: BTreeMap::new(),
        disturbed: BTreeMap::new(),
        short_since: BTreeMap::new(),
        retry_seen: BTreeMap::new(),
        zones_seen: BTreeMap::new(),
        desired_checked: BTreeMap::new(),
        told: Default::default(),
    };
    for step in 1..=settings.steps {
        sim.step = step;
        sim.one_step().await;
    }
    sim.quiesce().await;
    sim.out.tally.steps = settings.steps;
    sim.out.tally.simulated_ms = sim.w.clock.now_ms() - START_MS;
    let jumped: i64 = sim.jumps.iter().map(|(_, ms)| ms).sum();
    sim.out.tally.shortest_busy_ms = sim.out.tally.simulated_ms - jumped;
    phantom_rules::ids::seed(None);
    sim.out
}

impl Sim {
    fn say(&mut self, line: String) {
        let at = (self.w.clock.now_ms() - START_MS) / 1000;
        let line = self.named(&format!("[{at:>5}s] {line}"));
        self.out.trace.push(line);
    }

    /// `text` with each VM id replaced by its name in this run (ids are unique per process, not
    /// per run).
    fn named(&mut self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("i-") {
            out.push_str(&rest[..at]);
            let id: String = rest[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if id.len() == 19 {
                let n = self.names.len() + 1;
                let name = self.names.entry(id.clone()).or_insert(format!("vm{n}"));
                out.push_str(name);
            } else {
                out.push_str(&id);
            }
            rest = &rest[at + id.len()..];
        }
        out.push_str(rest);
        out
    }

    fn broke(&mut self, invariant: &'static str, detail: String) {
        let detail = self.named(&detail);
        self.say(format!("BROKEN {invariant}: {detail}"));
        self.out.broken.push(Broken {
            invariant,
            step: self.step,
            detail,
        });
    }

    fn cloud(&self, name: &str) -> &Arc<MemoryCloud> {
        self.w.cloud(name)
    }

    /// `id` is on its way out from now (`ailing`).
    fn ail(&mut self, id: &str) {
        let now = self.w.clock.now_ms();
        self.ailing.entry(id.to_string()).or_insert(now);
    }

    async fn one_step(&mut self) {
        if self.rng.chance(0.25) {
            self.fault().await;
        } else {
            self.request().await;
            // What the request set, before a round or a policy changes it again.
            self.see_desired().await;
        }
        let secs = self.rng.between(1, 8) as u64;
        self.tick(secs).await;
        self.features().await;
        check::safety(self).await;
        if self.out.settings.mix >= 5 {
            check::progress(self).await;
        }
    }

    async fn request(&mut self) {
        let who = self.rng.below(self.actors.len() as u64) as usize;
        // Mostly a group the user has (a request that names none is refused, and says less).
        let theirs: Vec<String> = match self.w.store.all_groups(&self.actors[who].user.name).await {
            Ok(gs) => gs.into_iter().map(|g| g.name).collect(),
            Err(_) => Vec::new(),
        };
        let group = match self.rng.pick(&theirs) {
            Some(g) if self.rng.chance(0.8) => g.clone(),
            _ => self.rng.pick(&work::GROUPS).expect("three").to_string(),
        };
        let group = group.as_str();
        let members: work::Members = self
            .w
            .store
            .instances(&self.actors[who].user.name, group)
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|m| (m.id, m.lifecycle.as_str().to_string()))
            .collect();
        let crash = self
            .rng
            .chance(self.rates.api_crash)
            .then(|| self.rng.between(1, 6) as u64);
        let client = self.actors[who].client.clone();
        let mut rng = Rng::new(self.rng.draw());
        // From mix 7 on, a request may meet a provisioner's batch at work: the two interleave
        // at each store and cloud call (a user's change lands mid-round).
        let race = self.out.settings.mix >= 7
            && crash.is_none()
            && self.crash_batch.is_none()
            && self.rng.chance(0.3);
        let batch = if race {
            // From mix 9 on, the group's own round: before, the queue was mostly empty when a
            // request was drawn, and the two met in no run of 10,000 seeds.
            if self.out.settings.mix >= 9 {
                let msg = Reconcile::new(&self.actors[who].user.name, group, "chaos: race");
                // A queue refusing sends is a fault of its own; the race then meets what waits.
                let _ = self.w.queue.send(&msg.into(), 0).await;
            }
            self.w.queue.receive(10)
        } else {
            Vec::new()
        };
        let tg = target_group(&self.actors[who].user.name);
        let (topic, hook_queue) = (
            topic(&self.actors[who].user.name),
            hook_queue(&self.actors[who].user.name),
        );
        let scene = work::Scene {
            topic: &topic,
            hook_queue: &hook_queue,
            group,
            members: &members,
            none: theirs.is_empty(),
            detached: &self.actors[who].detached,
            now_ms: self.w.clock.now_ms(),
            target_group: &tg,
            mix: self.out.settings.mix,
            classic: &self.actors[who].user.name,
            world: &self.w,
            user: &self.actors[who].user,
        };
        let call = work::request(&client, &mut rng, &scene);
        self.arm_store();
        let mut raced = None;
        let (drawn, answer) = match crash {
            None if !batch.is_empty() => {
                let p = self.w.provisioner();
                let (out, failed) = tokio::join!(call, p.handle_batch(batch.clone()));
                raced = Some(failed);
                out
            }
            None => call.await,
            Some(k) => {
                self.w.trip.arm(k);
                let out = tokio::select! {
                    biased;
                    _ = self.w.trip.tripped() => None,
                    out = call => Some(out),
                };
                self.w.trip.disarm();
                match out {
                    Some(out) => out,
                    None => {
                        *self.out.tally.faults.entry("api-crash").or_default() += 1;
                        (
                            work::Drawn {
                                action: "(crashed)",
                                what: format!("at step {k}"),
                                vm: None,
                            },
                            work::Answer::Crashed,
                        )
                    }
                }
            }
        };
        self.disarm_store();
        if let Some(failed) = raced {
            self.see_desired().await;
            self.say(format!(
                "a provisioner handled {} messages while the next request ran",
                batch.len()
            ));
            *self.out.tally.faults.entry("race").or_default() += 1;
            self.w.queue.settle(&batch, &failed);
        }
        *self.out.tally.requests.entry(drawn.action).or_default() += 1;
        if answer == work::Answer::Code("OK".into()) {
            let detached = &mut self.actors[who].detached;
            match (drawn.action, &drawn.vm) {
                ("DetachInstances", Some(id)) => detached.push(id.clone()),
                ("AttachInstances", Some(id)) => {
                    detached.retain(|d| d != id);
                    let at = self.w.clock.now_ms();
                    let key = (self.actors[who].user.name.clone(), group.to_string());
                    self.attached.entry(key).or_default().push(at);
                }
                ("SetInstanceHealth", Some(id)) => {
                    self.ail(id);
                }
                ("CreateOrUpdateTags" | "DeleteTags", _) => {
                    let at = self.w.clock.now_ms();
                    let key = (self.actors[who].user.name.clone(), group.to_string());
                    self.retagged.entry(key).or_default().push(at);
                }
                ("StartInstanceRefresh", _) => {
                    let at = self.w.clock.now_ms();
                    let key = (self.actors[who].user.name.clone(), group.to_string());
                    self.refreshed.entry(key).or_default().push(at);
                }
                _ => {}
            }
        }
        *self.out.tally.checks.entry("answers").or_default() += 1;
        let who = &self.actors[who].user.name;
        let line = format!("{who} {} {}: {answer:?}", drawn.action, drawn.what);
        self.say(line);
        if let work::Answer::Broken(invariant, detail) = answer {
            self.broke(
                invariant,
                format!("{} {}: {detail}", drawn.action, drawn.what),
            );
        }
    }

    async fn fault(&mut self) {
        let clouds = ["hotel", "sierra"];
        let on = *self.rng.pick(&clouds).expect("two");
        let r = &self.rates;
        let kinds = [
            ("cloud-error", r.cloud_error),
            ("lost-answer", r.lost_answer),
            ("zone-full", r.zone_full),
            ("vm-death", r.vm_death),
            ("impaired", r.impaired),
            ("provisioner-crash", r.provisioner_crash),
            ("health-check-crash", r.health_check_crash),
            ("slow-boot", r.slow_boot),
            ("describe-lag", r.describe_lag),
            ("lb-unhealthy", r.lb_unhealthy),
            ("clock-jump", r.clock_jump),
            ("store-refused", r.store_refused),
            ("store-lost-answer", r.store_lost_answer),
            ("queue-duplicate", r.queue_duplicate),
            ("queue-delay", r.queue_delay),
            ("queue-split", r.queue_split),
            ("queue-refuse", r.queue_refuse),
            ("spot-interruption", r.spot_interruption),
            ("rebalance-signal", r.rebalance_signal),
            ("spot-short", r.spot_short),
            ("scheduled-event", r.scheduled_event),
            ("load", r.load),
            ("day-jump", r.day_jump),
            ("cloud-out", r.cloud_out),
            ("tag-lag", r.tag_lag),
            // Last, so that the earlier mixes (where it is 0) pick as they did.
            ("queue-hide-refused", r.queue_hide_refused),
        ];
        let total: f64 = kinds.iter().map(|(_, p)| p).sum();
        if total == 0.0 {
            return;
        }
        let mut at = total * (self.rng.below(1_000_000) as f64 / 1_000_000.0);
        let kind = kinds
            .iter()
            .find(|(_, p)| {
                at -= p;
                at < 0.0
            })
            .map_or("cloud-error", |(k, _)| *k);
        let alive = self.cloud(on).alive();
        let vm = self.rng.pick(&alive).cloned();
        let spot: Vec<String> = self
            .cloud(on)
            .vms()
            .into_iter()
            .filter(|v| v.state.alive() && v.market == phantom_model::instance::Market::Spot)
            .map(|v| v.id)
            .collect();
        let what = match kind {
            "cloud-error" => {
                let n = self.rng.between(1, 4) as usize;
                let fault = *self
                    .rng
                    .pick(&[Fault::ServerError, Fault::Throttling])
                    .expect("two");
                self.cloud(on).fail_next(n, fault);
                format!("{on}: the next {n} calls fail ({fault:?})")
            }
            "lost-answer" => {
                self.cloud(on).lose_next_launch_answers(1);
                format!("{on}: the next launch's answer is lost")
            }
            "zone-full" => {
                let zone = *self.rng.pick(&crate::world::ZONES).expect("two");
                self.cloud(on).zone_full(zone, true);
                // From mix 5 on, up to 40 steps (a zone out of a type for minutes).
                let most = if self.out.settings.mix >= 5 { 40 } else { 10 };
                let until = self.step + self.rng.between(1, most) as usize;
                self.full.push((on, zone, until));
                format!("{on}: {zone} full until step {until}")
            }
            "vm-death" => match vm {
                Some(id) => {
                    self.cloud(on).terminate_outside(&id);
                    self.ended.insert(id.clone());
                    format!("{on}: {id} dies")
                }
                None => return,
            },
            "impaired" => match vm {
                Some(id) => {
                    self.cloud(on).impair(&id, Which::System);
                    self.ail(&id);
                    format!("{on}: {id}'s system status check impaired")
                }
                None => return,
            },
            "provisioner-crash" => {
                let k = self.rng.between(1, 30) as u64;
                self.crash_batch = Some(k);
                format!("the provisioner's next batch crashes at adapter step {k}")
            }
            "health-check-crash" => {
                let k = self.rng.between(1, 20) as u64;
                self.crash_check = Some(k);
                format!("the health check's next run crashes at adapter step {k}")
            }
            "lb-unhealthy" => {
                let who = self.rng.below(self.actors.len() as u64) as usize;
                let tg = target_group(&self.actors[who].user.name);
                let there: Vec<String> = self
                    .cloud(on)
                    .registered(&tg)
                    .into_iter()
                    .filter(|id| alive.contains(id))
                    .collect();
                let Some(id) = self.rng.pick(&there).cloned() else {
                    return;
                };
                self.cloud(on).fail_health_check(&tg, &id, true);
                self.ail(&id);
                format!("{on}: {id} fails its target group's health check")
            }
            "tag-lag" => {
                // EC2's tags are eventually consistent: a detached VM still matches its owner.
                let secs = self.rng.between(1, 30) as u64;
                self.cloud(on)
                    .set_tag_lag(std::time::Duration::from_secs(secs));
                format!("{on}: tag filters match the tags VMs had {secs} s ago")
            }
            "describe-lag" => {
                // Within how long Phantom waits for a new VM to show (`MISSING_GRACE_MS`).
                let secs = self.rng.between(0, 12) as u64;
                self.cloud(on)
                    .set_describe_lag(std::time::Duration::from_secs(secs));
                format!("{on}: new VMs missing from DescribeInstances for {secs} s")
            }
            "store-refused" => {
                let n = self.rng.between(1, 3) as usize;
                self.store_fault = Some((StoreFault::Refused, n));
                format!("the store refuses the next {n} calls (throttled, no effect)")
            }
            "store-lost-answer" => {
                let n = self.rng.between(1, 2) as usize;
                self.store_fault = Some((StoreFault::LostAnswer, n));
                format!("the store's next {n} calls take effect and their answers are lost")
            }
            "queue-duplicate" => {
                let n = self.rng.between(1, 4) as usize;
                self.queue_duplicate = n;
                format!("the queue delivers the next {n} messages twice")
            }
            "queue-delay" => {
                let n = self.rng.between(1, 4) as usize;
                self.queue_delay = n;
                format!("the queue delivers the next {n} messages late")
            }
            "queue-split" => {
                let n = self.rng.between(1, 4) as usize;
                self.queue_split = n;
                format!("the queue's next {n} batches go to two provisioners at once, reordered")
            }
            "queue-refuse" => {
                let until = self.step + self.rng.between(1, 5) as usize;
                self.w.queue.refuse_sends(true);
                self.queue_refuse_until = Some(until);
                format!("the queue refuses sends until step {until}")
            }
            "queue-hide-refused" => {
                // With the provisioner's next batch dying: its messages stay hidden for the
                // visibility timeout, so only the asks its rounds left bring them back sooner.
                let until = self.step + self.rng.between(1, 5) as usize;
                let k = self.rng.between(1, 30) as u64;
                self.w.queue.refuse_hides(true);
                self.hide_refuse_until = Some(until);
                self.crash_batch = Some(k);
                format!("the queue refuses to hide messages until step {until}, and the provisioner's next batch crashes at adapter step {k}")
            }
            "spot-interruption" => {
                let Some(id) = self.rng.pick(&spot).cloned() else {
                    return;
                };
                self.cloud(on).warn_interruption(&id);
                self.ail(&id);
                self.ended.insert(id.clone());
                let at = self.w.clock.now_ms() + 120_000;
                self.doomed.push((on, id.clone(), at));
                format!("{on}: spot {id} is warned of its interruption in two minutes")
            }
            "rebalance-signal" => {
                let Some(id) = self.rng.pick(&spot).cloned() else {
                    return;
                };
                self.cloud(on).recommend_rebalance(&id);
                self.ail(&id);
                format!("{on}: spot {id} is at elevated risk (a rebalance recommendation)")
            }
            "spot-short" => {
                let t = *self.rng.pick(&work::FLEET_TYPES).expect("two");
                let until = self.step + self.rng.between(1, 10) as usize;
                self.cloud(on).spot_short_of(t, true);
                self.no_spot.push((on, t, until));
                format!("{on}: no spot {t} until step {until}")
            }
            "scheduled-event" => {
                let Some(id) = vm else { return };
                let secs = self.rng.between(60, 600);
                let at = self.w.clock.now_ms() + secs * 1000;
                self.cloud(on).schedule_event(
                    &id,
                    phantom_model::status::EventCode::InstanceRetirement,
                    at,
                );
                self.ail(&id);
                format!("{on}: {id}'s retirement is scheduled in {secs} s")
            }
            "cloud-out" => {
                // A whole cloud out of capacity, or the account at its limit, for minutes.
                let (code, message) = *self
                    .rng
                    .pick(&[
                        (
                            "InsufficientInstanceCapacity",
                            "We currently do not have sufficient capacity in the Region you requested.",
                        ),
                        (
                            "InstanceLimitExceeded",
                            "You have requested more instances than your current instance limit allows.",
                        ),
                    ])
                    .expect("two");
                let until = self.step + self.rng.between(1, 30) as usize;
                self.cloud(on).refuse(code, message);
                self.out_clouds.retain(|o| o.0 != on);
                self.out_clouds.push((on, until));
                format!("{on}: every launch refused ({code}) until step {until}")
            }
            "slow-boot" => {
                let secs = self.rng.between(0, 90) as u64;
                self.cloud(on)
                    .set_boot_time(std::time::Duration::from_secs(secs));
                format!("{on}: new VMs take {secs} s to boot")
            }
            "load" => {
                let cpu = self.rng.between(5, 95);
                self.w.metric(rest::CPU, Some(cpu as f64));
                self.load = cpu as f64;
                format!("the VMs' CPU is {cpu} % from now on")
            }
            "day-jump" => {
                // A day at once: VMs past a MaxInstanceLifetime, scheduled actions due.
                let secs = 86_400;
                self.w.clock.advance_ms(secs * 1000);
                self.jumps.push((self.w.clock.now_ms(), secs * 1000));
                format!("the clock jumps {secs} s")
            }
            _ => {
                let secs = self.rng.between(60, 600);
                self.w.clock.advance_ms(secs * 1000);
                self.jumps.push((self.w.clock.now_ms(), secs * 1000));
                format!("the clock jumps {secs} s")
            }
        };
        *self.out.tally.faults.entry(kind).or_default() += 1;
        // Until when it may hold a group's launches back, on its cloud or on all (`progress`):
        // a failed call's backoff, a message late or redelivered after the visibility timeout.
        let now = self.w.clock.now_ms();
        let (scope, until) = match kind {
            "zone-full" | "vm-death" | "impaired" | "slow-boot" | "lb-unhealthy" | "load"
            | "scheduled-event" | "rebalance-signal" | "spot-interruption" | "tag-lag" => ("", now),
            "cloud-error" | "lost-answer" | "describe-lag" | "spot-short" | "cloud-out" => {
                (on, now + 30_000)
            }
            _ => ("all", now + 60_000),
        };
        if !scope.is_empty() {
            let at = self.disturbed.entry(scope).or_default();
            *at = (*at).max(until);
        }
        self.say(format!("fault {what}"));
    }

    /// Moves the clock `secs` seconds, one at a time: the work queue settles (a batch crashing if
    /// one is armed), and the health check runs each second, as the world's `run_for` does.
    /// Every user's groups' `App`/`Load` now (a store fault may refuse it, as a lost agent's
    /// call would be).
    async fn publish_load(&self, now: i64) {
        use phantom_model::cloudwatch::{Datum, Dimension, MetricId, Stats};
        for a in &self.actors {
            let data: Vec<Datum> = work::GROUPS
                .iter()
                .map(|g| Datum {
                    metric: MetricId::new(
                        cloudwatch::NAMESPACE,
                        cloudwatch::METRIC,
                        &[Dimension {
                            name: "AutoScalingGroupName".into(),
                            value: g.to_string(),
                        }],
                    ),
                    at_ms: now,
                    unit: Some("Percent".into()),
                    stats: Stats::one(self.load),
                    high_resolution: true,
                })
                .collect();
            let _ = self.w.store.put_data(&a.user.name, &data, &[]).await;
        }
    }

    async fn tick(&mut self, secs: u64) {
        for _ in 0..secs {
            self.w.clock.advance_ms(1_000);
            let step = self.step;
            let mended: Vec<_> = self.full.extract_if(.., |f| f.2 <= step).collect();
            for (cloud, zone, _) in mended {
                self.cloud(cloud).zone_full(zone, false);
            }
            if self.queue_refuse_until.is_some_and(|until| until <= step) {
                self.queue_refuse_until = None;
                self.w.queue.refuse_sends(false);
            }
            if self.hide_refuse_until.is_some_and(|until| until <= step) {
                self.hide_refuse_until = None;
                self.w.queue.refuse_hides(false);
            }
            let back: Vec<_> = self.no_spot.extract_if(.., |s| s.2 <= step).collect();
            for (cloud, t, _) in back {
                self.cloud(cloud).spot_short_of(t, false);
            }
            let now = self.w.clock.now_ms();
            let back: Vec<_> = self.out_clouds.extract_if(.., |o| o.1 <= step).collect();
            for (cloud, _) in back {
                self.cloud(cloud).stop_refusing();
            }
            // An outage holds its cloud's launches back while it lasts, and a backoff after.
            for (cloud, _) in &self.out_clouds {
                let at = self.disturbed.entry(cloud).or_default();
                *at = (*at).max(now + 30_000);
            }
            // A batch's failed or crashed round may wait for it as long as it lasts, and a
            // minute after (as after any queue fault).
            if self.hide_refuse_until.is_some() {
                let at = self.disturbed.entry("all").or_default();
                *at = (*at).max(now + 60_000);
            }
            let due: Vec<_> = self.doomed.extract_if(.., |d| d.2 <= now).collect();
            for (cloud, id, _) in due {
                self.cloud(cloud).terminate_outside(&id);
            }
            // Each group's load in Phantom's CloudWatch, every 10 s, as an agent publishes it.
            if self.out.settings.mix >= 10 && now % 10_000 == 0 {
                self.publish_load(now).await;
            }
            // The clouds' events, as EventBridge brings them (while the queue takes sends).
            if self.out.settings.mix >= 4 && self.queue_refuse_until.is_none() {
                for cloud in ["hotel", "sierra"] {
                    let c = self.cloud(cloud).clone();
                    self.w.deliver_events(&c).await;
                }
            }
            // From mix 16 the pulse's beats look and sweep (a tick that fails comes back after
            // the pulse queue's visibility timeout); the schedule's run then only keeps it alive.
            if let Some(p) = &self.pulsed {
                while let Some(tick) = self.w.pulse.receive() {
                    if p.tick(tick).await.is_err() {
                        self.w
                            .pulse
                            .redeliver(tick, crate::world::PULSE_VISIBILITY_MS);
                    }
                }
            }
            self.settle().await;
            let h = match &self.pulsed {
                Some(p) => p.clone(),
                None => Arc::new(self.w.health()),
            };
            let struck = self.w.store.faults_struck();
            self.arm_store();
            let run = match self.crash_check.take() {
                None => Some(h.run().await),
                Some(k) => {
                    self.w.trip.arm(k);
                    let out = tokio::select! {
                        biased;
                        _ = self.w.trip.tripped() => None,
                        out = h.run() => Some(out),
                    };
                    self.w.trip.disarm();
                    out
                }
            };
            self.disarm_store();
            // What its policies and schedules set, before the rounds act on it.
            self.see_desired().await;
            match run {
                Some(Ok(_)) => {}
                // A store or queue that failed it explains a failed run: the next one picks up.
                Some(Err(e))
                    if self.w.store.faults_struck() > struck
                        || self.queue_refuse_until.is_some() =>
                {
                    self.say(format!("the health check's run failed: {e}"))
                }
                Some(Err(e)) => self.broke("health-check-runs", format!("{e}")),
                None => self.say("the health check crashed".into()),
            }
            self.settle().await;
            self.see_desired().await;
        }
    }

    /// Notes each group's desired capacity now (`launched-once` bounds a group by the most it
    /// wanted lately).
    async fn see_desired(&mut self) {
        let now = self.w.clock.now_ms();
        for a in &self.actors {
            let Ok(groups) = self.w.store.all_groups(&a.user.name).await else {
                continue;
            };
            for g in groups {
                let seen = self
                    .desired_seen
                    .entry((a.user.name.clone(), g.id.clone()))
                    .or_default();
                // Kept for the whole run: `no-flap` looks back from the end.
                seen.push((now, g.desired));
            }
        }
    }

    /// Delivers the work queue to provisioners until none is visible: a failed message comes
    /// back as the provisioner hid it (6 s); a crashed batch's messages as it last hid them (10 s
    /// from the last time, a lease's length).
    /// The queue's faults strike here: a message delivered twice (the copy up to 40 s later) or
    /// late (1 to 60 s), a batch split between two provisioners at once, in reverse order.
    async fn settle(&mut self) {
        let mut handled = 0;
        loop {
            let mut batch = self.w.queue.receive(10);
            if batch.is_empty() {
                return;
            }
            // Work that makes more work as fast as it is done never ends: a storm, told once.
            handled += batch.len();
            if handled > STORM {
                let left = self.w.queue.len();
                if self.told.insert(("no-storm", String::new())) {
                    self.broke(
                        "no-storm",
                        format!("more than {STORM} messages in one simulated second, {left} left"),
                    );
                }
                // The run is broken already: the queue is emptied, so that it ends.
                self.w.queue.purge();
                return;
            }
            while self.queue_delay > 0 && !batch.is_empty() {
                self.queue_delay -= 1;
                let m = batch.remove(0);
                let ms = self.rng.between(1, 60) * 1000;
                self.w.queue.delete(&m.receipt);
                self.w.queue.retry(m.body, ms);
            }
            for m in batch.iter().take(self.queue_duplicate) {
                let ms = self.rng.between(0, 40) * 1000;
                self.w.queue.retry(m.body.clone(), ms);
            }
            self.queue_duplicate = self.queue_duplicate.saturating_sub(batch.len());
            if batch.is_empty() {
                continue;
            }
            let split = self.queue_split > 0 && batch.len() >= 2 && self.crash_batch.is_none();
            self.arm_store();
            let failed = if split {
                self.queue_split -= 1;
                batch.reverse();
                let other = batch.split_off(batch.len() / 2);
                let (p, q) = (self.w.provisioner(), self.w.provisioner());
                let (a, b) =
                    tokio::join!(p.handle_batch(batch.clone()), q.handle_batch(other.clone()));
                batch.extend(other);
                Some(a.into_iter().chain(b).collect::<Vec<_>>())
            } else {
                self.run_batch(batch.clone()).await
            };
            self.disarm_store();
            // What its rounds set (a LaunchInstances carried out raises it).
            self.see_desired().await;
            match failed {
                Some(failed) => self.w.queue.settle(&batch, &failed),
                // Its messages come back as it last hid them.
                None => self.say(format!(
                    "the provisioner crashed with {} messages",
                    batch.len()
                )),
            }
        }
    }

    /// One provisioner's batch: the ids of the messages that failed, or None if it crashed (as
    /// armed).
    async fn run_batch(
        &mut self,
        batch: Vec<phantom_seams::queue::Received>,
    ) -> Option<Vec<String>> {
        let p = self.w.provisioner();
        match self.crash_batch.take() {
            None => Some(p.handle_batch(batch).await),
            Some(k) => {
                self.w.trip.arm(k);
                let out = tokio::select! {
                    biased;
                    _ = self.w.trip.tripped() => None,
                    failed = p.handle_batch(batch) => Some(failed),
                };
                self.w.trip.disarm();
                out
            }
        }
    }

    /// The store's faults armed for a handler's run.
    fn arm_store(&self) {
        if let Some((fault, n)) = self.store_fault {
            self.w.store.fail_next(n, fault);
        }
    }

    /// Back from a handler's run: the store's faults it did not meet wait for the next.
    fn disarm_store(&mut self) {
        self.store_fault = self.w.store.take_faults();
    }

    /// Counts the features each group has on now, alone and in pairs; notes since when each
    /// tells its user's topic.
    async fn features(&mut self) {
        let now = self.w.clock.now_ms();
        for a in &self.actors {
            let Ok(groups) = self.w.store.all_groups(&a.user.name).await else {
                continue;
            };
            let topic = topic(&a.user.name);
            for g in groups {
                let key = (a.user.name.clone(), g.id.clone());
                if g.settings
                    .notifications
                    .iter()
                    .any(|n| n.topic_arn == topic)
                {
                    self.told_since.entry(key).or_insert(now);
                } else {
                    self.told_since.remove(&key);
                }
                let members = self
                    .w
                    .store
                    .instances(&a.user.name, &g.name)
                    .await
                    .unwrap_or_default();
                let s = &g.settings;
                let on: Vec<&'static str> = [
                    ("hooks", !s.lifecycle_hooks.is_empty()),
                    ("suspended", !s.suspended_processes.is_empty()),
                    ("maintenance", s.instance_maintenance_policy.is_some()),
                    ("protected", members.iter().any(|m| m.protected)),
                    ("unhealthy", members.iter().any(|m| !m.healthy)),
                    (
                        "refresh",
                        s.instance_refreshes.iter().any(|r| r.status.active()),
                    ),
                    ("deleting", g.deleting()),
                    ("on-sierra", g.cloud == "sierra"),
                    ("balanced", !s.traffic.is_empty()),
                    ("elb-health", s.health_check_type.contains("ELB")),
                    ("warm-pool", s.warm_pool_configuration.is_some()),
                    ("notified", !s.notifications.is_empty()),
                    ("mixed", s.mixed_instances_policy.is_some()),
                    (
                        "spot",
                        members
                            .iter()
                            .any(|m| m.market == phantom_model::instance::Market::Spot),
                    ),
                    ("weighted", members.iter().any(|m| m.weight.is_some())),
                    ("capacity-rebalance", s.capacity_rebalance),
                    (
                        "across",
                        s.tags
                            .iter()
                            .any(|t| t.key == phantom_rules::spread::TAG_CLOUDS),
                    ),
                    (
                        "standby",
                        members
                            .iter()
                            .any(|m| m.lifecycle == phantom_model::instance::Lifecycle::Standby),
                    ),
                    (
                        "tracking",
                        s.scaling_policies
                            .iter()
                            .any(|p| p.policy_type() == "TargetTrackingScaling"),
                    ),
                    (
                        "predictive",
                        s.scaling_policies
                            .iter()
                            .any(|p| p.policy_type() == "PredictiveScaling"),
                    ),
                    (
                        "alarm",
                        s.scaling_policies.iter().any(|p| p.alarm.is_some()),
                    ),
                    (
                        "webhook",
                        s.scaling_policies.iter().any(|p| p.webhook.is_some()),
                    ),
                    ("scheduled", !s.scheduled_actions.is_empty()),
                    ("lifetime", s.max_instance_lifetime.is_some_and(|l| l > 0)),
                    ("metrics", !s.enabled_metrics.is_empty()),
                    ("classic-lb", !s.load_balancer_names.is_empty()),
                ]
                .into_iter()
                .filter(|(_, on)| *on)
                .map(|(f, _)| f)
                .collect();
                for (i, f) in on.iter().enumerate() {
                    *self.out.tally.features.entry(f).or_default() += 1;
                    for g2 in &on[i + 1..] {
                        *self.out.tally.pairs.entry((f, g2)).or_default() += 1;
                    }
                }
            }
        }
    }

    /// Faults stop and the users let go (processes resumed, hooks deleted); then every group has
    /// `SETTLE_BOUND_MS` to be whole on its cloud, Phantom's records and the clouds agreeing.
    async fn quiesce(&mut self) {
        self.step += 1;
        self.say(
            "faults stop; the users resume their groups' processes and drop their hooks".into(),
        );
        if self.out.settings.mix >= 5 {
            self.say(
                "the VMs' CPU is at the target; the users drop their alarms and forecasts".into(),
            );
            self.w.metric(rest::CPU, Some(rest::CPU_TARGET));
            self.load = rest::CPU_TARGET;
        }
        for cloud in ["hotel", "sierra"] {
            self.cloud(cloud).clear_faults();
            for zone in crate::world::ZONES {
                self.cloud(cloud).zone_full(zone, false);
            }
        }
        self.full.clear();
        self.out_clouds.clear();
        self.crash_batch = None;
        self.crash_check = None;
        self.store_fault = None;
        self.queue_duplicate = 0;
        self.queue_delay = 0;
        self.queue_split = 0;
        self.queue_refuse_until = None;
        self.w.queue.refuse_sends(false);
        self.hide_refuse_until = None;
        self.w.queue.refuse_hides(false);
        for (cloud, t, _) in std::mem::take(&mut self.no_spot) {
            self.cloud(cloud).spot_short_of(t, false);
        }
        self.doomed.clear();
        let mut lines = Vec::new();
        for cloud in ["hotel", "sierra"] {
            self.cloud(cloud).set_boot_time(std::time::Duration::ZERO);
        }
        for a in &self.actors {
            // VMs in Standby go back in service (or, refused, leave).
            let standby: Vec<(String, String)> =
                match self.w.store.all_instances(&a.user.name).await {
                    Ok(all) => all
                        .into_iter()
                        .filter(|(_, m)| m.lifecycle == phantom_model::instance::Lifecycle::Standby)
                        .map(|(g, m)| (g, m.id))
                        .collect(),
                    Err(_) => Vec::new(),
                };
            for (group, id) in standby {
                let back = a
                    .client
                    .exit_standby()
                    .auto_scaling_group_name(&group)
                    .instance_ids(&id)
                    .send()
                    .await;
                let mut said = vec![format!("ExitStandby {group} {id}: {:?}", work::judge(back))];
                for decrement in [false, true] {
                    if said.last().is_some_and(|l| l.ends_with("Code(\"OK\")")) {
                        break;
                    }
                    let gone = a
                        .client
                        .terminate_instance_in_auto_scaling_group()
                        .instance_id(&id)
                        .should_decrement_desired_capacity(decrement)
                        .send()
                        .await;
                    said.push(format!(
                        "TerminateInstanceInAutoScalingGroup {id} decrement={decrement}: {:?}",
                        work::judge(gone)
                    ));
                }
                lines.extend(said.into_iter().map(|l| format!("{} {l}", a.user.name)));
            }
            for group in work::GROUPS {
                let _ = a
                    .client
                    .resume_processes()
                    .auto_scaling_group_name(group)
                    .send()
                    .await;
                for hook in ["in", "out"] {
                    let _ = a
                        .client
                        .delete_lifecycle_hook()
                        .auto_scaling_group_name(group)
                        .lifecycle_hook_name(hook)
                        .send()
                        .await;
                }
                if self.out.settings.mix >= 5 {
                    let alarm =
                        serde_json::json!({"AutoScalingGroupName": group, "PolicyName": "steps"});
                    let _ = self
                        .w
                        .phantom_api(&a.user, "DeletePolicyAlarm", &alarm)
                        .await;
                    let _ = a
                        .client
                        .delete_policy()
                        .auto_scaling_group_name(group)
                        .policy_name("forecast")
                        .send()
                        .await;
                }
                if self.out.settings.mix >= 10 {
                    // CloudWatch's alarm on the group's metric, and the policy that tracks it.
                    let names = serde_json::json!({"AlarmNames": [cloudwatch::alarm_name(group)]});
                    let _ = self.w.cloudwatch(&a.user, "DeleteAlarms", names).await;
                    let _ = a
                        .client
                        .delete_policy()
                        .auto_scaling_group_name(group)
                        .policy_name("load")
                        .send()
                        .await;
                }
            }
        }
        for line in lines {
            self.say(line);
        }
        let from = self.w.clock.now_ms();
        loop {
            self.tick(10).await;
            let waited = self.w.clock.now_ms() - from;
            match check::whole(self).await {
                Ok(()) => {
                    self.out.tally.longest_settle_ms = waited;
                    self.say(format!(
                        "every group whole {} s after the faults stopped",
                        waited / 1000
                    ));
                    break;
                }
                Err(why) if waited >= SETTLE_BOUND_MS => {
                    self.broke(
                        "liveness",
                        format!(
                            "not whole {} s after the faults stopped: {why}",
                            waited / 1000
                        ),
                    );
                    break;
                }
                Err(_) => {}
            }
        }
        check::activities_end(self).await;
        check::no_flap(self).await;
        check::pool_passage(self).await;
        check::told(self).await;
    }
}

/// The shortest run of `seed` that still breaks an invariant: fewer steps (a prefix of the
/// same run), then fewer users, then without faults, each kept if it still breaks.
pub async fn shrink(seed: u64, failing: Outcome) -> Outcome {
    let mut best = failing;
    let mut s = best.settings;
    // The fewest steps that still break, by halving the distance.
    let (mut lo, mut hi) = (0, s.steps);
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        let o = Box::pin(run(seed, Settings { steps: mid, ..s })).await;
        if o.broken.is_empty() {
            lo = mid;
        } else {
            hi = mid;
            best = o;
        }
    }
    s.steps = hi;
    for fewer in [Settings { users: 1, ..s }, Settings { faults: false, ..s }] {
        if fewer == s || fewer.users > s.users {
            continue;
        }
        let o = Box::pin(run(seed, fewer)).await;
        if !o.broken.is_empty() {
            best = o;
            s = fewer;
        }
    }
    best
}

/// A user's SNS topic, told of its groups' instances (mix 3).
pub fn topic(user: &str) -> String {
    format!("arn:aws:sns:us-east-1:000000000000:{user}-events")
}

/// A user's SQS queue, told of the VMs its hooks hold (mix 3).
pub fn hook_queue(user: &str) -> String {
    format!("arn:aws:sqs:us-east-1:000000000000:{user}-hooks")
}

/// A user's target group (the same ARN on each cloud, as each cloud's ELB names its own).
pub fn target_group(user: &str) -> String {
    format!(
        "arn:aws:elasticloadbalancing:us-east-1:000000000000:targetgroup/{user}/0123456789abcdef"
    )
}

/// The user a group id's VMs are tagged as owned by, as the memory cloud keeps its tags.
fn owner_of(tags: &BTreeMap<String, String>) -> Option<&str> {
    tags.get(phantom_seams::cloud::TAG_OWNER)
        .map(String::as_str)
}
