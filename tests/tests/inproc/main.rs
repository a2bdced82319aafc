//! The in-process suite: the real aws-sdk-autoscaling client, `api::App`, the provisioner and the
//! health check over the in-memory store, queue and clouds (`phantom_e2e::world`). One binary, so
//! the suite links once; no sockets, no emulator, a clock moved by hand.

mod across;
mod admin;
mod alarms;
mod api;
mod balancers;
mod chaos;
mod cloudwatch_probe;
mod crashes;
mod hooks;
mod iam;
mod iam_probe;
mod lambda;
mod maintenance;
mod metric_math;
mod metrics;
mod notifications;
mod parity;
mod policies;
mod predictive;
mod probes;
mod provisioning;
mod pulse;
mod rebalance;
mod refresh;
mod scale;
mod scheduled;
mod self_service;
mod spot;
mod status_checks;
mod sync_launch;
mod templates;
mod terraform;
mod throttle;
mod tools;
mod tracking;
mod warm;
mod webhooks;
mod weights;

use aws_sdk_autoscaling::error::ProvideErrorMetadata;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;

/// What most tests start from: a world, one user with their SDK client, the launch configuration
/// `web@hotel`, and (`group`, `converged`) the group `web` from it.
pub struct Given {
    pub w: World,
    pub u: User,
    pub c: aws_sdk_autoscaling::Client,
}

impl Given {
    /// A world and a user named after `prefix`.
    pub async fn user(prefix: &str) -> Self {
        let w = World::new().await;
        let u = w.user(prefix).await;
        let c = w.sdk(&u);
        Self { w, u, c }
    }

    /// The same, with `web@hotel`.
    pub async fn lc(prefix: &str) -> Self {
        let given = Self::user(prefix).await;
        create_lc(&given.w, &given.u, "web@hotel").await;
        given
    }

    /// The same, and the group `web` of these sizes (its VMs not waited for).
    pub async fn group(prefix: &str, min: i32, max: i32, desired: i32) -> Self {
        let given = Self::lc(prefix).await;
        create_group(&given.w, &given.u, "web", "web@hotel", min, max, desired).await;
        given
    }

    /// The same, once the group's `desired` VMs are InService: their ids.
    pub async fn converged(prefix: &str, min: i32, max: i32, desired: i32) -> (Self, Vec<String>) {
        let given = Self::group(prefix, min, max, desired).await;
        let n = usize::try_from(desired).expect("a desired capacity of 0 or more");
        let ids = provisioning::converges(&given.w, &given.u, "hotel", "web", n).await;
        (given, ids)
    }
}

/// The code and message of a failed SDK call.
pub fn failure<T: std::fmt::Debug, E: ProvideErrorMetadata + std::fmt::Debug>(
    r: Result<T, E>,
) -> (String, String) {
    let e = r.expect_err("the call should fail");
    (
        e.code().unwrap_or_default().to_string(),
        e.message().unwrap_or_default().to_string(),
    )
}

/// The message of a call refused with ValidationError (any other outcome fails the test).
pub fn invalid<T: std::fmt::Debug, E: ProvideErrorMetadata + std::fmt::Debug>(
    r: Result<T, E>,
) -> String {
    let (code, message) = failure(r);
    assert_eq!(code, "ValidationError", "{message}");
    message
}

pub use phantom_e2e::steps::group_tag;

/// Puts a tag on group `web`.
pub async fn tag_web(c: &aws_sdk_autoscaling::Client, key: &str, value: &str) {
    c.create_or_update_tags()
        .tags(group_tag("web", key, value))
        .send()
        .await
        .unwrap();
}

/// Suspends one of group `web`'s processes.
pub async fn suspend_web(c: &aws_sdk_autoscaling::Client, process: &str) {
    c.suspend_processes()
        .auto_scaling_group_name("web")
        .scaling_processes(process)
        .send()
        .await
        .unwrap();
}

pub async fn create_lc(w: &World, u: &User, name: &str) {
    w.sdk(u).create_lc(name).await;
}

pub async fn create_group(
    w: &World,
    u: &User,
    name: &str,
    lc: &str,
    min: i32,
    max: i32,
    desired: i32,
) {
    w.sdk(u).create_group(name, lc, (min, max, desired)).await;
}

pub async fn group(
    w: &World,
    u: &User,
    name: &str,
) -> Option<aws_sdk_autoscaling::types::AutoScalingGroup> {
    w.sdk(u).group(name).await
}

/// The causes of a group's scaling activities, newest first.
pub async fn causes(w: &World, u: &User, group: &str) -> Vec<String> {
    w.sdk(u)
        .activities(group)
        .await
        .activities()
        .iter()
        .filter_map(|a| a.cause().map(str::to_string))
        .collect()
}

/// A mixed instances policy as read back, less the templates' ids that Describe adds to what was
/// sent (as AWS does), and those ids: what a read-back-as-sent check compares.
pub fn without_template_ids(
    read: &aws_sdk_autoscaling::types::MixedInstancesPolicy,
) -> (
    aws_sdk_autoscaling::types::MixedInstancesPolicy,
    Vec<String>,
) {
    let mut p = read.clone();
    let mut ids = Vec::new();
    if let Some(lt) = p.launch_template.as_mut() {
        let specs = lt.launch_template_specification.iter_mut().chain(
            lt.overrides
                .iter_mut()
                .flatten()
                .filter_map(|o| o.launch_template_specification.as_mut()),
        );
        for spec in specs {
            ids.extend(spec.launch_template_id.take());
        }
    }
    (p, ids)
}
