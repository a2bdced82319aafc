//! The pulse's beats (`phantom_rules::pulse` has the rules): a tick arrives on the pulse queue, the
//! lease moves, the next tick is sent, then the beat looks at the pairs whose turn it is and
//! queues a sweep for each pair whose VMs changed since its last sweep, is busy, or is due.
//!
//! Looks use the users' cloud credentials, opened once and kept (`CREDENTIALS_TTL_MS`): the
//! function that looks is one warm instance at a time (one tick is alive), so each pair's
//! credentials cost one GetItem and one KMS call per that time, not per look.

use crate::{HealthCheck, HealthError};
use futures::stream::{self, StreamExt};
use phantom_model::cloud::CloudRecord;
use phantom_model::instance::CloudState;
use phantom_rules::pulse::{self as rules, Beat, Cadence, OnTick, Tick};
use phantom_seams::cloud::{no_status_checks, ConnectLookup, Lookup};
use phantom_seams::counts;
use phantom_seams::queue::pulse::PulseQueue;
use phantom_seams::queue::{Reconcile, Work};
use phantom_seams::store::{StoreError, Watched};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// How long a pair's opened credentials (and the client built on them) are used before they are
/// read again (sweeps and rounds read them fresh): as long as the data key cache
/// (`phantom_seams::secrets::DATA_KEY_CACHE_MS`), so a pair costs one KMS call an hour. A look that
/// fails drops them at once, so credentials replaced because the old ones stopped working are
/// read again at the next look.
const CREDENTIALS_TTL_MS: i64 = phantom_seams::secrets::DATA_KEY_CACHE_MS as i64;
/// How long the registered clouds are used before they are read again.
const CLOUDS_TTL_MS: i64 = 60 * 1000;
/// Looks in flight at once, unless set otherwise (`Pulse::look_concurrency`).
pub const LOOK_CONCURRENCY: usize = 256;
/// Sweeps queued at most in one send (SQS's SendMessageBatch takes 10).
const SWEEPS_A_SEND: usize = 10;
/// The reason of a round the pulse queues for an unanswered ask.
pub const ASKED: &str = "an ask no round answered";

/// What a beat knows of the work queue, asked once, at its first sweep.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Sending {
    #[default]
    Unasked,
    /// The fleet keeps up: sweeps go.
    Go,
    /// The fleet is behind: this beat's sweeps are held.
    Behind,
    /// The backlog could not be read: this beat's sweeps are not queued.
    Unknown,
}

type Clouds = Arc<BTreeMap<String, CloudRecord>>;
/// A client on a pair's opened credentials, and when they were read.
type Opened = (i64, Arc<dyn Lookup>);

/// The pulse's settings and what it keeps between beats.
pub struct Pulse {
    /// Where the chain's ticks go; None where a timer gives the beats (the local runner, whose
    /// timer has no minute granularity to work around: no chain, no lease).
    pub queue: Option<Arc<dyn PulseQueue>>,
    /// The queue's delay: one beat every period.
    pub period_ms: i64,
    pub cadence: Cadence,
    pub lookups: Arc<dyn ConnectLookup>,
    /// Looks in flight at once. The local runner sets few: its clouds are emulators on one
    /// machine, where a beat's looks all at once would leave a round's calls waiting behind them.
    pub look_concurrency: usize,
    /// The registered clouds, with when they were read.
    clouds: Mutex<Option<(i64, Clouds)>>,
    /// Each (user, cloud)'s client on its opened credentials, with when they were read.
    pairs: Mutex<HashMap<(String, String), Opened>>,
    /// Each pair's running VMs at its last look: the next look asks their statuses beside its
    /// DescribeInstances, not after it, so a look takes one round trip, not two.
    running: Mutex<HashMap<(String, String), Vec<String>>>,
}

impl Pulse {
    pub fn new(
        queue: Option<Arc<dyn PulseQueue>>,
        period_ms: i64,
        cadence: Cadence,
        lookups: Arc<dyn ConnectLookup>,
    ) -> Self {
        Self {
            queue,
            period_ms,
            cadence,
            lookups,
            look_concurrency: LOOK_CONCURRENCY,
            clouds: Mutex::new(None),
            pairs: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
        }
    }

    /// From the environment: PHANTOM_PULSE_SECS (the pulse queue's delay, default 4, as
    /// template.yaml's), PHANTOM_LOOK_SECS (8), PHANTOM_LOOK_EVENTS_SECS (60: a cloud with
    /// events), PHANTOM_BUSY_SWEEP_SECS (60), PHANTOM_SWEEP_SECS (3600); each a
    /// whole number of periods.
    pub fn settings_from_env() -> Result<(i64, Cadence), String> {
        let secs = |name: &str, default: u64| match std::env::var(name) {
            Err(_) => Ok(default),
            Ok(v) => v
                .parse::<u64>()
                .map_err(|_| format!("{name} is {v:?}: it must be a whole number of seconds")),
        };
        let period = secs("PHANTOM_PULSE_SECS", 4)?;
        let cadence = Cadence::of_secs(
            period,
            secs("PHANTOM_LOOK_SECS", 8)?,
            secs("PHANTOM_LOOK_EVENTS_SECS", 60)?,
            secs("PHANTOM_BUSY_SWEEP_SECS", 60)?,
            secs("PHANTOM_SWEEP_SECS", 3600)?,
        )?;
        Ok((period as i64 * 1000, cadence))
    }
}

/// What one beat did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct BeatReport {
    pub seq: u64,
    /// Dropped: the chain had moved past this tick.
    pub stale: bool,
    pub pairs: usize,
    pub looked: usize,
    /// Looks whose cloud did not answer (the pair is swept on its busy turns).
    pub look_errors: usize,
    /// Pairs whose VMs differ from their last sweep's view.
    pub changed: usize,
    pub sweeps_queued: usize,
    /// Rounds queued for asks their writers' messages did not answer in time (a writer died
    /// between its write and its send).
    pub asks_queued: usize,
    /// Sweeps held back: the fleet had not caught up with a round's worth.
    pub backlog_held: bool,
}

impl HealthCheck {
    fn pulse_settings(&self) -> &Pulse {
        self.pulse
            .as_deref()
            .expect("only a health check with a pulse is given ticks")
    }

    /// A tick from the pulse queue. An error (before the next tick is sent) fails the delivery,
    /// and the queue delivers the tick again.
    pub async fn tick(&self, tick: Tick) -> Result<BeatReport, HealthError> {
        let p = self.pulse_settings();
        let now = self.clock.now_ms();
        let lease = self.store.pulse().await.map_err(HealthError::Store)?;
        match rules::on_tick(lease.as_ref(), tick.seq, now, p.period_ms) {
            OnTick::Stale => {
                tracing::info!(seq = tick.seq, held = ?lease.map(|l| l.seq), "stale tick dropped");
                return Ok(BeatReport {
                    seq: tick.seq,
                    stale: true,
                    ..BeatReport::default()
                });
            }
            OnTick::Advance { expect, lease } => match self.store.put_pulse(expect, &lease).await {
                Ok(()) => {}
                Err(StoreError::Conflict) => {
                    tracing::info!(seq = tick.seq, "tick lost the lease to another; dropped");
                    return Ok(BeatReport {
                        seq: tick.seq,
                        stale: true,
                        ..BeatReport::default()
                    });
                }
                Err(e) => return Err(HealthError::Store(e)),
            },
            OnTick::Again => {}
        }
        let queue = p.queue.as_ref().ok_or_else(|| {
            HealthError::Queue("a tick arrived at a health check without a pulse queue".into())
        })?;
        queue
            .send(Tick { seq: tick.seq + 1 })
            .await
            .map_err(HealthError::Queue)?;
        // The chain goes on; what the beat does now fails alone (the next beat tries again).
        Ok(self.beat(tick.seq).await)
    }

    /// The minute schedule's part: a new chain if none is alive (its lease ran out). Two runs at
    /// once start one: the lease is taken conditionally.
    pub async fn keep_pulse(&self) -> Result<Option<u64>, HealthError> {
        let p = self.pulse_settings();
        let Some(queue) = &p.queue else {
            return Ok(None);
        };
        let now = self.clock.now_ms();
        let lease = self.store.pulse().await.map_err(HealthError::Store)?;
        let Some((expect, new)) = rules::restart(lease.as_ref(), now, p.period_ms) else {
            return Ok(None);
        };
        match self.store.put_pulse(expect, &new).await {
            Ok(()) => {}
            Err(StoreError::Conflict) => return Ok(None),
            Err(e) => return Err(HealthError::Store(e)),
        }
        let first = Tick { seq: new.seq + 1 };
        queue.send(first).await.map_err(HealthError::Queue)?;
        tracing::warn!(
            seq = first.seq,
            lapsed = ?lease.map(|l| l.until_ms),
            "pulse started: no chain was alive"
        );
        Ok(Some(first.seq))
    }

    /// One beat's work: looks and sweeps for the pairs whose turn it is.
    pub async fn beat(&self, seq: u64) -> BeatReport {
        let p = self.pulse_settings();
        let mut report = BeatReport {
            seq,
            ..BeatReport::default()
        };
        let watched = match self.store.watched().await {
            Ok(w) => w,
            Err(e) => {
                tracing::error!(seq, error = %e, "beat: the list could not be read");
                return report;
            }
        };
        report.pairs = watched.len();
        // The groups' probes first: they are due every interval, looks or not.
        self.probe().await;
        let clouds = self.clouds().await;
        let mut sweeps: Vec<&Watched> = Vec::new();
        let mut looks: Vec<&Watched> = Vec::new();
        for w in &watched {
            let key = rules::pair_key(&w.user, &w.cloud);
            let events = clouds
                .as_ref()
                .and_then(|c| c.get(&w.cloud))
                .is_some_and(|c| c.events);
            match rules::beat(seq, &key, w.view.as_ref(), p.cadence.on(events)) {
                Beat::Sweep => sweeps.push(w),
                Beat::Look => looks.push(w),
                Beat::Rest => {}
            }
        }
        report.looked = looks.len();
        let mut sending = Sending::default();
        self.queue_asked(seq, watched.len(), &mut sending, &mut report)
            .await;
        // The turn's sweeps first, then each changed pair's as its look finds the change: a dead
        // VM's replacement waits for its own look, not for the beat's last one.
        self.queue_sweeps(seq, &sweeps, watched.len(), &mut sending, &mut report)
            .await;
        // Boxed one by one: a stream of closures over borrowed pairs is not Send to the compiler.
        let calls: Vec<_> = looks
            .iter()
            .map(|w| Box::pin(self.look_at(w, clouds.clone())))
            .collect();
        let mut seen = stream::iter(calls)
            .buffer_unordered(p.look_concurrency.max(1))
            .ready_chunks(SWEEPS_A_SEND);
        while let Some(done) = seen.next().await {
            let mut due: Vec<&Watched> = Vec::new();
            for (w, found) in done {
                let view = w.view.as_ref().expect("only swept pairs are looked at");
                match found {
                    Ok(fp) if fp == view.fingerprint => {}
                    Ok(_) => {
                        report.changed += 1;
                        due.push(w);
                    }
                    Err(e) => {
                        // Unknown: swept on the busy turns, where the sweep says what is wrong.
                        report.look_errors += 1;
                        tracing::debug!(user = w.user, cloud = w.cloud, error = e, "look failed");
                        if rules::busy_turn(seq, &rules::pair_key(&w.user, &w.cloud), p.cadence) {
                            due.push(w);
                        }
                    }
                }
            }
            self.queue_sweeps(seq, &due, watched.len(), &mut sending, &mut report)
                .await;
        }
        counts!(
            info,
            report,
            [
                pairs,
                looked,
                look_errors,
                changed,
                sweeps_queued,
                asks_queued,
                backlog_held
            ],
            seq,
            "beat"
        );
        report
    }

    /// Queues a round for each group whose ask no round has answered within `ASK_GRACE_MS`,
    /// unless the fleet is behind (their messages are likely waiting in the queue). An ask stays
    /// until a round takes the group's lease, so one not queued now is found by the next beat.
    async fn queue_asked(
        &self,
        seq: u64,
        pairs: usize,
        sending: &mut Sending,
        report: &mut BeatReport,
    ) {
        let at = rules::unanswered_since(self.clock.now_ms());
        let asked = match self.store.asked(at).await {
            Ok(asked) => asked,
            Err(e) => {
                tracing::error!(seq, error = %e, "beat: the unanswered asks could not be read");
                return;
            }
        };
        if asked.is_empty() || !self.may_send(seq, pairs, sending, report).await {
            return;
        }
        let msgs: Vec<Work> = asked
            .iter()
            .map(|(user, group)| Reconcile::new(user, group, ASKED).into())
            .collect();
        match self.queue.send_all(&msgs).await {
            Ok(()) => report.asks_queued += msgs.len(),
            Err(e) => tracing::error!(seq, error = e, "beat: asked rounds not queued"),
        }
    }

    /// Whether this beat may queue work: not while the fleet is behind or the backlog is unknown.
    /// The backlog is asked once a beat, before its first message.
    async fn may_send(
        &self,
        seq: u64,
        pairs: usize,
        sending: &mut Sending,
        report: &mut BeatReport,
    ) -> bool {
        if *sending == Sending::Unasked {
            *sending = match self.queue.backlog().await {
                Ok(backlog) if crate::fleet_behind(backlog, pairs) => Sending::Behind,
                Ok(_) => Sending::Go,
                Err(e) => {
                    tracing::error!(seq, error = e, "beat: the queue's backlog unknown");
                    Sending::Unknown
                }
            };
        }
        match sending {
            Sending::Go => true,
            Sending::Behind => {
                report.backlog_held = true;
                false
            }
            Sending::Unasked | Sending::Unknown => false,
        }
    }

    /// Queues the sweeps of `due`, unless the fleet is behind or the backlog unknown: then this
    /// beat queues none (the next beat's looks find the same changes).
    async fn queue_sweeps(
        &self,
        seq: u64,
        due: &[&Watched],
        pairs: usize,
        sending: &mut Sending,
        report: &mut BeatReport,
    ) {
        if due.is_empty() || !self.may_send(seq, pairs, sending, report).await {
            return;
        }
        let msgs = crate::sweep_messages(due.iter().copied());
        match self.queue.send_all(&msgs).await {
            Ok(()) => report.sweeps_queued += msgs.len(),
            Err(e) => tracing::error!(seq, error = e, "beat: sweeps not queued"),
        }
    }

    /// The registered clouds, kept a minute; None if they cannot be read (the looks then fail).
    async fn clouds(&self) -> Option<Clouds> {
        let p = self.pulse_settings();
        let now = self.clock.now_ms();
        if let Some((at, c)) = p.clouds.lock().expect("no panic holding it").as_ref() {
            if now - at < CLOUDS_TTL_MS {
                return Some(c.clone());
            }
        }
        match self.store.clouds().await {
            Ok(list) => {
                let c = Arc::new(list.into_iter().map(|c| (c.name.clone(), c)).collect());
                *p.clouds.lock().expect("no panic holding it") = Some((now, Arc::clone(&c)));
                Some(c)
            }
            Err(e) => {
                tracing::error!(error = %e, "beat: the clouds could not be read");
                None
            }
        }
    }

    async fn look_at<'a>(
        &'a self,
        w: &'a Watched,
        clouds: Option<Clouds>,
    ) -> (&'a Watched, Result<String, String>) {
        (w, self.look(w, clouds.as_deref()).await)
    }

    /// One DescribeInstances of the user's VMs on the cloud and, at once beside it, the statuses of
    /// those that ran at the pair's last look, where the cloud has status checks: their
    /// fingerprint. A VM that began to run since is asked at the next look. A cloud that says it
    /// has none is fingerprinted by states (the sweep records it on the cloud).
    async fn look(
        &self,
        w: &Watched,
        clouds: Option<&BTreeMap<String, CloudRecord>>,
    ) -> Result<String, String> {
        let p = self.pulse_settings();
        let lookup = self.lookup(w, clouds).await?;
        let checks = clouds
            .and_then(|c| c.get(&w.cloud))
            .is_some_and(|c| c.status_checks);
        let key = (w.user.clone(), w.cloud.clone());
        let before: Vec<String> = match checks {
            true => p
                .running
                .lock()
                .expect("no panic holding it")
                .get(&key)
                .cloned()
                .unwrap_or_default(),
            false => Vec::new(),
        };
        let statuses = async {
            if before.is_empty() {
                return Ok(Vec::new());
            }
            match lookup.statuses(&before).await {
                Err(e) if no_status_checks(&e) => Ok(Vec::new()),
                found => found,
            }
        };
        match futures::future::try_join(lookup.states(&w.user), statuses).await {
            Ok((vms, statuses)) => {
                let running: Vec<String> = vms
                    .iter()
                    .filter(|(_, s)| *s == CloudState::Running)
                    .map(|(id, _)| id.clone())
                    .collect();
                // Only the VMs this look saw running count: one that stopped since is its state.
                let statuses: Vec<_> = statuses
                    .into_iter()
                    .filter(|s| running.contains(&s.id))
                    .collect();
                p.running
                    .lock()
                    .expect("no panic holding it")
                    .insert(key, running);
                Ok(rules::fingerprint_with(&vms, &statuses))
            }
            Err(e) => {
                // Credentials may have changed: read them again next time.
                p.pairs.lock().expect("no panic holding it").remove(&key);
                Err(e.to_string())
            }
        }
    }

    async fn lookup(
        &self,
        w: &Watched,
        clouds: Option<&BTreeMap<String, CloudRecord>>,
    ) -> Result<Arc<dyn Lookup>, String> {
        let p = self.pulse_settings();
        let now = self.clock.now_ms();
        let key = (w.user.clone(), w.cloud.clone());
        if let Some((at, l)) = p.pairs.lock().expect("no panic holding it").get(&key) {
            if now - at < CREDENTIALS_TTL_MS {
                return Ok(l.clone());
            }
        }
        let cloud = clouds
            .ok_or("the clouds could not be read")?
            .get(&w.cloud)
            .ok_or_else(|| format!("cloud '{}' is not registered", w.cloud))?;
        let creds = self
            .store
            .cloud_credentials(&w.user, &w.cloud)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("user '{}' has no credentials for '{}'", w.user, w.cloud))?;
        let l = p.lookups.lookup(cloud, &creds);
        p.pairs
            .lock()
            .expect("no panic holding it")
            .insert(key, (now, l.clone()));
        Ok(l)
    }
}
