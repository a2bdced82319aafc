//! A policy's metric over a recent span, for the console's chart of a metric against its target:
//! a target tracking policy's metric, or a step policy alarm's expression, over the group's VMs
//! serving past their warm-up now, as one range query of the metric source. And a group's
//! capacity over a recent span (its desired, InService and pending), as the metric source scraped
//! the group's metrics (`scrape.rs`, `?users=all`), for the console's chart of the group.

use super::shapes::{self, GetPolicyMetric};
use super::{answer, read, Failure, Json, Outcome};
use crate::App;
use phantom_rules::identity::Caller;
use phantom_rules::tracking;
use phantom_seams::prometheus::{self, QueryError, Range};
use phantom_wire::ApiError;

/// Datapoints a chart shows at most.
const POINTS: i64 = 120;

pub async fn run(app: &App, caller: &Caller, operation: &str, input: &Json) -> Option<Outcome> {
    match operation {
        "GetPolicyMetric" => Some(answer(async { get(app, caller, read(input)?).await }.await)),
        "GetGroupMetrics" => Some(answer(
            async { group_metrics(app, caller, read(input)?).await }.await,
        )),
        _ => None,
    }
}

async fn get(
    app: &App,
    caller: &Caller,
    input: GetPolicyMetric,
) -> Result<shapes::PolicyMetric, Failure> {
    let group: &str = &input.auto_scaling_group_name;
    let name: &str = &input.policy_name;
    let range = span(app, input.minutes, 60)?;
    let g = app
        .store
        .group(&caller.user, group)
        .await?
        .ok_or_else(|| ApiError::validation(format!("Group {group} does not exist.")))?;
    let p = g
        .settings
        .scaling_policies
        .iter()
        .find(|p| p.is(name))
        .ok_or_else(|| {
            ApiError::validation(format!("Group {group} has no scaling policy {name}."))
        })?;
    let now = app.clock.now_ms();
    // A policy on a CloudWatch metric: its datapoints from Phantom's store, no metric source.
    if let Some((cfg, _)) = p.tracking() {
        if let Some((metric, statistic, unit)) = tracking::cloudwatch_metric(cfg) {
            let data = app
                .store
                .data(
                    &caller.user,
                    &metric,
                    range.start_ms - range.step_ms,
                    range.end_ms + 1,
                )
                .await?;
            let values = phantom_rules::metric_data::series(
                &data,
                (statistic, unit),
                range.end_ms,
                range.step_ms,
                range.points(),
            );
            return Ok(shapes::PolicyMetric {
                auto_scaling_group_name: g.name.clone(),
                policy_name: p.policy_name.clone(),
                query: format!(
                    "CloudWatch {} {} {}",
                    metric.namespace,
                    metric.name,
                    statistic.as_str()
                ),
                target: Some(cfg.target_value),
                threshold: None,
                step_seconds: range.step_ms / 1000,
                datapoints: datapoints(values, range),
            });
        }
    }
    let source = source(app).await?;
    let members = app.store.instances(&caller.user, group).await?;
    let period_secs = app.metric_period_ms / 1000;
    let (query, target, threshold, needs_vms, warmed) = if let Some((cfg, warmup)) = p.tracking() {
        let warmed = tracking::warmed(&members, now, tracking::warmup_secs(&g, warmup) * 1000);
        // A CloudWatch metric was answered above: this one has its PromQL.
        let q = tracking::promql(cfg, &source.instance_label, &warmed, period_secs)
            .ok_or_else(|| ApiError::internal(format!("policy {name} names no metric")))?;
        (q, Some(cfg.target_value), None, true, warmed.len())
    } else if let Some(a) = p.alarm.as_ref() {
        let warmed = tracking::warmed(&members, now, tracking::warmup_secs(&g, None) * 1000);
        let q = tracking::fill(&a.expression, &source.instance_label, &warmed);
        let needs = a.expression.contains(tracking::INSTANCES);
        (q, None, Some(a.threshold), needs, warmed.len())
    } else {
        return Err(ApiError::validation(format!(
                "Policy {name} follows no metric: it is not a TargetTrackingScaling policy, and it has no alarm."
            ))
            .into());
    };
    let values = if needs_vms && warmed == 0 {
        // No VM serves past its warm-up: the metric has nothing to measure.
        vec![None; range.points()]
    } else {
        let series = app
            .metrics
            .connect(&source)
            .query_range(&query, range)
            .await
            .map_err(query_error)?;
        prometheus::datapoints(&series, range).map_err(ApiError::validation)?
    };
    let datapoints = datapoints(values, range);
    Ok(shapes::PolicyMetric {
        auto_scaling_group_name: g.name.clone(),
        policy_name: p.policy_name.clone(),
        query,
        target,
        threshold,
        step_seconds: range.step_ms / 1000,
        datapoints,
    })
}

/// The metrics a group's chart shows.
const CHARTED: [&str; 3] = [
    "GroupDesiredCapacity",
    "GroupInServiceInstances",
    "GroupPendingInstances",
];

async fn group_metrics(
    app: &App,
    caller: &Caller,
    input: shapes::GetGroupMetrics,
) -> Result<shapes::GroupMetrics, Failure> {
    let group: &str = &input.auto_scaling_group_name;
    let range = span(app, input.minutes, 180)?;
    let g = app
        .store
        .group(&caller.user, group)
        .await?
        .ok_or_else(|| ApiError::validation(format!("Group {group} does not exist.")))?;
    let source = source(app).await?;
    let prometheus = app.metrics.connect(&source);
    let mut series = Vec::new();
    for metric in CHARTED {
        let enabled = g
            .settings
            .enabled_metrics
            .iter()
            .any(|e| e.metric == metric);
        let query = phantom_rules::group_metrics::promql(metric, &caller.user, &g.name);
        let values = if enabled {
            let found = prometheus
                .query_range(&query, range)
                .await
                .map_err(query_error)?;
            prometheus::datapoints(&found, range).map_err(ApiError::validation)?
        } else {
            vec![None; range.points()]
        };
        series.push(shapes::GroupSeries {
            metric,
            enabled,
            query,
            datapoints: datapoints(values, range),
        });
    }
    Ok(shapes::GroupMetrics {
        auto_scaling_group_name: g.name.clone(),
        step_seconds: range.step_ms / 1000,
        series,
    })
}

fn query_error(e: QueryError) -> ApiError {
    match e {
        QueryError::Refused(why) => {
            ApiError::validation(format!("Prometheus refused the query: {why}"))
        }
        QueryError::Unreachable(why) => {
            ApiError::service_unavailable(format!("The metric source could not be asked: {why}"))
        }
    }
}

/// Values a step apart from the range's start, with their times.
fn datapoints(values: Vec<Option<f64>>, range: Range) -> Vec<shapes::Datapoint> {
    values
        .into_iter()
        .enumerate()
        .map(|(k, value)| shapes::Datapoint {
            timestamp: phantom_model::time::format_timestamp(phantom_model::time::from_ms(
                range.start_ms + k as i64 * range.step_ms,
            )),
            value,
        })
        .collect()
}

/// Phantom's operating figures from the metric source, which scrapes them (`scrape.rs`,
/// `?scope=operations`): each of `phantom_metrics::ops::CHARTS` over the span (administrators only: the
/// caller was checked by `admin::require`).
pub async fn operating(
    app: &App,
    input: shapes::GetOperatingMetrics,
) -> Result<shapes::OperatingMetrics, Failure> {
    let range = span(app, input.minutes, 60)?;
    let source = source(app).await?;
    let prometheus = app.metrics.connect(&source);
    let mut series = Vec::new();
    for (name, unit, query) in phantom_metrics::ops::CHARTS {
        let found = prometheus
            .query_range(query, range)
            .await
            .map_err(query_error)?;
        let values = prometheus::datapoints(&found, range).map_err(ApiError::validation)?;
        series.push(shapes::OperatingSeries {
            name,
            unit,
            query,
            datapoints: datapoints(values, range),
        });
    }
    Ok(shapes::OperatingMetrics {
        step_seconds: range.step_ms / 1000,
        series,
    })
}

/// The span asked (`Minutes`, else `default`; 1 to 1440) as a range ending now, a metric period
/// apart at the finest and `POINTS` datapoints at the most.
fn span(app: &App, minutes: Option<i64>, default: i64) -> Result<Range, ApiError> {
    let minutes = minutes.unwrap_or(default);
    if !(1..=1440).contains(&minutes) {
        return Err(ApiError::validation(format!(
            "Minutes must be between 1 and 1440, not {minutes}."
        )));
    }
    let step_ms = app.metric_period_ms.max(minutes * 60_000 / POINTS);
    Ok(Range::last(
        minutes * 60_000 / step_ms + 1,
        step_ms,
        app.clock.now_ms(),
    ))
}

/// The deployment's metric source: a ValidationError without one.
async fn source(app: &App) -> Result<phantom_seams::store::MetricSource, Failure> {
    Ok(app.store.metric_source().await?.ok_or_else(|| {
        ApiError::validation(
            "No metric source is set in this deployment: there is no metric history.",
        )
    })?)
}
