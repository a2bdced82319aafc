//! Application health for any cloud: each serving VM of a group with a probe (its tag
//! `phantom:health-probe`, `phantom_rules::probe`) is called at its address every interval, from
//! where the health check runs; a VM that fails its threshold in a row, past its grace period or
//! once it was ready, is marked Unhealthy with what the probe got (a conditional write of its
//! record) and its group's round is queued, which replaces it as any unhealthy VM.
//!
//! The groups, their VMs and the VMs' addresses are read at most every `TARGETS_TTL_MS` (the
//! index of due groups carries every group with a probe); the runs of results are kept in this
//! function's memory (one warm instance beats at a time: a new one starts them again, which can
//! only delay a verdict). Probes run concurrently, `CONCURRENCY` at a time, never two of one VM.

use crate::HealthCheck;
use futures::stream::{self, StreamExt};
use phantom_rules::group::Group;
use phantom_rules::health::Failed;
use phantom_rules::probe::{self, Probe, Streak};
use phantom_rules::reconcile::{Lifecycle, Member};
use phantom_seams::cloud::ConnectLookup;
use phantom_seams::probe::Prober;
use phantom_seams::queue::{Reconcile, Work};
use phantom_seams::store::cas::{compare_and_set, Try};
use phantom_seams::store::{Record, StoreError};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// How long the probed groups, their VMs and addresses are used before they are read again: a
/// new VM is probed within this of joining its group.
const TARGETS_TTL_MS: i64 = 30_000;
/// Probes in flight at once.
const CONCURRENCY: usize = 64;

/// One VM a probe calls.
#[derive(Debug, Clone)]
struct Target {
    user: String,
    group: String,
    probe: Arc<Probe>,
    id: String,
    /// Its address (its id for a heartbeat, which the VM sends).
    host: String,
    /// When it joined the group, and when its grace period ends (Unix ms).
    joined_ms: i64,
    graced_at_ms: i64,
}

/// What the prober keeps between runs.
pub struct Probing {
    pub prober: Arc<dyn Prober>,
    pub lookups: Arc<dyn ConnectLookup>,
    targets: Mutex<Option<(i64, Arc<Vec<Target>>)>>,
    /// Each VM's run of results and when it was last probed.
    streaks: Mutex<HashMap<String, (i64, Streak)>>,
    in_flight: Mutex<HashSet<String>>,
    /// When each heartbeat group's beats were last read: once an interval.
    beats_read: Mutex<HashMap<(String, String), i64>>,
    /// Addresses by VM id, as the cloud described them.
    addresses: Mutex<HashMap<String, Addresses>>,
}

/// A VM's (public, private) addresses.
type Addresses = (Option<String>, Option<String>);

impl Probing {
    pub fn new(prober: Arc<dyn Prober>, lookups: Arc<dyn ConnectLookup>) -> Self {
        Self {
            prober,
            lookups,
            targets: Mutex::new(None),
            streaks: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashSet::new()),
            beats_read: Mutex::new(HashMap::new()),
            addresses: Mutex::new(HashMap::new()),
        }
    }
}

/// What one run of the probes did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Probed {
    pub vms: usize,
    pub probes: usize,
    pub failures: usize,
    /// VMs marked Unhealthy.
    pub marked: usize,
    /// Groups or VMs that could not be read, addresses not found, marks not written.
    pub errors: usize,
}

impl HealthCheck {
    /// One run of the probes: the VMs whose interval has passed are probed, and those their
    /// probe fails are marked Unhealthy.
    pub async fn probe(&self) -> Probed {
        let now = self.clock.now_ms();
        let mut report = Probed::default();
        let targets = self.probe_targets(now, &mut report).await;
        report.vms = targets.len();
        let p = &self.probing;
        let (silent, targets): (Vec<&Target>, Vec<&Target>) = targets
            .iter()
            .partition(|t| t.probe.call == probe::Call::Heartbeat);
        let mut verdicts = self.heartbeats(&silent, now, &mut report).await;
        let due: Vec<Target> = {
            let streaks = p.streaks.lock().expect("no panic holding it");
            let mut flying = p.in_flight.lock().expect("no panic holding it");
            targets
                .iter()
                .copied()
                .filter(|t| {
                    probe::due(
                        streaks.get(&t.id).map(|(at, _)| *at),
                        t.probe.interval_ms,
                        now,
                    )
                })
                .filter(|t| flying.insert(t.id.clone()))
                .cloned()
                .collect()
        };
        report.probes = due.len();
        // Off the in-flight set however this run ends (a beat cut short drops its probes).
        let _flying = Flying {
            set: &p.in_flight,
            ids: due.iter().map(|t| t.id.clone()).collect(),
        };
        // Owned and boxed one by one: a stream of closures over borrowed targets is not Send to
        // the compiler.
        let calls: Vec<_> = due
            .into_iter()
            .map(|t| {
                let prober = p.prober.clone();
                Box::pin(async move {
                    let outcome = prober.probe(&t.probe, &t.host).await;
                    (t, outcome)
                })
            })
            .collect();
        let results: Vec<(Target, probe::Outcome)> = stream::iter(calls)
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        {
            let mut streaks = p.streaks.lock().expect("no panic holding it");
            for (t, outcome) in results {
                if matches!(outcome, probe::Outcome::Fail(_)) {
                    report.failures += 1;
                }
                let (last, before) = streaks
                    .get(&t.id)
                    .map(|(at, s)| (Some(*at), s.clone()))
                    .unwrap_or_default();
                let after = before.then(&t.probe, outcome, now);
                let target = t.probe.target(&t.host);
                match after.verdict(&t.probe, now >= t.graced_at_ms, &target) {
                    Some(why) => {
                        streaks.remove(&t.id);
                        verdicts.push((t.clone(), why));
                    }
                    None => {
                        let at = probe::counted_at(last, t.probe.interval_ms, now);
                        streaks.insert(t.id.clone(), (at, after));
                    }
                }
            }
        }
        for (t, why) in &verdicts {
            match self.mark(t, why).await {
                Ok(true) => {
                    report.marked += 1;
                    tracing::info!(
                        user = t.user,
                        group = t.group,
                        instance = t.id,
                        why,
                        "probe failed: marked unhealthy"
                    );
                }
                Ok(false) => {}
                Err(e) => {
                    report.errors += 1;
                    tracing::warn!(user = t.user, group = t.group, instance = t.id, error = %e, "probe failed, but the mark was not written");
                }
            }
        }
        if report.vms > 0 {
            phantom_seams::counts!(
                info,
                report,
                [vms, probes, failures, marked, errors],
                "probes"
            );
        }
        report
    }

    /// The heartbeat groups' VMs silent past their threshold, their beats read once an interval
    /// (one Query a group).
    async fn heartbeats(
        &self,
        targets: &[&Target],
        now: i64,
        report: &mut Probed,
    ) -> Vec<(Target, String)> {
        let mut by_group: BTreeMap<(&str, &str), Vec<&Target>> = BTreeMap::new();
        for t in targets {
            by_group.entry((&t.user, &t.group)).or_default().push(t);
        }
        let mut verdicts = Vec::new();
        for ((user, group), vms) in by_group {
            let interval = vms[0].probe.interval_ms;
            let key = (user.to_string(), group.to_string());
            {
                let mut read = self.probing.beats_read.lock().expect("no panic holding it");
                let last = read.get(&key).copied();
                if !probe::due(last, interval, now) {
                    continue;
                }
                read.insert(key, probe::counted_at(last, interval, now));
            }
            let beats: BTreeMap<String, i64> = match self.store.beats(user, group).await {
                Ok(b) => b.into_iter().collect(),
                Err(e) => {
                    report.errors += 1;
                    tracing::warn!(user, group, error = %e, "heartbeats not read");
                    continue;
                }
            };
            report.probes += vms.len();
            for t in vms {
                let last = beats.get(&t.id).copied();
                let p = &t.probe;
                if let Some(why) = phantom_rules::heartbeat::silent(
                    last,
                    t.joined_ms,
                    now >= t.graced_at_ms,
                    p.interval_ms,
                    p.unhealthy,
                    now,
                ) {
                    report.failures += 1;
                    verdicts.push((t.clone(), why));
                }
            }
        }
        verdicts
    }

    /// The VMs to probe, read again once `TARGETS_TTL_MS` has passed.
    async fn probe_targets(&self, now: i64, report: &mut Probed) -> Arc<Vec<Target>> {
        let p = &self.probing;
        if let Some((at, t)) = p.targets.lock().expect("no panic holding it").as_ref() {
            if now - at < TARGETS_TTL_MS {
                return t.clone();
            }
        }
        let groups = match self.store.due(now).await {
            Ok(due) => {
                phantom_seams::store::samples::groups_of_due(self.store.as_ref(), &due).await
            }
            Err(e) => {
                tracing::warn!(error = %e, "probes: the due groups could not be read");
                report.errors += 1;
                return Arc::new(Vec::new());
            }
        };
        let mut targets = Vec::new();
        let mut live = HashSet::new();
        for read in groups {
            let Ok(gs) = read.groups else {
                report.errors += 1;
                continue;
            };
            for g in gs {
                let probe = match probe::of_group(&g) {
                    Ok(Some(probe)) if probes(&g) => Arc::new(probe),
                    _ => continue,
                };
                match self.group_targets(&read.user, &g, probe).await {
                    Ok(t) => {
                        live.extend(t.iter().map(|t| t.id.clone()));
                        targets.extend(t);
                    }
                    Err(e) => {
                        report.errors += 1;
                        tracing::warn!(
                            user = read.user,
                            group = g.name,
                            error = e,
                            "probes: the group's VMs could not be read"
                        );
                    }
                }
            }
        }
        // VMs no longer probed are forgotten.
        p.streaks
            .lock()
            .expect("no panic holding it")
            .retain(|id, _| live.contains(id));
        p.addresses
            .lock()
            .expect("no panic holding it")
            .retain(|id, _| live.contains(id));
        let targets = Arc::new(targets);
        *p.targets.lock().expect("no panic holding it") = Some((now, targets.clone()));
        targets
    }

    /// The group's serving VMs with their addresses (described by their clouds where not known).
    async fn group_targets(
        &self,
        user: &str,
        g: &Group,
        probe: Arc<Probe>,
    ) -> Result<Vec<Target>, String> {
        let all = self
            .store
            .instances(user, &g.name)
            .await
            .map_err(|e| e.to_string())?;
        // A VM its probe marked whose round never came (the mark's writer died before queueing
        // it): asked again, so the group waits no longer than a read of its targets.
        let replacing = !g
            .settings
            .suspended_processes
            .iter()
            .any(|p| p.process_name == "ReplaceUnhealthy");
        if replacing
            && all.iter().any(|m| {
                m.lifecycle == Lifecycle::InService && !m.healthy && m.probe_failed.is_some()
            })
        {
            let msg: Work = Reconcile::new(user, &g.name, "health-probe").into();
            self.queue.send(&msg, 0).await.map_err(|e| e.to_string())?;
        }
        let members: Vec<Member> = all
            .into_iter()
            .filter(|m| m.lifecycle == Lifecycle::InService && m.healthy)
            .collect();
        let graced =
            |m: &Member| m.in_group_since_ms() + g.settings.health_check_grace_period * 1000;
        if probe.call == probe::Call::Heartbeat {
            // The VMs call in: no address is needed.
            return Ok(members
                .iter()
                .map(|m| Target {
                    user: user.to_string(),
                    group: g.name.clone(),
                    probe: probe.clone(),
                    id: m.id.clone(),
                    host: m.id.clone(),
                    joined_ms: m.in_group_since_ms(),
                    graced_at_ms: graced(m),
                })
                .collect());
        }
        let mut by_cloud: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        {
            let known = self.probing.addresses.lock().expect("no panic holding it");
            for m in &members {
                if !known.contains_key(&m.id) {
                    by_cloud
                        .entry(m.cloud.as_str())
                        .or_default()
                        .push(m.id.clone());
                }
            }
        }
        for (cloud, ids) in by_cloud {
            let record = self
                .store
                .cloud(cloud)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("cloud '{cloud}' is not registered"))?;
            let creds = self
                .store
                .cloud_credentials(user, cloud)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("no credentials for '{cloud}'"))?;
            let found = self
                .probing
                .lookups
                .lookup(&record, &creds)
                .describe(&ids)
                .await
                .map_err(|e| e.to_string())?;
            let mut known = self.probing.addresses.lock().expect("no panic holding it");
            for t in found {
                known.insert(t.seen.id, (t.public_ip, t.private_ip));
            }
        }
        let known = self.probing.addresses.lock().expect("no panic holding it");
        Ok(members
            .iter()
            .filter_map(|m| {
                let (public, private) = known.get(&m.id)?;
                let host = probe.address_of(public.as_deref(), private.as_deref())?;
                Some(Target {
                    user: user.to_string(),
                    group: g.name.clone(),
                    probe: probe.clone(),
                    id: m.id.clone(),
                    host: host.to_string(),
                    joined_ms: m.in_group_since_ms(),
                    graced_at_ms: graced(m),
                })
            })
            .collect())
    }

    /// Marks the VM Unhealthy with what its probe got (a conditional write of its record, read
    /// again if another writer moved it) and queues its group's round; false if it is no longer
    /// a serving VM of the group, or already marked.
    async fn mark(&self, t: &Target, why: &str) -> Result<bool, StoreError> {
        let marked = compare_and_set(|| async {
            let Some(g) = self.store.group(&t.user, &t.group).await? else {
                return Ok(Try::Done(false));
            };
            if !probes(&g) {
                return Ok(Try::Done(false));
            }
            let members = self.store.instances(&t.user, &t.group).await?;
            let Some(m) = members
                .iter()
                .find(|m| m.id == t.id && m.lifecycle == Lifecycle::InService && m.healthy)
            else {
                return Ok(Try::Done(false));
            };
            let r = Record {
                put: vec![Member {
                    healthy: false,
                    probe_failed: Some(why.to_string()),
                    unhealthy_check: Some(Failed::Probe.label().to_string()),
                    ..m.clone()
                }],
                ask_ms: Some(self.clock.now_ms()),
                ..Record::default()
            };
            match self.store.record(&t.user, &g, &r).await {
                Ok(()) => Ok(Try::Done(true)),
                Err(StoreError::Conflict) => Ok(Try::Lost),
                Err(StoreError::NotFound) => Ok(Try::Done(false)),
                Err(e) => Err(e),
            }
        })
        .await?;
        if marked {
            let msg: Work = Reconcile::new(&t.user, &t.group, "health-probe").into();
            if let Err(e) = self.queue.send(&msg, 0).await {
                // The pulse queues the round from the group's ask.
                tracing::warn!(
                    group = t.group,
                    error = e,
                    "round not queued after a failed probe"
                );
            }
        }
        Ok(marked)
    }
}

/// VMs being probed, taken off the in-flight set when dropped.
struct Flying<'a> {
    set: &'a Mutex<HashSet<String>>,
    ids: Vec<String>,
}

impl Drop for Flying<'_> {
    fn drop(&mut self) {
        let mut set = self.set.lock().unwrap_or_else(|p| p.into_inner());
        for id in &self.ids {
            set.remove(id);
        }
    }
}

/// Whether the group's VMs are probed now: not while it is being deleted, nor while its
/// HealthCheck process is suspended.
fn probes(g: &Group) -> bool {
    !g.deleting()
        && !g
            .settings
            .suspended_processes
            .iter()
            .any(|p| p.process_name == "HealthCheck")
}
