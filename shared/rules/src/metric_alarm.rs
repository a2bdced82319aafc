//! CloudWatch's metric alarms, pure: PutMetricAlarm checked as CloudWatch checks it, an alarm's
//! state from its metric's datapoints (period, EvaluationPeriods, DatapointsToAlarm,
//! TreatMissingData, as CloudWatch's user guide states them), and the words of its history.

use crate::metric_data::{self, Bad, Checked, Statistic};
use phantom_model::cloudwatch::{
    AlarmHistoryItem, Datum, MetricAlarm, MetricId, PutMetricAlarm, StoredAlarm,
};
use phantom_model::time::{format_timestamp, from_ms, parse_timestamp};
use phantom_model::tracking::Comparison;
use serde_json::json;

pub const OK: &str = "OK";
pub const ALARM: &str = "ALARM";
pub const INSUFFICIENT_DATA: &str = "INSUFFICIENT_DATA";
/// An account's alarms, at most (CloudWatch's default quota is 10,000 a region).
pub const MAX_ALARMS: usize = 5_000;
/// EvaluationPeriods times Period may look back one day at most, as CloudWatch's.
const MAX_LOOKBACK_SECS: i64 = 24 * 3600;

/// What an alarm's actions may name: a scaling policy of the account's groups, or an SNS topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Policy { group: String, policy: String },
    Topic(String),
}

/// Reads an action's ARN: a scaling policy of the account's own groups
/// (`arn:aws:autoscaling:<region>:<account>:scalingPolicy:<id>:autoScalingGroupName/<group>:
/// policyName/<policy>`), or an SNS topic the deployment may publish to (as a notification
/// configuration's, docs/notifications.md).
pub fn action(arn: &str, account: &str) -> Checked<Action> {
    let bad = |why: &str| {
        Bad::Value(format!(
            "The action {arn} is invalid: {why}. Phantom's alarms act on Auto Scaling policies and SNS topics."
        ))
    };
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [_, _, service, _region, owner, rest] = parts[..] else {
        return Err(bad("it is not an ARN"));
    };
    match service {
        "autoscaling" => {
            if owner != account {
                return Err(bad("it is another account's"));
            }
            let group = rest
                .split_once(":autoScalingGroupName/")
                .map(|(_, g)| g)
                .and_then(|g| g.split_once(":policyName/"));
            match (rest.starts_with("scalingPolicy:"), group) {
                (true, Some((group, policy))) if !group.is_empty() && !policy.is_empty() => {
                    Ok(Action::Policy {
                        group: group.to_string(),
                        policy: policy.to_string(),
                    })
                }
                _ => Err(bad("it is not a scaling policy's ARN")),
            }
        }
        "sns" => crate::notification::parse(arn, false)
            .map(|_| Action::Topic(arn.to_string()))
            .map_err(|e| bad(e.message())),
        _ => Err(bad("it is neither a scaling policy's nor an SNS topic's")),
    }
}

/// The alarm PutMetricAlarm asks for at `now_ms`, made or changed from `before` (its state kept).
pub fn put(
    req: &PutMetricAlarm,
    arn: &str,
    account: &str,
    before: Option<&MetricAlarm>,
    now_ms: i64,
) -> Checked<MetricAlarm> {
    if !req.metrics.is_empty() || req.threshold_metric_id.is_some() {
        return Err(Bad::Value(
            "Metrics (metric math) and ThresholdMetricId are not offered: Phantom's alarms watch one metric (MetricName, Namespace, Statistic).".into(),
        ));
    }
    if req.evaluation_criteria.is_some() || req.evaluation_interval.is_some() {
        return Err(Bad::Value(
            "EvaluationCriteria (PromQL alarms of CloudWatch's) is not offered.".into(),
        ));
    }
    let (Some(namespace), Some(metric_name)) = (&req.namespace, &req.metric_name) else {
        return Err(Bad::Missing(
            "The parameters MetricName and Namespace are required.".into(),
        ));
    };
    if let Some(stat) = &req.extended_statistic {
        return Err(metric_data::no_percentiles(stat));
    }
    let Some(statistic) = &req.statistic else {
        return Err(Bad::Missing("The parameter Statistic is required.".into()));
    };
    let Some(period) = req.period else {
        return Err(Bad::Missing("The parameter Period is required.".into()));
    };
    metric_data::check_period(period, "Period")?;
    let Some(evaluation_periods) = req.evaluation_periods else {
        return Err(Bad::Missing(
            "The parameter EvaluationPeriods is required.".into(),
        ));
    };
    if evaluation_periods * period > MAX_LOOKBACK_SECS {
        return Err(Bad::Value(
            "The evaluation period (EvaluationPeriods times Period) must not exceed 1 day.".into(),
        ));
    }
    if let Some(m) = req.datapoints_to_alarm {
        if m > evaluation_periods {
            return Err(Bad::Value(format!(
                "DatapointsToAlarm ({m}) must not exceed EvaluationPeriods ({evaluation_periods})."
            )));
        }
    }
    let Some(op) = &req.comparison_operator else {
        return Err(Bad::Missing(
            "The parameter ComparisonOperator is required.".into(),
        ));
    };
    if Comparison::parse(op).is_none() {
        return Err(Bad::Value(format!(
            "ComparisonOperator {op} compares with an anomaly detection band, which Phantom does not have: use one of {}.",
            Comparison::ALL.map(Comparison::as_str).join(", ")
        )));
    }
    let Some(threshold) = req.threshold else {
        return Err(Bad::Missing("The parameter Threshold is required.".into()));
    };
    if let Some(t) = &req.treat_missing_data {
        if !["missing", "ignore", "breaching", "notBreaching"].contains(&t.as_str()) {
            return Err(Bad::Value(format!(
                "The value {t} for parameter TreatMissingData is invalid: it is missing, ignore, breaching or notBreaching."
            )));
        }
    }
    for a in req
        .alarm_actions
        .iter()
        .chain(&req.ok_actions)
        .chain(&req.insufficient_data_actions)
    {
        action(a, account)?;
    }
    let now = format_timestamp(from_ms(now_ms));
    let (state_value, state_reason, state_reason_data, updated, transitioned) = match before {
        Some(b) => (
            b.state_value.clone(),
            b.state_reason.clone(),
            b.state_reason_data.clone(),
            b.state_updated_timestamp.clone(),
            b.state_transitioned_timestamp.clone(),
        ),
        None => (
            INSUFFICIENT_DATA.to_string(),
            "Unchecked: Initial alarm creation".to_string(),
            None,
            now.clone(),
            now.clone(),
        ),
    };
    Ok(MetricAlarm {
        alarm_name: req.alarm_name.clone(),
        alarm_arn: arn.to_string(),
        alarm_description: req.alarm_description.clone(),
        alarm_configuration_updated_timestamp: now,
        actions_enabled: req.actions_enabled.unwrap_or(true),
        ok_actions: req.ok_actions.clone(),
        alarm_actions: req.alarm_actions.clone(),
        insufficient_data_actions: req.insufficient_data_actions.clone(),
        state_value,
        state_reason,
        state_reason_data,
        state_updated_timestamp: updated,
        metric_name: Some(metric_name.clone()),
        namespace: Some(namespace.clone()),
        statistic: Some(statistic.clone()),
        extended_statistic: None,
        dimensions: req.dimensions.clone(),
        period: Some(period),
        unit: req.unit.clone(),
        evaluation_periods,
        datapoints_to_alarm: req.datapoints_to_alarm,
        threshold: Some(threshold),
        comparison_operator: op.clone(),
        treat_missing_data: req.treat_missing_data.clone(),
        evaluate_low_sample_count_percentile: req.evaluate_low_sample_count_percentile.clone(),
        metrics: Vec::new(),
        threshold_metric_id: None,
        state_transitioned_timestamp: transitioned,
    })
}

/// The metric an alarm watches.
pub fn metric(a: &MetricAlarm) -> Option<MetricId> {
    Some(MetricId::new(
        a.namespace.as_deref()?,
        a.metric_name.as_deref()?,
        &a.dimensions,
    ))
}

/// The statistic an alarm compares (Average where it names none: a metric math alarm's).
pub fn statistic(a: &MetricAlarm) -> Statistic {
    a.statistic
        .as_deref()
        .and_then(Statistic::parse)
        .unwrap_or(Statistic::Average)
}

/// An alarm's period, in ms.
pub fn period_ms(a: &MetricAlarm) -> i64 {
    a.period.unwrap_or(60) * 1000
}

/// The time range whose data an evaluation at `now_ms` reads: the alarm's last
/// `EvaluationPeriods` whole periods.
pub fn window(a: &MetricAlarm, now_ms: i64) -> (i64, i64) {
    let p = period_ms(a);
    let end = now_ms.div_euclid(p) * p;
    (end - a.evaluation_periods * p, end)
}

/// What an evaluation found: the state, CloudWatch's reason for it, and the value a step
/// policy's adjustment is measured from (the newest breaching one, else the newest).
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub state: &'static str,
    pub reason: String,
    pub reason_data: String,
    pub value: Option<f64>,
}

/// The state of `a` on `data` (its metric's datapoints in `window`) at `now_ms`; `None` when
/// TreatMissingData `ignore` keeps the state it has.
pub fn evaluate(a: &MetricAlarm, data: &[Datum], now_ms: i64) -> Option<Evaluation> {
    let (from, to) = window(a, now_ms);
    let period_ms = period_ms(a);
    let statistic = statistic(a);
    let op = Comparison::parse(&a.comparison_operator).unwrap_or(Comparison::GreaterThanThreshold);
    let threshold = a.threshold.unwrap_or(0.0);
    let periods = metric_data::periods(data, (from, to), period_ms, a.unit.as_deref());
    // Each period of the window, oldest first: its value, or none.
    let points: Vec<(i64, Option<f64>)> = (0..a.evaluation_periods)
        .map(|i| {
            let at = from + i * period_ms;
            (at, periods.get(&at).map(|(s, _)| statistic.of(s)))
        })
        .collect();
    let m = a.datapoints_to_alarm.unwrap_or(a.evaluation_periods);
    let treat = a.treat_missing_data.as_deref().unwrap_or("missing");
    let present: Vec<(i64, f64)> = points
        .iter()
        .filter_map(|(at, v)| v.map(|v| (*at, v)))
        .collect();
    let missing = points.len() - present.len();
    if present.is_empty() && matches!(treat, "missing" | "ignore") {
        if treat == "ignore" {
            return None;
        }
        return Some(Evaluation {
            state: INSUFFICIENT_DATA,
            reason: format!(
                "Insufficient Data: {} datapoint{} were unknown.",
                points.len(),
                if points.len() == 1 { "" } else { "s" }
            ),
            reason_data: reason_data(a, statistic, &present, now_ms, from),
            value: None,
        });
    }
    let breaching_present = present
        .iter()
        .filter(|(_, v)| op.breaches(*v, threshold))
        .count();
    let breaching = breaching_present + if treat == "breaching" { missing } else { 0 };
    let state = if breaching as i64 >= m { ALARM } else { OK };
    // What a step policy measures from: the newest breaching value, else the newest value.
    let value = present
        .iter()
        .rev()
        .find(|(_, v)| op.breaches(*v, threshold))
        .or(present.last())
        .map(|(_, v)| *v);
    let shown: Vec<String> = present
        .iter()
        .rev()
        .map(|(at, v)| format!("{v} ({})", short_time(*at)))
        .collect();
    let counted = present.len() + if treat == "missing" { 0 } else { missing };
    let verb = if state == ALARM { "was" } else { "was not" };
    let reason = format!(
        "Threshold Crossed: {breaching} out of the last {counted} datapoints [{}] {verb} {} the threshold ({threshold}) (minimum {m} datapoint{} for OK -> ALARM transition).",
        shown.join(", "),
        words(op),
        if m == 1 { "" } else { "s" }
    );
    Some(Evaluation {
        state,
        reason,
        reason_data: reason_data(a, statistic, &present, now_ms, from),
        value,
    })
}

fn words(op: Comparison) -> &'static str {
    match op {
        Comparison::GreaterThanOrEqualToThreshold => "greater than or equal to",
        Comparison::GreaterThanThreshold => "greater than",
        Comparison::LessThanThreshold => "less than",
        Comparison::LessThanOrEqualToThreshold => "less than or equal to",
    }
}

/// `28/11/26 10:00:00`, as CloudWatch's reasons write times.
fn short_time(ms: i64) -> String {
    let t = from_ms(ms);
    format!(
        "{:02}/{:02}/{:02} {:02}:{:02}:{:02}",
        t.day(),
        u8::from(t.month()),
        t.year() % 100,
        t.hour(),
        t.minute(),
        t.second()
    )
}

fn reason_data(
    a: &MetricAlarm,
    statistic: Statistic,
    present: &[(i64, f64)],
    now_ms: i64,
    from: i64,
) -> String {
    json!({
        "version": "1.0",
        "queryDate": format_timestamp(from_ms(now_ms)),
        "startDate": format_timestamp(from_ms(from)),
        "statistic": statistic.as_str(),
        "period": a.period,
        "recentDatapoints": present.iter().rev().map(|(_, v)| v).collect::<Vec<_>>(),
        "threshold": a.threshold,
    })
    .to_string()
}

/// `a` moved to `e`'s state at `now_ms` (its transition time moves only if the state changes),
/// and the history item of the move; `None` if nothing changes.
pub fn transition(
    a: &MetricAlarm,
    state: &str,
    reason: &str,
    reason_data: Option<&str>,
    now_ms: i64,
) -> Option<(MetricAlarm, AlarmHistoryItem)> {
    if a.state_value == state && a.state_reason == reason {
        return None;
    }
    let now = format_timestamp(from_ms(now_ms));
    let mut next = a.clone();
    next.state_value = state.to_string();
    next.state_reason = reason.to_string();
    next.state_reason_data = reason_data.map(str::to_string);
    next.state_updated_timestamp = now.clone();
    if a.state_value != state {
        next.state_transitioned_timestamp = now.clone();
    }
    let item = AlarmHistoryItem {
        alarm_name: a.alarm_name.clone(),
        alarm_type: "MetricAlarm".into(),
        timestamp: now.clone(),
        history_item_type: "StateUpdate".into(),
        history_summary: format!("Alarm updated from {} to {state}", a.state_value),
        history_data: json!({
            "version": "1.0",
            "oldState": {"stateValue": a.state_value, "stateReason": a.state_reason},
            "newState": {"stateValue": state, "stateReason": reason,
                         "stateReasonData": reason_data},
        })
        .to_string(),
    };
    Some((next, item))
}

/// The history item of an alarm made or changed by PutMetricAlarm.
pub fn configured(a: &MetricAlarm, created: bool, now_ms: i64) -> AlarmHistoryItem {
    AlarmHistoryItem {
        alarm_name: a.alarm_name.clone(),
        alarm_type: "MetricAlarm".into(),
        timestamp: format_timestamp(from_ms(now_ms)),
        history_item_type: "ConfigurationUpdate".into(),
        history_summary: format!(
            "Alarm \"{}\" {}",
            a.alarm_name,
            if created { "created" } else { "updated" }
        ),
        history_data: json!({"version": "1.0", "type": if created { "Create" } else { "Update" }})
            .to_string(),
    }
}

/// The history item of an action an alarm ran, or could not.
pub fn acted(
    a: &StoredAlarm,
    action: &str,
    outcome: Result<&str, &str>,
    now_ms: i64,
) -> AlarmHistoryItem {
    let (summary, data) = match outcome {
        Ok(what) => (
            format!("Successfully executed action {action}"),
            json!({"actionState": "Succeeded", "stateUpdateTimestamp": now_ms, "notificationResource": action, "publishedMessage": what}),
        ),
        Err(why) => (
            format!("Failed to execute action {action}"),
            json!({"actionState": "Failed", "stateUpdateTimestamp": now_ms, "notificationResource": action, "error": why}),
        ),
    };
    AlarmHistoryItem {
        alarm_name: a.alarm.alarm_name.clone(),
        alarm_type: "MetricAlarm".into(),
        timestamp: format_timestamp(from_ms(now_ms)),
        history_item_type: "Action".into(),
        history_summary: summary,
        history_data: data.to_string(),
    }
}

/// When `a` last changed state, in Unix ms.
pub fn transitioned_ms(a: &MetricAlarm) -> i64 {
    parse_timestamp(&a.state_transitioned_timestamp)
        .map_or(0, |t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
}

/// Actions on scaling policies run again each minute while the alarm stays in its state, as
/// CloudWatch's Auto Scaling actions do; SNS topics are told once a transition.
pub const POLICY_REPEAT_MS: i64 = 60_000;

/// The actions of `s`'s state owed at `now_ms`: its topics if it changed state since its last
/// actions ran, its policies then too and each minute after; none while its actions are off.
pub fn owed(s: &StoredAlarm, account: &str, now_ms: i64) -> Vec<Action> {
    let a = &s.alarm;
    if !a.actions_enabled {
        return Vec::new();
    }
    let list = match a.state_value.as_str() {
        ALARM => &a.alarm_actions,
        OK => &a.ok_actions,
        _ => &a.insufficient_data_actions,
    };
    let last = s.acted_ms.unwrap_or(i64::MIN);
    let moved = transitioned_ms(a) > last;
    let again = now_ms.saturating_sub(last) >= POLICY_REPEAT_MS;
    list.iter()
        .filter_map(|arn| action(arn, account).ok())
        .filter(|x| match x {
            Action::Topic(_) => moved,
            Action::Policy { .. } => moved || again,
        })
        .collect()
}

/// The message SNS carries of an alarm's new state (CloudWatch's alarm notification).
pub fn notice(
    a: &MetricAlarm,
    old_state: &str,
    topic: &str,
    (account, region): (&str, &str),
    now_ms: i64,
) -> phantom_model::notification::Notice {
    let body = json!({
        "AlarmName": a.alarm_name,
        "AlarmDescription": a.alarm_description,
        "AWSAccountId": account,
        "AlarmConfigurationUpdatedTimestamp": a.alarm_configuration_updated_timestamp,
        "NewStateValue": a.state_value,
        "NewStateReason": a.state_reason,
        "StateChangeTime": a.state_updated_timestamp,
        "Region": region,
        "AlarmArn": a.alarm_arn,
        "OldStateValue": old_state,
        "OKActions": a.ok_actions,
        "AlarmActions": a.alarm_actions,
        "InsufficientDataActions": a.insufficient_data_actions,
        "Trigger": {
            "MetricName": a.metric_name,
            "Namespace": a.namespace,
            "StatisticType": "Statistic",
            "Statistic": a.statistic.as_deref().map(str::to_uppercase),
            "Unit": a.unit,
            "Dimensions": a.dimensions.iter().map(|d| json!({"value": d.value, "name": d.name})).collect::<Vec<_>>(),
            "Period": a.period,
            "EvaluationPeriods": a.evaluation_periods,
            "DatapointsToAlarm": a.datapoints_to_alarm.unwrap_or(a.evaluation_periods),
            "ComparisonOperator": a.comparison_operator,
            "Threshold": a.threshold,
            "TreatMissingData": a.treat_missing_data.as_deref().unwrap_or("missing"),
            "EvaluateLowSampleCountPercentile": a.evaluate_low_sample_count_percentile.as_deref().unwrap_or(""),
        },
    });
    phantom_model::notification::Notice {
        id: crate::ids::uuid(),
        at_ms: now_ms,
        target: topic.to_string(),
        subject: Some(format!(
            "{}: \"{}\" in {region}",
            a.state_value, a.alarm_name
        )),
        body: body.to_string(),
    }
}

/// What running a scaling policy for an alarm does to its group: the new desired capacity, and
/// the cooldown a simple policy starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyMove {
    pub to: i64,
    pub cooldown_ends_ms: Option<i64>,
}

/// The move policy `p` of group `g` makes for an alarm whose metric is at `value` against
/// `threshold`, at `now_ms`, `warmed` of its VMs past their warm-up: a simple policy waits out
/// the group's cooldown (an alarm honours it, as CloudWatch's invocations do); a step policy picks
/// its step (`alarm::step_capacity`). `Ok(None)`: nothing to change now.
pub fn policy_move(
    g: &phantom_model::group::Group,
    p: &phantom_model::group::ScalingPolicy,
    (value, threshold): (Option<f64>, f64),
    warmed: i64,
    now_ms: i64,
) -> Result<Option<PolicyMove>, String> {
    use phantom_model::group::PolicyKind;
    if !p.enabled {
        return Err(format!("policy {} is disabled", p.policy_name));
    }
    let min = crate::predictive::floor(g, now_ms);
    match &p.kind {
        PolicyKind::Simple {
            adjustment_type,
            min_adjustment_magnitude,
            scaling_adjustment,
            cooldown,
        } => {
            if g.settings.cooldown_ends_ms.is_some_and(|e| now_ms < e) {
                return Ok(None);
            }
            let to = crate::policy::adjust(
                *adjustment_type,
                *scaling_adjustment,
                *min_adjustment_magnitude,
                g.desired,
                min,
                g.max,
            );
            let secs = cooldown.unwrap_or(g.settings.default_cooldown);
            Ok((to != g.desired).then_some(PolicyMove {
                to,
                cooldown_ends_ms: Some(now_ms + secs * 1000),
            }))
        }
        PolicyKind::Step { .. } => {
            let Some(value) = value else {
                return Ok(None);
            };
            Ok(
                crate::alarm::step_capacity(p, value, threshold, g.desired, warmed, (min, g.max))
                    .map(|to| PolicyMove {
                        to,
                        cooldown_ends_ms: None,
                    }),
            )
        }
        _ => Err(format!(
            "policy {} is a {} policy: an alarm runs SimpleScaling and StepScaling policies",
            p.policy_name,
            p.policy_type()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phantom_model::cloudwatch::Stats;

    const NOW: i64 = 1_764_331_230_000; // 30 s into a minute
    const ACCOUNT: &str = "123456789012";

    fn req(treat: Option<&str>, n: i64, m: Option<i64>) -> PutMetricAlarm {
        serde_json::from_value(json!({
            "AlarmName": "high", "Namespace": "App", "MetricName": "Load",
            "Statistic": "Average", "Period": 60, "EvaluationPeriods": n,
            "DatapointsToAlarm": m, "Threshold": 50.0,
            "ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": treat,
            "AlarmActions": [format!("arn:aws:autoscaling:us-east-1:{ACCOUNT}:scalingPolicy:1:autoScalingGroupName/web:policyName/out")]
        }))
        .unwrap()
    }

    fn alarm(treat: Option<&str>, n: i64, m: Option<i64>) -> MetricAlarm {
        put(&req(treat, n, m), "arn:a", ACCOUNT, None, NOW).unwrap()
    }

    /// Datapoints `ago` whole minutes before the current one (1: the last whole minute).
    fn data(points: &[(i64, f64)]) -> Vec<Datum> {
        let minute = NOW / 60_000 * 60_000;
        points
            .iter()
            .map(|(ago, v)| Datum {
                metric: MetricId::new("App", "Load", &[]),
                at_ms: minute - ago * 60_000 + 5_000,
                unit: None,
                stats: Stats::one(*v),
                high_resolution: false,
            })
            .collect()
    }

    #[test]
    fn a_new_alarm_starts_with_insufficient_data_and_keeps_its_state_when_changed() {
        let a = alarm(None, 3, None);
        assert_eq!(a.state_value, INSUFFICIENT_DATA);
        assert!(a.actions_enabled, "actions are on unless turned off");
        let mut later = a.clone();
        later.state_value = ALARM.into();
        let again = put(&req(None, 2, None), "arn:a", ACCOUNT, Some(&later), NOW + 1).unwrap();
        assert_eq!(again.state_value, ALARM);
        assert_eq!(again.evaluation_periods, 2);
    }

    #[test]
    fn put_is_refused_as_cloudwatch_refuses() {
        let mut r = req(None, 3, Some(4));
        assert!(matches!(
            put(&r, "a", ACCOUNT, None, NOW),
            Err(Bad::Value(_))
        ));
        r = req(Some("sometimes"), 3, None);
        assert!(matches!(
            put(&r, "a", ACCOUNT, None, NOW),
            Err(Bad::Value(_))
        ));
        r = req(None, 3, None);
        r.comparison_operator = Some("GreaterThanUpperThreshold".into());
        assert!(
            matches!(put(&r, "a", ACCOUNT, None, NOW), Err(Bad::Value(m)) if m.contains("anomaly"))
        );
        r = req(None, 3, None);
        r.alarm_actions = vec!["arn:aws:automate:us-east-1:ec2:stop".into()];
        assert!(put(&r, "a", ACCOUNT, None, NOW).is_err());
        r = req(None, 3, None);
        r.alarm_actions = vec![
            "arn:aws:autoscaling:us-east-1:999999999999:scalingPolicy:1:autoScalingGroupName/w:policyName/p".into(),
        ];
        assert!(
            put(&r, "a", ACCOUNT, None, NOW).is_err(),
            "another account's policy"
        );
        r = req(None, 3, None);
        r.statistic = None;
        assert!(matches!(
            put(&r, "a", ACCOUNT, None, NOW),
            Err(Bad::Missing(_))
        ));
        r = req(None, 2000, None);
        assert!(put(&r, "a", ACCOUNT, None, NOW).is_err(), "more than a day");
    }

    #[test]
    fn actions_name_a_policy_or_a_topic() {
        assert_eq!(
            action(
                &format!("arn:aws:autoscaling:us-east-1:{ACCOUNT}:scalingPolicy:id-1:autoScalingGroupName/web:policyName/out"),
                ACCOUNT
            ),
            Ok(Action::Policy {
                group: "web".into(),
                policy: "out".into()
            })
        );
        let topic = format!("arn:aws:sns:us-east-1:{ACCOUNT}:ops");
        assert_eq!(action(&topic, ACCOUNT), Ok(Action::Topic(topic.clone())));
        assert!(action("not-an-arn", ACCOUNT).is_err());
    }

    #[test]
    fn m_of_n_whole_periods_put_it_in_alarm() {
        let a = alarm(None, 3, Some(2));
        let e = evaluate(&a, &data(&[(3, 60.0), (2, 10.0), (1, 70.0)]), NOW).unwrap();
        assert_eq!(e.state, ALARM);
        assert_eq!(e.value, Some(70.0));
        assert!(
            e.reason
                .starts_with("Threshold Crossed: 2 out of the last 3 datapoints [70 ("),
            "{}",
            e.reason
        );
        let ok = evaluate(&a, &data(&[(3, 60.0), (2, 10.0), (1, 20.0)]), NOW).unwrap();
        assert_eq!(ok.state, OK);
        // The current minute is not whole yet: its data waits.
        let now = evaluate(&a, &data(&[(0, 90.0), (1, 90.0)]), NOW).unwrap();
        assert_eq!(now.state, OK, "one whole period breaches of the two needed");
    }

    #[test]
    fn missing_data_is_treated_as_told() {
        let none: Vec<Datum> = Vec::new();
        assert_eq!(
            evaluate(&alarm(None, 2, None), &none, NOW).unwrap().state,
            INSUFFICIENT_DATA
        );
        assert_eq!(evaluate(&alarm(Some("ignore"), 2, None), &none, NOW), None);
        assert_eq!(
            evaluate(&alarm(Some("breaching"), 2, None), &none, NOW)
                .unwrap()
                .state,
            ALARM
        );
        assert_eq!(
            evaluate(&alarm(Some("notBreaching"), 2, None), &none, NOW)
                .unwrap()
                .state,
            OK
        );
        // One breaching, one missing: missing counts as breaching only when told.
        let half = data(&[(1, 90.0)]);
        assert_eq!(
            evaluate(&alarm(None, 2, None), &half, NOW).unwrap().state,
            OK
        );
        assert_eq!(
            evaluate(&alarm(Some("breaching"), 2, None), &half, NOW)
                .unwrap()
                .state,
            ALARM
        );
    }

    #[test]
    fn a_transition_moves_the_state_and_is_told_in_the_history() {
        let a = alarm(None, 1, None);
        let (next, item) = transition(&a, ALARM, "because", Some("{}"), NOW).unwrap();
        assert_eq!(next.state_value, ALARM);
        assert_eq!(
            next.state_transitioned_timestamp,
            format_timestamp(from_ms(NOW))
        );
        assert_eq!(item.history_item_type, "StateUpdate");
        assert_eq!(
            item.history_summary,
            "Alarm updated from INSUFFICIENT_DATA to ALARM"
        );
        assert!(transition(&next, ALARM, "because", None, NOW + 1).is_none());
    }
}
