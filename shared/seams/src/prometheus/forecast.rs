//! A predictive policy's forecast from the metric source: its load's hourly history over two
//! weeks (one range query), the ratio its customized scaling and capacity metrics give (two more,
//! only where both are given), then `phantom_rules::forecast` and `phantom_rules::predictive`.
//! The api (GetPredictiveScalingForecast) and the health check (ForecastAndScale) share it.

use super::{datapoints, MetricSource, Prometheus, QueryError, Range};
use phantom_model::predictive::{PredictiveMetric, Queries};
use phantom_rules::forecast::{self, AHEAD_HOURS, HISTORY_HOURS, HOUR_MS};
use phantom_rules::predictive;
use phantom_rules::tracking::INSTANCES;

/// The forecast made at a moment: hourly, from the hour it was made in.
#[derive(Debug, Clone, PartialEq)]
pub struct Forecast {
    /// The first hour forecast (Unix ms): the current one.
    pub first_hour_ms: i64,
    pub load: Vec<f64>,
    /// The VMs each hour's load needs at the policy's target (not yet within the group's bounds).
    pub capacity: Vec<i64>,
}

impl Forecast {
    /// The capacity forecast for the hour starting at `hour_ms`, if the forecast covers it.
    pub fn capacity_at(&self, hour_ms: i64) -> Option<i64> {
        let i = usize::try_from((hour_ms - self.first_hour_ms) / HOUR_MS).ok()?;
        self.capacity.get(i).copied()
    }
}

/// The policy metric's forecast at `now_ms`, over the VMs `instances` (every VM the group had in
/// the history's two weeks), or None where there is not a day of data (or no VM to read a metric
/// over the group's VMs from). A query Prometheus refuses, or one that gives several series, is
/// `Refused`.
pub async fn forecast(
    prometheus: &dyn Prometheus,
    source: &MetricSource,
    metric: &PredictiveMetric,
    instances: &[&str],
    now_ms: i64,
    period_secs: i64,
) -> Result<Option<Forecast>, QueryError> {
    let q = predictive::promql(metric, &source.instance_label, instances, period_secs);
    // A predefined metric, or an expression with `$instances`, reads the group's VMs: with none,
    // there is nothing to read (the empty matcher would match series without the label).
    let over_vms = |q: &Option<Queries>| {
        q.as_ref()
            .is_none_or(|q| q.expression().contains(INSTANCES))
    };
    if over_vms(&metric.customized_load_metric_specification) && instances.is_empty() {
        return Ok(None);
    }
    let learn = !instances.is_empty()
        || !(over_vms(&metric.customized_scaling_metric_specification)
            || over_vms(&metric.customized_capacity_metric_specification));
    let first_hour_ms = forecast::hour_of(now_ms);
    let range = Range {
        start_ms: first_hour_ms - HISTORY_HOURS as i64 * HOUR_MS,
        end_ms: first_hour_ms - HOUR_MS,
        step_ms: HOUR_MS,
    };
    let history = |promql: String| async move {
        let series = prometheus.query_range(&promql, range).await?;
        datapoints(&series, range).map_err(QueryError::Refused)
    };
    let load = history(q.load).await?;
    let Some(predicted) = forecast::load(&load, AHEAD_HOURS) else {
        return Ok(None);
    };
    let ratio = match q.scaling_and_capacity.filter(|_| learn) {
        Some((scaling, capacity)) => {
            predictive::ratio(&load, &history(scaling).await?, &history(capacity).await?)
        }
        None => 1.0,
    };
    let capacity = predicted
        .iter()
        .map(|l| predictive::capacity(*l, metric.target_value, ratio))
        .collect();
    Ok(Some(Forecast {
        first_hour_ms,
        load: predicted,
        capacity,
    }))
}
