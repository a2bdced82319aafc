//! The instance actions: TerminateInstanceInAutoScalingGroup, SetInstanceHealth,
//! SetInstanceProtection, EnterStandby, ExitStandby. Each writes the instance records (and, for a
//! change of size, the group's desired capacity) in one record guarded by the group and by each
//! record's revision, then asks the provisioner to act.

use super::{group_not_found, pending_delete, string};
use crate::App;
use phantom::activity::{self, Context};
use phantom::group::Group;
use phantom::identity::Caller;
use phantom::lifecycle;
use phantom::reconcile::{Cause, Lifecycle, Member};
use phantom::store::cas::{compare_and_set, Try};
use phantom::store::{Record, StoreError};
use phantom::{ApiError, ApiResult};
use serde_json::{json, Value};

fn not_in_a_group(id: &str) -> ApiError {
    ApiError::validation(format!(
        "Instance Id not found - No managed instance found for instance ID: {id}"
    ))
}

/// The instance's group and record, with the group as it stands.
async fn find(app: &App, caller: &Caller, id: &str) -> ApiResult<(Group, Member)> {
    let (name, member) = app
        .store
        .all_instances(&caller.user)
        .await?
        .into_iter()
        .find(|(_, m)| m.id == id)
        .ok_or_else(|| not_in_a_group(id))?;
    let g = app
        .store
        .group(&caller.user, &name)
        .await?
        .ok_or_else(|| not_in_a_group(id))?;
    if g.deleting() {
        return Err(pending_delete(&name));
    }
    Ok((g, member))
}

fn context<'a>(app: &App, g: &'a Group) -> Context<'a> {
    Context {
        group: &g.name,
        group_arn: &g.settings.arn,
        now_ms: app.clock.now_ms(),
    }
}

fn not_in_group(id: &str, group: &str) -> ApiError {
    ApiError::validation(format!(
        "The instance {id} is not part of Auto Scaling group {group}."
    ))
}

/// Writes the record `make` gives for the instance and its group, retrying (from a fresh read)
/// when the group or the record moved under it.
async fn write(
    app: &App,
    caller: &Caller,
    id: &str,
    make: impl Fn(&Group, &Member) -> ApiResult<Option<Record>>,
) -> ApiResult<Option<Record>> {
    compare_and_set(|| async {
        let (g, m) = find(app, caller, id).await?;
        let Some(r) = make(&g, &m)? else {
            return Ok(Try::Done(None));
        };
        match app.store.record(&caller.user, &g, &r).await {
            Ok(()) => {
                super::reconcile(app, caller, &g.name, "instance action").await;
                Ok(Try::Done(Some(r)))
            }
            Err(StoreError::Conflict) => Ok(Try::Lost),
            Err(StoreError::NotFound) => Err(group_not_found(&g.name)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// Writes the record `make` gives for the named group and its instances (none: nothing to
/// write), retrying from a fresh read when the group or a record moved under it; with `reason`,
/// the provisioner is asked to look afterwards.
pub(super) async fn write_group(
    app: &App,
    caller: &Caller,
    name: &str,
    reason: Option<&str>,
    make: impl Fn(&Group, &[Member]) -> ApiResult<Option<Record>>,
) -> ApiResult<Option<Record>> {
    compare_and_set(|| async {
        let Some(g) = app.store.group(&caller.user, name).await? else {
            return Err(group_not_found(name));
        };
        if g.deleting() {
            return Err(pending_delete(name));
        }
        let members = app.store.instances(&caller.user, name).await?;
        let Some(r) = make(&g, &members)? else {
            return Ok(Try::Done(None));
        };
        match app.store.record(&caller.user, &g, &r).await {
            Ok(()) => {
                if let Some(reason) = reason {
                    super::reconcile(app, caller, name, reason).await;
                }
                Ok(Try::Done(Some(r)))
            }
            Err(StoreError::Conflict) => Ok(Try::Lost),
            Err(StoreError::NotFound) => Err(group_not_found(name)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// The record's activities, as actions that return them answer.
fn activities_of(r: Option<Record>) -> Option<Value> {
    let docs: Vec<Value> = r
        .map(|r| r.activities.into_iter().map(|a| a.doc).collect())
        .unwrap_or_default();
    Some(json!({ "Activities": docs }))
}

pub(super) fn member<'a>(members: &'a [Member], id: &str, group: &str) -> ApiResult<&'a Member> {
    members
        .iter()
        .find(|m| m.id == id)
        .ok_or_else(|| not_in_group(id, group))
}

pub async fn terminate(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let id = string(&input, "InstanceId");
    let decrement = input["ShouldDecrementDesiredCapacity"]
        .as_bool()
        .unwrap_or(false);
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
        let act = activity::terminated(&context(app, g), id, &Cause::UserRequest { shrink });
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
                ..m.clone()
            }],
            desired: shrink.map(|(_, to)| to),
            activities: vec![act],
            ..Record::default()
        }))
    })
    .await?
    .expect("a termination always writes");
    Ok(Some(json!({ "Activity": r.activities[0].doc })))
}

pub async fn set_health(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let id = string(&input, "InstanceId");
    let healthy = match string(&input, "HealthStatus") {
        "Healthy" => true,
        "Unhealthy" => false,
        other => {
            return Err(ApiError::validation(format!(
                "Valid instance health states are: [Healthy, Unhealthy], not '{other}'."
            )))
        }
    };
    // By default the group's grace period holds, as in AWS.
    let respect_grace = input["ShouldRespectGracePeriod"].as_bool().unwrap_or(true);
    let now = app.clock.now_ms();
    write(app, caller, id, |g, m| {
        let in_grace = now - m.launched_ms < g.target().grace_ms;
        if m.healthy == healthy || (respect_grace && in_grace) {
            return Ok(None);
        }
        Ok(Some(Record {
            put: vec![Member {
                healthy,
                ..m.clone()
            }],
            ..Record::default()
        }))
    })
    .await?;
    Ok(None)
}

pub async fn set_protection(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let name = string(&input, "AutoScalingGroupName");
    let protect = input["ProtectedFromScaleIn"].as_bool().unwrap_or(false);
    let ids = instance_ids(&input);
    write_group(app, caller, name, None, |_g, members| {
        let mut put = Vec::new();
        for id in &ids {
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
    Ok(None)
}

pub async fn enter_standby(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    standby(app, caller, &input, true).await
}

pub async fn exit_standby(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    standby(app, caller, &input, false).await
}

/// EnterStandby (`enter`) takes InService instances out of service, decrementing the desired
/// capacity if asked (else the provisioner launches replacements); ExitStandby puts Standby
/// instances back (Pending, InService once the provisioner sees them running) and adds them to
/// the desired capacity, as AWS does.
async fn standby(
    app: &App,
    caller: &Caller,
    input: &Value,
    enter: bool,
) -> ApiResult<Option<Value>> {
    let name = string(input, "AutoScalingGroupName");
    let ids = instance_ids(input);
    let decrement = input["ShouldDecrementDesiredCapacity"]
        .as_bool()
        .unwrap_or(false);
    let (from, to) = if enter {
        (Lifecycle::InService, Lifecycle::Standby)
    } else {
        (Lifecycle::Standby, Lifecycle::Pending)
    };
    let r = write_group(app, caller, name, Some("standby"), |g, members| {
        let mut put = Vec::new();
        for id in &ids {
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
                return Err(ApiError::validation(format!(
                    "Cannot decrement the desired capacity of {name} below its min size ({}): {n} instances to standby from a desired capacity of {}.",
                    g.min, g.desired
                )))
            }
            (true, true) => Some(g.desired - n),
            (true, false) => None,
            (false, _) if g.desired + n > g.max => {
                return Err(ApiError::validation(format!(
                    "Cannot increment the desired capacity of {name} above its max size ({}): {n} instances out of standby onto a desired capacity of {}.",
                    g.max, g.desired
                )))
            }
            (false, _) => Some(g.desired + n),
        };
        let ctx = context(app, g);
        let step = if enter { -1 } else { 1 };
        let activities = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                // Each instance's activity says how the capacity moved with it.
                let change = desired.map(|_| {
                    let before = g.desired + step * i as i64;
                    (before, before + step)
                });
                activity::standby(&ctx, id, enter, change)
            })
            .collect();
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
pub async fn attach(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let name = string(&input, "AutoScalingGroupName");
    let ids = instance_ids(&input);
    let now = app.clock.now_ms();
    let Some(g) = app.store.group(&caller.user, name).await? else {
        return Err(group_not_found(name));
    };
    if ids.is_empty() {
        return Ok(None);
    }
    // Read once: a VM attached to two groups at the same moment is caught by the provisioner,
    // which tags it for the first and finds it another group's for the second.
    let recorded = app.store.all_instances(&caller.user).await?;
    // What the store can refuse is refused before the cloud is asked.
    attachable(&g, &recorded, &ids)?;
    let owned: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    super::lookups::check_attach(app, caller, &g, &owned).await?;
    write_group(app, caller, name, Some("AttachInstances"), |g, _| {
        attachable(g, &recorded, &ids)?;
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
                    lifecycle: Lifecycle::Attaching,
                    healthy: true,
                    launched_ms: now,
                    protected: protect,
                    launch_configuration: String::new(),
                    instance_type: String::new(),
                    waits: Vec::new(),
                    rev: 0,
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
    Ok(None)
}

/// None of the VMs is already in a group, and the group has room for them all.
fn attachable(g: &Group, recorded: &[(String, Member)], ids: &[&str]) -> ApiResult<()> {
    for id in ids {
        if let Some((other, _)) = recorded.iter().find(|(_, m)| m.id == *id) {
            return Err(ApiError::validation(format!(
                "The instance {id} is already part of Auto Scaling group {other}."
            )));
        }
    }
    let n = ids.len() as i64;
    if g.desired + n > g.max {
        return Err(ApiError::validation(format!(
            "Cannot attach {n} instances to {}: its desired capacity {} would exceed its max size {}.",
            g.name, g.desired, g.max
        )));
    }
    Ok(())
}

/// DetachInstances: InService or Standby instances leave the group (the provisioner removes its
/// tags and forgets them; the VMs keep running); with a decrement the desired capacity drops with
/// the InService ones (refused below MinSize), without it replacements are launched.
pub async fn detach(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let name = string(&input, "AutoScalingGroupName");
    let ids = instance_ids(&input);
    let decrement = input["ShouldDecrementDesiredCapacity"]
        .as_bool()
        .unwrap_or(false);
    let r = write_group(app, caller, name, Some("DetachInstances"), |g, members| {
        let mut put = Vec::new();
        let mut serving = Vec::new();
        for id in &ids {
            let m = member(members, id, name)?;
            match m.lifecycle {
                Lifecycle::InService => serving.push(*id),
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
            return Err(ApiError::validation(format!(
                "Cannot decrement the desired capacity of {name} below its min size ({}): {n} instances detached from a desired capacity of {}.",
                g.min, g.desired
            )));
        }
        let ctx = context(app, g);
        let mut from = g.desired;
        let activities = ids
            .iter()
            .map(|id| {
                let shrink = (desired.is_some() && serving.contains(id)).then(|| {
                    from -= 1;
                    (from + 1, from)
                });
                activity::detaching(&ctx, id, shrink)
            })
            .collect();
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

fn instance_ids(input: &Value) -> Vec<&str> {
    input["InstanceIds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}
