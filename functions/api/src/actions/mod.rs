//! One module per Auto Scaling action. Each takes the verified caller and the decoded input (a
//! document in the botocore input shape) and returns the result document, or none.

mod across;
mod catalogs;
mod create_auto_scaling_group;
mod create_launch_configuration;
mod create_or_update_tags;
mod delete_auto_scaling_group;
mod delete_launch_configuration;
mod delete_tags;
mod describe_auto_scaling_groups;
mod describe_auto_scaling_instances;
mod describe_launch_configurations;
mod describe_scaling_activities;
mod describe_tags;
mod instances;
mod lifecycle_hooks;
mod lookups;
pub mod policies;
mod processes;
mod scheduled;
mod set_desired_capacity;
mod update_auto_scaling_group;

use crate::App;
use phantom::identity::Caller;
use phantom::store::cas::{compare_and_set, Try};
use phantom::store::StoreError;
use phantom::{ApiError, ApiResult};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;

/// What runs one action: the app, the verified caller and the decoded input.
pub type Handler =
    for<'a> fn(
        &'a App,
        &'a Caller,
        Value,
    ) -> Pin<Box<dyn Future<Output = ApiResult<Option<Value>>> + Send + 'a>>;

/// Every action Phantom answers, and what runs it: dispatch and the tests read this one table.
pub const ACTIONS: &[(&str, Handler)] = &[
    ("CreateLaunchConfiguration", |a, c, i| {
        Box::pin(create_launch_configuration::run(a, c, i))
    }),
    ("DeleteLaunchConfiguration", |a, c, i| {
        Box::pin(delete_launch_configuration::run(a, c, i))
    }),
    ("DescribeLaunchConfigurations", |a, c, i| {
        Box::pin(describe_launch_configurations::run(a, c, i))
    }),
    ("CreateAutoScalingGroup", |a, c, i| {
        Box::pin(create_auto_scaling_group::run(a, c, i))
    }),
    ("DeleteAutoScalingGroup", |a, c, i| {
        Box::pin(delete_auto_scaling_group::run(a, c, i))
    }),
    ("DescribeAutoScalingGroups", |a, c, i| {
        Box::pin(describe_auto_scaling_groups::run(a, c, i))
    }),
    ("SetDesiredCapacity", |a, c, i| {
        Box::pin(set_desired_capacity::run(a, c, i))
    }),
    ("DescribeAutoScalingInstances", |a, c, i| {
        Box::pin(describe_auto_scaling_instances::run(a, c, i))
    }),
    ("DescribeScalingActivities", |a, c, i| {
        Box::pin(describe_scaling_activities::run(a, c, i))
    }),
    ("UpdateAutoScalingGroup", |a, c, i| {
        Box::pin(update_auto_scaling_group::run(a, c, i))
    }),
    ("CreateOrUpdateTags", |a, c, i| {
        Box::pin(create_or_update_tags::run(a, c, i))
    }),
    ("DeleteTags", |a, c, i| Box::pin(delete_tags::run(a, c, i))),
    ("DescribeTags", |a, c, i| {
        Box::pin(describe_tags::run(a, c, i))
    }),
    ("TerminateInstanceInAutoScalingGroup", |a, c, i| {
        Box::pin(instances::terminate(a, c, i))
    }),
    ("SetInstanceHealth", |a, c, i| {
        Box::pin(instances::set_health(a, c, i))
    }),
    ("SetInstanceProtection", |a, c, i| {
        Box::pin(instances::set_protection(a, c, i))
    }),
    ("SuspendProcesses", |a, c, i| {
        Box::pin(processes::suspend(a, c, i))
    }),
    ("ResumeProcesses", |a, c, i| {
        Box::pin(processes::resume(a, c, i))
    }),
    ("EnableMetricsCollection", |a, c, i| {
        Box::pin(processes::enable_metrics(a, c, i))
    }),
    ("DisableMetricsCollection", |a, c, i| {
        Box::pin(processes::disable_metrics(a, c, i))
    }),
    ("DescribeLifecycleHooks", |a, c, i| {
        Box::pin(lifecycle_hooks::describe(a, c, i))
    }),
    ("PutLifecycleHook", |a, c, i| {
        Box::pin(lifecycle_hooks::put(a, c, i))
    }),
    ("DeleteLifecycleHook", |a, c, i| {
        Box::pin(lifecycle_hooks::delete(a, c, i))
    }),
    ("CompleteLifecycleAction", |a, c, i| {
        Box::pin(lifecycle_hooks::complete(a, c, i))
    }),
    ("RecordLifecycleActionHeartbeat", |a, c, i| {
        Box::pin(lifecycle_hooks::heartbeat(a, c, i))
    }),
    ("DescribeLifecycleHookTypes", |a, c, i| {
        Box::pin(lifecycle_hooks::hook_types(a, c, i))
    }),
    ("AttachInstances", |a, c, i| {
        Box::pin(instances::attach(a, c, i))
    }),
    ("DetachInstances", |a, c, i| {
        Box::pin(instances::detach(a, c, i))
    }),
    ("EnterStandby", |a, c, i| {
        Box::pin(instances::enter_standby(a, c, i))
    }),
    ("ExitStandby", |a, c, i| {
        Box::pin(instances::exit_standby(a, c, i))
    }),
    ("PutScalingPolicy", |a, c, i| {
        Box::pin(policies::put(a, c, i))
    }),
    ("DescribePolicies", |a, c, i| {
        Box::pin(policies::describe(a, c, i))
    }),
    ("DeletePolicy", |a, c, i| {
        Box::pin(policies::delete(a, c, i))
    }),
    ("ExecutePolicy", |a, c, i| {
        Box::pin(policies::execute(a, c, i))
    }),
    ("PutScheduledUpdateGroupAction", |a, c, i| {
        Box::pin(scheduled::put(a, c, i))
    }),
    ("BatchPutScheduledUpdateGroupAction", |a, c, i| {
        Box::pin(scheduled::batch_put(a, c, i))
    }),
    ("DescribeScheduledActions", |a, c, i| {
        Box::pin(scheduled::describe(a, c, i))
    }),
    ("DeleteScheduledAction", |a, c, i| {
        Box::pin(scheduled::delete(a, c, i))
    }),
    ("BatchDeleteScheduledAction", |a, c, i| {
        Box::pin(scheduled::batch_delete(a, c, i))
    }),
    ("DescribeAccountLimits", |a, c, i| {
        Box::pin(catalogs::account_limits(a, c, i))
    }),
    ("DescribeAdjustmentTypes", |a, c, i| {
        Box::pin(catalogs::adjustment_types(a, c, i))
    }),
    ("DescribeAutoScalingNotificationTypes", |a, c, i| {
        Box::pin(catalogs::notification_types(a, c, i))
    }),
    ("DescribeScalingProcessTypes", |a, c, i| {
        Box::pin(catalogs::scaling_process_types(a, c, i))
    }),
    ("DescribeTerminationPolicyTypes", |a, c, i| {
        Box::pin(catalogs::termination_policy_types(a, c, i))
    }),
    ("DescribeMetricCollectionTypes", |a, c, i| {
        Box::pin(catalogs::metric_collection_types(a, c, i))
    }),
];

/// The handler of an action, if Phantom answers it.
pub fn handler(action: &str) -> Option<Handler> {
    ACTIONS
        .iter()
        .find(|(name, _)| *name == action)
        .map(|(_, h)| *h)
}

/// The names of the actions Phantom answers.
pub fn supported() -> impl Iterator<Item = &'static str> {
    ACTIONS.iter().map(|(name, _)| *name)
}

/// A required string member (the decoder has already refused requests without it).
fn string<'a>(input: &'a Value, member: &str) -> &'a str {
    input[member].as_str().unwrap_or_default()
}

/// An optional list of names; an empty list means "all", as in AWS.
fn names(input: &Value, member: &str) -> Option<Vec<String>> {
    let list: Vec<String> = input[member]
        .as_array()?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    (!list.is_empty()).then_some(list)
}

/// The group `AutoScalingGroupName` names (ValidationError if it has none of that name), or all
/// the caller's groups: what DescribePolicies and DescribeScheduledActions read.
async fn groups_named_or_all(
    app: &App,
    caller: &Caller,
    input: &Value,
) -> ApiResult<Vec<phantom::group::Group>> {
    match input["AutoScalingGroupName"].as_str() {
        Some(name) => Ok(vec![app
            .store
            .group(&caller.user, name)
            .await?
            .ok_or_else(|| group_not_found(name))?]),
        None => Ok(app
            .store
            .groups(&caller.user, None, None, usize::MAX, &|_| true)
            .await?),
    }
}

fn group_not_found(name: &str) -> ApiError {
    ApiError::validation(format!(
        "AutoScalingGroup name not found - AutoScalingGroup {name} not found"
    ))
}

fn launch_config_not_found(name: &str) -> ApiError {
    ApiError::validation(format!(
        "Launch configuration name not found - Launch configuration {name} not found"
    ))
}

/// Asks the provisioner to look at a group. A message that cannot be sent is not the caller's
/// problem: the change is in DynamoDB and the next health sweep finds the group.
async fn reconcile(app: &App, caller: &Caller, group: &str, reason: &str) {
    let Some(q) = &app.queue else { return };
    let msg = phantom::queue::Reconcile::new(&caller.user, group, reason);
    if let Err(e) = q.send(&msg.into(), 0).await {
        tracing::error!(group, error = %e, "could not queue a reconcile; the health sweep will find it");
    }
}

fn pending_delete(name: &str) -> ApiError {
    ApiError::validation(format!("AutoScalingGroup {name} is pending delete."))
}

/// Changes a group with `change` (from the group as read) as a compare-and-set, retried after a
/// lost race; a change that changes nothing writes nothing. With `reason`, the provisioner is
/// asked to look at the group afterwards.
pub(crate) async fn change_group(
    app: &App,
    caller: &Caller,
    name: &str,
    reason: Option<&str>,
    change: impl Fn(&phantom::group::Group) -> ApiResult<phantom::group::Group>,
) -> ApiResult<()> {
    compare_and_set(|| async {
        let Some(g) = app.store.group(&caller.user, name).await? else {
            return Err(group_not_found(name));
        };
        if g.deleting() {
            return Err(pending_delete(name));
        }
        let next = across::settled(Some(&g), change(&g)?)?;
        if next == g {
            return Ok(Try::Done(()));
        }
        // A change of the clouds a group spans (or of what it launches from there) is checked
        // against the registry and re-plans the group.
        let spread_changed = next.launch_configurations()? != g.launch_configurations()?
            || next.spread().ok().flatten() != g.spread().ok().flatten();
        if spread_changed {
            across::check(app, caller, &next).await?;
        }
        match app.store.update_group(&caller.user, &g, &next).await {
            Ok(()) => {
                if let Some(reason) =
                    reason.or(spread_changed.then_some("the group's clouds changed"))
                {
                    reconcile(app, caller, name, reason).await;
                }
                Ok(Try::Done(()))
            }
            Err(StoreError::Conflict) => Ok(Try::Lost),
            Err(StoreError::NotFound) => {
                let names: Vec<String> = next.launch_configurations()?.into_iter().collect();
                Err(launch_config_not_found(&names.join(", ")))
            }
            Err(e) => Err(e.into()),
        }
    })
    .await
}
