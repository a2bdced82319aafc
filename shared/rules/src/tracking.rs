//! Target tracking, pure: from a policy's metric, run after run, the capacity it asks for, as AWS
//! documents the behaviour. It scales out in proportion to how far the metric is above its target
//! (the serving VMs' load spread over more), once the metric has been above the target for
//! `OUT_AFTER` runs in a row (AWS's high alarm: 3 of 3 one-minute datapoints). It scales in only
//! after `IN_AFTER` runs in a row below `IN_MARGIN` of the target (AWS's low alarm: 15 of 15),
//! by at most a tenth of the group at a time, and never with DisableScaleIn. VMs still warming up
//! carry no load yet: the proportion is taken over the VMs past their warm-up, and the VMs
//! warming up count toward the capacity already there. Missing data changes nothing and resets
//! the streaks, so a gap never leads to a scale-in. Several policies: the largest capacity wins,
//! and the group scales in only when every policy asks to.
//!
//! The streaks are not kept between runs: each run reads a policy's last `IN_AFTER` datapoints
//! (one a metric period apart) from Prometheus, which keeps the history, and counts them again.
//! So the run writes nothing unless it scales, and a run that dies leaves nothing half-done.
//!
//! The metric is PromQL over the group's VMs that serve past their warm-up: `promql` writes a
//! predefined metric over node_exporter's series, or fills `$instances` in the user's expression
//! with a matcher of those VMs' ids on the source's instance label.

use phantom_model::group::Group;
use phantom_model::instance::{Lifecycle, Member};
use phantom_model::request::PutScalingPolicy;
use phantom_model::tracking::{
    MetricAuth, MetricQuery, MetricQueryRequest, MetricSource, MetricType,
    TargetTrackingConfiguration,
};
use phantom_model::{Checked, Refusal};

/// Runs in a row above the target before a scale-out.
pub const OUT_AFTER: u32 = 3;
/// Runs in a row below `IN_MARGIN` of the target before a scale-in.
pub const IN_AFTER: u32 = 15;
/// How far below its target a metric must be to count toward a scale-in.
pub const IN_MARGIN: f64 = 0.9;

/// How a policy's metric has stood over its last runs (kept between runs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Streak {
    pub above: u32,
    pub below: u32,
}

/// The streak after one more run: `metric` None when there was no data.
pub fn observe(s: Streak, metric: Option<f64>, target: f64) -> Streak {
    match metric {
        None => Streak::default(),
        Some(m) if m > target => Streak {
            above: s.above + 1,
            below: 0,
        },
        Some(m) if m < target * IN_MARGIN => Streak {
            above: 0,
            below: s.below + 1,
        },
        Some(_) => Streak::default(),
    }
}

/// What the group has: its desired capacity, and how many of its VMs serve past their warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fleet {
    pub desired: i64,
    pub warmed: i64,
}

/// What one policy asks for after this run: a new capacity, or nothing (no data, within its
/// band, not long enough out of it).
pub fn ask(
    target: f64,
    disable_scale_in: bool,
    s: Streak,
    metric: Option<f64>,
    fleet: Fleet,
) -> Option<i64> {
    let metric = metric?;
    if target <= 0.0 || fleet.warmed == 0 {
        // No VM to spread the load over: nothing to scale in proportion to.
        return None;
    }
    let proportional = (fleet.warmed as f64 * metric / target).ceil() as i64;
    if s.above >= OUT_AFTER {
        return (proportional > fleet.desired).then_some(proportional);
    }
    if s.below >= IN_AFTER && !disable_scale_in {
        let step = (fleet.desired / 10).max(1);
        let to = proportional.max(fleet.desired - step);
        return (to < fleet.desired).then_some(to);
    }
    None
}

/// The group's new desired capacity from its policies' asks (one entry per target tracking
/// policy), within MinSize and MaxSize; None when it stays.
pub fn combine(asks: &[Option<i64>], desired: i64, min: i64, max: i64) -> Option<i64> {
    let out = asks.iter().flatten().filter(|a| **a > desired).max();
    let to = match out {
        Some(out) => *out,
        // In only if every policy asks to go in, and then no further than the highest ask.
        None if !asks.is_empty() && asks.iter().all(Option::is_some) => {
            *asks.iter().flatten().max().expect("not empty")
        }
        None => return None,
    };
    let to = to.clamp(min, max.max(min));
    (to != desired).then_some(to)
}

/// What a customized metric's expression writes where the group's VMs go: Phantom puts a label
/// matcher of their ids there (`node_load1{$instances}`, `{job="app",$instances}`).
pub const INSTANCES: &str = "$instances";

/// The PromQL of a policy's metric over the VMs `instances` (their ids), on a source whose series
/// carry a VM's id in `label`; `period_secs` is the metric period (the window of a rate is two).
/// None: the metric is a CloudWatch metric (`cloudwatch_metric`), read from Phantom's store.
pub fn promql(
    cfg: &TargetTrackingConfiguration,
    label: &str,
    instances: &[&str],
    period_secs: i64,
) -> Option<String> {
    if let Some(c) = &cfg.customized_metric_specification {
        let e = &c.metrics.first()?.expression;
        return Some(fill(e, label, instances));
    }
    let kind = cfg
        .predefined_metric_specification
        .as_ref()
        .expect("a policy has a predefined metric when it has no customized one")
        .predefined_metric_type;
    Some(predefined(kind, label, instances, period_secs))
}

/// A customized metric published to Phantom's CloudWatch: the metric, its statistic, its unit.
pub fn cloudwatch_metric(
    cfg: &TargetTrackingConfiguration,
) -> Option<(
    phantom_model::cloudwatch::MetricId,
    crate::metric_data::Statistic,
    Option<&str>,
)> {
    let c = cfg.customized_metric_specification.as_ref()?;
    let metric = phantom_model::cloudwatch::MetricId::new(
        c.namespace.as_deref()?,
        c.metric_name.as_deref()?,
        c.dimensions.as_deref().unwrap_or_default(),
    );
    let statistic = crate::metric_data::Statistic::parse(c.statistic.as_deref()?)?;
    Some((metric, statistic, c.unit.as_deref()))
}

/// The PromQL of a predefined metric (an average over the VMs `instances`) over node_exporter's
/// series.
pub fn predefined(kind: MetricType, label: &str, instances: &[&str], period_secs: i64) -> String {
    let m = matcher(label, instances);
    let window = 2 * period_secs;
    // AWS's network metrics are bytes per VM over a period; its CPU a percentage.
    let bytes = |series: &str| {
        format!(
            "avg(sum by ({label}) (rate({series}{{device!=\"lo\",{m}}}[{window}s]))) * {period_secs}"
        )
    };
    match kind {
        MetricType::Cpu => {
            format!("100 * (1 - avg(rate(node_cpu_seconds_total{{mode=\"idle\",{m}}}[{window}s])))")
        }
        MetricType::NetworkIn => bytes("node_network_receive_bytes_total"),
        MetricType::NetworkOut => bytes("node_network_transmit_bytes_total"),
    }
}

/// A user's expression with `$instances` filled with a matcher of the VMs `instances`.
pub fn fill(expression: &str, label: &str, instances: &[&str]) -> String {
    expression.replace(INSTANCES, &matcher(label, instances))
}

/// `label=~"i-1|i-2"`: the series of these VMs.
pub fn matcher(label: &str, instances: &[&str]) -> String {
    let ids: Vec<String> = instances.iter().map(|i| regex_escape(i)).collect();
    format!("{label}=~\"{}\"", ids.join("|"))
}

/// A regular expression that matches `s` alone, written inside a PromQL string.
fn regex_escape(s: &str) -> String {
    let mut regex = String::with_capacity(s.len());
    for c in s.chars() {
        if !(c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            regex.push('\\');
        }
        regex.push(c);
    }
    regex.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A metric source as an administrator gives it (the admin API, phantomctl), checked: an http(s)
/// URL with a host, a Prometheus label name, a bearer token or a basic auth user and password
/// (both), not both kinds.
pub fn metric_source(
    url: &str,
    instance_label: &str,
    bearer: Option<&str>,
    basic: (Option<&str>, Option<&str>),
) -> Checked<MetricSource> {
    let host = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .and_then(|rest| rest.split('/').next())
        .filter(|h| !h.is_empty() && !h.contains(char::is_whitespace));
    if host.is_none() {
        return Err(Refusal::invalid(format!(
            "Url '{url}' is not an http(s) URL with a host, such as http://prometheus:9090."
        )));
    }
    let mut chars = instance_label.chars();
    let label_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !label_ok {
        return Err(Refusal::invalid(format!(
            "InstanceLabel '{instance_label}' is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)."
        )));
    }
    let auth = match (bearer, basic) {
        (None, (None, None)) => None,
        (Some(token), (None, None)) if !token.is_empty() => Some(MetricAuth::Bearer(token.into())),
        (None, (Some(user), Some(password))) if !user.is_empty() && !password.is_empty() => {
            Some(MetricAuth::Basic {
                user: user.into(),
                password: password.into(),
            })
        }
        _ => return Err(Refusal::invalid(
            "Give a bearer token, or a basic auth user and password (both, not empty), or neither.",
        )),
    };
    Ok(MetricSource {
        url: url.trim_end_matches('/').to_string(),
        instance_label: instance_label.to_string(),
        auth,
    })
}

/// A policy's warm-up (seconds): its own, else the group's DefaultInstanceWarmup, else its
/// DefaultCooldown (AWS's order for EstimatedInstanceWarmup).
pub fn warmup_secs(g: &Group, policy: Option<i64>) -> i64 {
    policy
        .or(g.settings.default_instance_warmup)
        .unwrap_or(g.settings.default_cooldown)
}

/// The ids of the VMs that serve past their warm-up: the ones whose load a metric measures.
pub fn warmed(members: &[Member], now_ms: i64, warmup_ms: i64) -> Vec<&str> {
    members
        .iter()
        .filter(|m| m.healthy && m.lifecycle == Lifecycle::InService)
        .filter(|m| now_ms >= m.in_group_since_ms() + warmup_ms)
        .map(|m| m.id.as_str())
        .collect()
}

/// How many datapoints a run reads: enough for the longer streak.
pub const DATAPOINTS: i64 = IN_AFTER as i64;

/// The streak of a policy's datapoints, oldest first.
pub fn streak(datapoints: &[Option<f64>], target: f64) -> Streak {
    datapoints
        .iter()
        .fold(Streak::default(), |s, d| observe(s, *d, target))
}

/// Whether a target tracking policy's AlarmHigh (`high`) or AlarmLow is in ALARM on these
/// datapoints (oldest first): above the target for the last `OUT_AFTER`, or below `IN_MARGIN`
/// of it for the last `IN_AFTER`, as its scale-out and scale-in are decided.
pub fn in_alarm(datapoints: &[Option<f64>], target: f64, high: bool) -> bool {
    let s = streak(datapoints, target);
    if high {
        s.above >= OUT_AFTER
    } else {
        s.below >= IN_AFTER
    }
}

/// One target tracking policy's reading in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub target: f64,
    pub disable_scale_in: bool,
    /// Its last datapoints, oldest first; the last is the metric now.
    pub datapoints: Vec<Option<f64>>,
    pub fleet: Fleet,
}

impl Reading {
    pub fn now(&self) -> Option<f64> {
        self.datapoints.last().copied().flatten()
    }

    /// The capacity it asks for, if any.
    pub fn ask(&self) -> Option<i64> {
        let s = streak(&self.datapoints, self.target);
        ask(
            self.target,
            self.disable_scale_in,
            s,
            self.now(),
            self.fleet,
        )
    }
}

/// What a run decides for a group: its new desired capacity, and the policy that set it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub to: i64,
    /// The index of the reading whose ask won.
    pub by: usize,
    pub up: bool,
}

/// The run's decision from every policy's reading, within MinSize and MaxSize.
pub fn decide(readings: &[Reading], desired: i64, min: i64, max: i64) -> Option<Decision> {
    let asks: Vec<Option<i64>> = readings.iter().map(Reading::ask).collect();
    let to = combine(&asks, desired, min, max)?;
    // The policy whose ask it is: the largest one (for a clamped scale-out, still the largest).
    let by = asks
        .iter()
        .enumerate()
        .filter_map(|(i, a)| a.map(|a| (i, a)))
        .max_by_key(|(i, a)| (*a, std::cmp::Reverse(*i)))
        .map(|(i, _)| i)?;
    Some(Decision {
        to,
        by,
        up: to > desired,
    })
}

/// Refuses, in AWS's words, the members of the adjustment policies (and `others`) given to a
/// policy of type `kind`, which follows a metric instead.
pub(crate) fn refuse_members(
    input: &PutScalingPolicy,
    kind: &str,
    others: &[(&str, bool)],
) -> Checked<()> {
    let adjustment = [
        ("AdjustmentType", input.adjustment_type.is_some()),
        ("ScalingAdjustment", input.scaling_adjustment.is_some()),
        // Terraform sends Cooldown 0 as a placeholder, which AWS takes.
        ("Cooldown", input.cooldown.is_some_and(|c| c != 0)),
        (
            "MinAdjustmentMagnitude",
            input.min_adjustment_magnitude.is_some() || input.min_adjustment_step.is_some(),
        ),
        ("StepAdjustments", input.step_adjustments.is_some()),
        (
            "MetricAggregationType",
            input.metric_aggregation_type.is_some(),
        ),
    ];
    for (member, given) in adjustment.iter().chain(others) {
        if *given {
            return Err(Refusal::invalid(format!(
                "{member} is not supported for policy type {kind}."
            )));
        }
    }
    Ok(())
}

/// A metric's one query: an entry whose Expression is PromQL (`needs` starts the refusal of any
/// other number of entries). CloudWatch's MetricStat names nothing Phantom can read.
pub(crate) fn promql_query(entries: &[MetricQueryRequest], needs: &str) -> Checked<MetricQuery> {
    let [only] = entries else {
        return Err(Refusal::invalid(format!(
            "{needs} with exactly one entry: its Expression, a PromQL expression, is the metric \
             (Phantom does no metric math across entries)."
        )));
    };
    if only.metric_stat.is_some() || only.period.is_some() {
        return Err(Refusal::invalid(
            "MetricStat and Period name a CloudWatch metric: give the entry an Expression in PromQL.",
        ));
    }
    if only.return_data == Some(false) {
        return Err(Refusal::invalid(
            "The one entry is the metric: its ReturnData must be true or left out.",
        ));
    }
    let expression = only
        .expression
        .as_deref()
        .filter(|e| !e.trim().is_empty())
        .ok_or_else(|| Refusal::invalid("The metric's entry needs an Expression (PromQL)."))?;
    Ok(MetricQuery {
        id: only.id.clone(),
        expression: expression.to_string(),
        label: only.label.clone(),
        return_data: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use phantom_model::tracking::{CustomizedMetric, MetricQuery, PredefinedMetric};

    fn fleet(desired: i64, warmed: i64) -> Fleet {
        Fleet { desired, warmed }
    }

    fn streak(above: u32, below: u32) -> Streak {
        Streak { above, below }
    }

    #[test]
    fn alarm_high_after_three_above_and_alarm_low_after_fifteen_below_its_margin() {
        let above = |n| vec![Some(120.0); n];
        assert!(in_alarm(&above(3), 100.0, true));
        assert!(!in_alarm(&above(2), 100.0, true));
        assert!(!in_alarm(&[above(3), vec![None]].concat(), 100.0, true));
        assert!(!in_alarm(&above(3), 100.0, false));
        let below = |n| vec![Some(89.0); n];
        assert!(in_alarm(&below(15), 100.0, false));
        assert!(!in_alarm(&below(14), 100.0, false));
        // Within the band (90 to 100): neither.
        assert!(!in_alarm(&vec![Some(95.0); 15], 100.0, false));
        assert!(!in_alarm(&vec![Some(95.0); 15], 100.0, true));
    }

    #[test]
    fn streaks_count_runs_out_of_the_band_and_a_gap_resets_them() {
        let mut s = Streak::default();
        for _ in 0..3 {
            s = observe(s, Some(80.0), 50.0);
        }
        assert_eq!(s, streak(3, 0));
        assert_eq!(observe(s, Some(50.0), 50.0), Streak::default());
        assert_eq!(
            observe(s, Some(46.0), 50.0),
            Streak::default(),
            "within the margin"
        );
        assert_eq!(observe(s, Some(40.0), 50.0), streak(0, 1));
        assert_eq!(observe(s, None, 50.0), Streak::default());
    }

    #[test]
    fn scale_out_is_in_proportion_once_the_metric_stayed_above() {
        // 4 VMs at 80 % for a 50 % target: 6.4 -> 7.
        assert_eq!(
            ask(50.0, false, streak(3, 0), Some(80.0), fleet(4, 4)),
            Some(7)
        );
        assert_eq!(
            ask(50.0, false, streak(2, 0), Some(80.0), fleet(4, 4)),
            None
        );
        // Two VMs still warming up: the load of the 4 warmed ones, spread; the 2 count already.
        assert_eq!(
            ask(50.0, false, streak(3, 0), Some(80.0), fleet(6, 4)),
            Some(7)
        );
        assert_eq!(
            ask(50.0, false, streak(3, 0), Some(60.0), fleet(6, 4)),
            None
        );
        assert_eq!(ask(50.0, false, streak(3, 0), None, fleet(4, 4)), None);
        assert_eq!(
            ask(50.0, false, streak(3, 0), Some(80.0), fleet(1, 0)),
            None
        );
    }

    #[test]
    fn scale_in_is_slow_and_disable_scale_in_holds() {
        // 20 VMs at 10 % for a 50 % target: 4 would do, but a tenth at a time.
        assert_eq!(
            ask(50.0, false, streak(0, 15), Some(10.0), fleet(20, 20)),
            Some(18)
        );
        assert_eq!(
            ask(50.0, false, streak(0, 14), Some(10.0), fleet(20, 20)),
            None
        );
        assert_eq!(
            ask(50.0, true, streak(0, 15), Some(10.0), fleet(20, 20)),
            None
        );
        // Near the target: no further than the proportion.
        assert_eq!(
            ask(50.0, false, streak(0, 15), Some(40.0), fleet(5, 5)),
            Some(4)
        );
        assert_eq!(
            ask(50.0, false, streak(0, 15), Some(44.0), fleet(5, 5)),
            None
        );
    }

    #[test]
    fn the_largest_ask_wins_and_scale_in_needs_every_policy() {
        assert_eq!(combine(&[Some(7), Some(5)], 4, 1, 10), Some(7));
        assert_eq!(combine(&[Some(7), None], 4, 1, 10), Some(7));
        assert_eq!(combine(&[Some(3), None], 4, 1, 10), None);
        assert_eq!(combine(&[Some(3), Some(2)], 4, 1, 10), Some(3));
        assert_eq!(combine(&[Some(30)], 4, 1, 10), Some(10), "MaxSize");
        assert_eq!(combine(&[Some(0)], 4, 2, 10), Some(2), "MinSize");
        assert_eq!(combine(&[Some(1)], 2, 2, 10), None);
        assert_eq!(combine(&[], 4, 1, 10), None);
    }

    fn config(kind: MetricType) -> TargetTrackingConfiguration {
        TargetTrackingConfiguration {
            predefined_metric_specification: Some(PredefinedMetric {
                predefined_metric_type: kind,
                resource_label: None,
            }),
            customized_metric_specification: None,
            target_value: 50.0,
            disable_scale_in: false,
        }
    }

    #[test]
    fn metrics_are_promql_over_the_warmed_vms() {
        let ids = ["i-1", "i-2"];
        assert_eq!(
            promql(&config(MetricType::Cpu), "instance_id", &ids, 60).unwrap(),
            r#"100 * (1 - avg(rate(node_cpu_seconds_total{mode="idle",instance_id=~"i-1|i-2"}[120s])))"#
        );
        assert_eq!(
            promql(&config(MetricType::NetworkIn), "id", &ids[..1], 5).unwrap(),
            r#"avg(sum by (id) (rate(node_network_receive_bytes_total{device!="lo",id=~"i-1"}[10s]))) * 5"#
        );
        let mut custom = config(MetricType::Cpu);
        custom.predefined_metric_specification = None;
        custom.customized_metric_specification = Some(CustomizedMetric {
            metric_name: None,
            namespace: None,
            dimensions: None,
            statistic: None,
            unit: None,
            metrics: vec![MetricQuery {
                id: "load".into(),
                expression: r#"avg(app_load{job="app",$instances})"#.into(),
                label: None,
                return_data: true,
            }],
        });
        assert_eq!(
            promql(&custom, "instance_id", &ids, 60).unwrap(),
            r#"avg(app_load{job="app",instance_id=~"i-1|i-2"})"#
        );
        // A CloudWatch metric has no PromQL: it is read from Phantom's store.
        let mut published = custom.clone();
        published.customized_metric_specification = Some(CustomizedMetric {
            metric_name: Some("Load".into()),
            namespace: Some("App".into()),
            dimensions: None,
            statistic: Some("Maximum".into()),
            unit: None,
            metrics: Vec::new(),
        });
        assert_eq!(promql(&published, "instance_id", &ids, 60), None);
        let (metric, statistic, unit) = cloudwatch_metric(&published).unwrap();
        assert_eq!(
            (metric.name.as_str(), statistic.as_str(), unit),
            ("Load", "Maximum", None)
        );
        assert!(cloudwatch_metric(&custom).is_none());
        // An id is matched as it is, never as a pattern.
        assert_eq!(regex_escape("i-1.x\\"), r#"i-1\\.x\\\\"#);
    }

    fn reading(datapoints: &[Option<f64>], desired: i64) -> Reading {
        Reading {
            target: 50.0,
            disable_scale_in: false,
            datapoints: datapoints.to_vec(),
            fleet: fleet(desired, desired),
        }
    }

    #[test]
    fn a_metric_source_is_checked_before_it_is_kept() {
        let s = metric_source("http://prom:9090/", "instance_id", None, (None, None)).unwrap();
        assert_eq!((s.url.as_str(), s.auth), ("http://prom:9090", None));
        let s = metric_source("https://p", "id", Some("t"), (None, None)).unwrap();
        assert_eq!(s.auth, Some(MetricAuth::Bearer("t".into())));
        let s = metric_source("https://p", "id", None, (Some("u"), Some("pw"))).unwrap();
        assert!(matches!(s.auth, Some(MetricAuth::Basic { .. })));
        for (url, label, bearer, basic) in [
            ("prom:9090", "id", None, (None, None)),
            ("http://", "id", None, (None, None)),
            ("http://p", "1d", None, (None, None)),
            ("http://p", "instance-id", None, (None, None)),
            ("http://p", "id", Some("t"), (Some("u"), Some("pw"))),
            ("http://p", "id", None, (Some("u"), None)),
            ("http://p", "id", Some(""), (None, None)),
        ] {
            assert!(
                metric_source(url, label, bearer, basic).is_err(),
                "{url} {label}"
            );
        }
    }

    #[test]
    fn a_run_counts_the_streak_from_the_datapoints() {
        let high = [Some(40.0), Some(80.0), Some(80.0), Some(80.0)];
        assert_eq!(reading(&high, 4).ask(), Some(7));
        let gap = [Some(80.0), None, Some(80.0), Some(80.0)];
        assert_eq!(reading(&gap, 4).ask(), None, "a gap breaks the streak");
        let low = vec![Some(10.0); DATAPOINTS as usize];
        assert_eq!(reading(&low, 20).ask(), Some(18));
        let mut holed = low.clone();
        holed[3] = None;
        assert_eq!(reading(&holed, 20).ask(), None, "never in after a gap");
        let within = [Some(48.0); 4];
        let d = decide(&[reading(&low, 20), reading(&within, 20)], 20, 1, 30);
        assert_eq!(d, None, "one policy in, one within: stay");
        let d = decide(&[reading(&high, 4), reading(&low, 4)], 4, 1, 30).unwrap();
        assert_eq!((d.to, d.by, d.up), (7, 0, true));
    }
}
