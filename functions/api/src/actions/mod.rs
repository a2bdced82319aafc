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
mod forecast;
mod instance_refresh;
mod instances;
mod launch_instances;
mod lifecycle_hooks;
pub(crate) mod lookups;
mod notifications;
pub mod policies;
mod processes;
mod records;
mod scheduled;
mod set_desired_capacity;
mod traffic;
mod update_auto_scaling_group;
mod warm_pool;

use crate::App;
use phantom_model::request::*;
use phantom_rules::group::GroupRules;
use phantom_rules::identity::Caller;
use phantom_rules::notification::Audience;
use phantom_seams::store::cas::{compare_and_set, Try};
use phantom_seams::store::StoreError;
use phantom_wire::query;
use phantom_wire::{ApiError, ApiResult};
use std::future::Future;
use std::pin::Pin;

/// What runs one action: the app, the verified caller and the decoded input.
pub type Handler = for<'a> fn(
    &'a App,
    &'a Caller,
    query::Document,
) -> Pin<
    Box<dyn Future<Output = ApiResult<Option<query::Document>>> + Send + 'a>,
>;

/// One action Phantom answers.
pub struct Action {
    pub name: &'static str,
    /// Reads the decoded input as the action's request type, then runs the action.
    pub run: Handler,
    /// Only reads the decoded input as the request type: what the property tests check never
    /// fails for an input the decoder accepts.
    pub read: fn(query::Document) -> ApiResult<()>,
}

/// An action's entry: its name, what runs it, and the request type (`model::request`) `run`
/// takes; what `run` answers (`model::response`, or `()`) is written as the output document.
macro_rules! action {
    ($name:literal, $run:path, $request:ident) => {
        Action {
            name: $name,
            run: |a, c, i| {
                Box::pin(
                    async move { query::output($run(a, c, query::input::<$request>(i)?).await?) },
                )
            },
            read: |i| query::input::<$request>(i).map(|_| ()),
        }
    };
}

/// Every action Phantom answers, and what runs it: dispatch and the tests read this one table.
pub const ACTIONS: &[Action] = &[
    action!(
        "CreateLaunchConfiguration",
        create_launch_configuration::run,
        CreateLaunchConfiguration
    ),
    action!(
        "DeleteLaunchConfiguration",
        delete_launch_configuration::run,
        DeleteLaunchConfiguration
    ),
    action!(
        "DescribeLaunchConfigurations",
        describe_launch_configurations::run,
        DescribeLaunchConfigurations
    ),
    action!(
        "CreateAutoScalingGroup",
        create_auto_scaling_group::run,
        CreateAutoScalingGroup
    ),
    action!(
        "DeleteAutoScalingGroup",
        delete_auto_scaling_group::run,
        DeleteAutoScalingGroup
    ),
    action!(
        "DescribeAutoScalingGroups",
        describe_auto_scaling_groups::run,
        DescribeAutoScalingGroups
    ),
    action!(
        "SetDesiredCapacity",
        set_desired_capacity::run,
        SetDesiredCapacity
    ),
    action!("LaunchInstances", launch_instances::run, LaunchInstances),
    action!(
        "GetPredictiveScalingForecast",
        forecast::run,
        GetPredictiveScalingForecast
    ),
    action!(
        "DescribeAutoScalingInstances",
        describe_auto_scaling_instances::run,
        DescribeAutoScalingInstances
    ),
    action!(
        "DescribeScalingActivities",
        describe_scaling_activities::run,
        DescribeScalingActivities
    ),
    action!(
        "UpdateAutoScalingGroup",
        update_auto_scaling_group::run,
        UpdateAutoScalingGroup
    ),
    action!("CreateOrUpdateTags", create_or_update_tags::run, Tags),
    action!("DeleteTags", delete_tags::run, Tags),
    action!("DescribeTags", describe_tags::run, DescribeTags),
    action!(
        "TerminateInstanceInAutoScalingGroup",
        instances::terminate,
        TerminateInstanceInAutoScalingGroup
    ),
    action!(
        "SetInstanceHealth",
        instances::set_health,
        SetInstanceHealth
    ),
    action!(
        "SetInstanceProtection",
        instances::set_protection,
        SetInstanceProtection
    ),
    action!("SuspendProcesses", processes::suspend, ScalingProcesses),
    action!("ResumeProcesses", processes::resume, ScalingProcesses),
    action!(
        "EnableMetricsCollection",
        processes::enable_metrics,
        EnableMetricsCollection
    ),
    action!(
        "DisableMetricsCollection",
        processes::disable_metrics,
        DisableMetricsCollection
    ),
    action!(
        "DescribeLifecycleHooks",
        lifecycle_hooks::describe,
        DescribeLifecycleHooks
    ),
    action!("PutLifecycleHook", lifecycle_hooks::put, PutLifecycleHook),
    action!(
        "DeleteLifecycleHook",
        lifecycle_hooks::delete,
        LifecycleHookName
    ),
    action!(
        "CompleteLifecycleAction",
        lifecycle_hooks::complete,
        LifecycleAction
    ),
    action!(
        "RecordLifecycleActionHeartbeat",
        lifecycle_hooks::heartbeat,
        LifecycleAction
    ),
    action!(
        "DescribeLifecycleHookTypes",
        lifecycle_hooks::hook_types,
        Nothing
    ),
    action!(
        "StartInstanceRefresh",
        instance_refresh::start,
        StartInstanceRefresh
    ),
    action!(
        "DescribeInstanceRefreshes",
        instance_refresh::describe,
        DescribeInstanceRefreshes
    ),
    action!(
        "CancelInstanceRefresh",
        instance_refresh::cancel,
        CancelInstanceRefresh
    ),
    action!(
        "RollbackInstanceRefresh",
        instance_refresh::rollback,
        RollbackInstanceRefresh
    ),
    action!(
        "PutNotificationConfiguration",
        notifications::put,
        PutNotificationConfiguration
    ),
    action!(
        "DescribeNotificationConfigurations",
        notifications::describe,
        DescribeNotificationConfigurations
    ),
    action!(
        "DeleteNotificationConfiguration",
        notifications::delete,
        DeleteNotificationConfiguration
    ),
    action!(
        "AttachLoadBalancers",
        traffic::attach_load_balancers,
        LoadBalancerNames
    ),
    action!(
        "DetachLoadBalancers",
        traffic::detach_load_balancers,
        LoadBalancerNames
    ),
    action!(
        "DescribeLoadBalancers",
        traffic::describe_load_balancers,
        GroupPage
    ),
    action!(
        "AttachLoadBalancerTargetGroups",
        traffic::attach_target_groups,
        TargetGroupArns
    ),
    action!(
        "DetachLoadBalancerTargetGroups",
        traffic::detach_target_groups,
        TargetGroupArns
    ),
    action!(
        "DescribeLoadBalancerTargetGroups",
        traffic::describe_target_groups,
        GroupPage
    ),
    action!(
        "AttachTrafficSources",
        traffic::attach_traffic_sources,
        TrafficSourcesOfGroup
    ),
    action!(
        "DetachTrafficSources",
        traffic::detach_traffic_sources,
        TrafficSourcesOfGroup
    ),
    action!(
        "DescribeTrafficSources",
        traffic::describe_traffic_sources,
        DescribeTrafficSources
    ),
    action!("PutWarmPool", warm_pool::put, PutWarmPool),
    action!("DescribeWarmPool", warm_pool::describe, DescribeWarmPool),
    action!("DeleteWarmPool", warm_pool::delete, DeleteWarmPool),
    action!("AttachInstances", instances::attach, InstancesJoining),
    action!("DetachInstances", instances::detach, InstancesLeaving),
    action!("EnterStandby", instances::enter_standby, InstancesLeaving),
    action!("ExitStandby", instances::exit_standby, InstancesJoining),
    action!("PutScalingPolicy", policies::put, PutScalingPolicy),
    action!("DescribePolicies", policies::describe, DescribePolicies),
    action!("DeletePolicy", policies::delete, DeletePolicy),
    action!("ExecutePolicy", policies::execute, ExecutePolicy),
    action!(
        "PutScheduledUpdateGroupAction",
        scheduled::put,
        PutScheduledUpdateGroupAction
    ),
    action!(
        "BatchPutScheduledUpdateGroupAction",
        scheduled::batch_put,
        BatchPutScheduledUpdateGroupAction
    ),
    action!(
        "DescribeScheduledActions",
        scheduled::describe,
        DescribeScheduledActions
    ),
    action!(
        "DeleteScheduledAction",
        scheduled::delete,
        DeleteScheduledAction
    ),
    action!(
        "BatchDeleteScheduledAction",
        scheduled::batch_delete,
        BatchDeleteScheduledAction
    ),
    action!("DescribeAccountLimits", catalogs::account_limits, Nothing),
    action!(
        "DescribeAdjustmentTypes",
        catalogs::adjustment_types,
        Nothing
    ),
    action!(
        "DescribeAutoScalingNotificationTypes",
        catalogs::notification_types,
        Nothing
    ),
    action!(
        "DescribeScalingProcessTypes",
        catalogs::scaling_process_types,
        Nothing
    ),
    action!(
        "DescribeTerminationPolicyTypes",
        catalogs::termination_policy_types,
        Nothing
    ),
    action!(
        "DescribeMetricCollectionTypes",
        catalogs::metric_collection_types,
        Nothing
    ),
];

/// The action of that name, if Phantom answers it.
pub fn action(name: &str) -> Option<&'static Action> {
    ACTIONS.iter().find(|a| a.name == name)
}

/// The names of the actions Phantom answers.
pub fn supported() -> impl Iterator<Item = &'static str> {
    ACTIONS.iter().map(|a| a.name)
}

/// An optional list of names; an empty list means "all", as in AWS.
fn names(list: Option<Vec<String>>) -> Option<Vec<String>> {
    list.filter(|l| !l.is_empty())
}

/// The group `AutoScalingGroupName` names (ValidationError if it has none of that name), or all
/// the caller's groups: what DescribePolicies and DescribeScheduledActions read.
async fn groups_named_or_all(
    app: &App,
    caller: &Caller,
    name: Option<&str>,
) -> ApiResult<Vec<phantom_rules::group::Group>> {
    match name {
        Some(name) => Ok(vec![group_named(app, caller, name).await?]),
        None => Ok(app.store.all_groups(&caller.user).await?),
    }
}

/// The caller's group of that name, or AWS's ValidationError.
async fn group_named(
    app: &App,
    caller: &Caller,
    name: &str,
) -> ApiResult<phantom_rules::group::Group> {
    app.store
        .group(&caller.user, name)
        .await?
        .ok_or_else(|| group_not_found(name))
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

/// Asks the provisioner to look at a group whose change was written with an ask (`Ask`). A
/// message that cannot be sent, or that a crash kept from going, is not the caller's problem:
/// the pulse queues the round the ask names.
async fn reconcile(app: &App, caller: &Caller, group: &str, reason: &str) {
    let msg = phantom_seams::queue::Reconcile::new(&caller.user, group, reason);
    if let Some(msg) = crate::later::defer(msg) {
        send_reconcile(app, msg).await;
    }
}

/// A reconcile sent before the action goes on: LaunchInstances waits for its launch.
async fn reconcile_now(app: &App, caller: &Caller, group: &str, reason: &str) {
    let msg = phantom_seams::queue::Reconcile::new(&caller.user, group, reason);
    send_reconcile(app, msg).await;
}

/// Queues a reconcile; if the queue cannot be reached, marks the group's pair busy so the
/// pulse's next look sweeps it (sooner than an ask's grace, and the one way for LaunchInstances,
/// whose request is not written with an ask).
pub(crate) async fn send_reconcile(app: &App, msg: phantom_seams::queue::Reconcile) {
    let Some(q) = &app.queue else { return };
    let (user, group) = (msg.owner.clone(), msg.group.clone());
    if let Err(e) = q.send(&msg.into(), 0).await {
        tracing::error!(group, error = %e, "could not queue a reconcile; the pulse's next look sweeps it");
        let busy = phantom_rules::pulse::PairView {
            fingerprint: phantom_rules::pulse::UNKNOWN.into(),
            busy: true,
            empty_since_ms: None,
        };
        if let Ok(Some(g)) = app.store.group(&user, &group).await {
            if let Err(e) = app.store.set_view(&user, &g.cloud, &busy).await {
                tracing::error!(group, error = %e, "could not mark its pair busy either");
            }
        }
    }
}

/// AWS's words for a change to a group being deleted (UpdateAutoScalingGroup's, as kops and
/// cloud-custodian quote them).
fn pending_delete() -> ApiError {
    ApiError::validation("The AutoScaling group may not be modified while it is pending delete")
}

/// Changes a group with `change` (from the group as read) as a compare-and-set, retried after a
/// lost race; a change that changes nothing writes nothing. With `reason`, the provisioner is
/// asked to look at the group afterwards. Returns the group as written (at the version read).
pub(crate) async fn change_group(
    app: &App,
    caller: &Caller,
    name: &str,
    reason: Option<&str>,
    change: impl Fn(&phantom_rules::group::Group) -> ApiResult<phantom_rules::group::Group>,
) -> ApiResult<phantom_rules::group::Group> {
    change_group_refusing(app, caller, name, reason, pending_delete, change).await
}

/// `change_group`, a group being deleted refused with `pending`'s words (an action whose words
/// AWS gives its own).
pub(crate) async fn change_group_refusing(
    app: &App,
    caller: &Caller,
    name: &str,
    reason: Option<&str>,
    pending: fn() -> ApiError,
    change: impl Fn(&phantom_rules::group::Group) -> ApiResult<phantom_rules::group::Group>,
) -> ApiResult<phantom_rules::group::Group> {
    compare_and_set(|| async {
        let g = group_named(app, caller, name).await?;
        if g.deleting() {
            return Err(pending());
        }
        let next = across::settled(Some(&g), change(&g)?)?;
        if next == g {
            return Ok(Try::Done(next));
        }
        // A change of the clouds a group spans (or of what it launches from there) is checked
        // against the registry and re-plans the group.
        let spread_changed = next.launch_configurations()? != g.launch_configurations()?
            || next.spread().ok().flatten() != g.spread().ok().flatten();
        if spread_changed {
            across::check(app, caller, &next).await?;
        }
        // A group that stops telling anyone has its next round send what is left to tell.
        let silenced =
            !Audience::of(&g.settings).is_empty() && Audience::of(&next.settings).is_empty();
        // Its round is the one that sends the group's last words (and does the rest).
        let reason = match silenced {
            true => Some(phantom_rules::notification::LAST_WORDS),
            false => reason.or(spread_changed.then_some("the group's clouds changed")),
        };
        let ask = reason.map(|_| app.clock.now_ms());
        match app.store.update_group(&caller.user, &g, &next, ask).await {
            Ok(()) => {
                if let Some(reason) = reason {
                    reconcile(app, caller, name, reason).await;
                }
                Ok(Try::Done(next))
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
