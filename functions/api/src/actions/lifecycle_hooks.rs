//! Lifecycle hooks: PutLifecycleHook, DeleteLifecycleHook, DescribeLifecycleHooks (changes to and
//! reads of the group's settings, `phantom_rules::lifecycle`), and CompleteLifecycleAction and
//! RecordLifecycleActionHeartbeat (changes to a waiting instance's record). The provisioner holds
//! and releases the instances (`phantom_rules::reconcile::decide`).

use super::notifications::send_test;
use super::records::write_group;
use super::{change_group, group_named, names};
use crate::App;
use phantom_model::group::LifecycleHook;
use phantom_model::request::{
    DescribeLifecycleHooks, LifecycleAction, LifecycleHookName, Nothing, PutLifecycleHook,
};
use phantom_model::response;
use phantom_rules::identity::Caller;
use phantom_rules::lifecycle::{self, Outcome};
use phantom_rules::notification;
use phantom_rules::reconcile::{Lifecycle, Member};
use phantom_seams::store::Record;
use phantom_wire::{ApiError, ApiResult};

/// A hook given a new NotificationTargetARN sends it AWS's test message first: a target that
/// cannot take it refuses the put.
pub async fn put(app: &App, caller: &Caller, input: PutLifecycleHook) -> ApiResult<()> {
    let Some(name) = input.auto_scaling_group_name.as_deref() else {
        return Err(ApiError::validation("AutoScalingGroupName is required."));
    };
    let g = group_named(app, caller, name).await?;
    let hooks = &g.settings.lifecycle_hooks;
    let target_of = |hooks: &[LifecycleHook]| {
        hooks
            .iter()
            .find(|h| h.lifecycle_hook_name == input.lifecycle_hook_name)
            .and_then(|h| h.notification_target_arn.clone())
    };
    let target = target_of(&lifecycle::put(hooks, name, &g.settings.arn, &input)?);
    if let Some(t) = target.filter(|t| target_of(hooks).as_ref() != Some(t)) {
        let now = app.clock.now_ms();
        send_test(
            app,
            &notification::test(name, &g.settings.arn, &t, true, now),
        )
        .await?;
    }
    change_group(app, caller, name, None, |g| {
        let mut next = g.clone();
        next.settings.lifecycle_hooks =
            lifecycle::put(&g.settings.lifecycle_hooks, name, &g.settings.arn, &input)?;
        Ok(next)
    })
    .await?;
    Ok(())
}

/// Instances waiting on the hook end their wait (ABANDON for a launch, CONTINUE for a
/// termination): the provisioner is asked to look.
pub async fn delete(app: &App, caller: &Caller, input: LifecycleHookName) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    let hook = &input.lifecycle_hook_name;
    change_group(app, caller, name, Some("DeleteLifecycleHook"), |g| {
        let mut next = g.clone();
        next.settings.lifecycle_hooks = lifecycle::delete(&g.settings.lifecycle_hooks, name, hook)?;
        Ok(next)
    })
    .await?;
    Ok(())
}

pub async fn describe(
    app: &App,
    caller: &Caller,
    input: DescribeLifecycleHooks,
) -> ApiResult<response::DescribeLifecycleHooks> {
    let name = &input.auto_scaling_group_name;
    let g = group_named(app, caller, name).await?;
    let wanted = names(input.lifecycle_hook_names);
    let hooks = g
        .settings
        .lifecycle_hooks
        .into_iter()
        .filter(|h| {
            wanted
                .as_ref()
                .is_none_or(|w| w.contains(&h.lifecycle_hook_name))
        })
        .collect();
    Ok(response::DescribeLifecycleHooks {
        lifecycle_hooks: hooks,
    })
}

/// A catalogue, like those of `catalogs.rs`.
pub async fn hook_types(
    _app: &App,
    _caller: &Caller,
    _input: Nothing,
) -> ApiResult<response::DescribeLifecycleHookTypes> {
    Ok(response::DescribeLifecycleHookTypes {
        lifecycle_hook_types: lifecycle::TRANSITIONS.to_vec(),
    })
}

/// Whether `m` is the instance a lifecycle action names: by InstanceId, else by the token of its
/// wait on the hook.
fn named(input: &LifecycleAction, m: &Member) -> bool {
    match (&input.instance_id, &input.lifecycle_action_token) {
        (Some(id), _) => &m.id == id,
        (None, Some(token)) => m
            .waits
            .iter()
            .any(|w| w.hook == input.lifecycle_hook_name && w.token.as_ref() == Some(token)),
        (None, None) => false,
    }
}

fn waiting(m: &Member) -> bool {
    matches!(
        m.lifecycle,
        Lifecycle::PendingWait
            | Lifecycle::TerminatingWait
            | Lifecycle::WarmedPendingWait
            | Lifecycle::WarmedTerminatingWait
    )
}

/// Changes the waits of a waiting instance with `change`, then asks the provisioner to look.
async fn change_waits(
    app: &App,
    caller: &Caller,
    input: &LifecycleAction,
    change: impl Fn(&[lifecycle::Wait], &str, &str) -> ApiResult<Vec<lifecycle::Wait>>,
) -> ApiResult<()> {
    let group = &input.auto_scaling_group_name;
    let hook = &input.lifecycle_hook_name;
    let id = match (&input.instance_id, &input.lifecycle_action_token) {
        (Some(id), _) | (None, Some(id)) => id,
        (None, None) => {
            return Err(ApiError::validation(
                "Give InstanceId or LifecycleActionToken to name the lifecycle action.",
            ))
        }
    };
    write_group(
        app,
        caller,
        group,
        Some("lifecycle action"),
        |_g, members| {
            // Not in the group (any more), or not waiting: AWS's words for both.
            let Some(m) = members.iter().find(|m| named(input, m) && waiting(m)) else {
                return Err(match input.instance_id {
                    Some(_) => lifecycle::no_action(id).into(),
                    None => ApiError::validation(format!(
                        "No active Lifecycle Action found with token {id}"
                    )),
                });
            };
            Ok(Some(Record {
                put: vec![Member {
                    waits: change(&m.waits, &m.id, hook)?,
                    ..m.clone()
                }],
                ..Record::default()
            }))
        },
    )
    .await?;
    Ok(())
}

pub async fn complete(app: &App, caller: &Caller, input: LifecycleAction) -> ApiResult<()> {
    let Some(result) = &input.lifecycle_action_result else {
        return Err(ApiError::validation("LifecycleActionResult is required."));
    };
    let result = Outcome::parse(result)?;
    change_waits(app, caller, &input, |waits, id, hook| {
        Ok(lifecycle::complete(waits, id, hook, result)?)
    })
    .await?;
    Ok(())
}

pub async fn heartbeat(app: &App, caller: &Caller, input: LifecycleAction) -> ApiResult<()> {
    let now = app.clock.now_ms();
    change_waits(app, caller, &input, |waits, id, hook| {
        Ok(lifecycle::heartbeat(waits, id, hook, now)?)
    })
    .await?;
    Ok(())
}
