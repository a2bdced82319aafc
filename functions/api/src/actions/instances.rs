//! The instance actions: TerminateInstanceInAutoScalingGroup, SetInstanceHealth,
//! SetInstanceProtection, EnterStandby, ExitStandby, AttachInstances, DetachInstances. Each writes
//! the instance records (and, for a change of size, the group's desired capacity) through
//! `records.rs`, then asks the provisioner to act.

use super::group_not_found;
use super::records::{member, write, write_group};
use crate::App;
use phantom_model::request::{
    InstancesJoining, InstancesLeaving, SetInstanceHealth, SetInstanceProtection,
    TerminateInstanceInAutoScalingGroup,
};
use phantom_model::response;
use phantom_rules::activity::{self, Activity, Context, OpenActivity};
use phantom_rules::group::Group;
use phantom_rules::group::GroupRules;
use phantom_rules::health::Failed;
use phantom_rules::identity::Caller;
use phantom_rules::lifecycle;
use phantom_rules::reconcile::{Cause, Lifecycle, Member};
use phantom_seams::store::Record;
use phantom_wire::{ApiError, ApiResult};

const IN_PROGRESS: &str = "InProgress";

fn context<'a>(app: &App, g: &'a Group) -> Context<'a> {
    Context {
        group: &g.name,
        group_arn: &g.settings.arn,
        now_ms: app.clock.now_ms(),
        audience: phantom_rules::notification::Audience::NONE,
    }
}

/// The record's activities, as actions that return them answer.
fn activities_of(r: Option<Record>) -> response::Activities {
    response::Activities {
        // None: nothing changed, so no activity.
        // The request's own, open; not one it ended (`superseded`).
        activities: r
            .into_iter()
            .flat_map(|r| r.activities)
            .filter(|a| a.doc.end_time.is_none())
            .map(|a| a.doc)
            .collect(),
        next_token: None,
    }
}

pub async fn terminate(
    app: &App,
    caller: &Caller,
    input: TerminateInstanceInAutoScalingGroup,
) -> ApiResult<response::ActivityType> {
    let id = &input.instance_id;
    let decrement = input.should_decrement_desired_capacity;
    let now = app.clock.now_ms();
    let r = write(app, caller, id, |g, m| {
        if matches!(
            m.lifecycle,
            Lifecycle::Terminating | Lifecycle::TerminatingWait
        ) {
            return Err(ApiError::validation(format!(
                "The instance {id} is already terminating."
            )));
        }
        // A retained instance is outside the group's count and past its hooks: it only goes.
        if m.lifecycle == Lifecycle::TerminatingRetained {
            let cause = Cause::UserRequest { shrink: None };
            let (act, kept) = open(activity::terminated(&context(app, g), id, &cause), IN_PROGRESS, 0, m);
            return Ok(Some(Record {
                put: vec![Member {
                    lifecycle: Lifecycle::Terminating,
                    open: Some(kept),
                    ..m.clone()
                }],
                activities: [act].into_iter().chain(superseded(g, m, now)).collect(),
                ..Record::default()
            }));
        }
        let shrink = if decrement {
            if g.desired - 1 < g.min {
                return Err(ApiError::validation(format!(
                    "Currently, desiredSize equals minSize ({}). Terminating instance without replacement will violate group's min size constraint. Either set shouldDecrementDesiredCapacity flag to false or lower group's min size.",
                    g.min
                )));
            }
            Some((g.desired, g.desired - 1))
        } else {
            None
        };
        // InProgress until the instance has gone (AWS's progress 0).
        let cause = Cause::UserRequest { shrink };
        let (act, kept) = open(activity::terminated(&context(app, g), id, &cause), IN_PROGRESS, 0, m);
        // The group's termination hooks hold it first.
        let waits = lifecycle::waits(&g.target().hooks, false, now);
        Ok(Some(Record {
            put: vec![Member {
                lifecycle: if waits.is_empty() {
                    Lifecycle::Terminating
                } else {
                    Lifecycle::TerminatingWait
                },
                waits,
                open: Some(kept),
                ..m.clone()
            }],
            desired: shrink.map(|(_, to)| to),
            activities: [act].into_iter().chain(superseded(g, m, now)).collect(),
            ..Record::default()
        }))
    })
    .await?
    .expect("a termination always writes");
    let activity = r
        .activities
        .into_iter()
        .next()
        .expect("a termination's activity");
    Ok(response::ActivityType {
        activity: activity.doc,
    })
}

pub async fn set_health(app: &App, caller: &Caller, input: SetInstanceHealth) -> ApiResult<()> {
    let id = &input.instance_id;
    let healthy = match input.health_status.as_str() {
        "Healthy" => true,
        "Unhealthy" => false,
        other => {
            return Err(ApiError::validation(format!(
                "Valid instance health states are: [Healthy, Unhealthy], not '{other}'."
            )))
        }
    };
    // By default the group's grace period holds, as in AWS.
    let respect_grace = input.should_respect_grace_period != Some(false);
    let now = app.clock.now_ms();
    write(app, caller, id, |g, m| {
        let in_grace = now - m.launched_ms < g.target().grace_ms;
        if m.healthy == healthy || (respect_grace && in_grace) {
            return Ok(None);
        }
        Ok(Some(Record {
            put: vec![Member {
                healthy,
                unhealthy_check: (!healthy).then(|| Failed::User.label().to_string()),
                probe_failed: None,
                ..m.clone()
            }],
            ..Record::default()
        }))
    })
    .await?;
    Ok(())
}

pub async fn set_protection(
    app: &App,
    caller: &Caller,
    input: SetInstanceProtection,
) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    let protect = input.protected_from_scale_in;
    let ids = &input.instance_ids;
    write_group(app, caller, name, None, |_g, members| {
        let mut put = Vec::new();
        for id in ids {
            let m = member(members, id, name)?;
            if m.protected != protect {
                put.push(Member {
                    protected: protect,
                    ..m.clone()
                });
            }
        }
        Ok((!put.is_empty()).then(|| Record {
            put,
            ..Record::default()
        }))
    })
    .await?;
    Ok(())
}

pub async fn enter_standby(
    app: &App,
    caller: &Caller,
    input: InstancesLeaving,
) -> ApiResult<response::Activities> {
    let decrement = input.should_decrement_desired_capacity;
    standby(
        app,
        caller,
        &input.auto_scaling_group_name,
        &input.instance_ids,
        decrement,
        true,
    )
    .await
}

pub async fn exit_standby(
    app: &App,
    caller: &Caller,
    input: InstancesJoining,
) -> ApiResult<response::Activities> {
    standby(
        app,
        caller,
        &input.auto_scaling_group_name,
        &input.instance_ids,
        false,
        false,
    )
    .await
}

/// EnterStandby (`enter`) takes InService instances out of service, decrementing the desired
/// capacity if asked (else the provisioner launches replacements); ExitStandby puts Standby
/// instances back (Pending, InService once the provisioner sees them running) and adds them to
/// the desired capacity, as AWS does.
async fn standby(
    app: &App,
    caller: &Caller,
    name: &str,
    ids: &[String],
    decrement: bool,
    enter: bool,
) -> ApiResult<response::Activities> {
    let (from, to) = if enter {
        (Lifecycle::InService, Lifecycle::Standby)
    } else {
        (Lifecycle::Standby, Lifecycle::Pending)
    };
    let r = write_group(app, caller, name, Some("standby"), |g, members| {
        let mut put = Vec::new();
        for id in ids {
            let m = member(members, id, name)?;
            if m.lifecycle != from {
                return Err(ApiError::validation(format!(
                    "The instance {id} is not in {}.",
                    from.as_str()
                )));
            }
            put.push(Member {
                lifecycle: to,
                ..m.clone()
            });
        }
        let n = ids.len() as i64;
        let desired = match (enter, decrement) {
            (true, true) if g.desired - n < g.min => {
                return Err(sizes_refused(g, "place into standby", n))
            }
            (true, true) => Some(g.desired - n),
            (true, false) => None,
            (false, _) if g.desired + n > g.max => {
                return Err(sizes_refused(g, "move out of standby", n))
            }
            (false, _) => Some(g.desired + n),
        };
        let ctx = context(app, g);
        let step = if enter { -1 } else { 1 };
        // AWS's answer: InProgress at 50 into Standby, PreInService at 30 out of it, until a
        // round has taken the instance out of service (or has it InService again).
        let (status, progress) = if enter {
            (IN_PROGRESS, 50)
        } else {
            ("PreInService", 30)
        };
        let mut activities = Vec::new();
        for (i, p) in put.iter_mut().enumerate() {
            // Each instance's activity says how the capacity moved with it.
            let change = desired.map(|_| {
                let before = g.desired + step * i as i64;
                (before, before + step)
            });
            let a = activity::standby(&ctx, &p.id, enter, change);
            let (a, kept) = open(a, status, progress, p);
            activities.extend(superseded(g, p, ctx.now_ms));
            p.open = Some(kept);
            activities.push(a);
        }
        Ok(Some(Record {
            put,
            desired,
            activities,
            ..Record::default()
        }))
    })
    .await?;
    Ok(activities_of(r))
}

/// AttachInstances: the VMs join at once as far as the group's size goes (the desired capacity
/// grows with them, refused above MaxSize), once the group's cloud shows them running and no other
/// group's; the provisioner tags them as the group's, and drops with a failed activity those that
/// cannot join by then (or that the api could not look up).
pub async fn attach(app: &App, caller: &Caller, input: InstancesJoining) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    let ids = &input.instance_ids;
    let now = app.clock.now_ms();
    let Some(g) = app.store.group(&caller.user, name).await? else {
        return Err(group_not_found(name));
    };
    if ids.is_empty() {
        return Ok(());
    }
    // Read once: a VM attached to two groups at the same moment is caught by the provisioner,
    // which tags it for the first and finds it another group's for the second.
    let recorded = app.store.all_instances(&caller.user).await?;
    // What the store can refuse is refused before the cloud is asked.
    attachable(&g, &recorded, ids)?;
    super::lookups::check_attach(app, caller, &g, ids).await?;
    write_group(app, caller, name, Some("AttachInstances"), |g, _| {
        attachable(g, &recorded, ids)?;
        let n = ids.len() as i64;
        let protect = g.target().protect_new;
        let ctx = context(app, g);
        Ok(Some(Record {
            put: ids
                .iter()
                .map(|id| Member {
                    id: id.to_string(),
                    cloud: g.cloud.clone(),
                    zone: String::new(),
                    subnet: None,
                    lifecycle: Lifecycle::Attaching,
                    healthy: true,
                    launched_ms: now,
                    joined_ms: None,
                    replaces_ms: None,
                    at_risk_ms: None,
                    probe_failed: None,
                    unhealthy_check: None,
                    weight: None,
                    protected: protect,
                    launch_configuration: None,
                    launch_template: None,
                    launched_from: None,
                    instance_type: String::new(),
                    waits: Vec::new(),
                    open: None,
                    rev: 0,
                    // What the cloud shows is recorded once the provisioner has looked.
                    market: phantom_model::instance::Market::OnDemand,
                })
                .collect(),
            desired: Some(g.desired + n),
            activities: ids
                .iter()
                .enumerate()
                .map(|(i, id)| {
                    let from = g.desired + i as i64;
                    activity::attaching(&ctx, id, from, from + 1)
                })
                .collect(),
            ..Record::default()
        }))
    })
    .await?;
    Ok(())
}

/// None of the VMs is already in a group, and the group has room for them all.
fn attachable(g: &Group, recorded: &[(String, Member)], ids: &[String]) -> ApiResult<()> {
    for id in ids {
        if let Some((other, _)) = recorded.iter().find(|(_, m)| &m.id == id) {
            return Err(ApiError::validation(format!(
                "The instance {id} is already part of Auto Scaling group {other}."
            )));
        }
    }
    let n = ids.len() as i64;
    if g.desired + n > g.max {
        return Err(sizes_refused(g, "attach", n));
    }
    Ok(())
}

/// DetachInstances: InService or Standby instances leave the group (the provisioner removes its
/// tags and forgets them; the VMs keep running); with a decrement the desired capacity drops with
/// the InService ones (refused below MinSize), without it replacements are launched.
pub async fn detach(
    app: &App,
    caller: &Caller,
    input: InstancesLeaving,
) -> ApiResult<response::Activities> {
    let name = &input.auto_scaling_group_name;
    let ids = &input.instance_ids;
    let decrement = input.should_decrement_desired_capacity;
    let r = write_group(app, caller, name, Some("DetachInstances"), |g, members| {
        let mut put = Vec::new();
        let mut serving = Vec::new();
        for id in ids {
            let m = member(members, id, name)?;
            match m.lifecycle {
                Lifecycle::InService => serving.push(id),
                Lifecycle::Standby => {}
                _ => {
                    return Err(ApiError::validation(format!(
                        "The instance {id} is not in InService or Standby."
                    )))
                }
            }
            put.push(Member {
                lifecycle: Lifecycle::Detaching,
                ..m.clone()
            });
        }
        if put.is_empty() {
            return Ok(None);
        }
        let n = serving.len() as i64;
        let desired = (decrement && n > 0).then_some(g.desired - n);
        if desired.is_some_and(|d| d < g.min) {
            return Err(sizes_refused(g, "detach", n));
        }
        let ctx = context(app, g);
        let mut from = g.desired;
        // Each InProgress (AWS's 50) until the provisioner has untagged its instance.
        let mut activities = Vec::new();
        for (id, p) in ids.iter().zip(put.iter_mut()) {
            let shrink = (desired.is_some() && serving.contains(&id)).then(|| {
                from -= 1;
                (from + 1, from)
            });
            let (a, kept) = open(activity::detaching(&ctx, id, shrink), IN_PROGRESS, 50, p);
            activities.extend(superseded(g, p, ctx.now_ms));
            p.open = Some(kept);
            activities.push(a);
        }
        Ok(Some(Record {
            put,
            desired,
            activities,
            ..Record::default()
        }))
    })
    .await?;
    Ok(activities_of(r))
}

/// The request still open on `m` (an EnterStandby or ExitStandby no round has seen through yet),
/// ended as another takes its place.
fn superseded(g: &Group, m: &Member, now_ms: i64) -> Option<Activity> {
    m.open
        .as_ref()
        .map(|o| activity::finished(&g.name, o, now_ms))
}

/// Activity `a` of a user's request on instance `m`, at `status` and `progress` percent as AWS
/// answers it, and what the instance's record keeps of it until it is done.
fn open(a: Activity, status: &str, progress: i64, m: &Member) -> (Activity, OpenActivity) {
    let a = activity::in_progress(a, status, progress, m);
    let kept = OpenActivity {
        start_ms: a.start_ms,
        doc: a.doc.clone(),
    };
    (a, kept)
}

/// AWS's words for instances that would take the desired capacity past MinSize or MaxSize
/// (scripts match on "please update the AutoScalingGroup sizes appropriately").
fn sizes_refused(g: &Group, doing: &str, n: i64) -> ApiError {
    let s = if n == 1 { "" } else { "s" };
    ApiError::validation(format!(
        "AutoScalingGroup {} has min-size={}, max-size={}, and desired-size={}. To {doing} {n} instance{s}, please update the AutoScalingGroup sizes appropriately.",
        g.name, g.min, g.max, g.desired
    ))
}
