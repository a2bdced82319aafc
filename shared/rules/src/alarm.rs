//! A step policy's alarm of Phantom's own, pure: for users without Alertmanager, a PromQL
//! condition the scheduled run evaluates, as a CloudWatch alarm would run the policy. Its check
//! when it is put, whether its datapoints put it in alarm (M of N; a missing datapoint never
//! breaches), and the capacity its policy's step then asks for. A scale-out counts only the VMs
//! past their warm-up as the current capacity, so a breach that stays in one step while the new
//! VMs warm up scales once, and a higher step adds only the difference (AWS's step scaling).

use crate::policy;
use phantom_model::group::{PolicyKind, ScalingPolicy};
use phantom_model::tracking::{Comparison, MetricAlarm};
use phantom_model::{Checked, Refusal};

/// The most datapoints an alarm may look back over.
pub const MAX_EVALUATION_PERIODS: i64 = 60;

/// What PutPolicyAlarm asks, before it is checked.
pub struct Asked<'a> {
    pub expression: &'a str,
    pub comparison_operator: &'a str,
    pub threshold: f64,
    pub evaluation_periods: i64,
    pub datapoints_to_alarm: Option<i64>,
}

/// The alarm `asked` for step policy `p`, named `name` (its ARN `arn`), checked.
pub fn check(p: &ScalingPolicy, asked: &Asked<'_>, name: &str, arn: &str) -> Checked<MetricAlarm> {
    if !matches!(p.kind, PolicyKind::Step { .. }) {
        return Err(Refusal::invalid(format!(
            "Policy {} is a {} policy: an alarm runs a StepScaling policy.",
            p.policy_name,
            p.policy_type()
        )));
    }
    let comparison_operator = Comparison::parse(asked.comparison_operator).ok_or_else(|| {
        Refusal::invalid(format!(
            "ComparisonOperator {} is not one of {}.",
            asked.comparison_operator,
            Comparison::ALL.map(Comparison::as_str).join(", ")
        ))
    })?;
    if !asked.threshold.is_finite() {
        return Err(Refusal::invalid("Threshold must be a number."));
    }
    let n = asked.evaluation_periods;
    if !(1..=MAX_EVALUATION_PERIODS).contains(&n) {
        return Err(Refusal::invalid(format!(
            "EvaluationPeriods must be between 1 and {MAX_EVALUATION_PERIODS}, not {n}."
        )));
    }
    let m = asked.datapoints_to_alarm.unwrap_or(n);
    if !(1..=n).contains(&m) {
        return Err(Refusal::invalid(format!(
            "DatapointsToAlarm must be between 1 and EvaluationPeriods ({n}), not {m}."
        )));
    }
    if asked.expression.trim().is_empty() {
        return Err(Refusal::invalid("Expression (PromQL) must not be empty."));
    }
    Ok(MetricAlarm {
        alarm_name: name.to_string(),
        alarm_arn: arn.to_string(),
        expression: asked.expression.to_string(),
        comparison_operator,
        threshold: asked.threshold,
        evaluation_periods: n,
        datapoints_to_alarm: m,
    })
}

/// The metric value the alarm runs its policy with, if it is in alarm on these datapoints (its
/// last `evaluation_periods`, oldest first): the latest one it has.
pub fn breached(a: &MetricAlarm, datapoints: &[Option<f64>]) -> Option<f64> {
    let window = &datapoints[datapoints
        .len()
        .saturating_sub(a.evaluation_periods as usize)..];
    let breaching = window
        .iter()
        .flatten()
        .filter(|v| a.comparison_operator.breaches(**v, a.threshold))
        .count() as i64;
    if breaching < a.datapoints_to_alarm {
        return None;
    }
    window.iter().rev().flatten().next().copied()
}

/// The capacity step policy `p` asks for when its alarm is in alarm at `value`: out from the VMs
/// past their warm-up (`warmed`), never below `desired`; in from `desired`. None: no step covers
/// the value, or no change.
pub fn step_capacity(
    p: &ScalingPolicy,
    value: f64,
    threshold: f64,
    desired: i64,
    warmed: i64,
    (min, max): (i64, i64),
) -> Option<i64> {
    let PolicyKind::Step {
        adjustment_type,
        min_adjustment_magnitude,
        step_adjustments,
        ..
    } = &p.kind
    else {
        return None;
    };
    let adjustment = policy::step_for(step_adjustments, value, threshold)?;
    let from_warmed = policy::adjust(
        *adjustment_type,
        adjustment,
        *min_adjustment_magnitude,
        warmed,
        min,
        max,
    );
    let from_desired = policy::adjust(
        *adjustment_type,
        adjustment,
        *min_adjustment_magnitude,
        desired,
        min,
        max,
    );
    let to = if from_desired > desired {
        from_warmed.max(desired)
    } else {
        from_desired
    };
    (to != desired).then_some(to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step_policy() -> ScalingPolicy {
        let put = serde_json::from_value(json!({
            "AutoScalingGroupName": "web", "PolicyName": "steps", "PolicyType": "StepScaling",
            "AdjustmentType": "ChangeInCapacity",
            "StepAdjustments": [
                {"MetricIntervalLowerBound": 0.0, "MetricIntervalUpperBound": 20.0, "ScalingAdjustment": 1},
                {"MetricIntervalLowerBound": 20.0, "ScalingAdjustment": 3}]
        }))
        .unwrap();
        policy::document(&put, "web", "arn:p").unwrap()
    }

    fn alarm(op: &str, n: i64, m: Option<i64>) -> Checked<MetricAlarm> {
        let asked = Asked {
            expression: "avg(app_load{$instances})",
            comparison_operator: op,
            threshold: 60.0,
            evaluation_periods: n,
            datapoints_to_alarm: m,
        };
        check(&step_policy(), &asked, "a", "arn:a")
    }

    #[test]
    fn an_alarm_is_checked_before_it_is_kept() {
        let a = alarm("GreaterThanThreshold", 3, None).unwrap();
        assert_eq!(a.datapoints_to_alarm, 3, "M defaults to N, as CloudWatch's");
        assert!(alarm("Above", 3, None).is_err());
        assert!(alarm("GreaterThanThreshold", 0, None).is_err());
        assert!(alarm("GreaterThanThreshold", 61, None).is_err());
        assert!(alarm("GreaterThanThreshold", 3, Some(4)).is_err());
        let mut simple = step_policy();
        simple.kind = PolicyKind::Simple {
            adjustment_type: policy::AdjustmentType::ChangeInCapacity,
            min_adjustment_magnitude: None,
            scaling_adjustment: 1,
            cooldown: None,
        };
        let asked = Asked {
            expression: "1",
            comparison_operator: "GreaterThanThreshold",
            threshold: 0.0,
            evaluation_periods: 1,
            datapoints_to_alarm: None,
        };
        assert!(check(&simple, &asked, "a", "arn").is_err());
    }

    #[test]
    fn m_of_n_datapoints_put_it_in_alarm_and_a_gap_never_breaches() {
        let a = alarm("GreaterThanThreshold", 3, Some(2)).unwrap();
        assert_eq!(
            breached(&a, &[Some(10.0), Some(70.0), Some(65.0)]),
            Some(65.0)
        );
        assert_eq!(breached(&a, &[Some(70.0), None, Some(65.0)]), Some(65.0));
        assert_eq!(breached(&a, &[Some(70.0), Some(65.0), None]), Some(65.0));
        assert_eq!(breached(&a, &[None, None, Some(65.0)]), None);
        // Only the last N count.
        assert_eq!(
            breached(
                &a,
                &[Some(90.0), Some(90.0), Some(10.0), Some(10.0), Some(90.0)]
            ),
            None
        );
        let below = alarm("LessThanOrEqualToThreshold", 1, None).unwrap();
        assert_eq!(breached(&below, &[Some(60.0)]), Some(60.0));
    }

    #[test]
    fn a_step_out_counts_the_warmed_vms_and_a_higher_step_adds_the_difference() {
        let p = step_policy();
        let bounds = (1, 10);
        // 4 serving at 70 for 60: +1.
        assert_eq!(step_capacity(&p, 70.0, 60.0, 4, 4, bounds), Some(5));
        // The same step while the new VM warms up: no more.
        assert_eq!(step_capacity(&p, 70.0, 60.0, 5, 4, bounds), None);
        // A higher step meanwhile: +3 from the 4 warmed, 2 more than now.
        assert_eq!(step_capacity(&p, 90.0, 60.0, 5, 4, bounds), Some(7));
        // Warmed up and still in alarm: again.
        assert_eq!(step_capacity(&p, 70.0, 60.0, 5, 5, bounds), Some(6));
        assert_eq!(
            step_capacity(&p, 95.0, 60.0, 10, 10, bounds),
            None,
            "MaxSize"
        );
        assert_eq!(
            step_capacity(&p, 50.0, 60.0, 5, 5, bounds),
            None,
            "no step covers it"
        );
    }
}
