//! One module per Auto Scaling action. Each takes the verified caller and the decoded input (a
//! document in the botocore input shape) and returns the result document, or none.

mod create_auto_scaling_group;
mod create_launch_configuration;
mod delete_auto_scaling_group;
mod delete_launch_configuration;
mod describe_auto_scaling_groups;
mod describe_auto_scaling_instances;
mod describe_launch_configurations;
mod describe_scaling_activities;
mod set_desired_capacity;

use crate::App;
use phantom::identity::Caller;
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

/// How often a compare-and-set is retried after losing a race before ResourceContention.
const CAS_ATTEMPTS: usize = 5;
