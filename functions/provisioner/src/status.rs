//! EC2's status checks and scheduled events in a round and a sweep: the running VMs' statuses
//! asked of their cloud (unless it has none: found once, and recorded on the cloud), then judged
//! by the group's checks (`phantom_rules::health`).

use crate::Provisioner;
use phantom_model::status::InstanceStatus;
use phantom_rules::group::Group;
use phantom_rules::health::{self, Judged};
use phantom_rules::reconcile::{Lifecycle, Member, Target};
use phantom_seams::cloud::{no_status_checks, Cloud};
use phantom_seams::store::CloudRecord;

impl Provisioner {
    /// The statuses of these running VMs, on a cloud that has status checks. A cloud that answers
    /// that it has no such call is recorded so, once; any other failure leaves the VMs judged by
    /// their state this time.
    pub(crate) async fn statuses(
        &self,
        record: &CloudRecord,
        cloud: &dyn Cloud,
        ids: Vec<String>,
    ) -> Vec<InstanceStatus> {
        if !record.status_checks || ids.is_empty() {
            return Vec::new();
        }
        match cloud.statuses(&ids).await {
            Ok(s) => s,
            Err(e) if no_status_checks(&e) => {
                tracing::warn!(cloud = record.name, error = %e, "the cloud has no status checks: its VMs are judged by their state");
                if let Err(e) = self.store.no_status_checks(&record.name).await {
                    tracing::warn!(cloud = record.name, error = %e, "could not record that the cloud has no status checks");
                }
                Vec::new()
            }
            Err(e) => {
                tracing::warn!(cloud = record.name, error = %e, "status checks unknown this time");
                Vec::new()
            }
        }
    }
}

/// The ids of the group's VMs there whose statuses count: those serving, and its warm pool's
/// running ones.
pub(crate) fn judged_ids(members: &[Member]) -> Vec<String> {
    members
        .iter()
        .filter(|m| matches!(m.lifecycle, Lifecycle::InService | Lifecycle::WarmedRunning))
        .map(|m| m.id.clone())
        .collect()
}

/// What the group's checks make of its VMs from their statuses, put into `target` beside what
/// its load balancers say (theirs first). The tag's confirmation period is checked whenever the
/// group is written; one that got in anyway counts as the default, said in the log.
pub(crate) fn judge(
    g: &Group,
    target: &mut Target,
    members: &[Member],
    statuses: &[InstanceStatus],
    now_ms: i64,
) -> Judged {
    let confirm_ms = health::confirm_ms(g).unwrap_or_else(|e| {
        tracing::warn!(group = g.name, error = %e, "confirmation period unreadable; the default is used");
        health::DEFAULT_CONFIRM_MS
    });
    let settings = health::Settings {
        ebs: phantom_rules::health::Checks::of(g).ebs,
        grace_ms: target.grace_ms,
        confirm_ms,
    };
    let judged = health::judge(settings, members, statuses, now_ms);
    for (id, failed) in &judged.failing {
        target
            .failing
            .entry(id.clone())
            .or_insert_with(|| failed.clone());
    }
    judged
}

/// The reason of a round's own look at an impairment not yet confirmed.
pub(crate) const LOOK_AGAIN: &str = "status-check";

/// A queue delay (s) for a look `ms` from now: at least a second, at most SQS's 15 minutes (a
/// later look is asked again by that one).
pub(crate) fn delay_secs(ms: i64) -> i32 {
    ((ms + 999) / 1000).clamp(1, 900) as i32
}

/// The checks that failed of the VMs a round lets go as unhealthy, one a VM.
pub(crate) fn unhealthy_checks(plan: &phantom_rules::reconcile::Plan) -> Vec<&'static str> {
    use phantom_rules::reconcile::Cause;
    plan.terminate
        .iter()
        .chain(&plan.gone)
        .chain(&plan.hold)
        .filter_map(|(_, cause)| match cause {
            Cause::Unhealthy(check, _) => Some(check.label()),
            _ => None,
        })
        .collect()
}

/// Counts, once their round is written, the VMs it let go as unhealthy, by the check that failed.
pub(crate) fn count_unhealthy(checks: &[&'static str]) {
    for check in checks {
        phantom_metrics::ops::count(phantom_metrics::ops::UNHEALTHY, &[("check", check)]);
    }
}
