//! `AWS/EC2` in an account's CloudWatch at Phantom's endpoint: a group's or a VM's
//! `CPUUtilization`, `NetworkIn` and `NetworkOut`, read from the deployment's metric source
//! (node_exporter's series), as EC2 publishes them on AWS: by `AutoScalingGroupName` (over the
//! group's VMs) or by `InstanceId`. Nothing is stored: each read is a PromQL range query, one
//! value a period, so an alarm on `AWS/EC2 CPUUtilization` means what it means on AWS.

use crate::metric_data::Statistic;
use phantom_model::cloudwatch::{Datum, Dimension, MetricId, Stats};
use phantom_model::tracking::MetricType;

pub const NAMESPACE: &str = "AWS/EC2";
/// The metrics Phantom reads there.
pub const NAMES: [&str; 3] = ["CPUUtilization", "NetworkIn", "NetworkOut"];

/// The VMs a metric is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The VMs of the account's group of this name.
    Group(String),
    /// One VM, if it is one of the account's.
    Instance(String),
}

/// An `AWS/EC2` metric Phantom reads from the metric source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub kind: MetricType,
    pub scope: Scope,
}

/// The `AWS/EC2` metric `metric` names, if Phantom reads it: one of the three names, with exactly
/// one dimension, `AutoScalingGroupName` or `InstanceId`. Any other (`DiskReadOps`,
/// `StatusCheckFailed`, ...) has no data, as a metric nothing publishes.
pub fn query(metric: &MetricId) -> Option<Query> {
    if metric.namespace != NAMESPACE {
        return None;
    }
    let kind = match metric.name.as_str() {
        "CPUUtilization" => MetricType::Cpu,
        "NetworkIn" => MetricType::NetworkIn,
        "NetworkOut" => MetricType::NetworkOut,
        _ => return None,
    };
    let [d] = metric.dimensions.as_slice() else {
        return None;
    };
    let scope = match d.name.as_str() {
        "AutoScalingGroupName" => Scope::Group(d.value.clone()),
        "InstanceId" => Scope::Instance(d.value.clone()),
        _ => return None,
    };
    Some(Query { kind, scope })
}

/// The metrics ListMetrics shows for the groups `groups` and the VMs `vms`: each of the three by
/// `AutoScalingGroupName` and by `InstanceId`.
pub fn listed(groups: &[String], vms: &[String]) -> Vec<MetricId> {
    let by = |name: &str, values: &[String]| -> Vec<MetricId> {
        values
            .iter()
            .flat_map(|v| {
                let d = [Dimension {
                    name: name.to_string(),
                    value: v.clone(),
                }];
                NAMES.map(|n| MetricId::new(NAMESPACE, n, &d))
            })
            .collect()
    };
    let mut all = by("AutoScalingGroupName", groups);
    all.extend(by("InstanceId", vms));
    all
}

/// Whether `metric` is in `AWS/EC2` (Phantom's to fill: users cannot publish there).
pub fn is_ec2(metric: &MetricId) -> bool {
    metric.namespace == NAMESPACE
}

/// The unit EC2 gives the metric.
pub fn unit(kind: MetricType) -> &'static str {
    match kind {
        MetricType::Cpu => "Percent",
        MetricType::NetworkIn | MetricType::NetworkOut => "Bytes",
    }
}

/// The PromQL of `statistic` over the VMs `instances` (their ids in the label `label`): each VM's
/// value over a period of `period_secs` (its CPU's busy percentage; the bytes its interfaces but
/// loopback moved in the period), then across the VMs the statistic asked (a VM's datapoint a
/// period, as EC2's basic monitoring has it: `SampleCount` counts the VMs).
pub fn promql(
    kind: MetricType,
    statistic: Statistic,
    label: &str,
    instances: &[&str],
    period_secs: i64,
) -> String {
    let m = crate::tracking::matcher(label, instances);
    let w = period_secs;
    let per_vm = match kind {
        MetricType::Cpu => format!(
            "100 * (1 - avg by ({label}) (rate(node_cpu_seconds_total{{mode=\"idle\",{m}}}[{w}s])))"
        ),
        MetricType::NetworkIn => format!(
            "sum by ({label}) (rate(node_network_receive_bytes_total{{device!=\"lo\",{m}}}[{w}s])) * {w}"
        ),
        MetricType::NetworkOut => format!(
            "sum by ({label}) (rate(node_network_transmit_bytes_total{{device!=\"lo\",{m}}}[{w}s])) * {w}"
        ),
    };
    let across = match statistic {
        Statistic::SampleCount => "count",
        Statistic::Average => "avg",
        Statistic::Sum => "sum",
        Statistic::Minimum => "min",
        Statistic::Maximum => "max",
    };
    format!("{across}({per_vm})")
}

/// The steps a read of the whole periods in `[from_ms, to_ms)` asks for: the first and the last
/// period's end (CloudWatch's reads and alarms take whole periods only).
pub fn whole_periods(from_ms: i64, to_ms: i64, period_ms: i64) -> Option<(i64, i64)> {
    let first = from_ms.div_euclid(period_ms) * period_ms + period_ms;
    let last = to_ms.div_euclid(period_ms) * period_ms;
    (first <= last).then_some((first, last))
}

/// The datapoints of `answers` (for each statistic asked, the end of each period, Unix ms, and
/// the statistic's value over it), each at its period's start, as one datum a period whose
/// statistic set gives each statistic asked its value.
pub fn datums(
    metric: &MetricId,
    kind: MetricType,
    answers: &[(Statistic, Vec<(i64, f64)>)],
    period_ms: i64,
) -> Vec<Datum> {
    let mut ends: Vec<i64> = answers
        .iter()
        .flat_map(|(_, points)| points.iter().map(|(t, _)| *t))
        .collect();
    ends.sort_unstable();
    ends.dedup();
    ends.into_iter()
        .filter_map(|end| {
            let at = |s: Statistic| {
                answers
                    .iter()
                    .find(|(asked, _)| *asked == s)
                    .and_then(|(_, points)| points.iter().find(|(t, _)| *t == end))
                    .map(|(_, v)| *v)
                    .filter(|v| v.is_finite())
            };
            let stats = stats(
                at(Statistic::SampleCount),
                at(Statistic::Average),
                at(Statistic::Sum),
                (at(Statistic::Minimum), at(Statistic::Maximum)),
            )?;
            Some(Datum {
                metric: metric.clone(),
                at_ms: end - period_ms,
                unit: Some(unit(kind).to_string()),
                stats,
                high_resolution: false,
            })
        })
        .collect()
}

/// A statistic set that gives each statistic known its value: the count, where not known, from
/// the sum and average (else one), the sum from the average and count.
fn stats(
    count: Option<f64>,
    average: Option<f64>,
    sum: Option<f64>,
    (min, max): (Option<f64>, Option<f64>),
) -> Option<Stats> {
    if [count, average, sum, min, max].iter().all(Option::is_none) {
        return None;
    }
    let count = count
        .or_else(|| {
            sum.zip(average)
                .filter(|(_, a)| *a != 0.0)
                .map(|(s, a)| s / a)
        })
        .unwrap_or(1.0);
    let sum = sum.or_else(|| average.map(|a| a * count)).unwrap_or(0.0);
    Some(Stats {
        count,
        sum,
        min: min.unwrap_or(0.0),
        max: max.unwrap_or(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(name: &str, dims: &[(&str, &str)]) -> MetricId {
        let dims: Vec<Dimension> = dims
            .iter()
            .map(|(n, v)| Dimension {
                name: n.to_string(),
                value: v.to_string(),
            })
            .collect();
        MetricId::new(NAMESPACE, name, &dims)
    }

    #[test]
    fn a_groups_and_a_vms_metrics_are_read_and_others_are_not() {
        let q = query(&metric(
            "CPUUtilization",
            &[("AutoScalingGroupName", "web")],
        ))
        .unwrap();
        assert_eq!(q.kind, MetricType::Cpu);
        assert_eq!(q.scope, Scope::Group("web".into()));
        let q = query(&metric("NetworkOut", &[("InstanceId", "i-1")])).unwrap();
        assert_eq!(q.scope, Scope::Instance("i-1".into()));
        assert!(query(&metric("DiskReadOps", &[("InstanceId", "i-1")])).is_none());
        assert!(query(&metric("CPUUtilization", &[])).is_none());
        let both = [("AutoScalingGroupName", "web"), ("InstanceId", "i-1")];
        assert!(query(&metric("CPUUtilization", &both)).is_none());
        let mut other = metric("CPUUtilization", &[("InstanceId", "i-1")]);
        other.namespace = "App".into();
        assert!(query(&other).is_none());
    }

    #[test]
    fn the_statistic_is_taken_across_the_vms() {
        let q = promql(
            MetricType::Cpu,
            Statistic::Maximum,
            "instance",
            &["i-1", "i-2"],
            60,
        );
        assert_eq!(
            q,
            "max(100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode=\"idle\",instance=~\"i-1|i-2\"}[60s]))))"
        );
        let q = promql(MetricType::NetworkIn, Statistic::Sum, "id", &["i-1"], 300);
        assert!(
            q.starts_with("sum(sum by (id) (rate(node_network_receive_bytes_total{device!=\"lo\"")
        );
        assert!(q.ends_with("[300s])) * 300)"));
    }

    #[test]
    fn each_value_is_its_periods_datapoint() {
        assert_eq!(
            whole_periods(60_500, 240_000, 60_000),
            Some((120_000, 240_000))
        );
        assert_eq!(whole_periods(60_000, 100_000, 60_000), None);
        let m = metric("CPUUtilization", &[("InstanceId", "i-1")]);
        let avg = (
            Statistic::Average,
            vec![(120_000, 75.0), (180_000, f64::NAN)],
        );
        let d = datums(&m, MetricType::Cpu, &[avg], 60_000);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].at_ms, 60_000);
        assert_eq!(d[0].unit.as_deref(), Some("Percent"));
        assert_eq!(Statistic::Average.of(&d[0].stats), 75.0);
        // Several statistics at once: each gives its own value.
        let answers = [
            (Statistic::SampleCount, vec![(120_000, 3.0)]),
            (Statistic::Average, vec![(120_000, 40.0)]),
            (Statistic::Maximum, vec![(120_000, 90.0)]),
        ];
        let d = datums(&m, MetricType::Cpu, &answers, 60_000);
        assert_eq!(Statistic::SampleCount.of(&d[0].stats), 3.0);
        assert_eq!(Statistic::Average.of(&d[0].stats), 40.0);
        assert_eq!(Statistic::Sum.of(&d[0].stats), 120.0);
        assert_eq!(Statistic::Maximum.of(&d[0].stats), 90.0);
        let sum_avg = [
            (Statistic::Sum, vec![(120_000, 120.0)]),
            (Statistic::Average, vec![(120_000, 40.0)]),
        ];
        let d = datums(&m, MetricType::Cpu, &sum_avg, 60_000);
        assert_eq!(Statistic::SampleCount.of(&d[0].stats), 3.0);
    }
}
