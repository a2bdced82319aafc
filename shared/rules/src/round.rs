//! What one reconcile round writes, pure: from the plan (`reconcile::decide`) and what the cloud did
//! with it, the one `Record` the provisioner hands the store: instance records, the launch
//! sequence, the backoff and the scaling activities, together.

use crate::activity::{self, Activity, Context, OpenActivity, Told};
use crate::lifecycle::Wait;
use crate::notification::{self, NotificationType, Passage, Waiting};
use crate::reconcile::{backoff_ms, Cause, CloudState, Lifecycle, Member, Plan, Seen};
use phantom_model::record::{Backoff, Record};

/// What the cloud did with a plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Acted {
    /// TerminateInstances of `plan.terminate` refused: the cloud's words.
    pub terminate_failed: Option<String>,
    /// The VMs launched, as records (Pending).
    pub launched: Vec<Member>,
    /// The VMs launched into the warm pool, as records (Warmed:Pending).
    pub launched_warm: Vec<Member>,
    /// Why launching stopped short (the cloud's words, or the launch configuration gone).
    pub launch_failed: Option<String>,
    /// A launch got no answer (the cloud unreachable, or its answer lost): it may have happened.
    pub launch_unanswered: bool,
    /// A launch was answered with VMs, new or not (a retried token's, gone or recorded since):
    /// its token is spent.
    pub launch_answered: bool,
    /// For a VM launched after the cloud refused the types tried before it: what was tried and
    /// why it moved on, by instance id (its activity's StatusMessage).
    pub moved_on: std::collections::BTreeMap<String, String>,
    /// Attaching VMs that now carry the group's tags, as the cloud shows them.
    pub attached: Vec<Seen>,
    /// Attaching VMs that cannot join (`attach::judge`), with why.
    pub attach_refused: Vec<(String, String)>,
    /// Detaching VMs that no longer carry the group's tags.
    pub detached: Vec<String>,
}

impl Acted {
    /// `hold` as `plan`'s launch on its cloud leaves it (`seq`: the sequence of the launch's
    /// tokens): unanswered, its sequence kept for the retry and the units it asked for and got no
    /// answer to reserved there (`Hold::reserved`); answered, both forgotten.
    pub fn remembered(
        &self,
        hold: phantom_model::hold::Hold,
        seq: i64,
        plan: &Plan,
        weights: &crate::weights::Weights,
        now_ms: i64,
    ) -> phantom_model::hold::Hold {
        if !self.launch_unanswered {
            return phantom_model::hold::Hold {
                unanswered_seq: None,
                unanswered_units: 0,
                unanswered_at_ms: 0,
                ..hold
            };
        }
        let asked: i64 = plan.launch.iter().map(|p| p.units).sum();
        let made: i64 = self.launched.iter().map(|m| weights.units(m)).sum();
        phantom_model::hold::Hold {
            unanswered_seq: Some(seq),
            unanswered_units: (asked - made).max(0),
            unanswered_at_ms: now_ms,
            ..hold
        }
    }
}

/// The group as the round read it.
#[derive(Debug, Clone, Copy)]
pub struct Before {
    pub launch_seq: i64,
    pub failures: i64,
    pub desired: i64,
}

/// The record of a round whose plan was carried out as `acted` says.
pub fn record(
    ctx: &Context<'_>,
    before: Before,
    members: &[Member],
    plan: &Plan,
    acted: &Acted,
) -> Record {
    let mut r = Record::default();
    // A VM adopted this round is on record from it: let go in the same round, its hold or
    // termination is written on it (found by the simulator, seed 19: a VM adopted and held had
    // its termination begun twice, the first never told).
    let recorded = |id: &str| members.iter().chain(&plan.adopt).find(|m| m.id == id);
    // Launched by a round that stopped before recording them: recorded now, told now.
    for m in &plan.adopt {
        let passage = if m.lifecycle.is_warm() {
            Passage::IntoPool
        } else {
            Passage::Group
        };
        let waits = start_waits(ctx, &mut r, &m.waits, &m.id, passage);
        r.put.push(Member { waits, ..m.clone() });
        let a = activity::adopted(ctx, m);
        tell_via(&mut r, NotificationType::Launch, passage, &m.id, a);
    }
    for id in &plan.in_service {
        if let Some(m) = recorded(id) {
            r.put.push(Member {
                lifecycle: Lifecycle::InService,
                healthy: true,
                waits: Vec::new(),
                ..m.clone()
            });
        }
    }
    for id in &plan.proceed {
        if let Some(m) = recorded(id) {
            r.put.push(Member {
                lifecycle: Lifecycle::Pending,
                waits: Vec::new(),
                ..m.clone()
            });
        }
    }
    for (id, cause) in &plan.hold {
        let Some(m) = recorded(id) else {
            r.activities.push(activity::terminated(ctx, id, cause));
            continue;
        };
        let warm = m.lifecycle.is_warm();
        let passage = if warm {
            Passage::FromPool
        } else {
            Passage::Group
        };
        // Drained from its load balancers first, its hooks told once that is done (AWS's order);
        // AWS's MidLifecycleAction while the hooks hold it. Either way the activity is kept open
        // on its record until it has gone; a standby request still open on it ends here.
        let (waits, status) = match plan.drain_until.get(id) {
            Some(until) => (
                vec![crate::lifecycle::drain(*until, until - ctx.now_ms)],
                DRAINING,
            ),
            None => (
                start_waits(ctx, &mut r, &plan.hold_waits, id, passage),
                HELD,
            ),
        };
        overtaken(ctx, m, &mut r);
        let (a, open) = under_way(activity::terminated(ctx, id, cause), status, m);
        r.put.push(Member {
            lifecycle: if warm {
                Lifecycle::WarmedTerminatingWait
            } else {
                Lifecycle::TerminatingWait
            },
            waits,
            open,
            ..m.clone()
        });
        r.activities.push(a);
    }
    // Drained: the termination hooks hold it now, told of it, and its activity says so.
    for id in &plan.drained {
        if let Some(m) = recorded(id) {
            let waits = start_waits(ctx, &mut r, &plan.hold_waits, id, Passage::Group);
            let open = m.open.as_ref().map(|o| {
                let a = activity::restated(ctx.group, o, HELD, m);
                let open = OpenActivity {
                    start_ms: a.start_ms,
                    doc: a.doc.clone(),
                };
                r.activities.push(a);
                open
            });
            r.put.push(Member {
                waits,
                open,
                ..m.clone()
            });
        }
    }
    for id in &plan.retain {
        if let Some(m) = recorded(id) {
            // Its hooks' hold ends here: retained, not terminated.
            overtaken(ctx, m, &mut r);
            r.put.push(Member {
                lifecycle: Lifecycle::TerminatingRetained,
                waits: Vec::new(),
                open: None,
                ..m.clone()
            });
        }
        r.activities.push(activity::retained(ctx, id));
    }
    for (id, lifecycle) in &plan.warmed {
        if let Some(m) = recorded(id) {
            r.put.push(Member {
                lifecycle: *lifecycle,
                waits: Vec::new(),
                ..m.clone()
            });
        }
    }
    // Joining from the pool: Pending from now (or held by the launch hooks, as any launch).
    for id in &plan.from_pool {
        if let Some(m) = recorded(id) {
            let held = !plan.launch_waits.is_empty();
            let waits = start_waits(ctx, &mut r, &plan.launch_waits, id, Passage::FromPool);
            overtaken(ctx, m, &mut r);
            let a = activity::from_pool(ctx, m, plan.capacity_from, plan.capacity_to);
            let (a, open) = under_way(a, launching(held), m);
            r.put.push(Member {
                lifecycle: if held {
                    Lifecycle::PendingWait
                } else {
                    Lifecycle::Pending
                },
                waits,
                joined_ms: Some(ctx.now_ms),
                healthy: true,
                open,
                ..m.clone()
            });
            tell_via(&mut r, NotificationType::Launch, Passage::FromPool, id, a);
        }
    }
    for id in &plan.to_pool {
        if let Some(m) = recorded(id) {
            // The termination hooks hold it first, running, as AWS holds it in
            // Warmed:Pending:Wait.
            let held = !plan.to_pool_waits.is_empty();
            let waits = start_waits(ctx, &mut r, &plan.to_pool_waits, id, Passage::IntoPool);
            r.put.push(Member {
                lifecycle: if held {
                    Lifecycle::WarmedPendingWait
                } else {
                    Lifecycle::WarmedPending
                },
                waits,
                joined_ms: None,
                replaces_ms: None,
                at_risk_ms: None,
                probe_failed: None,
                unhealthy_check: None,
                weight: None,
                ..m.clone()
            });
        }
        r.activities.push(activity::to_pool(
            ctx,
            id,
            plan.capacity_from,
            plan.capacity_to,
        ));
    }
    for (id, check) in &plan.unhealthy {
        // On what this round wrote of it already (a launch hook's wait ended), or its record.
        let written = r.put.iter().rev().find(|p| p.id == *id).cloned();
        if let Some(m) = written.or_else(|| recorded(id).cloned()) {
            r.put.push(Member {
                healthy: false,
                unhealthy_check: Some(check.label().to_string()),
                ..m
            });
        }
    }
    r.forget.extend(plan.finished.iter().cloned());
    // A user's termination, or one the hooks held, ends its activity (open until now) and tells
    // the topics.
    for id in &plan.finished {
        if let Some(m) = recorded(id) {
            told_gone(ctx, m, &mut r);
        }
    }
    for s in &acted.attached {
        if let Some(m) = recorded(&s.id) {
            r.put.push(Member {
                lifecycle: if s.state == CloudState::Running {
                    Lifecycle::InService
                } else {
                    Lifecycle::Pending
                },
                zone: s.zone.clone(),
                instance_type: s.instance_type.clone(),
                market: s.market,
                launched_ms: s.launched_ms,
                joined_ms: None,
                replaces_ms: None,
                at_risk_ms: None,
                probe_failed: None,
                unhealthy_check: None,
                weight: None,
                ..m.clone()
            });
        }
    }
    if !acted.attach_refused.is_empty() {
        // AttachInstances counted them; the capacity they took is given back.
        let mut desired = before.desired;
        for (id, why) in &acted.attach_refused {
            r.forget.push(id.clone());
            r.activities
                .push(activity::attach_failed(ctx, id, why, desired, desired - 1));
            desired -= 1;
        }
        r.desired = Some(desired.max(0));
    }
    r.forget.extend(acted.detached.iter().cloned());
    for id in &acted.detached {
        if let Some(open) = recorded(id).and_then(|m| m.open.as_ref()) {
            r.activities
                .push(activity::finished(ctx.group, open, ctx.now_ms));
        }
    }
    for (id, cause) in &plan.gone {
        r.forget.push(id.clone());
        // Gone before its termination was seen through: the request ends with it.
        if let Some(m) = recorded(id).filter(|m| m.open.is_some() && m.lifecycle.is_terminating()) {
            told_gone(ctx, m, &mut r);
            continue;
        }
        // Gone while launching, detaching or in Standby: that activity ends, and it is told of
        // as terminated.
        if let Some(m) = recorded(id) {
            overtaken(ctx, m, &mut r);
        }
        let a = activity::terminated(ctx, id, cause);
        let warm = recorded(id).is_some_and(|m| m.lifecycle.is_warm());
        let passage = if warm {
            Passage::FromPool
        } else {
            Passage::Group
        };
        tell_via(&mut r, NotificationType::Terminate, passage, id, a);
    }
    for (id, cause) in &plan.terminate {
        // Terminating already, with its activity: the next round asks again if this one failed.
        if *cause == Cause::Retry {
            continue;
        }
        let warm = recorded(id).is_some_and(|m| m.lifecycle.is_warm());
        match &acted.terminate_failed {
            Some(why) => {
                let a = activity::terminate_failed(ctx, id, why);
                tell(&mut r, NotificationType::TerminateError, id, a);
            }
            None => {
                if let Some(m) = recorded(id) {
                    // Let go now (not released from a hold): a standby request still open ends.
                    let fresh = *cause != Cause::Released;
                    if fresh {
                        overtaken(ctx, m, &mut r);
                    }
                    r.put.push(Member {
                        lifecycle: if m.lifecycle.is_warm() {
                            Lifecycle::WarmedTerminating
                        } else {
                            Lifecycle::Terminating
                        },
                        healthy: false,
                        waits: Vec::new(),
                        open: if fresh { None } else { m.open.clone() },
                        ..m.clone()
                    });
                }
                // A released VM's activity was written when its hooks began to hold it, and is
                // open on its record: its topics hear of it once it has gone, with that activity
                // (AWS tells them once it is terminated). One held before open records (2026-11)
                // is told now, with an activity of its own.
                let a = activity::terminated(ctx, id, cause);
                let passage = if warm {
                    Passage::FromPool
                } else {
                    Passage::Group
                };
                let open = recorded(id).is_some_and(|m| m.open.is_some());
                if *cause == Cause::Released && open {
                    // Its topics hear of it when its activity ends.
                } else if *cause == Cause::Released {
                    r.notices.extend(notification::of_activity(
                        &ctx.audience,
                        NotificationType::Terminate,
                        passage,
                        id,
                        &a.doc,
                        ctx.now_ms,
                    ));
                } else {
                    tell_via(&mut r, NotificationType::Terminate, passage, id, a);
                }
            }
        }
    }
    // The next launch gets new tokens only once these VMs are on record. Adopted VMs are a launch
    // whose record was lost: their tokens are spent too. So are those of a retried launch answered
    // with VMs that have gone or are recorded: retried again, it would get them again, for ever
    // (found by the simulator, seed 4479: a group one VM short for good).
    if !acted.launched.is_empty()
        || !acted.launched_warm.is_empty()
        || !plan.adopt.is_empty()
        || acted.launch_answered
    {
        r.launch_seq = Some(before.launch_seq + 1);
    }
    // Each new VM's activity is open until it is InService, or in the pool's state (AWS's
    // InProgress at 50, or MidLifecycleAction while launch hooks hold it); its topics hear of it
    // now, as AWS tells them.
    let held = !plan.launch_waits.is_empty();
    // A launch retried with an unanswered launch's token is answered with that launch's VMs,
    // which a sweep may have found and recorded meanwhile: those are not new.
    for m in acted.launched.iter().filter(|m| recorded(&m.id).is_none()) {
        let note = acted.moved_on.get(&m.id).map(String::as_str);
        let a = activity::launched(ctx, m, plan.capacity_from, plan.capacity_to, note);
        let (a, open) = under_way(a, launching(held), m);
        put_new(ctx, &mut r, plan, m, open, Passage::Group);
        tell(&mut r, NotificationType::Launch, &m.id, a);
    }
    let warm_new = acted
        .launched_warm
        .iter()
        .filter(|m| recorded(&m.id).is_none());
    for (i, m) in warm_new.enumerate() {
        let a = activity::into_pool(ctx, m, plan.pool_from + i as i64, plan.pool_to);
        let (a, open) = under_way(a, launching(held), m);
        put_new(ctx, &mut r, plan, m, open, Passage::IntoPool);
        tell_via(
            &mut r,
            NotificationType::Launch,
            Passage::IntoPool,
            &m.id,
            a,
        );
    }
    // One record per instance (DynamoDB refuses two writes to one item in a transaction): the
    // last word on it, but a termination over any other (a VM can turn InService, or finish
    // attaching, and be let go in the same round; found by the simulator, seed 9474, where the
    // attach's write undid a refresh's hold and left its activity in progress for ever).
    let leaving = |m: &Member| m.lifecycle.is_leaving() || m.lifecycle.is_terminating();
    let mut put: Vec<Member> = Vec::new();
    for m in r.put.drain(..) {
        match put.iter().position(|p| p.id == m.id) {
            Some(i) if leaving(&put[i]) && !leaving(&m) => {}
            Some(i) => put[i] = m,
            None => put.push(m),
        }
    }
    put.retain(|m| !r.forget.contains(&m.id));
    r.put = put;
    seen_through(ctx, members, plan, &mut r);
    match &acted.launch_failed {
        Some(why) => {
            let from = plan.capacity_from + acted.launched.len() as i64;
            let act = failure(ctx, before, why, from, &mut r);
            tell(&mut r, NotificationType::LaunchError, "", act);
        }
        None if !plan.launch.is_empty() && before.failures > 0 => {
            r.backoff = Some(Backoff {
                failures: 0,
                retry_at_ms: 0,
            })
        }
        None => {}
    }
    r
}

/// A new VM's record, its launch's activity `open` on it: with launch hooks, waiting on them
/// from the start (Pending:Wait, or Warmed:Pending:Wait launched into the pool), before it is
/// InService or in the pool's state.
fn put_new(
    ctx: &Context<'_>,
    r: &mut Record,
    plan: &Plan,
    m: &Member,
    open: Option<OpenActivity>,
    passage: Passage,
) {
    if plan.launch_waits.is_empty() {
        r.put.push(Member { open, ..m.clone() });
        return;
    }
    let waits = start_waits(ctx, r, &plan.launch_waits, &m.id, passage);
    let lifecycle = if passage == Passage::IntoPool {
        Lifecycle::WarmedPendingWait
    } else {
        Lifecycle::PendingWait
    };
    r.put.push(Member {
        lifecycle,
        waits,
        open,
        ..m.clone()
    });
}

/// An open activity's StatusCode: held by lifecycle hooks, under way, or waiting while the
/// instance's load balancers drain it.
const HELD: &str = "MidLifecycleAction";
const UNDER_WAY: &str = "InProgress";
const DRAINING: &str = "WaitingForELBConnectionDraining";

/// A launch's StatusCode: held by launch hooks, or under way.
fn launching(held: bool) -> &'static str {
    if held {
        HELD
    } else {
        UNDER_WAY
    }
}

/// Activity `a` of `m` as it starts, under way as AWS shows it (InProgress at 50, or
/// MidLifecycleAction while lifecycle hooks hold it), and what `m`'s record keeps of it until it
/// is done.
fn under_way(a: Activity, status: &str, m: &Member) -> (Activity, Option<OpenActivity>) {
    let a = activity::in_progress(a, status, 50, m);
    let open = Some(OpenActivity {
        start_ms: a.start_ms,
        doc: a.doc.clone(),
    });
    (a, open)
}

/// The request still open on `m` (a standby request, or a hold the round ends), ended now without a
/// word to the topics: what the round does to `m` next has its own activity.
fn overtaken(ctx: &Context<'_>, m: &Member, r: &mut Record) {
    if let Some(open) = &m.open {
        r.activities
            .push(activity::finished(ctx.group, open, ctx.now_ms));
    }
}

/// `m` has gone: its open request (a user's termination, or one its hooks held) ends, and its
/// topics hear of it with that activity, from the warm pool if it was there.
fn told_gone(ctx: &Context<'_>, m: &Member, r: &mut Record) {
    let Some(open) = &m.open else { return };
    let a = activity::finished(ctx.group, open, ctx.now_ms);
    let passage = if m.lifecycle.is_warm() {
        Passage::FromPool
    } else {
        Passage::Group
    };
    tell_via(r, NotificationType::Terminate, passage, &m.id, a);
}

/// A launch (into the group, from the warm pool or into it), or a user's EnterStandby or
/// ExitStandby, open until a round has the instance InService (again), in the pool's state, or
/// out of service (in Standby, its load balancers told): ended, and its record cleared of it.
fn seen_through(ctx: &Context<'_>, members: &[Member], plan: &Plan, r: &mut Record) {
    let warmed = plan.warmed.iter().map(|(id, _)| id);
    let through = plan.in_standby.iter().chain(&plan.in_service).chain(warmed);
    for m in through.filter_map(|id| members.iter().find(|m| m.id == *id)) {
        let Some(open) = &m.open else { continue };
        let at = r.put.iter().position(|p| p.id == m.id);
        // Let go in the same round, its activity ended there (or forgotten): one write of an
        // activity a transaction.
        let ended = at.is_some_and(|i| r.put[i].open.as_ref() != Some(open));
        if ended || r.forget.contains(&m.id) {
            continue;
        }
        r.activities
            .push(activity::finished(ctx.group, open, ctx.now_ms));
        match at {
            Some(i) => r.put[i].open = None,
            None => r.put.push(Member {
                open: None,
                ..m.clone()
            }),
        }
    }
}

/// The record of a round that could not even look at the cloud (no credentials, unreachable).
pub fn observe_failed(ctx: &Context<'_>, before: Before, why: &str, from: i64) -> Record {
    let mut r = Record::default();
    let act = failure(ctx, before, why, from, &mut r);
    tell(&mut r, NotificationType::LaunchError, "", act);
    r
}

/// Records `a`, marked as the `kind` event of `instance` (the group's topics that want it hear of
/// it once it is written: `notification::of_record`).
fn tell(r: &mut Record, kind: NotificationType, instance: &str, a: Activity) {
    tell_via(r, kind, Passage::Group, instance, a);
}

/// `tell`, of an instance going into or out of the warm pool.
fn tell_via(r: &mut Record, kind: NotificationType, passage: Passage, instance: &str, a: Activity) {
    r.activities.push(Activity {
        tells: Some(Told {
            kind,
            passage,
            instance: instance.to_string(),
        }),
        ..a
    });
}

/// The waits `instance` starts now, each with a LifecycleActionToken of its own; each hook with a
/// target is told.
fn start_waits(
    ctx: &Context<'_>,
    r: &mut Record,
    waits: &[Wait],
    instance: &str,
    passage: Passage,
) -> Vec<Wait> {
    waits
        .iter()
        .map(|w| {
            let token = crate::ids::uuid();
            let waiting = Waiting {
                group: ctx.group,
                group_arn: ctx.group_arn,
                hook: &w.hook,
                instance,
                token: &token,
                passage,
                now_ms: ctx.now_ms,
            };
            r.notices
                .extend(notification::of_wait(&ctx.audience, &waiting));
            Wait {
                token: Some(token),
                ..w.clone()
            }
        })
        .collect()
}

/// A failed launch: its activity, and a longer wait before the next try.
fn failure(
    ctx: &Context<'_>,
    before: Before,
    why: &str,
    from: i64,
    r: &mut Record,
) -> crate::activity::Activity {
    let failures = before.failures + 1;
    r.backoff = Some(Backoff {
        failures,
        retry_at_ms: ctx.now_ms + backoff_ms(failures),
    });
    activity::launch_failed(ctx, why, from, before.desired)
}

/// Whether, once `r` is written, an instance of the group is on its way in or out (Pending or
/// Terminating, or kept serving until its replacement does: at risk, or retiring and so
/// unhealthy): the group should be looked at again soon rather than at the next health sweep.
pub fn still_waiting(members: &[Member], r: &Record) -> bool {
    let waiting = |m: &Member| {
        (m.lifecycle == Lifecycle::InService && (m.at_risk_ms.is_some() || !m.healthy))
            || matches!(
                m.lifecycle,
                Lifecycle::Pending
                    | Lifecycle::PendingWait
                    | Lifecycle::Terminating
                    | Lifecycle::TerminatingWait
                    | Lifecycle::Attaching
                    | Lifecycle::Detaching
                    | Lifecycle::WarmedPending
                    | Lifecycle::WarmedPendingWait
                    | Lifecycle::WarmedTerminatingWait
                    | Lifecycle::WarmedTerminating
            )
    };
    after(members, r).any(waiting)
}

/// The group's members once `r` is written: those it puts, and the others it does not forget.
pub fn after<'a>(members: &'a [Member], r: &'a Record) -> impl Iterator<Item = &'a Member> {
    r.put.iter().chain(
        members
            .iter()
            .filter(|m| !r.forget.contains(&m.id) && !r.put.iter().any(|p| p.id == m.id)),
    )
}

/// How long to wait before look `attempt` (0, 1, ...) of a chain of follow-ups at a waiting
/// group: 1 s (a cloud that starts VMs at once shows them running at the first look: InService
/// a second after it), then half as long again each time up to 30 s; `None` after about seven
/// minutes, when the health check's sweep is the one to notice a VM stuck on its way.
pub fn follow_up_delay_secs(attempt: u32) -> Option<i32> {
    const MAX_ATTEMPTS: u32 = 20;
    (attempt < MAX_ATTEMPTS).then(|| {
        let mut d = 1.0_f64;
        for _ in 0..attempt {
            d = (d * 1.5).min(30.0);
        }
        d.round() as i32
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::Placement;

    #[test]
    fn follow_ups_start_quick_slow_down_and_end() {
        let delays: Vec<i32> = (0..25).map_while(follow_up_delay_secs).collect();
        assert_eq!(&delays[..9], &[1, 2, 2, 3, 5, 8, 11, 17, 26]);
        assert!(delays.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(*delays.last().unwrap(), 30);
        let total: i32 = delays.iter().sum();
        assert!((300..=600).contains(&total), "a chain lasts {total} s");
        assert_eq!(follow_up_delay_secs(20), None);
    }

    #[test]
    fn a_leaving_vm_waits_on_its_drain_first_and_on_its_hooks_once_drained() {
        let now = ctx().now_ms;
        let m = member("i-1", Lifecycle::InService);
        let hook = Wait {
            hook: "down".into(),
            deadline_ms: now + 60_000,
            heartbeat_ms: 60_000,
            global_deadline_ms: None,
            default_result: crate::lifecycle::Outcome::Continue,
            result: None,
            token: None,
        };
        let plan = Plan {
            hold: vec![("i-1".into(), Cause::ScaleIn { from: 2, to: 1 })],
            hold_waits: vec![hook.clone()],
            drain_until: [("i-1".to_string(), now + 30_000)].into(),
            ..Plan::default()
        };
        let r = record(
            &ctx(),
            BEFORE,
            std::slice::from_ref(&m),
            &plan,
            &Acted::default(),
        );
        let draining = r.put[0].clone();
        assert!(draining.draining(), "{:?}", draining.waits);
        assert_eq!(
            r.activities[0].doc.status_code,
            "WaitingForELBConnectionDraining"
        );
        // Drained: the hook's wait begins (its token given, its target told), and the same
        // activity is written again, held.
        let plan = Plan {
            drained: vec!["i-1".into()],
            hold_waits: vec![hook],
            ..Plan::default()
        };
        let r = record(
            &ctx(),
            BEFORE,
            std::slice::from_ref(&draining),
            &plan,
            &Acted::default(),
        );
        let held = &r.put[0];
        assert!(!held.draining());
        assert_eq!(held.waits.len(), 1);
        assert!(held.waits[0].token.is_some());
        assert_eq!(r.activities.len(), 1);
        let a = &r.activities[0];
        assert_eq!(
            (
                a.start_ms,
                a.doc.activity_id.as_str(),
                a.doc.status_code.as_str()
            ),
            (
                draining.open.as_ref().unwrap().start_ms,
                draining.open.as_ref().unwrap().doc.activity_id.as_str(),
                "MidLifecycleAction"
            )
        );
        assert_eq!(
            held.open.as_ref().unwrap().doc.status_code,
            "MidLifecycleAction"
        );
    }

    #[test]
    fn waiting_means_on_the_way_in_or_out_after_the_record() {
        let m = member;
        let pending = [m("i-1", Lifecycle::Pending)];
        assert!(still_waiting(&pending, &Record::default()));
        let served = Record {
            put: vec![m("i-1", Lifecycle::InService)],
            ..Record::default()
        };
        assert!(!still_waiting(&pending, &served));
        let forgotten = Record {
            forget: vec!["i-1".into()],
            ..Record::default()
        };
        assert!(!still_waiting(&pending, &forgotten));
        let terminating = Record {
            put: vec![m("i-2", Lifecycle::Terminating)],
            ..Record::default()
        };
        assert!(still_waiting(
            &[m("i-2", Lifecycle::InService)],
            &terminating
        ));
        assert!(!still_waiting(
            &[m("i-3", Lifecycle::InService)],
            &Record::default()
        ));
        // Kept serving until a replacement serves: at risk, or retiring (unhealthy).
        let at_risk = Member {
            at_risk_ms: Some(1),
            ..m("i-4", Lifecycle::InService)
        };
        assert!(still_waiting(&[at_risk], &Record::default()));
        let retiring = Member {
            healthy: false,
            ..m("i-5", Lifecycle::InService)
        };
        assert!(still_waiting(&[retiring], &Record::default()));
    }

    fn ctx() -> Context<'static> {
        Context {
            group: "web",
            group_arn: "arn",
            now_ms: 1_000_000,
            audience: crate::notification::Audience::NONE,
        }
    }

    fn member(id: &str, lifecycle: Lifecycle) -> Member {
        crate::fixtures::test_member(id, lifecycle)
    }

    const BEFORE: Before = Before {
        launch_seq: 7,
        failures: 2,
        desired: 3,
    };

    fn launch_plan(n: usize) -> Plan {
        Plan {
            launch: vec![
                Placement {
                    zone: Some("a".into()),
                    subnet: None,
                    market: phantom_model::instance::Market::OnDemand,
                    units: 1,
                };
                n
            ],
            capacity_from: 1,
            capacity_to: 3,
            ..Plan::default()
        }
    }

    #[test]
    fn launches_advance_the_sequence_and_clear_the_backoff() {
        let acted = Acted {
            launched: vec![
                member("i-1", Lifecycle::Pending),
                member("i-2", Lifecycle::Pending),
            ],
            ..Acted::default()
        };
        let r = record(&ctx(), BEFORE, &[], &launch_plan(2), &acted);
        assert_eq!(r.put.len(), 2);
        assert_eq!(r.launch_seq, Some(8));
        assert_eq!(
            r.backoff,
            Some(Backoff {
                failures: 0,
                retry_at_ms: 0
            })
        );
        assert_eq!(r.activities.len(), 2);
        assert!(r.activities[0]
            .doc
            .cause
            .contains("increasing the capacity from 1 to 3"));
    }

    #[test]
    fn a_partial_launch_records_what_ran_and_backs_off() {
        let acted = Acted {
            launched: vec![member("i-1", Lifecycle::Pending)],
            launch_failed: Some("InsufficientInstanceCapacity: full".into()),
            ..Acted::default()
        };
        let r = record(&ctx(), BEFORE, &[], &launch_plan(2), &acted);
        assert_eq!(r.launch_seq, Some(8));
        let b = r.backoff.unwrap();
        assert_eq!(b.failures, 3);
        assert_eq!(b.retry_at_ms, 1_000_000 + backoff_ms(3));
        let failed = r.activities.last().unwrap();
        assert_eq!(failed.doc.status_code, "Failed");
        assert!(failed
            .doc
            .status_message
            .as_deref()
            .is_some_and(|m| m.contains("InsufficientInstanceCapacity")));
    }

    #[test]
    fn a_retried_token_answered_with_gone_vms_is_spent() {
        // Seed 4479: the token's one VM had died; retried each round, the launch got it back each
        // time and launched nothing, the group one VM short for good.
        let acted = Acted {
            launch_answered: true,
            ..Acted::default()
        };
        let r = record(&ctx(), BEFORE, &[], &launch_plan(1), &acted);
        assert_eq!(r.launch_seq, Some(8));
        assert!(r.put.is_empty());
    }

    #[test]
    fn nothing_launched_leaves_the_sequence() {
        let acted = Acted {
            launch_failed: Some("InvalidAMIID.NotFound: no".into()),
            ..Acted::default()
        };
        let r = record(&ctx(), BEFORE, &[], &launch_plan(1), &acted);
        assert_eq!(r.launch_seq, None);
        assert!(r.put.is_empty());
        assert_eq!(r.backoff.unwrap().failures, 3);
    }

    #[test]
    fn a_vm_adopted_and_held_in_one_round_is_recorded_held() {
        // Seed 19: its hold was not written on it, and the next round began its termination
        // again, the first activity never told.
        let plan = Plan {
            adopt: vec![member("i-6", Lifecycle::WarmedPending)],
            hold: vec![(
                "i-6".into(),
                Cause::Warm("the warm pool shrank to 0".into()),
            )],
            hold_waits: vec![crate::lifecycle::drain(2_000_000, 1_000_000)],
            ..Plan::default()
        };
        let r = record(&ctx(), BEFORE, &[], &plan, &Acted::default());
        assert_eq!(r.put.len(), 1, "{:?}", r.put);
        assert_eq!(r.put[0].lifecycle, Lifecycle::WarmedTerminatingWait);
        let held: Vec<_> = r
            .activities
            .iter()
            .filter(|a| a.doc.description.starts_with("Terminating"))
            .collect();
        assert_eq!(held.len(), 1);
        assert_eq!(
            r.put[0].open.as_ref().map(|o| &o.doc.activity_id),
            Some(&held[0].doc.activity_id)
        );
    }

    #[test]
    fn terminations_mark_records_or_say_why_not() {
        let members = [
            member("i-1", Lifecycle::InService),
            member("i-2", Lifecycle::Pending),
        ];
        let plan = Plan {
            terminate: vec![("i-1".into(), Cause::ScaleIn { from: 2, to: 1 })],
            in_service: vec!["i-2".into()],
            gone: vec![(
                "i-9".into(),
                Cause::Unhealthy(crate::health::Failed::State, "gone".into()),
            )],
            finished: vec!["i-8".into()],
            ..Plan::default()
        };
        let r = record(&ctx(), BEFORE, &members, &plan, &Acted::default());
        let i1 = r.put.iter().find(|m| m.id == "i-1").unwrap();
        assert_eq!((i1.lifecycle, i1.healthy), (Lifecycle::Terminating, false));
        let i2 = r.put.iter().find(|m| m.id == "i-2").unwrap();
        assert_eq!(i2.lifecycle, Lifecycle::InService);
        assert_eq!(r.forget, vec!["i-8".to_string(), "i-9".to_string()]);
        assert_eq!(r.activities.len(), 2);
        assert_eq!(r.backoff, None);

        let refused = Acted {
            terminate_failed: Some("InternalError: try later".into()),
            ..Acted::default()
        };
        let r = record(&ctx(), BEFORE, &members, &plan, &refused);
        assert!(r.put.iter().all(|m| m.id != "i-1"));

        // In service and chosen for scale-in in one round: one record, Terminating.
        let both = Plan {
            in_service: vec!["i-2".into()],
            terminate: vec![("i-2".into(), Cause::ScaleIn { from: 2, to: 1 })],
            ..Plan::default()
        };
        let r = record(&ctx(), BEFORE, &members, &both, &Acted::default());
        assert_eq!(r.put.len(), 1);
        assert_eq!(r.put[0].lifecycle, Lifecycle::Terminating);
        // The same with its launch's activity still open: ended once (one write of an item a
        // transaction), the record cleared of it.
        let launch = activity::launched(&ctx(), &members[1], 1, 2, None);
        let (_, open) = under_way(launch, UNDER_WAY, &members[1]);
        let opened = [Member {
            open: open.clone(),
            ..members[1].clone()
        }];
        let r = record(&ctx(), BEFORE, &opened, &both, &Acted::default());
        let ended: Vec<_> = r
            .activities
            .iter()
            .filter(|a| Some(&a.doc.activity_id) == open.as_ref().map(|o| &o.doc.activity_id))
            .collect();
        assert_eq!(ended.len(), 1, "{:?}", r.activities);
        assert_eq!(ended[0].doc.status_code, "Successful");
        assert_eq!(r.put[0].open, None);
        let r = record(&ctx(), BEFORE, &members, &plan, &refused);
        assert!(r.put.iter().all(|m| m.id != "i-1"));
        assert!(r
            .activities
            .iter()
            .any(|a| a.doc.status_message.as_deref() == Some("InternalError: try later")));
    }
}
