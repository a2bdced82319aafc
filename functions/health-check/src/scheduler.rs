//! The scheduler, run with the health check on its schedule: fires the scheduled actions that are
//! due. It reads only the groups with something due (`Fleet::due`, a sparse index keyed by due
//! time), fires each group's due actions as `phantom_rules::schedule::fire` decides, and writes the group
//! and the scaling activities in one compare-and-set on the group's version: a second scheduler
//! running at the same moment loses the write, reads the group again and finds nothing due, so
//! each action fires once. A run that dies half-way leaves the groups it did not write still due,
//! for the next run; one that was missed fires late. A changed desired capacity asks the
//! provisioner to reconcile (should that message be lost, the next sweep finds the difference).

use futures::stream::{self, StreamExt};
use phantom_rules::activity::{self, Activity, Context};
use phantom_rules::group::Group;
use phantom_rules::schedule::{self, Firing, Outcome};
use phantom_seams::queue::{Reconcile, WorkQueue};
use phantom_seams::store::cas::{compare_and_set, Try};
use phantom_seams::store::{samples, Store, StoreError};
use serde::Serialize;

/// How many due groups are fired at once.
const PARALLEL: usize = 16;

/// What one run of the scheduler did.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct Fired {
    /// Groups the index listed as due.
    pub groups_due: usize,
    /// Actions that changed a group's sizes.
    pub applied: usize,
    /// Actions held back by a suspended ScheduledActions process.
    pub held: usize,
    /// Actions whose sizes did not fit the group (a failed activity each).
    pub failed: usize,
    /// Groups that could not be fired this run (store errors; they stay due for the next).
    pub errors: usize,
}

/// Fires what is due at `now_ms`: the due groups read, then `fire`.
pub async fn fire_due(
    store: &dyn Store,
    queue: &dyn WorkQueue,
    now_ms: i64,
) -> Result<Fired, StoreError> {
    let due = store.due(now_ms).await?;
    let mut groups = Vec::new();
    for read in samples::groups_of_due(store, &due).await {
        groups.extend(read.groups?.into_iter().map(|g| (read.user.clone(), g)));
    }
    Ok(fire(store, queue, &groups, now_ms).await)
}

/// Fires the scheduled actions due at `now_ms` of the groups the index listed as due, as the run
/// read them (a group there for another reason has none, and costs no more reads).
pub async fn fire(
    store: &dyn Store,
    queue: &dyn WorkQueue,
    due: &[(String, Group)],
    now_ms: i64,
) -> Fired {
    let groups_due = due.len();
    // Owned: a stream of borrowed ones cannot be proven `Send` for a spawned task.
    let outcomes: Vec<Result<Vec<Firing>, String>> = stream::iter(due.to_vec())
        .map(|(user, g)| async move { fire_group(store, queue, &user, &g, now_ms).await })
        .buffer_unordered(PARALLEL)
        .collect()
        .await;
    let mut fired = Fired {
        groups_due,
        ..Fired::default()
    };
    for outcome in outcomes {
        match outcome {
            Ok(firings) => {
                for f in firings {
                    match f.outcome {
                        Outcome::Applied { .. } => fired.applied += 1,
                        Outcome::Held => fired.held += 1,
                        Outcome::Failed(_) => fired.failed += 1,
                    }
                }
            }
            Err(_) => fired.errors += 1,
        }
    }
    fired
}

/// Fires one group's due actions: what they did, none if another run fired them first.
async fn fire_group(
    store: &dyn Store,
    queue: &dyn WorkQueue,
    user: &str,
    read: &Group,
    now_ms: i64,
) -> Result<Vec<Firing>, String> {
    let name = read.name.as_str();
    // The group as the run read it first; after a lost write, as it is now.
    let first = std::sync::Mutex::new(Some(read.clone()));
    let fired = compare_and_set(|| async {
        let given = first.lock().expect("never poisoned").take();
        let g = match given {
            Some(g) => g,
            None => match store.group(user, name).await? {
                Some(g) => g,
                None => return Ok(Try::Done(Vec::new())),
            },
        };
        let (next, firings) = schedule::fire(&g, now_ms).map_err(|e| NotFired(e.to_string()))?;
        if firings.is_empty() {
            return Ok(Try::Done(firings));
        }
        let activities = activities(&g, &firings, now_ms);
        let ask = (next.desired != g.desired).then_some(now_ms);
        let written = Try::of(store.update_group_with(user, &g, &next, &activities, ask).await)?;
        if let Try::Done(()) = written {
                for f in &firings {
                    tracing::info!(
                        user,
                        group = name,
                        action = f.action,
                        due_ms = f.due_ms,
                        late_ms = now_ms - f.due_ms,
                        outcome = ?f.outcome,
                        "scheduled action fired"
                    );
                }
            if next.desired != g.desired {
                let msg = Reconcile::new(user, name, "a scheduled action");
                if let Err(e) = queue.send(&msg.into(), 0).await {
                    tracing::error!(group = name, error = %e, "could not queue a reconcile; the pulse queues it from the group's ask");
                }
            }
        }
        Ok(written.map(|()| firings))
    })
    .await;
    fired.map_err(|NotFired(e)| {
        tracing::error!(user, group = name, error = %e, "scheduled actions not fired; the next run tries again");
        e
    })
}

/// Why a group's due actions were not fired (logged; the next run tries again).
struct NotFired(String);

impl From<StoreError> for NotFired {
    fn from(e: StoreError) -> Self {
        Self(e.to_string())
    }
}

/// The scaling activities of a group's firings: one per change of the desired capacity and per
/// failure; a change of MinSize or MaxSize alone is not an activity (AWS records none).
fn activities(g: &Group, firings: &[Firing], now_ms: i64) -> Vec<Activity> {
    let ctx = Context {
        group: &g.name,
        group_arn: &g.settings.arn,
        now_ms,
        audience: phantom_rules::notification::Audience::NONE,
    };
    firings
        .iter()
        .filter_map(|f| match &f.outcome {
            Outcome::Applied { from, to } if from.desired != to.desired => {
                Some(activity::scheduled(&ctx, &f.action, from, to))
            }
            Outcome::Failed(why) => Some(activity::scheduled_failed(&ctx, &f.action, why)),
            _ => None,
        })
        .collect()
}
