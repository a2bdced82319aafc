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

pub const SUPPORTED: [&str; 9] = [
    "CreateLaunchConfiguration",
    "DeleteLaunchConfiguration",
    "DescribeLaunchConfigurations",
    "CreateAutoScalingGroup",
    "DeleteAutoScalingGroup",
    "DescribeAutoScalingGroups",
    "SetDesiredCapacity",
    "DescribeAutoScalingInstances",
    "DescribeScalingActivities",
];

pub async fn run(
    app: &App,
    caller: &Caller,
    action: &str,
    input: Value,
) -> ApiResult<Option<Value>> {
    match action {
        "CreateLaunchConfiguration" => create_launch_configuration::run(app, caller, input).await,
        "DeleteLaunchConfiguration" => delete_launch_configuration::run(app, caller, input).await,
        "DescribeLaunchConfigurations" => {
            describe_launch_configurations::run(app, caller, input).await
        }
        "CreateAutoScalingGroup" => create_auto_scaling_group::run(app, caller, input).await,
        "DeleteAutoScalingGroup" => delete_auto_scaling_group::run(app, caller, input).await,
        "DescribeAutoScalingGroups" => describe_auto_scaling_groups::run(app, caller, input).await,
        "SetDesiredCapacity" => set_desired_capacity::run(app, caller, input).await,
        "DescribeAutoScalingInstances" => {
            describe_auto_scaling_instances::run(app, caller, input).await
        }
        "DescribeScalingActivities" => describe_scaling_activities::run(app, caller, input).await,
        other => Err(ApiError::invalid_action(
            other,
            phantom::shapes::API_VERSION,
        )),
    }
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
    let msg = phantom::queue::Reconcile {
        owner: caller.user.clone(),
        group: group.to_string(),
        reason: reason.to_string(),
    };
    if let Err(e) = q.send(&msg, 0).await {
        tracing::error!(group, error = %e, "could not queue a reconcile; the health sweep will find it");
    }
}

fn pending_delete(name: &str) -> ApiError {
    ApiError::validation(format!("AutoScalingGroup {name} is pending delete."))
}

/// How often a compare-and-set is retried after losing a race before ResourceContention.
const CAS_ATTEMPTS: usize = 5;
