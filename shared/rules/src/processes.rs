//! Scaling processes (SuspendProcesses, ResumeProcesses) and metrics collection
//! (EnableMetricsCollection, DisableMetricsCollection), pure: what they do to a group's settings.
//! What a suspended process holds back is decided in `reconcile::decide` (`Target::suspended`).

use phantom_model::group::{EnabledMetric, SuspendedProcess};
use phantom_model::{Checked, Refusal};

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
pub use phantom_model::group::GROUP_METRICS as METRICS;
pub use phantom_model::group::PHANTOM_GROUP_METRICS as PHANTOM_METRICS;

pub const GRANULARITY: &str = "1Minute";

/// Every metric a group can have enabled: AWS's, then Phantom's own.
fn every_metric() -> Vec<&'static str> {
    METRICS.iter().chain(&PHANTOM_METRICS).copied().collect()
}

/// The names asked for, all when none is given; an unknown one is refused.
fn names(
    asked: Option<&[String]>,
    known: &[&'static str],
    what: &str,
) -> Checked<Vec<&'static str>> {
    names_of(asked, known, known, what)
}

/// The names asked for, `all` when none is given; one not `known` is refused.
fn names_of(
    asked: Option<&[String]>,
    all: &[&'static str],
    known: &[&'static str],
    what: &str,
) -> Checked<Vec<&'static str>> {
    let Some(asked) = asked.filter(|a| !a.is_empty()) else {
        return Ok(all.to_vec());
    };
    asked
        .iter()
        .map(|a| {
            known.iter().find(|k| *k == a).copied().ok_or_else(|| {
                Refusal::invalid(format!("{what} '{a}' is not one of {}.", known.join(", ")))
            })
        })
        .collect()
}

/// SuspendProcesses: the group's suspended processes with `asked` (all when empty) added.
pub fn suspend(
    current: &[SuspendedProcess],
    asked: Option<&[String]>,
    now: &str,
) -> Checked<Vec<SuspendedProcess>> {
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
pub fn resume(
    current: &[SuspendedProcess],
    asked: Option<&[String]>,
) -> Checked<Vec<SuspendedProcess>> {
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

fn check_granularity(granularity: &str) -> Checked<()> {
    match granularity {
        GRANULARITY => Ok(()),
        other => Err(Refusal::invalid(format!(
            "Granularity '{other}' is not supported: the only granularity is {GRANULARITY}."
        ))),
    }
}

/// EnableMetricsCollection: the group's enabled metrics with `asked` (all when empty).
pub fn enable_metrics(
    current: &[EnabledMetric],
    asked: Option<&[String]>,
    granularity: &str,
) -> Checked<Vec<EnabledMetric>> {
    check_granularity(granularity)?;
    let mut list = current.to_vec();
    for m in names_of(asked, &METRICS, &every_metric(), "Metric")? {
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
pub fn disable_metrics(
    current: &[EnabledMetric],
    asked: Option<&[String]>,
) -> Checked<Vec<EnabledMetric>> {
    let every = every_metric();
    let off = names_of(asked, &every, &every, "Metric")?;
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

    fn list(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn suspend_and_resume_some_or_all() {
        let one = suspend(&[], Some(&list(&["Launch"])), "t").unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].suspension_reason, "User suspended at t");
        let all = suspend(&one, Some(&[]), "t").unwrap();
        assert_eq!(all.len(), PROCESSES.len());
        assert_eq!(suspended(&all).len(), PROCESSES.len());
        let left = resume(&all, Some(&list(&["Launch", "Terminate"]))).unwrap();
        assert_eq!(left.len(), PROCESSES.len() - 2);
        assert_eq!(resume(&all, None).unwrap(), vec![]);
        assert!(matches!(
            suspend(&all, Some(&list(&["Lunch"])), "t").unwrap_err(),
            Refusal::Invalid(_)
        ));
    }

    #[test]
    fn metrics_some_or_all_at_one_granularity() {
        let some = enable_metrics(&[], Some(&list(&["GroupMinSize"])), "1Minute").unwrap();
        assert_eq!(
            serde_json::to_value(&some).unwrap(),
            json!([{"Metric": "GroupMinSize", "Granularity": "1Minute"}])
        );
        let all = enable_metrics(&[], None, "1Minute").unwrap();
        assert_eq!(all.len(), METRICS.len());
        // Phantom's own only by name; disabling all takes it off too.
        let more = enable_metrics(&all, Some(&list(&["GroupUnhealthyInstances"])), "1Minute");
        assert_eq!(more.as_ref().unwrap().len(), METRICS.len() + 1);
        assert!(disable_metrics(&more.unwrap(), None).unwrap().is_empty());
        assert!(enable_metrics(&[], None, "5Minute").is_err());
        assert!(enable_metrics(&[], Some(&list(&["CPU"])), "1Minute").is_err());
        let fewer = disable_metrics(&all, Some(&list(&["GroupMinSize"]))).unwrap();
        assert_eq!(fewer.len(), METRICS.len() - 1);
        assert_eq!(disable_metrics(&all, None).unwrap(), vec![]);
    }
}
