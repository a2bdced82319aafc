//! Predictive scaling, pure: PutScalingPolicy's PredictiveScalingConfiguration checked as AWS
//! checks it, the PromQL of its load, scaling and capacity metrics, the capacity a load forecast
//! (`forecast`) asks for, and what ForecastAndScale does ahead of each hour.
//!
//! The load is the group's total (of a node_exporter measure over its VMs, or a PromQL expression
//! of the user's); the target is in the scaling metric, per VM. So an hour needs
//! load / (target × ratio) VMs, where the ratio is how the load per VM relates to the scaling
//! metric: 1 for a predefined pair (the scaling metric is the load's average over the VMs), else
//! learnt from the history (the median of load / (scaling × capacity)), the capacity being the
//! capacity metric, or without one the number of the group's VMs that Prometheus scrapes.
//!
//! ForecastAndScale, as AWS does: ahead of each hour by the buffer (SchedulingBufferTime,
//! default 300 s), the hour's forecast capacity becomes the group's minimum until the hour ends,
//! and the desired capacity rises to it (never falls: scaling in is left to the other policies,
//! which cannot take the group below it during the hour). Above MaxSize, HonorMaxCapacity stops
//! at MaxSize; IncreaseMaxCapacity raises MaxSize to the forecast plus its buffer, and, as on
//! AWS, it stays raised until the user changes it. The group's own MinSize is left as the user
//! set it.

use crate::forecast::{self, HOUR_MS};
use crate::tracking;
use phantom_model::group::{Group, PolicyKind};
use phantom_model::predictive::{
    Breach, LoadType, Mode, PairType, PredefinedLoad, PredefinedPair, PredefinedRequest,
    PredefinedScaling, Predicted, PredictiveMetric, PredictiveMetricRequest,
    PredictiveScalingConfiguration, Queries, QueriesRequest,
};
use phantom_model::request::PutScalingPolicy;
use phantom_model::tracking::MetricType;
use phantom_model::{Checked, Refusal};

/// AWS's SchedulingBufferTime when none is given (seconds).
pub const DEFAULT_BUFFER_SECS: i64 = 300;
pub const PREDICTIVE: &str = "PredictiveScaling";
const TYPE: &str = PREDICTIVE;

/// A PredictiveScaling policy's configuration, checked. The members of the other types are
/// refused, as AWS does.
pub fn document(input: &PutScalingPolicy) -> Checked<PolicyKind> {
    tracking::refuse_members(
        input,
        TYPE,
        &[
            (
                "EstimatedInstanceWarmup",
                input.estimated_instance_warmup.is_some(),
            ),
            (
                "TargetTrackingConfiguration",
                input.target_tracking_configuration.is_some(),
            ),
        ],
    )?;
    let asked = input
        .predictive_scaling_configuration
        .as_ref()
        .ok_or_else(|| {
            Refusal::invalid(format!(
                "PredictiveScalingConfiguration is required for policy type {TYPE}."
            ))
        })?;
    let [metric] = asked.metric_specifications.as_slice() else {
        return Err(Refusal::invalid(
            "MetricSpecifications must have exactly one entry: a target value and a metric pair, \
             or a target value, a scaling metric and a load metric.",
        ));
    };
    let mode = match asked.mode.as_deref() {
        None | Some("ForecastOnly") => Mode::ForecastOnly,
        Some("ForecastAndScale") => Mode::ForecastAndScale,
        Some(other) => {
            return Err(Refusal::invalid(format!(
                "Invalid Mode {other}: use ForecastOnly or ForecastAndScale."
            )))
        }
    };
    if let Some(b) = asked.scheduling_buffer_time {
        if !(0..3600).contains(&b) {
            return Err(Refusal::invalid(format!(
                "SchedulingBufferTime must be from 0 to 3599 seconds (less than the forecast's hour), not {b}."
            )));
        }
    }
    let breach = match asked.max_capacity_breach_behavior.as_deref() {
        None | Some("HonorMaxCapacity") => Breach::HonorMaxCapacity,
        Some("IncreaseMaxCapacity") => Breach::IncreaseMaxCapacity,
        Some(other) => {
            return Err(Refusal::invalid(format!(
                "Invalid MaxCapacityBreachBehavior {other}: use HonorMaxCapacity or IncreaseMaxCapacity."
            )))
        }
    };
    match (breach, asked.max_capacity_buffer) {
        (Breach::IncreaseMaxCapacity, None) => {
            return Err(Refusal::invalid(
                "MaxCapacityBuffer is required when MaxCapacityBreachBehavior is IncreaseMaxCapacity.",
            ))
        }
        (Breach::HonorMaxCapacity, Some(_)) => {
            return Err(Refusal::invalid(
                "MaxCapacityBuffer can only be given when MaxCapacityBreachBehavior is IncreaseMaxCapacity.",
            ))
        }
        (_, Some(b)) if !(0..=100).contains(&b) => {
            return Err(Refusal::invalid(format!(
                "MaxCapacityBuffer must be from 0 to 100, not {b}."
            )))
        }
        _ => {}
    }
    Ok(PolicyKind::Predictive {
        predictive_scaling_configuration: PredictiveScalingConfiguration {
            metric_specifications: vec![metric_specification(metric)?],
            mode,
            scheduling_buffer_time: asked.scheduling_buffer_time,
            max_capacity_breach_behavior: breach,
            max_capacity_buffer: asked.max_capacity_buffer,
        },
    })
}

fn metric_specification(m: &PredictiveMetricRequest) -> Checked<PredictiveMetric> {
    if !m.target_value.is_finite() || m.target_value <= 0.0 {
        return Err(Refusal::invalid(format!(
            "TargetValue must be a number greater than 0, not {}.",
            m.target_value
        )));
    }
    let mut out = PredictiveMetric {
        target_value: m.target_value,
        predefined_metric_pair_specification: None,
        predefined_scaling_metric_specification: None,
        predefined_load_metric_specification: None,
        customized_scaling_metric_specification: None,
        customized_load_metric_specification: None,
        customized_capacity_metric_specification: None,
    };
    let scaling = (
        &m.predefined_scaling_metric_specification,
        &m.customized_scaling_metric_specification,
    );
    let load = (
        &m.predefined_load_metric_specification,
        &m.customized_load_metric_specification,
    );
    if let Some(pair) = &m.predefined_metric_pair_specification {
        if scaling.0.is_some() || scaling.1.is_some() || load.0.is_some() || load.1.is_some() {
            return Err(Refusal::invalid(
                "A PredefinedMetricPairSpecification is both the scaling and the load metric: give no other scaling or load metric with it.",
            ));
        }
        out.predefined_metric_pair_specification = Some(PredefinedPair {
            predefined_metric_type: predefined(pair, PAIRS)?,
        });
    } else {
        match scaling {
            (Some(p), None) => {
                out.predefined_scaling_metric_specification = Some(PredefinedScaling {
                    predefined_metric_type: predefined(p, SCALING)?,
                })
            }
            (None, Some(c)) => {
                out.customized_scaling_metric_specification =
                    Some(queries(c, "CustomizedScalingMetricSpecification")?)
            }
            _ => return Err(Refusal::invalid(
                "Give a PredefinedMetricPairSpecification, or exactly one of PredefinedScalingMetricSpecification and CustomizedScalingMetricSpecification.",
            )),
        }
        match load {
            (Some(p), None) => {
                out.predefined_load_metric_specification = Some(PredefinedLoad {
                    predefined_metric_type: predefined(p, LOADS)?,
                })
            }
            (None, Some(c)) => {
                out.customized_load_metric_specification =
                    Some(queries(c, "CustomizedLoadMetricSpecification")?)
            }
            _ => return Err(Refusal::invalid(
                "Give a PredefinedMetricPairSpecification, or exactly one of PredefinedLoadMetricSpecification and CustomizedLoadMetricSpecification.",
            )),
        }
    }
    if let Some(c) = &m.customized_capacity_metric_specification {
        if out.predefined_metric_pair_specification.is_some()
            || out.predefined_load_metric_specification.is_some()
        {
            return Err(Refusal::invalid(
                "CustomizedCapacityMetricSpecification goes with a CustomizedLoadMetricSpecification.",
            ));
        }
        out.customized_capacity_metric_specification =
            Some(queries(c, "CustomizedCapacityMetricSpecification")?);
    }
    Ok(out)
}

/// Each kind of predefined metric: AWS's names of the three node_exporter measures.
const PAIRS: [(&str, PairType); 3] = [
    ("ASGCPUUtilization", PairType::Cpu),
    ("ASGNetworkIn", PairType::NetworkIn),
    ("ASGNetworkOut", PairType::NetworkOut),
];
const SCALING: [(&str, MetricType); 3] = [
    ("ASGAverageCPUUtilization", MetricType::Cpu),
    ("ASGAverageNetworkIn", MetricType::NetworkIn),
    ("ASGAverageNetworkOut", MetricType::NetworkOut),
];
const LOADS: [(&str, LoadType); 3] = [
    ("ASGTotalCPUUtilization", LoadType::Cpu),
    ("ASGTotalNetworkIn", LoadType::NetworkIn),
    ("ASGTotalNetworkOut", LoadType::NetworkOut),
];

/// A predefined metric of these: the load balancer's request counts are CloudWatch's, which
/// Phantom does not read (as for target tracking).
fn predefined<T: Copy>(p: &PredefinedRequest, known: [(&str, T); 3]) -> Checked<T> {
    let given = p.predefined_metric_type.as_str();
    let Some((_, kind)) = known.iter().find(|(name, _)| *name == given) else {
        return Err(Refusal::invalid(format!(
            "{given} counts a load balancer's requests in CloudWatch, which Phantom does not read: \
             use {} or customized metrics with PromQL expressions.",
            known.map(|(n, _)| n).join(", ")
        )));
    };
    if p.resource_label.is_some() {
        return Err(Refusal::invalid(format!(
            "ResourceLabel is only supported for the load balancer's request counts, not {given}."
        )));
    }
    Ok(*kind)
}

fn queries(c: &QueriesRequest, spec: &str) -> Checked<Queries> {
    let q = tracking::promql_query(
        &c.metric_data_queries,
        &format!("{spec} needs MetricDataQueries"),
    )?;
    Ok(Queries {
        metric_data_queries: vec![q],
    })
}

/// The PromQL of a policy's three metrics over the VMs `instances`, on a source whose series
/// carry a VM's id in `label`; `period_secs` is the metric period (a rate's window is two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Promql {
    pub load: String,
    /// What the ratio is learnt from, where it is not 1 by definition: the scaling metric and
    /// the capacity (the capacity metric, else the group's VMs that Prometheus scrapes).
    pub scaling_and_capacity: Option<(String, String)>,
}

pub fn promql(m: &PredictiveMetric, label: &str, instances: &[&str], period_secs: i64) -> Promql {
    let load = match (
        &m.predefined_metric_pair_specification,
        &m.predefined_load_metric_specification,
        &m.customized_load_metric_specification,
    ) {
        (
            Some(PredefinedPair {
                predefined_metric_type,
            }),
            _,
            _,
        ) => total(predefined_metric_type.load(), label, instances, period_secs),
        (
            None,
            Some(PredefinedLoad {
                predefined_metric_type,
            }),
            _,
        ) => total(*predefined_metric_type, label, instances, period_secs),
        (None, None, Some(q)) => tracking::fill(q.expression(), label, instances),
        (None, None, None) => unreachable!("a stored policy has a load metric"),
    };
    let vms = tracking::matcher(label, instances);
    let scaling = match (
        &m.predefined_metric_pair_specification,
        &m.predefined_scaling_metric_specification,
        &m.predefined_load_metric_specification,
        &m.customized_scaling_metric_specification,
    ) {
        // The scaling metric is the load's average over the VMs: the ratio is 1.
        (Some(_), _, _, _) => None,
        (None, Some(s), Some(l), _) if same(s.predefined_metric_type, l.predefined_metric_type) => {
            None
        }
        (None, Some(s), _, _) => Some(tracking::predefined(
            s.predefined_metric_type,
            label,
            instances,
            period_secs,
        )),
        (None, None, _, Some(q)) => Some(tracking::fill(q.expression(), label, instances)),
        (None, None, _, None) => unreachable!("a stored policy has a scaling metric"),
    };
    // Without a capacity metric: the group's VMs that Prometheus scrapes (`up` carries the
    // targets' labels, the VM's id among them).
    let capacity = match &m.customized_capacity_metric_specification {
        Some(q) => tracking::fill(q.expression(), label, instances),
        None => format!("count(up{{{vms}}} == 1)"),
    };
    Promql {
        load,
        scaling_and_capacity: scaling.map(|s| (s, capacity)),
    }
}

/// Whether a predefined scaling metric is the average of that predefined load.
fn same(scaling: MetricType, load: LoadType) -> bool {
    matches!(
        (scaling, load),
        (MetricType::Cpu, LoadType::Cpu)
            | (MetricType::NetworkIn, LoadType::NetworkIn)
            | (MetricType::NetworkOut, LoadType::NetworkOut)
    )
}

/// A predefined load: the sum over the group's VMs of what the scaling metric averages.
fn total(kind: LoadType, label: &str, instances: &[&str], period_secs: i64) -> String {
    let m = tracking::matcher(label, instances);
    let window = 2 * period_secs;
    let bytes = |series: &str| {
        format!("sum(rate({series}{{device!=\"lo\",{m}}}[{window}s])) * {period_secs}")
    };
    match kind {
        LoadType::Cpu => format!(
            "sum(100 * (1 - avg by ({label}) (rate(node_cpu_seconds_total{{mode=\"idle\",{m}}}[{window}s]))))"
        ),
        LoadType::NetworkIn => bytes("node_network_receive_bytes_total"),
        LoadType::NetworkOut => bytes("node_network_transmit_bytes_total"),
    }
}

/// How the load per VM relates to the scaling metric, from the hours where the load, the scaling
/// metric and the capacity all had a positive value: the median of load / (scaling × capacity).
/// 1 where there are none (and for predefined metrics, whose scaling metric is the load's
/// average over the VMs).
pub fn ratio(load: &[Option<f64>], scaling: &[Option<f64>], capacity: &[Option<f64>]) -> f64 {
    let mut ratios: Vec<f64> = load
        .iter()
        .zip(scaling)
        .zip(capacity)
        .filter_map(|((l, s), c)| match (l, s, c) {
            (Some(l), Some(s), Some(c)) if *l > 0.0 && *s > 0.0 && *c > 0.0 => Some(l / (s * c)),
            _ => None,
        })
        .collect();
    if ratios.is_empty() {
        return 1.0;
    }
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

/// The VMs an hour's load needs to keep the scaling metric at its target.
pub fn capacity(load: f64, target: f64, ratio: f64) -> i64 {
    (load / (target * ratio)).ceil().max(0.0) as i64
}

/// What a capacity forecast shows for an hour, within the group's bounds as the policy would
/// keep them: at least MinSize; at most MaxSize unless the policy may raise it.
pub fn bounded(cfg: &PredictiveScalingConfiguration, wanted: i64, min: i64, max: i64) -> i64 {
    match cfg.max_capacity_breach_behavior {
        Breach::HonorMaxCapacity => wanted.min(max).max(min),
        Breach::IncreaseMaxCapacity => wanted.max(min),
    }
}

/// The ms before an hour that its capacity is put in place.
pub fn buffer_ms(cfg: &PredictiveScalingConfiguration) -> i64 {
    cfg.scheduling_buffer_time.unwrap_or(DEFAULT_BUFFER_SECS) * 1000
}

/// The group's enabled ForecastAndScale policies' configurations.
pub fn scaling(g: &Group) -> Vec<&PredictiveScalingConfiguration> {
    g.settings
        .scaling_policies
        .iter()
        .filter_map(|p| p.forecast_and_scale())
        .collect()
}

/// The hour a run at `now_ms` prepares for a group whose policies' largest buffer is
/// `buffer_ms`: the first hour whose start, less the buffer, has come.
pub fn hour_due(now_ms: i64, buffer_ms: i64) -> i64 {
    forecast::hour_of(now_ms + buffer_ms)
}

/// When the group's ForecastAndScale policies next have an hour to prepare (Unix ms): at once if
/// none was prepared, else the start of the hour after the last one less the largest buffer.
pub fn next_due(g: &Group) -> Option<i64> {
    let buffer = scaling(g).into_iter().map(buffer_ms).max()?;
    Some(
        g.settings
            .predicted
            .map_or(0, |p| p.hour_ms + HOUR_MS - buffer),
    )
}

/// The least desired capacity the group may have at `now_ms`: its MinSize, or the capacity
/// ForecastAndScale put in place for the hour, the larger, while a ForecastAndScale policy is
/// still there to have put it.
pub fn floor(g: &Group, now_ms: i64) -> i64 {
    if scaling(g).is_empty() {
        return g.min;
    }
    match g.settings.predicted {
        Some(p) if p.from_ms <= now_ms && now_ms < p.hour_ms + HOUR_MS => g.min.max(p.capacity),
        _ => g.min,
    }
}

/// The group with one policy's forecast capacity `wanted` in place for the hour starting at
/// `hour_ms` (from `from_ms`): the hour's floor (the largest of its policies' if several), the
/// desired capacity raised to it, MaxSize raised under IncreaseMaxCapacity.
pub fn put_in_place(
    g: &Group,
    cfg: &PredictiveScalingConfiguration,
    hour_ms: i64,
    from_ms: i64,
    wanted: i64,
) -> Group {
    let mut next = g.clone();
    if cfg.max_capacity_breach_behavior == Breach::IncreaseMaxCapacity && wanted > next.max {
        let buffer = cfg.max_capacity_buffer.unwrap_or(0);
        // Whole VMs: 10 % over a forecast of 50 is 55.
        next.max = (wanted * (100 + buffer) + 99) / 100;
    }
    let capacity = wanted.min(next.max);
    let capacity = match next.settings.predicted {
        Some(p) if p.hour_ms == hour_ms => capacity.max(p.capacity),
        _ => capacity,
    };
    next.settings.predicted = Some(Predicted {
        hour_ms,
        from_ms,
        capacity,
    });
    next.desired = next.desired.max(capacity).min(next.max);
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn request(v: Value) -> PutScalingPolicy {
        let mut v = v;
        v["AutoScalingGroupName"] = json!("web");
        v["PolicyName"] = json!("p");
        v["PolicyType"] = json!("PredictiveScaling");
        serde_json::from_value(v).unwrap()
    }

    fn config(v: Value) -> Checked<PredictiveScalingConfiguration> {
        let input = request(json!({ "PredictiveScalingConfiguration": v }));
        document(&input).map(|k| match k {
            PolicyKind::Predictive {
                predictive_scaling_configuration,
            } => predictive_scaling_configuration,
            _ => unreachable!(),
        })
    }

    fn promql_entry(e: &str) -> Value {
        json!({"MetricDataQueries": [{"Id": "m", "Expression": e}]})
    }

    #[test]
    fn a_pair_or_a_scaling_and_a_load_metric_is_taken_with_awss_defaults() {
        let c = config(json!({"MetricSpecifications": [{"TargetValue": 50.0,
            "PredefinedMetricPairSpecification": {"PredefinedMetricType": "ASGCPUUtilization"}}]}))
        .unwrap();
        assert_eq!(c.mode, Mode::ForecastOnly);
        assert_eq!(c.max_capacity_breach_behavior, Breach::HonorMaxCapacity);
        let shown = serde_json::to_value(&c).unwrap();
        assert_eq!(shown["Mode"], "ForecastOnly");
        assert_eq!(shown["MaxCapacityBreachBehavior"], "HonorMaxCapacity");
        assert!(
            shown.get("SchedulingBufferTime").is_none(),
            "shown as given"
        );
        assert_eq!(
            shown["MetricSpecifications"][0]["PredefinedMetricPairSpecification"]
                ["PredefinedMetricType"],
            "ASGCPUUtilization"
        );
        let c = config(
            json!({"Mode": "ForecastAndScale", "SchedulingBufferTime": 600,
            "MaxCapacityBreachBehavior": "IncreaseMaxCapacity", "MaxCapacityBuffer": 10,
            "MetricSpecifications": [{"TargetValue": 100.0,
            "CustomizedScalingMetricSpecification": promql_entry("avg(app_load{$instances})"),
            "CustomizedLoadMetricSpecification": promql_entry("sum(app_load)"),
            "CustomizedCapacityMetricSpecification": promql_entry("count(app_load)")}]}),
        )
        .unwrap();
        assert_eq!(c.mode, Mode::ForecastAndScale);
        assert_eq!(buffer_ms(&c), 600_000);
        let p = promql(
            &c.metric_specifications[0],
            "instance_id",
            &["i-1", "i-2"],
            60,
        );
        assert_eq!(p.load, "sum(app_load)");
        assert_eq!(
            p.scaling_and_capacity,
            Some((
                r#"avg(app_load{instance_id=~"i-1|i-2"})"#.to_string(),
                "count(app_load)".to_string()
            ))
        );
    }

    #[test]
    fn what_aws_refuses_is_refused() {
        let pair = json!({"TargetValue": 50.0,
            "PredefinedMetricPairSpecification": {"PredefinedMetricType": "ASGCPUUtilization"}});
        for (bad, why) in [
            (json!({"MetricSpecifications": []}), "exactly one"),
            (json!({"MetricSpecifications": [pair, pair]}), "exactly one"),
            (
                json!({"MetricSpecifications": [{"TargetValue": 0.0,
                "PredefinedMetricPairSpecification": {"PredefinedMetricType": "ASGCPUUtilization"}}]}),
                "greater than 0",
            ),
            (
                json!({"MetricSpecifications": [{"TargetValue": 5.0,
                "PredefinedMetricPairSpecification": {"PredefinedMetricType": "ALBRequestCount"}}]}),
                "CloudWatch",
            ),
            (
                json!({"MetricSpecifications": [{"TargetValue": 5.0,
                "PredefinedMetricPairSpecification": {"PredefinedMetricType": "ASGNetworkIn", "ResourceLabel": "x"}}]}),
                "ResourceLabel",
            ),
            (
                json!({"MetricSpecifications": [{"TargetValue": 5.0,
                "PredefinedScalingMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}}]}),
                "Load",
            ),
            (
                json!({"MetricSpecifications": [{"TargetValue": 5.0,
                "PredefinedMetricPairSpecification": {"PredefinedMetricType": "ASGCPUUtilization"},
                "CustomizedLoadMetricSpecification": promql_entry("x")}]}),
                "no other",
            ),
            (
                json!({"MetricSpecifications": [{"TargetValue": 5.0,
                "PredefinedScalingMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"},
                "CustomizedLoadMetricSpecification": {"MetricDataQueries": [{"Id": "a",
                    "MetricStat": {"Metric": {"Namespace": "n", "MetricName": "m"}, "Stat": "Sum"}}]}}]}),
                "MetricStat",
            ),
            (
                json!({"SchedulingBufferTime": 3600, "MetricSpecifications": [pair]}),
                "3599",
            ),
            (
                json!({"MaxCapacityBreachBehavior": "IncreaseMaxCapacity", "MetricSpecifications": [pair]}),
                "required",
            ),
            (
                json!({"MaxCapacityBuffer": 5, "MetricSpecifications": [pair]}),
                "only be given",
            ),
        ] {
            let e = config(bad.clone()).expect_err(why);
            assert!(e.message().contains(why), "{bad}: {}", e.message());
        }
        let with_adjustment = request(json!({"AdjustmentType": "ChangeInCapacity",
            "PredictiveScalingConfiguration": {"MetricSpecifications": [pair]}}));
        assert!(document(&with_adjustment).is_err());
        assert!(
            document(&request(json!({}))).is_err(),
            "a configuration is required"
        );
    }

    #[test]
    fn predefined_loads_are_totals_over_the_groups_vms() {
        let c = config(json!({"MetricSpecifications": [{"TargetValue": 50.0,
            "PredefinedMetricPairSpecification": {"PredefinedMetricType": "ASGCPUUtilization"}}]}))
        .unwrap();
        let p = promql(&c.metric_specifications[0], "id", &["i-1"], 60);
        assert_eq!(
            p.load,
            r#"sum(100 * (1 - avg by (id) (rate(node_cpu_seconds_total{mode="idle",id=~"i-1"}[120s]))))"#
        );
        assert_eq!(p.scaling_and_capacity, None, "a pair's ratio is 1");
        // A scaling metric of another measure than the load: its ratio is learnt, over the
        // group's VMs that Prometheus scrapes where no capacity metric is given.
        let c = config(json!({"MetricSpecifications": [{"TargetValue": 50.0,
            "PredefinedScalingMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"},
            "CustomizedLoadMetricSpecification": promql_entry("sum(rate(http_requests_total[5m]))")}]}))
        .unwrap();
        let p = promql(&c.metric_specifications[0], "id", &["i-1"], 60);
        let (scaling, capacity) = p.scaling_and_capacity.unwrap();
        assert!(
            scaling.starts_with("100 * (1 - avg(rate(node_cpu_seconds_total"),
            "{scaling}"
        );
        assert_eq!(capacity, r#"count(up{id=~"i-1"} == 1)"#);
    }

    #[test]
    fn capacity_is_the_load_over_the_target_per_vm() {
        assert_eq!(capacity(250.0, 50.0, 1.0), 5);
        assert_eq!(capacity(251.0, 50.0, 1.0), 6);
        assert_eq!(capacity(0.0, 50.0, 1.0), 0);
        // Each VM carries twice the load its scaling metric says.
        let load = [Some(400.0), Some(200.0), None, Some(100.0)];
        let scaling = [Some(50.0), Some(50.0), Some(50.0), Some(25.0)];
        let vms = [Some(4.0), Some(2.0), Some(2.0), Some(2.0)];
        assert_eq!(ratio(&load, &scaling, &vms), 2.0);
        assert_eq!(capacity(400.0, 50.0, 2.0), 4);
        assert_eq!(ratio(&[None], &[None], &[None]), 1.0);
    }

    fn scaling_config(breach: Value) -> PredictiveScalingConfiguration {
        let mut v = json!({"Mode": "ForecastAndScale", "MetricSpecifications": [{"TargetValue": 50.0,
            "PredefinedMetricPairSpecification": {"PredefinedMetricType": "ASGCPUUtilization"}}]});
        v.as_object_mut()
            .unwrap()
            .extend(breach.as_object().unwrap().clone());
        config(v).unwrap()
    }

    #[test]
    fn forecast_and_scale_raises_the_floor_for_the_hour_and_the_desired_capacity_to_it() {
        let honor = scaling_config(json!({}));
        let g = with_policy(crate::fixtures::test_group(), &honor); // min 1, max 5, desired 2
        let hour = 10 * HOUR_MS;
        let from = hour - buffer_ms(&honor);
        assert_eq!(hour_due(from, buffer_ms(&honor)), hour);
        assert_eq!(hour_due(from - 1, buffer_ms(&honor)), hour - HOUR_MS);
        let next = put_in_place(&g, &honor, hour, from, 4);
        assert_eq!((next.min, next.max, next.desired), (1, 5, 4));
        assert_eq!(floor(&next, from - 1), 1, "not before the buffer");
        assert_eq!(floor(&next, from), 4);
        assert_eq!(floor(&next, hour + HOUR_MS - 1), 4);
        assert_eq!(floor(&next, hour + HOUR_MS), 1, "the hour is over");
        // Never lower: a smaller forecast leaves a larger group as it is.
        let mut big = g.clone();
        big.desired = 5;
        assert_eq!(put_in_place(&big, &honor, hour, from, 2).desired, 5);
        // Above MaxSize: honoured, or raised with the buffer, and kept raised.
        assert_eq!(put_in_place(&g, &honor, hour, from, 9).desired, 5);
        let increase = scaling_config(
            json!({"MaxCapacityBreachBehavior": "IncreaseMaxCapacity", "MaxCapacityBuffer": 10}),
        );
        let raised = put_in_place(&g, &increase, hour, from, 50);
        assert_eq!((raised.max, raised.desired), (55, 50));
        assert_eq!(
            bounded(&honor, 9, 1, 5),
            5,
            "the capacity forecast within MaxSize"
        );
        assert_eq!(bounded(&increase, 9, 1, 5), 9);
        assert_eq!(bounded(&honor, 0, 1, 5), 1);
    }

    fn with_policy(mut g: Group, cfg: &PredictiveScalingConfiguration) -> Group {
        g.settings
            .scaling_policies
            .push(phantom_model::group::ScalingPolicy {
                auto_scaling_group_name: "web".into(),
                policy_name: "p".into(),
                arn: "arn".into(),
                kind: PolicyKind::Predictive {
                    predictive_scaling_configuration: cfg.clone(),
                },
                enabled: true,
                alarms: Vec::new(),
                webhook: None,
                alarm: None,
            });
        g
    }

    #[test]
    fn the_next_hour_is_due_its_buffer_before_it() {
        let g = crate::fixtures::test_group();
        assert_eq!(next_due(&g), None, "no predictive policy");
        let cfg = scaling_config(json!({}));
        let g = with_policy(g, &cfg);
        assert_eq!(next_due(&g), Some(0), "at once");
        let mut g = put_in_place(&g, &cfg, 10 * HOUR_MS, 10 * HOUR_MS - 300_000, 3);
        assert_eq!(next_due(&g), Some(11 * HOUR_MS - 300_000));
        assert_eq!(floor(&g, 10 * HOUR_MS), 3);
        // The policy deleted: its hour's floor goes with it.
        g.settings.scaling_policies.clear();
        assert_eq!(floor(&g, 10 * HOUR_MS), 1);
    }
}
