//! The read-only catalogues tools ask for: what Phantom supports, from the lists its checks use.

use super::{group_not_found, string};
use crate::App;
use phantom::identity::Caller;
use phantom::{group, processes, ApiResult};
use serde_json::{json, Value};

pub async fn scaling_process_types(
    _app: &App,
    _caller: &Caller,
    _input: Value,
) -> ApiResult<Option<Value>> {
    let list: Vec<Value> = processes::PROCESSES
        .iter()
        .map(|p| json!({ "ProcessName": p }))
        .collect();
    Ok(Some(json!({ "Processes": list })))
}

pub async fn termination_policy_types(
    _app: &App,
    _caller: &Caller,
    _input: Value,
) -> ApiResult<Option<Value>> {
    Ok(Some(
        json!({ "TerminationPolicyTypes": group::TERMINATION_POLICIES }),
    ))
}

pub async fn metric_collection_types(
    _app: &App,
    _caller: &Caller,
    _input: Value,
) -> ApiResult<Option<Value>> {
    let metrics: Vec<Value> = processes::METRICS
        .iter()
        .map(|m| json!({ "Metric": m }))
        .collect();
    Ok(Some(json!({
        "Metrics": metrics,
        "Granularities": [{ "Granularity": processes::GRANULARITY }],
    })))
}

/// A group's lifecycle hooks: none can be put yet (PutLifecycleHook answers InvalidAction), so
/// the list of an existing group is empty; an unknown group is an error, as in AWS.
pub async fn lifecycle_hooks(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let name = string(&input, "AutoScalingGroupName");
    if app.store.group(&caller.user, name).await?.is_none() {
        return Err(group_not_found(name));
    }
    Ok(Some(json!({ "LifecycleHooks": [] })))
}
