//! The alarms a group's scaling policies stand for, as CloudWatch shows them: a target tracking
//! policy's two (`TargetTracking-<group>-AlarmHigh-<id>` above the target for 3 of 3 minutes,
//! `-AlarmLow-` below 90 % of it for 15 of 15, as AWS makes them), and a step policy's alarm of
//! Phantom's own (PutPolicyAlarm) on a PromQL expression, shown as a metric math alarm whose one
//! query is that expression. DescribeAlarms lists them beside the account's own alarms, their
//! state evaluated when asked by CloudWatch's rules (`metric_alarm::evaluate`); they come and go
//! with their policy, which acts on its own readings (`tracking`, `alarm`).

use crate::metric_alarm::INSUFFICIENT_DATA;
use phantom_model::cloudwatch::{Dimension, MetricAlarm, MetricDataQuery, MetricId};
use phantom_model::group::Group;
use phantom_model::group::{PolicyKind, ScalingPolicy};
use phantom_model::time::{format_timestamp, from_ms};
use phantom_model::tracking::{MetricType, TargetTrackingConfiguration};

/// What an alarm of a policy reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A CloudWatch metric (`AWS/EC2` read through from the metric source, the rest published).
    Metric(MetricId),
    /// A PromQL expression over the group's VMs (`tracking::INSTANCES` stands for them).
    PromQL(String),
}

/// An alarm a policy stands for, before its state is evaluated (INSUFFICIENT_DATA), and what
/// it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyAlarm {
    pub group: String,
    pub alarm: MetricAlarm,
    pub source: Source,
}

/// The period of a target tracking policy's alarms, as AWS makes them.
const PERIOD_SECS: i64 = 60;

/// Every alarm the group's policies stand for, in the policies' order.
pub fn of(g: &Group, now_ms: i64) -> Vec<PolicyAlarm> {
    g.settings
        .scaling_policies
        .iter()
        .flat_map(|p| of_policy(g, p, now_ms))
        .collect()
}

fn of_policy(g: &Group, p: &ScalingPolicy, now_ms: i64) -> Vec<PolicyAlarm> {
    let now = format_timestamp(from_ms(now_ms));
    let base = |name: &str, arn: &str| MetricAlarm {
        alarm_name: name.to_string(),
        alarm_arn: arn.to_string(),
        alarm_description: None,
        alarm_configuration_updated_timestamp: now.clone(),
        actions_enabled: p.enabled,
        ok_actions: Vec::new(),
        alarm_actions: vec![p.arn.clone()],
        insufficient_data_actions: Vec::new(),
        state_value: INSUFFICIENT_DATA.to_string(),
        state_reason: "Unchecked: Initial alarm creation".to_string(),
        state_reason_data: None,
        state_updated_timestamp: now.clone(),
        metric_name: None,
        namespace: None,
        statistic: None,
        extended_statistic: None,
        dimensions: Vec::new(),
        period: Some(PERIOD_SECS),
        unit: None,
        evaluation_periods: 1,
        datapoints_to_alarm: None,
        threshold: None,
        comparison_operator: String::new(),
        treat_missing_data: None,
        evaluate_low_sample_count_percentile: None,
        metrics: Vec::new(),
        threshold_metric_id: None,
        state_transitioned_timestamp: now.clone(),
    };
    match &p.kind {
        PolicyKind::TargetTracking {
            target_tracking_configuration: cfg,
            ..
        } => {
            let (m, source) = tracked(g, cfg);
            let description = format!(
                "DO NOT EDIT OR DELETE. For TargetTrackingScaling policy {}.",
                p.arn
            );
            // High: above the target 3 minutes of 3; low: below 90 % of it 15 of 15.
            let sides = [
                ("GreaterThanThreshold", cfg.target_value, 3),
                ("LessThanThreshold", cfg.target_value * 0.9, 15),
            ];
            p.alarms
                .iter()
                .zip(sides)
                .map(|(a, (op, threshold, n))| PolicyAlarm {
                    group: g.name.clone(),
                    alarm: MetricAlarm {
                        alarm_description: Some(description.clone()),
                        evaluation_periods: n,
                        datapoints_to_alarm: Some(n),
                        threshold: Some(threshold),
                        comparison_operator: op.to_string(),
                        namespace: m.namespace.clone(),
                        metric_name: m.metric_name.clone(),
                        dimensions: m.dimensions.clone(),
                        statistic: m.statistic.clone(),
                        unit: m.unit.clone(),
                        metrics: m.metrics.clone(),
                        ..base(&a.alarm_name, &a.alarm_arn)
                    },
                    source: source.clone(),
                })
                .collect()
        }
        PolicyKind::Step { .. } => p
            .alarm
            .iter()
            .map(|a| PolicyAlarm {
                group: g.name.clone(),
                alarm: MetricAlarm {
                    alarm_description: Some(format!(
                        "Phantom's alarm of step policy {} (PutPolicyAlarm), on PromQL.",
                        p.arn
                    )),
                    evaluation_periods: a.evaluation_periods,
                    datapoints_to_alarm: Some(a.datapoints_to_alarm),
                    threshold: Some(a.threshold),
                    comparison_operator: a.comparison_operator.as_str().to_string(),
                    metrics: vec![promql_query(&a.expression)],
                    ..base(&a.alarm_name, &a.alarm_arn)
                },
                source: Source::PromQL(a.expression.clone()),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A target tracking policy's metric as its alarms show it.
#[derive(Clone)]
struct Shown {
    namespace: Option<String>,
    metric_name: Option<String>,
    dimensions: Vec<Dimension>,
    statistic: Option<String>,
    unit: Option<String>,
    metrics: Vec<MetricDataQuery>,
}

/// How a target tracking policy's metric shows in its alarms, and what they read: a predefined
/// metric is `AWS/EC2`'s by the group, as on AWS; a customized one by name is itself; one of
/// Phantom's PromQL is a metric math query.
fn tracked(g: &Group, cfg: &TargetTrackingConfiguration) -> (Shown, Source) {
    let none = Shown {
        namespace: None,
        metric_name: None,
        dimensions: Vec::new(),
        statistic: None,
        unit: None,
        metrics: Vec::new(),
    };
    let by_name = |ns: &str, name: &str, dims: Vec<Dimension>, stat: Option<String>, unit| {
        let source = Source::Metric(MetricId::new(ns, name, &dims));
        let shown = Shown {
            namespace: Some(ns.to_string()),
            metric_name: Some(name.to_string()),
            dimensions: dims,
            statistic: stat,
            unit,
            metrics: Vec::new(),
        };
        (shown, source)
    };
    let promql = |e: &str| {
        let shown = Shown {
            metrics: vec![promql_query(e)],
            ..none.clone()
        };
        (shown, Source::PromQL(e.to_string()))
    };
    if let Some(p) = &cfg.predefined_metric_specification {
        let name = match p.predefined_metric_type {
            MetricType::Cpu => "CPUUtilization",
            MetricType::NetworkIn => "NetworkIn",
            MetricType::NetworkOut => "NetworkOut",
        };
        let by_group = vec![Dimension {
            name: "AutoScalingGroupName".into(),
            value: g.name.clone(),
        }];
        let average = Some("Average".to_string());
        return by_name(crate::ec2_metrics::NAMESPACE, name, by_group, average, None);
    }
    let Some(c) = &cfg.customized_metric_specification else {
        return promql("");
    };
    match (&c.namespace, &c.metric_name, c.metrics.first()) {
        (Some(ns), Some(name), _) => {
            let dims = c.dimensions.clone().unwrap_or_default();
            by_name(ns, name, dims, c.statistic.clone(), c.unit.clone())
        }
        (_, _, Some(q)) => promql(&q.expression),
        _ => promql(""),
    }
}

/// A PromQL expression as a metric math alarm's one query.
fn promql_query(expression: &str) -> MetricDataQuery {
    MetricDataQuery {
        id: "promql".into(),
        metric_stat: None,
        expression: Some(expression.to_string()),
        label: Some("PromQL on the deployment's metric source".into()),
        return_data: Some(true),
        period: Some(PERIOD_SECS),
        account_id: None,
    }
}

/// Whether `name` may be a policy's alarm (a target tracking policy's, or a PutPolicyAlarm's
/// `Phantom-<group>-<policy>-<id>`): only then are the groups read to tell.
pub fn may_name(name: &str) -> bool {
    name.starts_with("TargetTracking-") || name.starts_with("Phantom-")
}

/// The alarm with the state an evaluation found.
pub fn settled(mut a: MetricAlarm, e: crate::metric_alarm::Evaluation) -> MetricAlarm {
    a.state_value = e.state.to_string();
    a.state_reason = e.reason;
    a.state_reason_data = Some(e.reason_data);
    a
}
