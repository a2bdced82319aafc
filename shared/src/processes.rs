//! Scaling processes (SuspendProcesses, ResumeProcesses) and metrics collection
//! (EnableMetricsCollection, DisableMetricsCollection), pure: what they do to a group's document.
//! What a suspended process holds back is decided in `reconcile::decide` (`Target::suspended`).

use crate::error::{ApiError, ApiResult};
use serde_json::{json, Value};

/// AWS's scaling processes, in DescribeScalingProcessTypes' order.
pub const PROCESSES: [&str; 9] = [
    "AZRebalance",
    "AddToLoadBalancer",
    "AlarmNotification",
    "HealthCheck",
    "InstanceRefresh",
    "Launch",
    "ReplaceUnhealthy",
    "ScheduledActions",
    "Terminate",
];

/// The group metrics AWS collects (DescribeMetricCollectionTypes).
pub const METRICS: [&str; 13] = [
    "GroupMinSize",
    "GroupMaxSize",
    "GroupDesiredCapacity",
    "GroupInServiceInstances",
    "GroupPendingInstances",
    "GroupStandbyInstances",
    "GroupTerminatingInstances",
    "GroupTotalInstances",
    "GroupInServiceCapacity",
    "GroupPendingCapacity",
    "GroupStandbyCapacity",
    "GroupTerminatingCapacity",
    "GroupTotalCapacity",
];

pub const GRANULARITY: &str = "1Minute";

/// The names asked for, all when none is given; an unknown one is refused.
fn names(asked: &Value, known: &[&'static str], what: &str) -> ApiResult<Vec<&'static str>> {
    let asked: Vec<&str> = asked
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if asked.is_empty() {
        return Ok(known.to_vec());
    }
    asked
        .iter()
        .map(|a| {
            known.iter().find(|k| *k == a).copied().ok_or_else(|| {
                ApiError::validation(format!("{what} '{a}' is not one of {}.", known.join(", ")))
            })
        })
        .collect()
}

/// SuspendProcesses: the document's `SuspendedProcesses` with `asked` (all when empty) added.
pub fn suspend(doc: &Value, asked: &Value, now: &str) -> ApiResult<Value> {
    let mut list = doc["SuspendedProcesses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for p in names(asked, &PROCESSES, "Process")? {
        if !list.iter().any(|s| s["ProcessName"] == p) {
            list.push(json!({
                "ProcessName": p,
                "SuspensionReason": format!("User suspended at {now}"),
            }));
        }
    }
    Ok(Value::Array(list))
}

/// ResumeProcesses: the document's `SuspendedProcesses` without `asked` (all when empty).
pub fn resume(doc: &Value, asked: &Value) -> ApiResult<Value> {
    let resumed = names(asked, &PROCESSES, "Process")?;
    let list = doc["SuspendedProcesses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    Ok(Value::Array(
        list.into_iter()
            .filter(|s| !resumed.iter().any(|p| s["ProcessName"] == *p))
            .collect(),
    ))
}

/// The suspended processes' names of a group's document.
pub fn suspended(doc: &Value) -> Vec<String> {
    doc["SuspendedProcesses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["ProcessName"].as_str().map(str::to_string))
        .collect()
}

fn check_granularity(granularity: &Value) -> ApiResult<()> {
    match granularity.as_str() {
        Some(GRANULARITY) | None => Ok(()),
        Some(other) => Err(ApiError::validation(format!(
            "Granularity '{other}' is not supported: the only granularity is {GRANULARITY}."
        ))),
    }
}

/// EnableMetricsCollection: the document's `EnabledMetrics` with `asked` (all when empty).
pub fn enable_metrics(doc: &Value, asked: &Value, granularity: &Value) -> ApiResult<Value> {
    check_granularity(granularity)?;
    let mut list = doc["EnabledMetrics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for m in names(asked, &METRICS, "Metric")? {
        if !list.iter().any(|e| e["Metric"] == m) {
            list.push(json!({"Metric": m, "Granularity": GRANULARITY}));
        }
    }
    Ok(Value::Array(list))
}

/// DisableMetricsCollection: the document's `EnabledMetrics` without `asked` (all when empty).
pub fn disable_metrics(doc: &Value, asked: &Value) -> ApiResult<Value> {
    let off = names(asked, &METRICS, "Metric")?;
    let list = doc["EnabledMetrics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    Ok(Value::Array(
        list.into_iter()
            .filter(|e| !off.iter().any(|m| e["Metric"] == *m))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suspend_and_resume_some_or_all() {
        let doc = json!({"SuspendedProcesses": []});
        let one = suspend(&doc, &json!(["Launch"]), "t").unwrap();
        assert_eq!(one.as_array().unwrap().len(), 1);
        assert_eq!(one[0]["SuspensionReason"], "User suspended at t");
        let doc = json!({ "SuspendedProcesses": one });
        let all = suspend(&doc, &json!([]), "t").unwrap();
        assert_eq!(all.as_array().unwrap().len(), PROCESSES.len());
        let doc = json!({ "SuspendedProcesses": all });
        assert_eq!(suspended(&doc).len(), PROCESSES.len());
        let left = resume(&doc, &json!(["Launch", "Terminate"])).unwrap();
        assert_eq!(left.as_array().unwrap().len(), PROCESSES.len() - 2);
        assert_eq!(resume(&doc, &Value::Null).unwrap(), json!([]));
        assert_eq!(
            suspend(&doc, &json!(["Lunch"]), "t").unwrap_err().code,
            "ValidationError"
        );
    }

    #[test]
    fn metrics_some_or_all_at_one_granularity() {
        let doc = json!({"EnabledMetrics": []});
        let some = enable_metrics(&doc, &json!(["GroupMinSize"]), &json!("1Minute")).unwrap();
        assert_eq!(
            some,
            json!([{"Metric": "GroupMinSize", "Granularity": "1Minute"}])
        );
        let all = enable_metrics(&doc, &Value::Null, &json!("1Minute")).unwrap();
        assert_eq!(all.as_array().unwrap().len(), METRICS.len());
        assert!(enable_metrics(&doc, &Value::Null, &json!("5Minute")).is_err());
        assert!(enable_metrics(&doc, &json!(["CPU"]), &json!("1Minute")).is_err());
        let doc = json!({ "EnabledMetrics": all });
        let fewer = disable_metrics(&doc, &json!(["GroupMinSize"])).unwrap();
        assert_eq!(fewer.as_array().unwrap().len(), METRICS.len() - 1);
        assert_eq!(disable_metrics(&doc, &Value::Null).unwrap(), json!([]));
    }
}
