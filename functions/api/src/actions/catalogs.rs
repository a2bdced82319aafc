//! The read-only catalogues tools ask for: what Phantom supports, from the lists its checks use.
//! Each answers its document as the wire has it: constant lists need no type of their own.

use crate::App;
use phantom::identity::Caller;
use phantom::model::request::Nothing;
use phantom::{group, processes, store, ApiResult};
use serde_json::{json, Value};

pub async fn scaling_process_types(
    _app: &App,
    _caller: &Caller,
    _input: Nothing,
) -> ApiResult<Value> {
    let list: Vec<Value> = processes::PROCESSES
        .iter()
        .map(|p| json!({ "ProcessName": p }))
        .collect();
    Ok(json!({ "Processes": list }))
}

pub async fn termination_policy_types(
    _app: &App,
    _caller: &Caller,
    _input: Nothing,
) -> ApiResult<Value> {
    Ok(json!({ "TerminationPolicyTypes": group::TERMINATION_POLICIES }))
}

pub async fn metric_collection_types(
    _app: &App,
    _caller: &Caller,
    _input: Nothing,
) -> ApiResult<Value> {
    let metrics: Vec<Value> = processes::METRICS
        .iter()
        .map(|m| json!({ "Metric": m }))
        .collect();
    Ok(json!({
        "Metrics": metrics,
        "Granularities": [{ "Granularity": processes::GRANULARITY }],
    }))
}

/// AWS's adjustment types, the ones scaling policies take (`phantom::policy`).
pub async fn adjustment_types(_app: &App, _caller: &Caller, _input: Nothing) -> ApiResult<Value> {
    let list: Vec<Value> = phantom::policy::AdjustmentType::ALL
        .iter()
        .map(|t| json!({ "AdjustmentType": t.as_str() }))
        .collect();
    Ok(json!({ "AdjustmentTypes": list }))
}

/// Phantom sends no notifications (PutNotificationConfiguration is not supported): it names no
/// notification types rather than promise ones it never sends.
pub async fn notification_types(_app: &App, _caller: &Caller, _input: Nothing) -> ApiResult<Value> {
    Ok(json!({ "AutoScalingNotificationTypes": [] }))
}

/// The limits Phantom enforces (as conditions on the writes that create groups and launch
/// configurations) and the caller's counts against them.
pub async fn account_limits(app: &App, caller: &Caller, _input: Nothing) -> ApiResult<Value> {
    let usage = app.store.usage(&caller.user).await?;
    Ok(json!({
        "MaxNumberOfAutoScalingGroups": store::MAX_GROUPS,
        "MaxNumberOfLaunchConfigurations": store::MAX_LAUNCH_CONFIGS,
        "NumberOfAutoScalingGroups": usage.groups,
        "NumberOfLaunchConfigurations": usage.launch_configs,
    }))
}
