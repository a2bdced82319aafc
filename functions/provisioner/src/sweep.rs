//! The health check's unit of work, run by the provisioner's fleet: everything one user runs on one
//! cloud. One DescribeInstances (per page of 1000) of the user's tagged VMs there, the user's
//! groups and instance records (one Query each), then
//! - a reconcile message for each group there whose plan (`phantom_rules::reconcile::decide`) is not
//!   empty: a VM died or stopped, the group is below or above desired, a VM is not recorded, a
//!   delete is under way;
//! - TerminateInstances for VMs tagged for a group that no longer exists (orphans), or for a group
//!   that no longer runs on this cloud and has no record of them (strays, `Provisioner::strays`);
//! - the (user, cloud) comes off the health check's list once it has no group and no live VM there.
//!
//! Its cost grows with the user's VMs on that cloud (by pages of 1000), not with other users. A
//! group across clouds gets a reconcile on every sweep of its home cloud: its round looks at
//! every cloud it lists.

use crate::Provisioner;
use phantom_rules::group::Group;
use phantom_rules::group::GroupRules;
use phantom_rules::health::Checks;
use phantom_rules::pulse::PairView;
use phantom_rules::reconcile::{decide, Member};
use phantom_seams::cloud::CloudError;
use phantom_seams::queue::{Reconcile, Sweep, Work};
use phantom_seams::store::StoreError;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// How old a VM of a group that left this cloud must be before the sweep ends it.
const STRAY_AFTER_MS: i64 = 60_000;

/// What one sweep of (user, cloud) saw and did.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    pub groups: usize,
    pub vms_seen: usize,
    pub reconciles_queued: usize,
    /// Reconciles the queue refused (the next sweep finds the same groups).
    pub reconciles_unsent: usize,
    pub orphans_terminated: usize,
    /// The cloud could not be asked (unregistered, no credentials, unreachable, refused).
    pub cloud_error: Option<String>,
    /// Nothing of the user's is left there: taken off the health check's list.
    pub unwatched: bool,
}

impl Provisioner {
    pub async fn sweep(&self, s: &Sweep) -> Result<SweepReport, StoreError> {
        let started = std::time::Instant::now();
        let swept = self.sweep_pair(s).await;
        phantom_metrics::ops::observe(
            phantom_metrics::ops::SWEEP_SECONDS,
            &[],
            started.elapsed().as_secs_f64(),
        );
        swept
    }

    async fn sweep_pair(&self, s: &Sweep) -> Result<SweepReport, StoreError> {
        let mut report = SweepReport::default();
        let owner = s.owner.as_str();
        let groups = self.store.all_groups(owner).await?;
        let here: Vec<&Group> = groups.iter().filter(|g| g.cloud == s.cloud).collect();
        report.groups = here.len();
        // A group across clouds is looked at on all of them by its own round: one reconcile per
        // sweep of its home cloud (`across.rs`), even when that cloud cannot be reached.
        let (across, here): (Vec<&Group>, Vec<&Group>) = here
            .into_iter()
            .partition(|g| !matches!(g.spread(), Ok(None)));
        let mut queued: Vec<Work> = across
            .iter()
            .map(|g| Reconcile::new(owner, &g.name, "health-check").into())
            .collect();

        let (record, cloud) = match self.connect_record(owner, &s.cloud).await? {
            Ok(c) => c,
            Err(e) => {
                report.cloud_error = Some(e.to_string());
                // A cloud or credentials removed with no group left there: nothing to look after.
                if here.is_empty() && across.is_empty() {
                    report.unwatched = self.unwatch(s).await?;
                }
                self.send_reconciles(s, &queued, &mut report).await;
                self.keep_view(s, &report, None, true, None).await;
                return Ok(report);
            }
        };
        let tagged = match crate::ended::tagged(cloud.as_ref(), owner, None).await {
            Ok(t) => t,
            Err(e) => return Ok(self.unanswered(s, &queued, report, &e).await),
        };
        report.vms_seen = tagged.len();
        // What EC2's status checks say of the running VMs (all of them: the pulse's looks
        // fingerprint the same).
        let running: Vec<String> = tagged
            .iter()
            .filter(|t| t.seen.state == phantom_model::instance::CloudState::Running)
            .map(|t| t.seen.id.clone())
            .collect();
        let statuses = self.statuses(&record, cloud.as_ref(), running).await;
        // Work the next sweeps must follow even if no VM changes: groups whose health a load
        // balancer judges, groups across clouds, a delete under way.
        let mut empty_since = None;
        let mut busy = !across.is_empty()
            || here.iter().any(|g| {
                g.deleting() || (Checks::of(g).by_sources() && !g.settings.traffic.is_empty())
            });

        // Any of the user's groups, on any cloud: two registrations of one endpoint must not make
        // each other's VMs look orphaned.
        let ids: BTreeSet<&str> = groups.iter().map(|g| g.id.as_str()).collect();
        let orphans: Vec<String> = tagged
            .iter()
            .filter(|t| {
                // The owner's tag without a group id of theirs: of no group of theirs.
                !t.group_id.as_deref().is_some_and(|id| ids.contains(id)) && t.seen.is_alive()
            })
            .map(|t| t.seen.id.clone())
            .collect();
        let mut orphans = orphans;
        orphans.extend(self.strays(s, &groups, &tagged).await?);
        if !orphans.is_empty() {
            busy = true;
            tracing::warn!(
                user = owner,
                cloud = s.cloud,
                ?orphans,
                "terminating VMs of no group, or of a group that left this cloud"
            );
            match cloud.terminate(&orphans).await {
                Ok(()) => report.orphans_terminated = orphans.len(),
                Err(e) => report.cloud_error = Some(e.to_string()),
            }
        }

        if !here.is_empty() {
            // Only the records of the groups here, one Query each: a user's groups on other
            // clouds are not read. Strongly consistent, as the round reads them: a sweep is rare
            // now (a VM changed, or the pair's turn), and what it queues follows what it reads.
            let mut members: BTreeMap<String, Vec<Member>> = BTreeMap::new();
            let reads = here.iter().map(|g| self.store.instances(owner, &g.name));
            for (g, read) in here.iter().zip(futures::future::join_all(reads).await) {
                members.insert(g.name.clone(), read?);
            }
            // The recorded VMs the list leaves out, asked by id: one ended is seen terminated.
            let recorded = members.values().flatten().filter(|m| m.cloud == s.cloud);
            let listed = match crate::ended::with_ended(
                cloud.as_ref(),
                tagged.clone(),
                recorded.map(|m| m.id.as_str()),
            )
            .await
            {
                Ok(listed) => listed,
                Err(e) => return Ok(self.unanswered(s, &queued, report, &e).await),
            };
            let now = self.clock.now_ms();
            // The user's load balancers on this cloud, read once a sweep if a group needs them.
            let mut lbs = None;
            for g in &here {
                let seen: Vec<_> = listed
                    .iter()
                    .filter(|t| t.group_id.as_deref() == Some(g.id.as_str()))
                    .map(|t| t.seen.clone())
                    .collect();
                let recorded = members.get(&g.name).map(Vec::as_slice).unwrap_or(&[]);
                let mut target = g.target();
                // Whose load balancers judge its health (HealthCheckType ELB, VPC_LATTICE): asked
                // here, one call a source, and a round only for a VM they fail.
                if Checks::of(g).by_sources() && !g.settings.traffic.is_empty() {
                    if lbs.is_none() {
                        lbs = Some(self.balancers(owner, g, &s.cloud).await?);
                    }
                    let health = self
                        .lb_health(g, &s.cloud, lbs.as_ref().and_then(|l| l.as_ref()))
                        .await;
                    target.failing = phantom_rules::traffic::unhealthy(
                        Checks::of(g),
                        &g.settings.traffic,
                        recorded,
                        &health,
                        target.grace_ms,
                        now,
                    );
                }
                let judged = crate::status::judge(g, &mut target, recorded, &statuses, now);
                let plan = decide(&target, recorded, &seen, now);
                // A source on its way in or out: the round moves it on.
                let moving = g.settings.traffic.iter().any(|a| {
                    matches!(
                        a.state,
                        phantom_rules::traffic::AttachState::Adding
                            | phantom_rules::traffic::AttachState::Removing
                    )
                });
                // An impairment not yet confirmed: the round asks to look again once it would be.
                let confirming = judged.look_again_ms.is_some();
                if !plan.is_empty() || g.deleting() || moving || confirming {
                    queued.push(Reconcile::new(owner, &g.name, "health-check").into());
                }
            }
        } else if across.is_empty() && !tagged.iter().any(|t| t.seen.is_alive()) {
            // A VM launched just before its group was deleted may be missing from
            // DescribeInstances for seconds: the pair leaves the list only once it has been found
            // empty for longer (found by the simulator, seed 1344: such VMs were never swept).
            let now = self.clock.now_ms();
            let since = s
                .view
                .as_ref()
                .and_then(|v| v.empty_since_ms)
                .unwrap_or(now);
            if now - since >= phantom_rules::reconcile::MISSING_GRACE_MS {
                report.unwatched = self.unwatch(s).await?;
            } else {
                empty_since = Some(since);
            }
        }
        self.send_reconciles(s, &queued, &mut report).await;
        let states: Vec<(String, phantom_model::instance::CloudState)> = tagged
            .iter()
            .map(|t| (t.seen.id.clone(), t.seen.state))
            .collect();
        let fingerprint = phantom_rules::pulse::fingerprint_with(&states, &statuses);
        let busy =
            busy || !queued.is_empty() || report.reconciles_unsent > 0 || empty_since.is_some();
        self.keep_view(s, &report, Some(fingerprint), busy, empty_since)
            .await;
        Ok(report)
    }

    /// A cloud that did not answer the sweep: the reconciles already due are sent, and the pair is
    /// left busy with no fingerprint, to be swept again.
    async fn unanswered(
        &self,
        s: &Sweep,
        queued: &[Work],
        mut report: SweepReport,
        e: &CloudError,
    ) -> SweepReport {
        report.cloud_error = Some(e.to_string());
        self.send_reconciles(s, queued, &mut report).await;
        self.keep_view(s, &report, None, true, None).await;
        report
    }

    /// Writes what this sweep saw on the pair's entry of the list, where it changed, for the
    /// pulse's looks to compare with (`phantom_rules::pulse`). A cloud that did not answer leaves no
    /// fingerprint, and the pair busy.
    async fn keep_view(
        &self,
        s: &Sweep,
        report: &SweepReport,
        fingerprint: Option<String>,
        busy: bool,
        empty_since_ms: Option<i64>,
    ) {
        if report.unwatched {
            return;
        }
        let view = PairView {
            fingerprint: fingerprint.unwrap_or_else(|| phantom_rules::pulse::UNKNOWN.to_string()),
            busy: busy || report.cloud_error.is_some(),
            empty_since_ms,
        };
        if s.view.as_ref() == Some(&view) {
            return;
        }
        match self.store.set_view(&s.owner, &s.cloud, &view).await {
            Ok(()) | Err(StoreError::NotFound) => {}
            Err(e) => {
                tracing::error!(user = s.owner, cloud = s.cloud, error = %e, "sweep: view not kept")
            }
        }
    }

    /// VMs of one of the user's groups that no longer runs on this cloud (its `phantom:clouds`
    /// changed) and has no record of them here: launched by a round that crashed before its
    /// record, then left behind by the change. Not while young (a round may be recording them),
    /// nor when another of the group's clouds is this endpoint under another name.
    async fn strays(
        &self,
        s: &Sweep,
        groups: &[Group],
        tagged: &[phantom_seams::cloud::Tagged],
    ) -> Result<Vec<String>, StoreError> {
        let now = self.clock.now_ms();
        // Where each group runs, read once per group; a group whose clouds cannot be read is left
        // out, so none of its VMs is taken for a stray.
        let runs_on: BTreeMap<&str, (&Group, BTreeSet<String>)> = groups
            .iter()
            .filter_map(|g| match g.clouds() {
                Ok(clouds) => Some((g.id.as_str(), (g, clouds))),
                Err(e) => {
                    tracing::error!(owner = %s.owner, group = %g.name, error = %e, "a group's clouds cannot be read; its VMs are left alone");
                    None
                }
            })
            .collect();
        let elsewhere: Vec<(&phantom_seams::cloud::Tagged, &Group, &BTreeSet<String>)> = tagged
            .iter()
            .filter(|t| t.seen.is_alive() && now - t.seen.launched_ms > STRAY_AFTER_MS)
            .filter_map(|t| {
                let (g, clouds) = runs_on.get(t.group_id.as_deref()?)?;
                (!clouds.contains(&s.cloud)).then_some((t, *g, clouds))
            })
            .collect();
        if elsewhere.is_empty() {
            return Ok(Vec::new());
        }
        let endpoints: BTreeMap<String, String> = self
            .store
            .clouds()
            .await?
            .into_iter()
            .map(|c| (c.name, c.endpoint))
            .collect();
        let here = endpoints.get(&s.cloud);
        let recorded: BTreeSet<(String, String)> = self
            .store
            .all_instances(&s.owner)
            .await?
            .into_iter()
            .map(|(group, m)| (group, m.id))
            .collect();
        let mut out = Vec::new();
        for (t, g, clouds) in elsewhere {
            let alias = clouds.iter().any(|c| endpoints.get(c) == here);
            if !alias && !recorded.contains(&(g.name.clone(), t.seen.id.clone())) {
                out.push(t.seen.id.clone());
            }
        }
        Ok(out)
    }

    async fn send_reconciles(&self, s: &Sweep, queued: &[Work], report: &mut SweepReport) {
        if let (Some(q), false) = (&self.queue, queued.is_empty()) {
            match q.send_all(queued).await {
                Ok(()) => report.reconciles_queued = queued.len(),
                Err(e) => {
                    tracing::error!(user = s.owner, cloud = s.cloud, error = %e, "sweep: could not queue reconciles");
                    report.reconciles_unsent = queued.len();
                }
            }
        }
    }

    /// Off the list, unless a group was created there meanwhile.
    async fn unwatch(&self, s: &Sweep) -> Result<bool, StoreError> {
        match self.store.unwatch(&s.owner, &s.cloud).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }
}
