//! Scaling policies: PutScalingPolicy's input checked as AWS checks it, stored as the
//! `ScalingPolicy` document DescribePolicies returns, and what executing one does to a group's
//! desired capacity. Pure: no store, no clock.
//!
//! SimpleScaling and StepScaling, with ChangeInCapacity, ExactCapacity and
//! PercentChangeInCapacity, run by ExecutePolicy or a webhook. TargetTrackingScaling follows a
//! metric of the deployment's Prometheus (`phantom_rules::tracking`): a predefined one or a PromQL
//! expression. PredictiveScaling forecasts the load of a metric of that Prometheus
//! (`phantom_rules::predictive`).

pub use phantom_model::group::{
    AdjustmentType, MetricAggregation, PolicyKind, ScalingPolicy, Step,
};
use phantom_model::request::PutScalingPolicy;
use phantom_model::tracking::{
    CustomizedMetric, CustomizedMetricRequest, MetricType, PredefinedMetric,
    PredefinedMetricRequest, TargetTrackingConfiguration,
};
use phantom_model::{Checked, Refusal};

/// AWS's quota of scaling policies per group.
pub const MAX_POLICIES: usize = 50;

pub const SIMPLE: &str = "SimpleScaling";
pub const STEP: &str = "StepScaling";
pub const TRACKING: &str = "TargetTrackingScaling";
pub use crate::predictive::PREDICTIVE;

/// The policy PutScalingPolicy's request makes (a new one, or one replacing the policy of that
/// name), checked as AWS checks it.
pub fn document(input: &PutScalingPolicy, group: &str, arn: &str) -> Checked<ScalingPolicy> {
    let kind = input.policy_type.as_deref().unwrap_or(SIMPLE);
    match kind {
        SIMPLE | STEP => {}
        TRACKING => return tracking_document(input, group, arn),
        PREDICTIVE => {
            return crate::predictive::document(input)
                .map(|kind| stored(input, group, arn, kind))
        }
        other => {
            return Err(Refusal::invalid(format!(
            "Invalid policy type {other}: use SimpleScaling, StepScaling, TargetTrackingScaling or PredictiveScaling."
        )))
        }
    }
    // A metric's configuration given with another type would be stored and never followed.
    if input.target_tracking_configuration.is_some() {
        return Err(Refusal::invalid(format!(
            "TargetTrackingConfiguration is only supported for {TRACKING} policies."
        )));
    }
    if input.predictive_scaling_configuration.is_some() {
        return Err(Refusal::invalid(format!(
            "PredictiveScalingConfiguration is only supported for {PREDICTIVE} policies."
        )));
    }
    let given = input.adjustment_type.as_deref().ok_or_else(|| {
        Refusal::invalid(format!(
            "AdjustmentType is required for policy type {kind}."
        ))
    })?;
    let adjustment_type = AdjustmentType::parse(given).ok_or_else(|| {
        Refusal::invalid(format!(
            "Invalid adjustment type {given}: use one of {}.",
            AdjustmentType::ALL.map(AdjustmentType::as_str).join(", ")
        ))
    })?;
    // MinAdjustmentStep is the older name of MinAdjustmentMagnitude.
    let magnitude = input.min_adjustment_magnitude.or(input.min_adjustment_step);
    if let Some(m) = magnitude {
        if adjustment_type != AdjustmentType::PercentChangeInCapacity {
            return Err(Refusal::invalid(
                "MinAdjustmentMagnitude is only supported with PercentChangeInCapacity.",
            ));
        }
        if m < 1 {
            return Err(Refusal::invalid(
                "MinAdjustmentMagnitude must be at least 1.",
            ));
        }
    }
    // A step policy's alarm aggregates its expression's series and waits out new VMs' warm-up; a
    // simple policy has neither.
    let aggregation = match input.metric_aggregation_type.as_deref() {
        None => MetricAggregation::Average,
        Some(a) => MetricAggregation::parse(a).ok_or_else(|| {
            Refusal::invalid(format!(
                "Invalid metric aggregation type {a}: use one of {}.",
                MetricAggregation::ALL
                    .map(MetricAggregation::as_str)
                    .join(", ")
            ))
        })?,
    };
    if input.estimated_instance_warmup.is_some_and(|w| w < 0) {
        return Err(Refusal::invalid(
            "EstimatedInstanceWarmup must not be negative.",
        ));
    }
    let not_for = |member: &str, kinds: &str| {
        Refusal::invalid(format!("{member} is only supported for {kinds} policies."))
    };
    let kind = if kind == SIMPLE {
        for (member, given) in [
            ("StepAdjustments", input.step_adjustments.is_some()),
            (
                "MetricAggregationType",
                input.metric_aggregation_type.is_some(),
            ),
        ] {
            if given {
                return Err(not_for(member, STEP));
            }
        }
        if input.estimated_instance_warmup.is_some() {
            return Err(not_for(
                "EstimatedInstanceWarmup",
                "StepScaling and TargetTrackingScaling",
            ));
        }
        let adjustment = input.scaling_adjustment.ok_or_else(|| {
            Refusal::invalid("ScalingAdjustment is required for SimpleScaling policies.")
        })?;
        check_adjustment(adjustment_type, adjustment)?;
        if input.cooldown.is_some_and(|c| c < 0) {
            return Err(Refusal::invalid("Cooldown must not be negative."));
        }
        PolicyKind::Simple {
            adjustment_type,
            min_adjustment_magnitude: magnitude,
            scaling_adjustment: adjustment,
            cooldown: input.cooldown,
        }
    } else {
        // Terraform sends Cooldown 0 for a step policy as a placeholder, which AWS takes.
        for (member, given) in [
            ("ScalingAdjustment", input.scaling_adjustment.is_some()),
            ("Cooldown", input.cooldown.is_some_and(|c| c != 0)),
        ] {
            if given {
                return Err(not_for(member, SIMPLE));
            }
        }
        let steps: Vec<Step> = input
            .step_adjustments
            .iter()
            .flatten()
            .map(|s| Step::from(*s))
            .collect();
        if steps.is_empty() {
            return Err(Refusal::invalid(
                "StepAdjustments is required for StepScaling policies.",
            ));
        }
        for s in &steps {
            check_adjustment(adjustment_type, s.adjustment)?;
        }
        check_steps(&steps)?;
        PolicyKind::Step {
            adjustment_type,
            min_adjustment_magnitude: magnitude,
            step_adjustments: steps,
            metric_aggregation_type: aggregation,
            estimated_instance_warmup: input.estimated_instance_warmup,
        }
    };
    Ok(stored(input, group, arn, kind))
}

fn stored(input: &PutScalingPolicy, group: &str, arn: &str, kind: PolicyKind) -> ScalingPolicy {
    ScalingPolicy {
        auto_scaling_group_name: group.to_string(),
        policy_name: input.policy_name.clone(),
        arn: arn.to_string(),
        kind,
        enabled: input.enabled.unwrap_or(true),
        alarms: Vec::new(),
        webhook: None,
        alarm: None,
    }
}

/// A TargetTrackingScaling policy: its metric (predefined, or one PromQL expression), its
/// target, DisableScaleIn and warm-up. The members of the other types are refused, as AWS does.
fn tracking_document(input: &PutScalingPolicy, group: &str, arn: &str) -> Checked<ScalingPolicy> {
    crate::tracking::refuse_members(
        input,
        TRACKING,
        &[(
            "PredictiveScalingConfiguration",
            input.predictive_scaling_configuration.is_some(),
        )],
    )?;
    let asked = input
        .target_tracking_configuration
        .as_ref()
        .ok_or_else(|| {
            Refusal::invalid(format!(
                "TargetTrackingConfiguration is required for policy type {TRACKING}."
            ))
        })?;
    if !asked.target_value.is_finite() || asked.target_value <= 0.0 {
        return Err(Refusal::invalid(format!(
            "TargetValue must be a number greater than 0, not {}.",
            asked.target_value
        )));
    }
    if input.estimated_instance_warmup.is_some_and(|w| w < 0) {
        return Err(Refusal::invalid(
            "EstimatedInstanceWarmup must not be negative.",
        ));
    }
    let (predefined, customized) = match (
        &asked.predefined_metric_specification,
        &asked.customized_metric_specification,
    ) {
        (Some(p), None) => (Some(predefined(p)?), None),
        (None, Some(c)) => (None, Some(customized(c)?)),
        _ => {
            return Err(Refusal::invalid(
                "Exactly one of PredefinedMetricSpecification and CustomizedMetricSpecification must be given.",
            ))
        }
    };
    let kind = PolicyKind::TargetTracking {
        target_tracking_configuration: TargetTrackingConfiguration {
            predefined_metric_specification: predefined,
            customized_metric_specification: customized,
            target_value: asked.target_value,
            disable_scale_in: asked.disable_scale_in.unwrap_or(false),
        },
        estimated_instance_warmup: input.estimated_instance_warmup,
    };
    Ok(stored(input, group, arn, kind))
}

fn predefined(p: &PredefinedMetricRequest) -> Checked<PredefinedMetric> {
    let kind = match p.predefined_metric_type.as_str() {
        "ASGAverageCPUUtilization" => MetricType::Cpu,
        "ASGAverageNetworkIn" => MetricType::NetworkIn,
        "ASGAverageNetworkOut" => MetricType::NetworkOut,
        other => {
            return Err(Refusal::invalid(format!(
                "{other} counts a load balancer's requests in CloudWatch, which Phantom does not read: \
                 use ASGAverageCPUUtilization, ASGAverageNetworkIn, ASGAverageNetworkOut or a \
                 CustomizedMetricSpecification with a PromQL expression."
            )))
        }
    };
    if p.resource_label.is_some() {
        return Err(Refusal::invalid(format!(
            "ResourceLabel is only supported for ALBRequestCountPerTarget, not {}.",
            kind.as_str()
        )));
    }
    Ok(PredefinedMetric {
        predefined_metric_type: kind,
        resource_label: None,
    })
}

/// A customized metric: a CloudWatch metric published to Phantom's CloudWatch (its name,
/// namespace, dimensions, statistic and unit), or one PromQL expression in `Metrics`.
fn customized(c: &CustomizedMetricRequest) -> Checked<CustomizedMetric> {
    let cloudwatch = c.metric_name.is_some()
        || c.namespace.is_some()
        || c.dimensions.is_some()
        || c.statistic.is_some()
        || c.unit.is_some();
    if c.period.is_some() {
        return Err(Refusal::invalid(
            "Period is not supported: Phantom reads the metric once a metric period of the deployment.",
        ));
    }
    if cloudwatch {
        if c.metrics.is_some() {
            return Err(Refusal::invalid(
                "Give either Metrics or MetricName, Namespace and Statistic, not both.",
            ));
        }
        let (Some(name), Some(namespace), Some(statistic)) =
            (&c.metric_name, &c.namespace, &c.statistic)
        else {
            return Err(Refusal::invalid(
                "A CloudWatch metric needs MetricName, Namespace and Statistic.",
            ));
        };
        // Of AWS's namespaces Phantom fills AWS/EC2's metrics it reads from the metric source and
        // AWS/AutoScaling's group metrics: a policy on any other would never have a datapoint.
        let dims = c.dimensions.as_deref().unwrap_or_default();
        let metric = phantom_model::cloudwatch::MetricId::new(namespace, name, dims);
        let filled = crate::ec2_metrics::query(&metric).is_some()
            || namespace == crate::group_metrics::AWS_NAMESPACE;
        if namespace.starts_with("AWS/") && !filled {
            return Err(Refusal::invalid(format!(
                "{namespace} {name} is not a metric Phantom's CloudWatch fills: it fills AWS/EC2's \
                 CPUUtilization, NetworkIn and NetworkOut by AutoScalingGroupName or InstanceId \
                 (from the metric source), AWS/AutoScaling's group metrics, and what your VMs \
                 publish with PutMetricData."
            )));
        }
        if crate::metric_data::Statistic::parse(statistic).is_none() {
            return Err(Refusal::invalid(format!(
                "Statistic {statistic} is not one of SampleCount, Average, Sum, Minimum, Maximum."
            )));
        }
        return Ok(CustomizedMetric {
            metric_name: Some(name.clone()),
            namespace: Some(namespace.clone()),
            dimensions: c.dimensions.clone(),
            statistic: Some(statistic.clone()),
            unit: c.unit.clone(),
            metrics: Vec::new(),
        });
    }
    if c.period.is_some() {
        return Err(Refusal::invalid(
            "Period is not supported: Phantom reads the metric once a metric period of the deployment.",
        ));
    }
    Ok(CustomizedMetric {
        metric_name: None,
        namespace: None,
        dimensions: None,
        statistic: None,
        unit: None,
        metrics: vec![crate::tracking::promql_query(
            c.metrics.as_deref().unwrap_or_default(),
            "CustomizedMetricSpecification needs Metrics",
        )?],
    })
}

fn check_adjustment(adjustment_type: AdjustmentType, adjustment: i64) -> Checked<()> {
    if adjustment_type == AdjustmentType::ExactCapacity && adjustment < 0 {
        return Err(Refusal::invalid(
            "ScalingAdjustment must not be negative with ExactCapacity.",
        ));
    }
    Ok(())
}

/// AWS's rules for step intervals: no step open at both ends, at most one open below and one
/// open above, a negative lower bound needs a step open below and a positive upper bound one open
/// above, and the intervals neither overlap nor leave a gap.
pub fn check_steps(steps: &[Step]) -> Checked<()> {
    let bad = |m: &str| Err(Refusal::invalid(m.to_string()));
    for s in steps {
        match (s.lower, s.upper) {
            (None, None) => {
                return bad("The upper and lower bound of a step adjustment cannot both be null.")
            }
            (Some(l), Some(u)) if l >= u => {
                return bad("A step adjustment's lower bound must be less than its upper bound.")
            }
            _ => {}
        }
    }
    let open_below = steps.iter().filter(|s| s.lower.is_none()).count();
    let open_above = steps.iter().filter(|s| s.upper.is_none()).count();
    if open_below > 1 {
        return bad("At most one step adjustment may have a null lower bound.");
    }
    if open_above > 1 {
        return bad("At most one step adjustment may have a null upper bound.");
    }
    if open_below == 0 && steps.iter().any(|s| s.lower.is_some_and(|l| l < 0.0)) {
        return bad(
            "A step adjustment with a negative lower bound needs one with a null lower bound.",
        );
    }
    if open_above == 0 && steps.iter().any(|s| s.upper.is_some_and(|u| u > 0.0)) {
        return bad(
            "A step adjustment with a positive upper bound needs one with a null upper bound.",
        );
    }
    let mut sorted = steps.to_vec();
    sorted.sort_by(|a, b| {
        let key = |s: &Step| s.lower.unwrap_or(f64::NEG_INFINITY);
        key(a).total_cmp(&key(b))
    });
    for pair in sorted.windows(2) {
        let end = pair[0].upper.unwrap_or(f64::INFINITY);
        let start = pair[1].lower.unwrap_or(f64::NEG_INFINITY);
        if end > start {
            return bad("Step adjustments must not overlap.");
        }
        if end < start {
            return bad("Step adjustments must not leave a gap between them.");
        }
    }
    Ok(())
}

/// The adjustment of the step that `metric` falls in, relative to `breach`: above the threshold
/// a step's lower bound is inclusive and its upper exclusive, below it the other way round.
pub fn step_for(steps: &[Step], metric: f64, breach: f64) -> Option<i64> {
    let d = metric - breach;
    steps
        .iter()
        .find(|s| {
            let lower = s.lower.unwrap_or(f64::NEG_INFINITY);
            let upper = s.upper.unwrap_or(f64::INFINITY);
            if d >= 0.0 {
                lower <= d && d < upper
            } else {
                lower < d && d <= upper
            }
        })
        .map(|s| s.adjustment)
}

/// The desired capacity after an adjustment, within the group's bounds. A percentage of the
/// current desired capacity is rounded as AWS rounds it (above 1 down, between 0 and 1 up to 1,
/// between -1 and 0 down to -1, below -1 up) and raised to `min_magnitude` instances.
pub fn adjust(
    adjustment_type: AdjustmentType,
    adjustment: i64,
    min_magnitude: Option<i64>,
    desired: i64,
    min: i64,
    max: i64,
) -> i64 {
    let target = match adjustment_type {
        AdjustmentType::ExactCapacity => adjustment,
        AdjustmentType::PercentChangeInCapacity => {
            let change = desired as f64 * adjustment as f64 / 100.0;
            let mut n = if change > 1.0 {
                change.floor()
            } else if change > 0.0 {
                1.0
            } else if change >= -1.0 {
                if change < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            } else {
                change.ceil()
            } as i64;
            if let Some(m) = min_magnitude {
                if n != 0 && n.abs() < m {
                    n = m * n.signum();
                }
            }
            desired + n
        }
        AdjustmentType::ChangeInCapacity => desired + adjustment,
    };
    target.clamp(min, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A PutScalingPolicy request for group `web`, as the decoder gives it.
    fn request(input: &Value) -> PutScalingPolicy {
        let mut input = input.clone();
        input["AutoScalingGroupName"] = "web".into();
        serde_json::from_value(input).unwrap()
    }

    fn step(lower: Option<f64>, upper: Option<f64>, adjustment: i64) -> Step {
        Step {
            lower,
            upper,
            adjustment,
        }
    }

    #[test]
    fn adjustments_are_aws_arithmetic_within_the_bounds() {
        // (type, adjustment, magnitude, desired) -> new desired, within 0..=100
        for (t, a, m, d, want) in [
            ("ChangeInCapacity", 2, None, 3, 5),
            ("ChangeInCapacity", -5, None, 3, 0),
            ("ExactCapacity", 7, None, 3, 7),
            ("ExactCapacity", 500, None, 3, 100),
            ("PercentChangeInCapacity", 50, None, 10, 15),
            ("PercentChangeInCapacity", 25, None, 10, 12), // 2.5 rounds down to 2
            ("PercentChangeInCapacity", 5, None, 10, 11),  // 0.5 rounds up to 1
            ("PercentChangeInCapacity", -5, None, 10, 9),  // -0.5 rounds to -1
            ("PercentChangeInCapacity", -67, None, 10, 4), // -6.7 rounds up to -6
            ("PercentChangeInCapacity", 10, Some(3), 10, 13), // 1 raised to 3
            ("PercentChangeInCapacity", -10, Some(3), 10, 7),
            ("PercentChangeInCapacity", 50, Some(3), 10, 15), // 5 is enough
            ("PercentChangeInCapacity", 50, None, 0, 0),      // nothing of nothing
        ] {
            let kind = AdjustmentType::parse(t).unwrap();
            assert_eq!(
                adjust(kind, a, m, d, 0, 100),
                want,
                "{t} {a} {m:?} from {d}"
            );
        }
        assert_eq!(
            adjust(AdjustmentType::ChangeInCapacity, -1, None, 2, 2, 5),
            2,
            "not below MinSize"
        );
    }

    #[test]
    fn the_step_is_chosen_by_the_metric_and_its_bounds() {
        // Above the threshold (breach 50): [0, 10) +1, [10, 20) +2, [20, inf) +3; below: (-inf, 0] -1.
        let steps = [
            step(Some(0.0), Some(10.0), 1),
            step(Some(10.0), Some(20.0), 2),
            step(Some(20.0), None, 3),
            step(None, Some(0.0), -1),
        ];
        check_steps(&steps).unwrap();
        for (metric, want) in [
            (50.0, Some(1)),
            (59.9, Some(1)),
            (60.0, Some(2)),
            (70.0, Some(3)),
            (1e9, Some(3)),
            (49.0, Some(-1)),
        ] {
            assert_eq!(step_for(&steps, metric, 50.0), want, "{metric}");
        }
        assert_eq!(step_for(&steps[..1], 80.0, 50.0), None, "no step covers it");
    }

    #[test]
    fn step_intervals_are_checked_as_aws_checks_them() {
        let ok = [step(Some(0.0), None, 1)];
        check_steps(&ok).unwrap();
        for (bad, why) in [
            (vec![step(None, None, 1)], "open at both ends"),
            (
                vec![step(Some(5.0), Some(5.0), 1), step(Some(5.0), None, 1)],
                "empty",
            ),
            (
                vec![step(Some(0.0), Some(10.0), 1)],
                "positive upper bound, nothing above",
            ),
            (
                vec![step(Some(-10.0), Some(0.0), -1)],
                "negative lower bound, nothing below",
            ),
            (
                vec![step(Some(0.0), Some(10.0), 1), step(Some(5.0), None, 2)],
                "overlap",
            ),
            (
                vec![step(Some(0.0), Some(10.0), 1), step(Some(15.0), None, 2)],
                "gap",
            ),
            (
                vec![step(Some(0.0), None, 1), step(Some(10.0), None, 2)],
                "two open above",
            ),
        ] {
            assert!(check_steps(&bad).is_err(), "{why}");
        }
    }

    #[test]
    fn policies_are_checked_and_stored_in_awss_shape() {
        let arn = "arn:aws:autoscaling:us-east-1:1:scalingPolicy:x:autoScalingGroupName/web:policyName/up";
        let simple = json!({"PolicyName": "up", "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": 2, "Cooldown": 60});
        let doc = serde_json::to_value(document(&request(&simple), "web", arn).unwrap()).unwrap();
        assert_eq!(doc["PolicyType"], SIMPLE);
        assert_eq!(doc["Enabled"], true);
        assert_eq!(doc["Cooldown"], 60);
        for bad in [
            json!({"PolicyName": "p", "PolicyType": "TargetTrackingScaling"}),
            json!({"PolicyName": "p", "PolicyType": "PredictiveScaling"}),
            // Stored and ignored before: a metric's configuration with a simple policy.
            json!({"PolicyName": "p", "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": 1,
                   "TargetTrackingConfiguration": {"TargetValue": 50.0}}),
            json!({"PolicyName": "p", "ScalingAdjustment": 1}),
            json!({"PolicyName": "p", "AdjustmentType": "Lots", "ScalingAdjustment": 1}),
            json!({"PolicyName": "p", "AdjustmentType": "ChangeInCapacity"}),
            json!({"PolicyName": "p", "AdjustmentType": "ExactCapacity", "ScalingAdjustment": -1}),
            json!({"PolicyName": "p", "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": 1, "MinAdjustmentMagnitude": 2}),
            json!({"PolicyName": "p", "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": 1, "StepAdjustments": [{"ScalingAdjustment": 1}]}),
            json!({"PolicyName": "p", "PolicyType": "StepScaling", "AdjustmentType": "ChangeInCapacity"}),
            json!({"PolicyName": "p", "PolicyType": "StepScaling", "AdjustmentType": "ChangeInCapacity", "Cooldown": 5,
                   "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]}),
            // A warm-up and an aggregation are a step policy's alarm's, not a simple policy's.
            json!({"PolicyName": "p", "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": 1,
                   "EstimatedInstanceWarmup": 60}),
            json!({"PolicyName": "p", "PolicyType": "StepScaling", "AdjustmentType": "ChangeInCapacity",
                   "MetricAggregationType": "Median",
                   "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]}),
            json!({"PolicyName": "p", "PolicyType": "StepScaling", "AdjustmentType": "ChangeInCapacity",
                   "EstimatedInstanceWarmup": -1,
                   "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]}),
        ] {
            assert!(document(&request(&bad), "web", arn).is_err(), "{bad}");
        }
        let stepped = json!({"PolicyName": "s", "PolicyType": "StepScaling", "AdjustmentType": "PercentChangeInCapacity",
            "MinAdjustmentMagnitude": 2, "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 10}]});
        let doc = serde_json::to_value(document(&request(&stepped), "web", arn).unwrap()).unwrap();
        assert_eq!(doc["MetricAggregationType"], "Average");
        assert_eq!(doc["MinAdjustmentMagnitude"], 2);
        // Both are kept, shown and acted on by the policy's alarm.
        let mut given = stepped.clone();
        given["MetricAggregationType"] = json!("Maximum");
        given["EstimatedInstanceWarmup"] = json!(90);
        let p = document(&request(&given), "web", arn).unwrap();
        let doc = serde_json::to_value(&p).unwrap();
        assert_eq!(doc["MetricAggregationType"], "Maximum");
        assert_eq!(doc["EstimatedInstanceWarmup"], 90);
        assert_eq!(p.step_warmup(), Some(90));
        assert_eq!(p.aggregation(), Some(MetricAggregation::Maximum));
    }
}
