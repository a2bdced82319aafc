//! Scaling processes (SuspendProcesses, ResumeProcesses) and metrics collection
//! (EnableMetricsCollection, DisableMetricsCollection), pure: what they do to a group's settings.
//! What a suspended process holds back is decided in `reconcile::decide` (`Target::suspended`).

use crate::error::{ApiError, ApiResult};
use crate::model::group::{EnabledMetric, SuspendedProcess};
use serde_json::Value;

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

/// SuspendProcesses: the group's suspended processes with `asked` (all when empty) added.
pub fn suspend(
    current: &[SuspendedProcess],
    asked: &Value,
    now: &str,
) -> ApiResult<Vec<SuspendedProcess>> {
    let mut list = current.to_vec();
    for p in names(asked, &PROCESSES, "Process")? {
        if !list.iter().any(|s| s.process_name == p) {
            list.push(SuspendedProcess {
                process_name: p.to_string(),
                suspension_reason: format!("User suspended at {now}"),
            });
        }
    }
    Ok(list)
}

/// ResumeProcesses: the group's suspended processes without `asked` (all when empty).
pub fn resume(current: &[SuspendedProcess], asked: &Value) -> ApiResult<Vec<SuspendedProcess>> {
    let resumed = names(asked, &PROCESSES, "Process")?;
    Ok(current
        .iter()
        .filter(|s| !resumed.contains(&s.process_name.as_str()))
        .cloned()
        .collect())
}

/// The suspended processes' names.
pub fn suspended(current: &[SuspendedProcess]) -> Vec<String> {
    current.iter().map(|s| s.process_name.clone()).collect()
}

fn check_granularity(granularity: &Value) -> ApiResult<()> {
    match granularity.as_str() {
        Some(GRANULARITY) | None => Ok(()),
        Some(other) => Err(ApiError::validation(format!(
            "Granularity '{other}' is not supported: the only granularity is {GRANULARITY}."
        ))),
    }
}

/// EnableMetricsCollection: the group's enabled metrics with `asked` (all when empty).
pub fn enable_metrics(
    current: &[EnabledMetric],
    asked: &Value,
    granularity: &Value,
) -> ApiResult<Vec<EnabledMetric>> {
    check_granularity(granularity)?;
    let mut list = current.to_vec();
    for m in names(asked, &METRICS, "Metric")? {
        if !list.iter().any(|e| e.metric == m) {
            list.push(EnabledMetric {
                metric: m.to_string(),
                granularity: GRANULARITY.to_string(),
            });
        }
    }
    Ok(list)
}

/// DisableMetricsCollection: the group's enabled metrics without `asked` (all when empty).
pub fn disable_metrics(current: &[EnabledMetric], asked: &Value) -> ApiResult<Vec<EnabledMetric>> {
    let off = names(asked, &METRICS, "Metric")?;
    Ok(current
        .iter()
        .filter(|e| !off.contains(&e.metric.as_str()))
        .cloned()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn suspend_and_resume_some_or_all() {
        let one = suspend(&[], &json!(["Launch"]), "t").unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].suspension_reason, "User suspended at t");
        let all = suspend(&one, &json!([]), "t").unwrap();
        assert_eq!(all.len(), PROCESSES.len());
        assert_eq!(suspended(&all).len(), PROCESSES.len());
        let left = resume(&all, &json!(["Launch", "Terminate"])).unwrap();
        assert_eq!(left.len(), PROCESSES.len() - 2);
        assert_eq!(resume(&all, &Value::Null).unwrap(), vec![]);
        assert_eq!(
            suspend(&all, &json!(["Lunch"]), "t").unwrap_err().code,
            "ValidationError"
        );
    }

    #[test]
    fn metrics_some_or_all_at_one_granularity() {
        let some = enable_metrics(&[], &json!(["GroupMinSize"]), &json!("1Minute")).unwrap();
        assert_eq!(
            serde_json::to_value(&some).unwrap(),
            json!([{"Metric": "GroupMinSize", "Granularity": "1Minute"}])
        );
        let all = enable_metrics(&[], &Value::Null, &json!("1Minute")).unwrap();
        assert_eq!(all.len(), METRICS.len());
        assert!(enable_metrics(&[], &Value::Null, &json!("5Minute")).is_err());
        assert!(enable_metrics(&[], &json!(["CPU"]), &json!("1Minute")).is_err());
        let fewer = disable_metrics(&all, &json!(["GroupMinSize"])).unwrap();
        assert_eq!(fewer.len(), METRICS.len() - 1);
        assert_eq!(disable_metrics(&all, &Value::Null).unwrap(), vec![]);
    }
}
