//! The provisioner: for each reconcile message, brings one group to its desired capacity.
//!
//! One round reads as observe, decide, act, record: take the group's lease (a conditional write
//! that also reads the group; short, and renewed while the holder works, so that it runs out soon
//! only for a holder that died), observe the cloud (one DescribeInstances by the group's id tag)
//! and the instance records, decide (`phantom_rules::reconcile::decide`, pure), act on the cloud
//! (TerminateInstances, RunInstances with a ClientToken from the group's id and launch sequence),
//! then write everything the round changed in one record (`phantom_rules::round::record`, pure; one
//! store call). The lease is given back only if the group did not change meanwhile; if it did, go
//! round again. A message for a group whose lease someone else holds is done: the holder sees the
//! change when it gives the lease back, and if the holder died, the health check finds the group
//! off its size once the lease has run out.
//!
//! While a group's VMs are on their way in or out (Pending, Terminating), a chain of delayed
//! follow-up messages looks at it again (2 s, then slower, for about eight minutes), so a VM shows
//! InService, or leaves the group, within seconds of the cloud saying so, not at the next sweep.
//!
//! The same fleet runs the health check's sweeps (`sweep`): one message per (user, cloud).
//! A batch's messages run concurrently.
//!
//! Built from the seams (`Store`, `Connect`, `WorkQueue`, `Clock`); only `from_env` names AWS.

mod across;
mod act;
mod at_risk;
mod balance;
mod ended;
mod notify;
mod status;
mod sweep;
mod sync_launch;

use act::{attach, detach, stop_and_start, terminate, On};
use phantom_rules::health::Checks;
use phantom_seams::counts;
pub use sweep::SweepReport;

use phantom_model::instance::CloudState;
use phantom_model::time::Clock;
use phantom_rules::activity::Context;
use phantom_rules::distribution::Distribution;
use phantom_rules::group::Group;
use phantom_rules::group::GroupRules;
use phantom_rules::reconcile::{self, decide, Lifecycle, Market, Member, Placement, Plan};
use phantom_rules::refresh::{self, InstanceRefresh};
use phantom_rules::replacement;
use phantom_rules::round::{self, Acted, Before};
use phantom_rules::spread::{Policy, Site, Spread};
use phantom_seams::cloud::launch::{requests, try_another_type, Source};
use phantom_seams::cloud::{prices_in, SpotPrice};
use phantom_seams::cloud::{
    Cloud, CloudError, Connect, ConnectLookup, TAG_GROUP, TAG_GROUP_ID, TAG_OWNER, TAG_WARM_POOL,
};
use phantom_seams::publish::Publisher;
use phantom_seams::queue::{Received, Reconcile, Scheduled, StateChange, Work, WorkQueue};
use phantom_seams::store::{Claim, CloudRecord, Lease, Record, Store, StoreError};
use phantom_seams::wiring::Seams;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How long a lease lasts unless its holder renews it: a holder that died (killed, timed out)
/// holds its group back no longer than this, well within a VM's replacement.
pub const LEASE_MS: i64 = 10_000;
/// How often a holder at work renews its lease: three times a lease, so one late or failed
/// renewal loses nothing.
const RENEW_EVERY: std::time::Duration = std::time::Duration::from_millis(LEASE_MS as u64 / 3);
/// A lease not renewed for half its length: its holder missed a renewal, and is taken for dead.
const OVERDUE_MS: i64 = LEASE_MS / 2;

tokio::task_local! {
    /// Set while a message's rounds hold the group's lease. A next round the queue refused then
    /// is asked for once the lease is given back: the release answers every ask it saw, its
    /// holder's own too (found by the simulator, seed 1268 of mix 18: a launch's retry refused,
    /// its ask answered by the same round, and the group held back by its backoff for good).
    static ASK_AFTER_RELEASE: std::cell::Cell<bool>;
}

/// Whether another holder's lease, running until `until_ms`, was left by a dead holder: it was
/// last renewed more than `OVERDUE_MS` ago.
fn abandoned(until_ms: i64, now_ms: i64) -> bool {
    now_ms - (until_ms - LEASE_MS) > OVERDUE_MS
}
/// How long a running batch's messages stay hidden from the next receive, renewed with the leases.
const HIDE_SECS: i32 = (LEASE_MS / 1000) as i32;
/// How soon a message whose work failed comes back: once a lease its round could not give back
/// is taken for a dead holder's (`OVERDUE_MS`), so the message is not dropped as busy.
const RETRY_SECS: i32 = (OVERDUE_MS / 1000) as i32 + 1;
/// The reason of a reconcile queued for when a VM's warm-up ends.
const WARMED_UP: &str = "warmed-up";
/// Rounds of reconcile for one message before leaving the rest to the next message.
const MAX_ROUNDS: usize = 5;

pub struct Provisioner {
    pub store: Arc<dyn Store>,
    pub queue: Option<Arc<dyn WorkQueue>>,
    pub clouds: Arc<dyn Connect>,
    pub clock: Arc<dyn Clock>,
    /// The deployment's SNS and SQS, for the groups' notifications.
    pub publisher: Arc<dyn Publisher>,
    /// The clouds' load balancers (their Query APIs), for the groups' traffic sources.
    pub lookups: Arc<dyn ConnectLookup>,
}

/// What one reconcile came to (for the log line and the tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Done {
        launched: usize,
        terminated: usize,
    },
    Deleted,
    Busy,
    /// Held by a holder that stopped renewing its lease (killed mid-round): the message is
    /// queued again for when the lease runs out, `until_ms`.
    Abandoned {
        until_ms: i64,
    },
    NoGroup,
    Waiting,
}

enum Round {
    /// `waiting`: a VM of the group is still Pending or Terminating.
    Acted {
        launched: usize,
        terminated: usize,
        waiting: bool,
    },
    /// Held back by the launch backoff (a retry is queued).
    Waiting,
    Deleted,
}

impl Round {
    /// Nothing done: the group changed under the round, whose lease release then fails, so the
    /// next round looks again at the group as it is.
    fn moved() -> Self {
        Self::Acted {
            launched: 0,
            terminated: 0,
            waiting: false,
        }
    }
}

impl Provisioner {
    /// The provisioner over the seams a main built, launching through `clouds` (on AWS, EC2's
    /// Query API: `phantom_seams::cloud::ec2_cloud`, which its main builds).
    pub fn new(seams: &Seams, clouds: Arc<dyn Connect>) -> Self {
        Self {
            store: seams.store.clone(),
            queue: seams.queue.clone(),
            publisher: seams.publisher.clone(),
            lookups: seams.lookups.clone(),
            clouds,
            clock: seams.clock.clone(),
        }
    }

    /// One batch of queue messages, run concurrently (each one's wait counted first). Returns the
    /// ids that failed and should come back (SQS partial batch failure); a message that cannot be
    /// parsed is logged and dropped.
    pub async fn handle_batch(&self, messages: Vec<Received>) -> Vec<String> {
        let now = self.clock.now_ms();
        for m in &messages {
            // Time on the queue past the delay it was sent with.
            let waited = (now - m.due_ms).max(0) as f64 / 1000.0;
            phantom_metrics::ops::observe(phantom_metrics::ops::QUEUE_WAIT_SECONDS, &[], waited);
        }
        let receipts: Vec<String> = messages.iter().map(|m| m.receipt.clone()).collect();
        // A batch the queue would not hide comes back after its visibility timeout (6 minutes)
        // if this invocation dies: each of its groups gets an ask first, which its round answers
        // as it gives the lease back, and the pulse otherwise (found by the simulator, seed 5424
        // of mix 18: a draining VM's round died, and the VM waited past its drain timeout).
        if !self.hide(&receipts, HIDE_SECS).await {
            self.ask_for_rounds(&messages).await;
        }
        let work = futures::future::join_all(
            messages
                .into_iter()
                .map(|m| async move { (self.handle(&m.id, &m.body).await, m) }),
        );
        let results = tokio::select! {
            biased;
            never = self.keep_hidden(&receipts) => match never {},
            results = work => results,
        };
        let failed: Vec<Received> = results
            .into_iter()
            .filter(|(ok, _)| !ok)
            .map(|(_, m)| m)
            .collect();
        // Lambda leaves a failed message to the queue's visibility timeout: back sooner.
        let again: Vec<String> = failed.iter().map(|m| m.receipt.clone()).collect();
        if !self.hide(&again, RETRY_SECS).await {
            self.ask_for_rounds(&failed).await;
        }
        failed.into_iter().map(|m| m.id).collect()
    }

    /// An ask on the group of each of these messages that is a reconcile (`Fleet::ask`).
    async fn ask_for_rounds(&self, messages: &[Received]) {
        for m in messages {
            if let Ok(Work::Reconcile(r)) = Work::parse(&m.body) {
                self.ask(&r).await;
            }
        }
    }

    /// Keeps a batch's messages hidden for a lease's length while it runs: a batch whose
    /// invocation dies comes back when the leases its rounds took run out, not after the queue's
    /// visibility timeout (6 minutes on AWS).
    async fn keep_hidden(&self, receipts: &[String]) -> std::convert::Infallible {
        loop {
            tokio::time::sleep(RENEW_EVERY).await;
            self.hide(receipts, HIDE_SECS).await;
        }
    }

    /// Hides these messages of the batch for `secs` from now; false if the queue refused (logged:
    /// they come back after its visibility timeout then).
    async fn hide(&self, receipts: &[String], secs: i32) -> bool {
        let (Some(q), false) = (&self.queue, receipts.is_empty()) else {
            return true;
        };
        match q.hide(receipts, secs).await {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(messages = receipts.len(), secs, error = e, "could not hide the batch's messages; they come back after the queue's visibility timeout");
                false
            }
        }
    }

    /// One message; false if it should come back.
    async fn handle(&self, id: &str, body: &str) -> bool {
        let work = match Work::parse(body) {
            Ok(w) => w,
            Err(e) => {
                tracing::error!(message_id = id, error = e, "unreadable message dropped");
                return true;
            }
        };
        match work {
            Work::Reconcile(msg) => match self.reconcile(&msg).await {
                Ok(outcome) => {
                    // Another holder's rounds may have passed a LaunchInstances just asked for:
                    // asked again shortly, for the caller waits.
                    // So, for a group that stopped telling anyone, are its last words.
                    if matches!(outcome, Outcome::Busy)
                        && (msg.reason == phantom_rules::sync_launch::REASON
                            || msg.reason == phantom_rules::notification::LAST_WORDS)
                    {
                        self.enqueue(&msg, 1).await;
                    }
                    if let Outcome::Abandoned { until_ms } = outcome {
                        let wait_ms = (until_ms - self.clock.now_ms()).max(0);
                        self.enqueue(&msg, (wait_ms / 1000 + 1) as i32).await;
                    }
                    tracing::info!(
                        message_id = id,
                        owner = msg.owner,
                        group = msg.group,
                        reason = msg.reason,
                        follow_up = msg.follow_up,
                        outcome = ?outcome,
                        "reconcile"
                    );
                    true
                }
                Err(e) => {
                    tracing::error!(message_id = id, owner = msg.owner, group = msg.group, error = %e, "reconcile failed");
                    false
                }
            },
            Work::StateChange(e) => match self.state_changed(&e).await {
                Ok(queued) => {
                    tracing::info!(
                        message_id = id,
                        instance = e.instance,
                        state = e.state,
                        region = e.region,
                        reconciles_queued = queued,
                        "state change"
                    );
                    true
                }
                Err(e) => {
                    tracing::error!(message_id = id, error = %e, "state change failed");
                    false
                }
            },
            Work::AtRisk(e) => match self.at_risk(&e).await {
                Ok(queued) => {
                    tracing::info!(
                        message_id = id,
                        instance = e.instance,
                        signal = e.signal,
                        reconciles_queued = queued,
                        "at-risk signal"
                    );
                    true
                }
                Err(e) => {
                    tracing::error!(message_id = id, error = %e, "at-risk signal failed");
                    false
                }
            },
            Work::Scheduled(e) => match self.scheduled(&e).await {
                Ok(queued) => {
                    tracing::info!(
                        message_id = id,
                        instances = ?e.instances,
                        code = e.code,
                        reconciles_queued = queued,
                        "scheduled event"
                    );
                    true
                }
                Err(e) => {
                    tracing::error!(message_id = id, error = %e, "scheduled event failed");
                    false
                }
            },
            Work::Sweep(s) => match self.sweep(&s).await {
                Ok(report) => {
                    counts!(
                        info,
                        report,
                        [
                            groups,
                            vms_seen,
                            reconciles_queued,
                            reconciles_unsent,
                            orphans_terminated,
                            cloud_error,
                            unwatched
                        ],
                        message_id = id,
                        owner = s.owner,
                        cloud = s.cloud,
                        "sweep"
                    );
                    true
                }
                Err(e) => {
                    tracing::error!(message_id = id, owner = s.owner, cloud = s.cloud, error = %e, "sweep failed");
                    false
                }
            },
        }
    }

    /// A cloud's state-change event: a reconcile for each group whose records hold that VM, if it
    /// left service (stopping, stopped, shutting down, terminated). The event only asks for a
    /// look: the round reads the cloud itself, so a wrong or forged event changes nothing.
    pub async fn state_changed(&self, e: &StateChange) -> Result<usize, String> {
        if !matches!(
            e.state.as_str(),
            "stopping" | "stopped" | "shutting-down" | "terminated"
        ) {
            return Ok(0);
        }
        self.look_at_groups_of(std::slice::from_ref(&e.instance), "state-change")
            .await
    }

    /// AWS Health's scheduled change to VMs: a reconcile for each group whose records hold one,
    /// whose round asks DescribeInstanceStatus (only a look, as a state change is).
    pub async fn scheduled(&self, e: &Scheduled) -> Result<usize, String> {
        self.look_at_groups_of(&e.instances, "scheduled-event")
            .await
    }

    /// Queues a round for each group whose records hold one of these VMs.
    async fn look_at_groups_of(&self, instances: &[String], reason: &str) -> Result<usize, String> {
        let mut msgs: Vec<Work> = Vec::new();
        for instance in instances {
            for (owner, group) in self
                .store
                .owners_of(instance)
                .await
                .map_err(|e| e.to_string())?
            {
                msgs.push(Reconcile::new(&owner, &group, reason).into());
            }
        }
        if let (Some(q), false) = (&self.queue, msgs.is_empty()) {
            q.send_all(&msgs)
                .await
                .map_err(|e| format!("reconciles not queued: {e}"))?;
        }
        Ok(msgs.len())
    }

    /// Reconciles one group. Errors are the store's; a cloud's refusal is an outcome (a failed
    /// scaling activity and a backoff), not an error.
    pub async fn reconcile(&self, msg: &Reconcile) -> Result<Outcome, StoreError> {
        let holder = phantom_rules::ids::uuid();
        let mut held = false;
        // The rounds, the lease renewed while they work (the renewal never ends by itself).
        let rounds = async {
            let outcome = tokio::select! {
                outcome = self.rounds(msg, &holder, &mut held) => outcome,
                never = self.renew(msg, &holder) => match never {},
            };
            (outcome, ASK_AFTER_RELEASE.with(std::cell::Cell::get))
        };
        let (outcome, ask) = ASK_AFTER_RELEASE
            .scope(std::cell::Cell::new(false), rounds)
            .await;
        // A store that failed may have taken the lease for us all the same (its answer lost):
        // given back too, as the condition names this holder only.
        if held || outcome.is_err() {
            // Leaving with the lease (rounds ran out, or the store failed): give it back, so the
            // next message for the group need not wait for it to run out.
            if let Err(e) = self
                .store
                .release_lease(&msg.owner, &msg.group, &holder, None)
                .await
            {
                tracing::warn!(group = msg.group, error = %e, "could not give the lease back; it runs out");
            }
        }
        if ask {
            self.ask(msg).await;
        }
        outcome
    }

    /// `holder`'s claim on the group's lease, from now.
    fn claim<'a>(&self, msg: &'a Reconcile, holder: &'a str) -> Claim<'a> {
        Claim {
            user: &msg.owner,
            group: &msg.group,
            holder,
            now_ms: self.clock.now_ms(),
            ttl_ms: LEASE_MS,
        }
    }

    /// Renews `holder`'s lease on the group every `RENEW_EVERY` while it holds it; between rounds
    /// (the lease given back) a renewal finds it not `holder`'s and changes nothing.
    async fn renew(&self, msg: &Reconcile, holder: &str) -> std::convert::Infallible {
        loop {
            tokio::time::sleep(RENEW_EVERY).await;
            if let Err(e) = self.store.renew_lease(self.claim(msg, holder)).await {
                tracing::warn!(group = msg.group, error = %e, "could not renew the lease; it runs out unless the next renewal succeeds");
            }
        }
    }

    /// Rounds of observe, decide, act, record under the group's lease until the group stands still;
    /// `held` says whether the lease is still this holder's when it returns.
    async fn rounds(
        &self,
        msg: &Reconcile,
        holder: &str,
        held: &mut bool,
    ) -> Result<Outcome, StoreError> {
        let mut total = (0, 0);
        for _ in 0..MAX_ROUNDS {
            let g = match self.store.take_lease(self.claim(msg, holder)).await? {
                Lease::Taken(g) => {
                    *held = true;
                    g
                }
                // Someone else's, or no group (any lease this holder had went with it). A live
                // holder's rounds go on until the group stands still: this message's work is
                // theirs. A dead one's lease outlives the redelivery of its own message.
                Lease::Busy { until_ms } => {
                    *held = false;
                    return Ok(if abandoned(until_ms, self.clock.now_ms()) {
                        Outcome::Abandoned { until_ms }
                    } else {
                        Outcome::Busy
                    });
                }
                Lease::NoGroup => {
                    *held = false;
                    return Ok(Outcome::NoGroup);
                }
            };
            self.send_left(
                &msg.owner,
                &g,
                msg.reason == phantom_rules::notification::LAST_WORDS,
            )
            .await?;
            let round = self
                .round(
                    &msg.owner,
                    &g,
                    msg.reason == phantom_rules::sync_launch::REASON,
                    looks_again(msg),
                )
                .await?;
            let mut waiting = false;
            match round {
                Round::Deleted => {
                    *held = false;
                    return Ok(Outcome::Deleted);
                }
                Round::Acted {
                    launched,
                    terminated,
                    waiting: w,
                } => {
                    total.0 += launched;
                    total.1 += terminated;
                    waiting = w;
                }
                Round::Waiting => {}
            }
            match self
                .store
                .release_lease(&msg.owner, &g.name, holder, Some(&g))
                .await
            {
                Ok(()) => {
                    *held = false;
                    if waiting {
                        self.follow_up(msg).await;
                    }
                    return Ok(if matches!(round, Round::Waiting) && total == (0, 0) {
                        Outcome::Waiting
                    } else {
                        Outcome::Done {
                            launched: total.0,
                            terminated: total.1,
                        }
                    });
                }
                // The group changed while we worked: look again with the lease still ours.
                Err(StoreError::Conflict) => continue,
                Err(e) => return Err(e),
            }
        }
        // Still changing: let the next message carry on.
        self.enqueue(msg, 1).await;
        Ok(Outcome::Done {
            launched: total.0,
            terminated: total.1,
        })
    }

    /// The next look in the chain at a group whose VMs are on their way, unless the chain is over.
    async fn follow_up(&self, msg: &Reconcile) {
        if let Some(delay) = round::follow_up_delay_secs(msg.follow_up) {
            self.enqueue(&msg.follow_up(), delay).await;
        }
    }

    /// Queues the group's next round. If the queue refuses it, the group keeps an ask, and the
    /// pulse queues the round (found by the simulator, seed 441 of mix 18: a follow-up refused
    /// while a launched VM waited on its hook, which then waited until the pair's hourly sweep).
    /// Under the group's lease the ask is left once the lease is given back.
    async fn enqueue(&self, msg: &Reconcile, delay_secs: i32) {
        let Some(q) = &self.queue else {
            return;
        };
        let Err(e) = q.send(&msg.clone().into(), delay_secs).await else {
            return;
        };
        tracing::warn!(error = %e, owner = msg.owner, group = msg.group, "could not queue the group's next round; it leaves an ask");
        // Under the lease, the ask waits for its release.
        if ASK_AFTER_RELEASE.try_with(|a| a.set(true)).is_err() {
            self.ask(msg).await;
        }
    }

    /// Leaves an ask on the group, so that the pulse queues its round (`Fleet::ask`).
    async fn ask(&self, msg: &Reconcile) {
        let now = self.clock.now_ms();
        match self.store.ask(&msg.owner, &msg.group, now).await {
            Ok(()) | Err(StoreError::NotFound) => {}
            Err(e) => {
                tracing::error!(error = %e, owner = msg.owner, group = msg.group, "could not leave an ask; the pair's next sweep brings the group's round");
            }
        }
    }

    /// The group's instance records as of `g`, or None if the group changed since it was read:
    /// an instance action (AttachInstances, EnterStandby) writes its record and the group in one
    /// transaction, and a round that saw the one without the other would act on neither (it would
    /// take an attaching VM for one too many, and terminate it).
    async fn members_at(&self, owner: &str, g: &Group) -> Result<Option<Vec<Member>>, StoreError> {
        let members = self.store.instances(owner, &g.name).await?;
        // A group gone since is the record's to find out (it fails, and the round ends).
        let moved = self
            .store
            .group(owner, &g.name)
            .await?
            .is_some_and(|now| now.id == g.id && now.version != g.version);
        Ok((!moved).then_some(members))
    }

    /// One round of the group; `launches`: carry out its LaunchInstances requests first.
    async fn round(
        &self,
        owner: &str,
        g: &Group,
        launches: bool,
        looks_again: bool,
    ) -> Result<Round, StoreError> {
        let ctx = Context {
            group: &g.name,
            group_arn: &g.settings.arn,
            now_ms: self.clock.now_ms(),
            audience: phantom_rules::notification::Audience::of(&g.settings),
        };
        let before = Before {
            launch_seq: g.launch_seq,
            failures: g.failures,
            desired: g.desired,
        };

        match g.spread() {
            Ok(Some(spread)) => {
                let Some(members) = self.members_at(owner, g).await? else {
                    return Ok(Round::moved());
                };
                return self
                    .round_across(owner, g, &spread, &ctx, before, members, looks_again)
                    .await;
            }
            Ok(None) => {}
            // The api refuses such tags; one that got in anyway stops the group, saying why.
            Err(e) => {
                let e = CloudError::new("InvalidTags", e.message());
                let r = round::observe_failed(&ctx, before, &e.to_string(), 0);
                return self.failed(owner, g, &e, &r).await;
            }
        }

        // Observe.
        let observed = match self.connect_record(owner, &g.cloud).await? {
            Ok((record, cloud)) => crate::ended::tagged(cloud.as_ref(), owner, Some(&g.id))
                .await
                .map(|t| (record, cloud, t)),
            Err(e) => Err(e),
        };
        let (record, cloud, seen) = match observed {
            Ok(o) => o,
            Err(e) => {
                let r = round::observe_failed(&ctx, before, &e.to_string(), 0);
                return self.failed(owner, g, &e, &r).await;
            }
        };
        let Some(members) = self.members_at(owner, g).await? else {
            return Ok(Round::moved());
        };
        // No longer across clouds, but still with VMs elsewhere: the round across clouds drains
        // them (its own cloud alone is listed).
        if members.iter().any(|m| m.cloud != g.cloud) {
            let home = Spread {
                policy: Policy::Overflow,
                sites: vec![Site {
                    cloud: g.cloud.clone(),
                    max: g.max,
                }],
            };
            return self
                .round_across(owner, g, &home, &ctx, before, members, looks_again)
                .await;
        }
        // Every record is of this cloud now: those the list leaves out are asked by id.
        let recorded = members.iter().map(|m| m.id.as_str());
        let seen = match ended::with_ended(cloud.as_ref(), seen, recorded).await {
            Ok(t) => t.into_iter().map(|t| t.seen).collect::<Vec<_>>(),
            Err(e) => {
                let r = round::observe_failed(&ctx, before, &e.to_string(), 0);
                return self.failed(owner, g, &e, &r).await;
            }
        };

        // LaunchInstances asked for: carried out before anything else.
        if launches {
            if let Some(round) = self
                .sync_launch(owner, g, &ctx, before, cloud.as_ref(), &members)
                .await?
            {
                return Ok(round);
            }
        }

        // Decide (with what the load balancers say of the VMs, under HealthCheckType ELB).
        let lbs = self.balancers(owner, g, &g.cloud).await?;
        let health = self.lb_health(g, &g.cloud, lbs.as_ref()).await;
        let mut target = g.target();
        target.reserved = g.holds.get(&g.cloud).map_or(0, |h| h.reserved(ctx.now_ms));
        target.failing = phantom_rules::traffic::unhealthy(
            Checks::of(g),
            &g.settings.traffic,
            &members,
            &health,
            target.grace_ms,
            ctx.now_ms,
        );
        // And what EC2's status checks and scheduled events say of the serving VMs.
        let running = status::judged_ids(&members)
            .into_iter()
            .filter(|id| {
                seen.iter()
                    .any(|s| &s.id == id && s.state == CloudState::Running)
            })
            .collect();
        let statuses = self.statuses(&record, cloud.as_ref(), running).await;
        let judged = status::judge(g, &mut target, &members, &statuses, ctx.now_ms);
        if let Some(at) = judged.look_again_ms.filter(|_| looks_again) {
            // An impairment not yet confirmed: the round looks again once it would be.
            let msg = Reconcile::new(owner, &g.name, status::LOOK_AGAIN);
            self.enqueue(&msg, status::delay_secs(at - ctx.now_ms))
                .await;
        }
        let plan = decide(&target, &members, &seen, ctx.now_ms);
        // The load balancers first: a VM stops receiving traffic before it goes.
        let traffic = self
            .balance(
                g,
                &g.cloud,
                lbs.as_ref(),
                &g.settings.traffic,
                &members,
                &plan,
                &health,
            )
            .await;
        self.write_traffic(owner, g, traffic).await?;
        if g.deleting() && reconcile::nothing_left(&members, &seen, &plan) {
            let mut r = round::record(&ctx, before, &members, &plan, &Acted::default());
            self.write(owner, g, &mut r).await?;
            return match self.store.delete_group(owner, g).await {
                Ok(()) => Ok(Round::Deleted),
                // Changed since the lease was taken (or gone): not deleted by this round, and the
                // lease is still ours; giving it back at this version fails in turn, and the
                // next round looks again.
                Err(StoreError::Conflict) => Ok(Round::Acted {
                    launched: 0,
                    terminated: 0,
                    waiting: true,
                }),
                Err(e) => Err(e),
            };
        }
        let refreshing = refresh::active(&g.settings.instance_refreshes).is_some();
        if plan.is_empty() {
            let waiting = refreshing || round::still_waiting(&members, &Record::default());
            if let Some(at) = plan.retry_at_ms {
                // The backoff's end is asked for again: the retry its failure queued may be lost
                // (refused by the queue, and its ask answered by this very round: seed 1268).
                self.retry_at(owner, g, at).await;
                // VMs on their way (a hook's wait) keep their follow-ups while launches wait
                // (seed 3818 of mix 18: a hook's timeout passed unseen during a long backoff).
                return Ok(if waiting {
                    Round::Acted {
                        launched: 0,
                        terminated: 0,
                        waiting,
                    }
                } else {
                    Round::Waiting
                });
            }
            if !waiting {
                let at = reconcile::look_again_at(&target, &members, ctx.now_ms);
                self.look_when_warm(owner, g, at, ctx.now_ms).await;
            }
            return Ok(Round::Acted {
                launched: 0,
                terminated: 0,
                waiting,
            });
        }

        // Act.
        let mut acted = Acted::default();
        let ids = terminate(cloud.as_ref(), &plan, &mut acted).await;
        if !plan.launch.is_empty() || !plan.launch_warm.is_empty() {
            self.launch(owner, g, &On::home(g), cloud.as_ref(), &plan, &mut acted)
                .await?;
        }
        stop_and_start(g, cloud.as_ref(), &plan).await;
        if !plan.attach.is_empty() {
            attach(g, owner, cloud.as_ref(), &plan.attach, &mut acted).await;
        }
        if !plan.detach.is_empty() {
            detach(g, cloud.as_ref(), &plan.detach, &mut acted).await;
        }

        // Record.
        let mut r = round::record(&ctx, before, &members, &plan, &acted);
        // An unanswered launch is remembered on the group's cloud as a group across clouds
        // remembers one: spread across clouds before its VMs show, the group counts them there
        // (found by the simulator, seed 1003).
        if !plan.launch.is_empty() {
            let own = g.holds.get(&g.cloud).cloned().unwrap_or_default();
            let hold = acted.remembered(own.clone(), g.launch_seq, &plan, &g.weights(), ctx.now_ms);
            if hold != own {
                let mut holds = g.holds.clone();
                across::put_hold(&mut holds, &g.cloud, hold);
                r.holds = Some(holds);
            }
        }
        let took = replacement::settle(
            &g.unreplaced_ms,
            replacement::deaths(&plan),
            g.desired,
            &members,
            ctx.now_ms,
            &mut r,
        );
        match self.write(owner, g, &mut r).await {
            Ok(()) => {
                replaced(&took);
                status::count_unhealthy(&status::unhealthy_checks(&plan));
            }
            Err(StoreError::NotFound) if !acted.launched.is_empty() => {
                // Deleted while we launched: these VMs belong to no group.
                let ids: Vec<String> = acted.launched.iter().map(|m| m.id.clone()).collect();
                tracing::warn!(
                    group = g.name,
                    ?ids,
                    "group gone during launch; terminating"
                );
                if let Err(e) = cloud.terminate(&ids).await {
                    // They carry the dead group's id: the health check's orphan sweep ends them.
                    tracing::warn!(group = g.name, error = %e, "could not terminate; left to the orphan sweep");
                }
                return Ok(Round::Acted {
                    launched: 0,
                    terminated: 0,
                    waiting: false,
                });
            }
            // Another holder launched with this launch sequence (a lease that ran out): its
            // tokens were ours, so the VMs are the same ones; the next round adopts any not recorded.
            Err(StoreError::Conflict) | Err(StoreError::NotFound) => {
                tracing::warn!(
                    group = g.name,
                    "the group moved under this round; looking again"
                );
            }
            Err(e) => return Err(e),
        }
        if let Some(why) = &acted.launch_failed {
            tracing::warn!(group = g.name, error = why, "launch failed");
            self.retry_later(owner, g, &r).await;
        }
        if plan.drop_pool {
            self.drop_pool(owner, g).await?;
        }
        let refreshing = self
            .advance_refresh(
                owner,
                g,
                plan.refresh.as_ref(),
                &members,
                // A launch without an answer may have happened: its token finds out next round,
                // and the refresh waits for it rather than failing on it.
                acted
                    .launch_failed
                    .as_deref()
                    .filter(|_| !acted.launch_unanswered),
            )
            .await?;
        // A deleted group comes back until it is gone (its VMs shutting down count as waiting);
        // a refresh until it ends. VMs attached now serve from now: the next round registers
        // them with the group's load balancers (found by the simulator, seed 412).
        let waiting = g.deleting()
            || refreshing
            || round::still_waiting(&members, &r)
            || (!acted.attached.is_empty() && !g.settings.traffic.is_empty());
        if !waiting {
            let at = reconcile::look_again_at(&target, round::after(&members, &r), ctx.now_ms);
            self.look_when_warm(owner, g, at, ctx.now_ms).await;
        }
        Ok(Round::Acted {
            launched: acted.launched.len(),
            terminated: if acted.terminate_failed.is_some() {
                0
            } else {
                ids.len()
            },
            waiting,
        })
    }

    /// A round that leaves nothing on its way, with VMs past their lifetime held by a new VM's
    /// warm-up (which ends after the chain of follow-ups would), queues the group's reconcile for
    /// `at`, the warm-up's end (`reconcile::look_again_at`), if any.
    async fn look_when_warm(&self, owner: &str, g: &Group, at: Option<i64>, now_ms: i64) {
        if let Some(at) = at {
            let msg = Reconcile::new(owner, &g.name, WARMED_UP);
            self.enqueue(&msg, status::delay_secs(at - now_ms)).await;
        }
    }

    /// Removes a deleted warm pool that is empty from the group (DeleteWarmPool's end). A
    /// compare-and-set on the group as leased, as `advance_refresh`.
    async fn drop_pool(&self, owner: &str, g: &Group) -> Result<(), StoreError> {
        let mut new = g.clone();
        new.settings.warm_pool_configuration = None;
        tracing::info!(group = g.name, "warm pool deleted");
        match self.store.update_group(owner, g, &new, None).await {
            Ok(()) | Err(StoreError::Conflict) | Err(StoreError::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Writes what the round made of the group's running instance refresh (a new status, a
    /// checkpoint, its end), or fails it if a launch failed; says whether it still runs. A
    /// compare-and-set on the group as leased: if the group changed since, the write is lost
    /// and the next round (the lease's release fails too) decides again from what is there.
    async fn advance_refresh(
        &self,
        owner: &str,
        g: &Group,
        decided: Option<&InstanceRefresh>,
        members: &[Member],
        launch_failed: Option<&str>,
    ) -> Result<bool, StoreError> {
        let Some(running) = refresh::active(&g.settings.instance_refreshes) else {
            return Ok(false);
        };
        let now_ms = self.clock.now_ms();
        let next = match (launch_failed, decided) {
            (Some(why), _) => {
                let now =
                    phantom_model::time::format_timestamp(phantom_model::time::from_ms(now_ms));
                refresh::failed(running, why, members, now_ms, &now)
            }
            (None, Some(next)) => next.clone(),
            (None, None) => return Ok(true),
        };
        let still = next.status.active();
        tracing::info!(
            group = g.name,
            refresh = next.instance_refresh_id,
            status = ?next.status,
            reason = next.status_reason,
            "instance refresh"
        );
        let mut new = g.clone();
        new.settings = refresh::settled(&g.settings, &next);
        match self.store.update_group(owner, g, &new, None).await {
            Ok(()) | Err(StoreError::Conflict) | Err(StoreError::NotFound) => Ok(still),
            Err(e) => Err(e),
        }
    }
}

/// Whether a round for `msg` may queue its own look at an impairment not yet confirmed: not one
/// that is such a look already, nor a follow-up. Each round of a chain queued one, and each of
/// those started a chain: a storm, found by the simulator (seed 3850). The health check's
/// sweeps look at the groups still confirming in any case.
fn looks_again(msg: &Reconcile) -> bool {
    msg.follow_up == 0 && msg.reason != status::LOOK_AGAIN
}

/// Counts the replacements a written record settled.
fn replaced(took: &[f64]) {
    for secs in took {
        phantom_metrics::ops::observe(phantom_metrics::ops::REPLACEMENT_SECONDS, &[], *secs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_abandoned_once_a_renewal_is_overdue() {
        // Renewed (or taken) at 0: it runs until LEASE_MS.
        assert!(!abandoned(LEASE_MS, RENEW_EVERY.as_millis() as i64));
        assert!(!abandoned(LEASE_MS, OVERDUE_MS));
        assert!(abandoned(LEASE_MS, OVERDUE_MS + 1));
    }
}
