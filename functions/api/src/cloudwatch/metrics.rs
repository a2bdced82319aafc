//! The metric actions: publishing datapoints, listing metrics, and their statistics.

use super::refused;
use crate::App;
use phantom_model::cloudwatch::{
    Datum, GetMetricData, GetMetricDataOutput, GetMetricStatistics, GetMetricStatisticsOutput,
    ListMetrics, ListMetricsOutput, MetricDataResult, MetricId, PutMetricData,
};
use phantom_model::time::{format_timestamp, from_ms};
use phantom_rules::ec2_metrics;
use phantom_rules::metric_data::{self, Bad, Statistic};
use phantom_rules::metric_math;
use phantom_seams::prometheus::{self, MetricSource, Prometheus};
use phantom_wire::{paging, ApiError};
use std::collections::BTreeMap;
use std::sync::Arc;

/// ListMetrics answers 500 metrics a page, as CloudWatch does.
const LIST_PAGE: usize = 500;
/// RecentlyActive `PT3H`: published to within three hours.
const RECENTLY_MS: i64 = 3 * 3_600_000;
/// ListMetrics lists what was published to within two weeks.
const LISTED_MS: i64 = 14 * 24 * 3_600_000;
/// GetMetricData's default most datapoints.
const MAX_DATAPOINTS: i64 = 100_800;

pub async fn put_metric_data(app: &App, user: &str, req: PutMetricData) -> Result<(), ApiError> {
    let now = app.clock.now_ms();
    let data = metric_data::published(&req, now).map_err(refused)?;
    let mut metrics: Vec<&MetricId> = data.iter().map(|d| &d.metric).collect();
    metrics.sort();
    metrics.dedup();
    let listed = app.listed.fresh(user, &metrics, now);
    if let Err(e) = app.store.put_data(user, &data, &listed).await {
        app.listed.forget(user, &metrics);
        return Err(e.into());
    }
    Ok(())
}

/// The deployment's metric source and a connection to it, read once a request, when a read of
/// `AWS/EC2` (or a PromQL alarm) first needs it.
#[derive(Default)]
pub(super) struct Source(Option<Option<(MetricSource, Arc<dyn Prometheus>)>>);

impl Source {
    pub(super) async fn get(
        &mut self,
        app: &App,
    ) -> Result<Option<(&MetricSource, &dyn Prometheus)>, ApiError> {
        if self.0.is_none() {
            let source = app.store.metric_source().await?;
            self.0 = Some(source.map(|s| {
                let connected = app.metrics.connect(&s);
                (s, connected)
            }));
        }
        Ok(self
            .0
            .as_ref()
            .and_then(Option::as_ref)
            .map(|(s, p)| (s, p.as_ref())))
    }
}

/// A metric's datapoints in `[from, to)`: `AWS/EC2`'s read through from the metric source (the
/// `statistics` asked, over `period_ms`; none without a source), any other's from the store.
pub(super) async fn data(
    app: &App,
    user: &str,
    (metric, statistics): (&MetricId, &[Statistic]),
    period_ms: i64,
    (from, to): (i64, i64),
    source: &mut Source,
) -> Result<Vec<Datum>, ApiError> {
    let Some(q) = ec2_metrics::query(metric) else {
        return Ok(app.store.data(user, metric, from, to).await?);
    };
    let Some(range) = prometheus::ec2::whole_periods(from, to, period_ms) else {
        return Ok(Vec::new());
    };
    let Some(source) = source.get(app).await? else {
        return Ok(Vec::new());
    };
    let store = app.store.as_ref();
    prometheus::ec2::data(store, Some(source), user, (metric, &q), statistics, range)
        .await
        .map_err(|why| {
            tracing::warn!(user, error = why, "AWS/EC2 not read from the metric source");
            ApiError::service_unavailable(format!(
                "AWS/EC2's data comes from the deployment's metric source, which could not be read: {why}"
            ))
        })
}

pub async fn list_metrics(
    app: &App,
    user: &str,
    req: ListMetrics,
) -> Result<ListMetricsOutput, ApiError> {
    if req.include_linked_accounts == Some(true) || req.owning_account.is_some() {
        return Err(refused(Bad::Value(
            "An account at Phantom's endpoint has no linked accounts (cross-account observability).".into(),
        )));
    }
    let after = paging::resume_after(req.next_token.as_deref())?;
    let now = app.clock.now_ms();
    let since = if req.recently_active.is_some() {
        now - RECENTLY_MS
    } else {
        now - LISTED_MS
    };
    let mut all = app.store.metrics(user, req.namespace.as_deref()).await?;
    if req
        .namespace
        .as_deref()
        .is_none_or(|n| n == ec2_metrics::NAMESPACE)
    {
        all.extend(ec2_listed(app, user).await?.into_iter().map(|m| (m, now)));
    }
    let mut found: Vec<(String, MetricId)> = all
        .into_iter()
        .filter(|(m, last)| {
            *last >= since
                && req.metric_name.as_ref().is_none_or(|n| *n == m.name)
                && req.dimensions.iter().all(|f| {
                    m.dimensions
                        .iter()
                        .any(|d| d.name == f.name && f.value.as_ref().is_none_or(|v| *v == d.value))
                })
        })
        .map(|(m, _)| (list_key(&m), m))
        .filter(|(k, _)| after.as_ref().is_none_or(|a| k > a))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let page = paging::page(found, LIST_PAGE, |(k, _)| k.as_str());
    Ok(ListMetricsOutput {
        metrics: page.items.iter().map(|(_, m)| m.to_metric()).collect(),
        next_token: page.next_token,
    })
}

/// `AWS/EC2`'s metrics, where a metric source is set: each of the user's groups' and VMs'.
async fn ec2_listed(app: &App, user: &str) -> Result<Vec<MetricId>, ApiError> {
    if app.store.metric_source().await?.is_none() {
        return Ok(Vec::new());
    }
    let groups: Vec<String> = app
        .store
        .all_groups(user)
        .await?
        .into_iter()
        .filter(|g| !g.deleting())
        .map(|g| g.name)
        .collect();
    let vms: Vec<String> = app
        .store
        .all_instances(user)
        .await?
        .into_iter()
        .filter(|(_, m)| !m.lifecycle.is_warm())
        .map(|(_, m)| m.id)
        .collect();
    Ok(ec2_metrics::listed(&groups, &vms))
}

/// A metric's place in ListMetrics' order (and its paging token).
fn list_key(m: &MetricId) -> String {
    let mut k = format!("{}\u{1}{}", m.namespace, m.name);
    for d in &m.dimensions {
        k.push('\u{1}');
        k.push_str(&d.name);
        k.push('\u{2}');
        k.push_str(&d.value);
    }
    k
}

pub async fn get_metric_statistics(
    app: &App,
    user: &str,
    req: GetMetricStatistics,
) -> Result<GetMetricStatisticsOutput, ApiError> {
    if let Some(stat) = req.extended_statistics.first() {
        return Err(refused(metric_data::no_percentiles(stat)));
    }
    if req.statistics.is_empty() {
        return Err(refused(Bad::Missing(
            "Must specify either Statistics or ExtendedStatistics.".into(),
        )));
    }
    let statistics = req
        .statistics
        .iter()
        .map(|s| Statistic::parse(s).ok_or_else(|| metric_data::no_percentiles(s)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(refused)?;
    metric_data::check_period(req.period, "Period").map_err(refused)?;
    let (from, to) = metric_data::range(&req.start_time, &req.end_time).map_err(refused)?;
    let period_ms = req.period * 1000;
    let n = metric_data::span(from, to, period_ms);
    if n > metric_data::MAX_DATAPOINTS {
        return Err(refused(Bad::Combination(format!(
            "You have requested up to {n} datapoints, which exceeds the limit of {}. You may reduce the datapoints requested by increasing Period, or decreasing the time range.",
            metric_data::MAX_DATAPOINTS
        ))));
    }
    let metric = MetricId::new(&req.namespace, &req.metric_name, &req.dimensions);
    let mut source = Source::default();
    let asked = (&metric, statistics.as_slice());
    let data = data(app, user, asked, period_ms, (from, to), &mut source).await?;
    let periods = metric_data::periods(&data, (from, to), period_ms, req.unit.as_deref());
    Ok(GetMetricStatisticsOutput {
        label: req.metric_name,
        datapoints: metric_data::datapoints(&periods, &statistics),
    })
}

pub async fn get_metric_data(
    app: &App,
    user: &str,
    req: GetMetricData,
) -> Result<GetMetricDataOutput, ApiError> {
    if req.next_token.is_some() {
        // Every answer is whole: no token was ever given.
        return Err(ApiError::invalid_next_token("The token is invalid."));
    }
    let (from, to) = metric_data::range(&req.start_time, &req.end_time).map_err(refused)?;
    let ascending = req.scan_by.as_deref() == Some("TimestampAscending");
    let max = req.max_datapoints.unwrap_or(MAX_DATAPOINTS);
    let mut ids = std::collections::BTreeSet::new();
    // Each query's series by its Id: the MetricStat queries' first, then each expression's in
    // order (an expression names the queries before it, or any MetricStat one).
    let mut named: BTreeMap<String, metric_math::Series> = BTreeMap::new();
    let mut stats: Vec<String> = Vec::new();
    let mut expressions = Vec::new();
    let mut labels: BTreeMap<&str, String> = BTreeMap::new();
    let mut source = Source::default();
    for (i, q) in req.metric_data_queries.iter().enumerate() {
        let at = format!("MetricDataQueries.member.{}", i + 1);
        if !ids.insert(q.id.as_str()) {
            return Err(refused(Bad::Value(format!(
                "The value {} for parameter {at}.Id is not unique.",
                q.id
            ))));
        }
        if !q.id.starts_with(|c: char| c.is_ascii_lowercase())
            || !q.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(refused(Bad::Value(format!(
                "The value {} for parameter {at}.Id is invalid: it starts with a lowercase letter and holds only letters, digits and underscores.",
                q.id
            ))));
        }
        let stat = match (&q.metric_stat, &q.expression) {
            (Some(stat), None) => stat,
            (None, Some(e)) => {
                expressions.push((at, q, e));
                continue;
            }
            _ => {
                return Err(refused(Bad::Combination(format!(
                    "{at} must have exactly one of MetricStat and Expression."
                ))))
            }
        };
        let statistic = Statistic::parse(&stat.stat)
            .ok_or_else(|| metric_data::no_percentiles(&stat.stat))
            .map_err(refused)?;
        metric_data::check_period(stat.period, &format!("{at}.MetricStat.Period"))
            .map_err(refused)?;
        let (Some(namespace), Some(name)) = (&stat.metric.namespace, &stat.metric.metric_name)
        else {
            return Err(refused(Bad::Missing(format!(
                "{at}.MetricStat.Metric must name its Namespace and MetricName."
            ))));
        };
        let period_ms = stat.period * 1000;
        let metric = MetricId::new(namespace, name, &stat.metric.dimensions);
        let asked = (&metric, std::slice::from_ref(&statistic));
        let data = data(app, user, asked, period_ms, (from, to), &mut source).await?;
        let periods = metric_data::periods(&data, (from, to), period_ms, stat.unit.as_deref());
        let series = periods
            .iter()
            .map(|(at, (s, _))| (*at, statistic.of(s)))
            .collect();
        named.insert(q.id.clone(), series);
        stats.push(q.id.clone());
        labels.insert(&q.id, q.label.clone().unwrap_or_else(|| name.clone()));
    }
    // A number an expression gives stands at every timestamp its queries have.
    let mut grid: Vec<i64> = named.values().flat_map(|s| s.keys().copied()).collect();
    grid.sort_unstable();
    grid.dedup();
    for (at, q, e) in expressions {
        let series = metric_math::evaluate(e, &named, &stats, &grid)
            .map_err(|why| refused(Bad::Value(format!("{at}.Expression: {why}"))))?;
        named.insert(q.id.clone(), series);
        labels.insert(&q.id, q.label.clone().unwrap_or_else(|| q.id.clone()));
    }
    let mut results = Vec::new();
    let mut total = 0i64;
    for q in &req.metric_data_queries {
        let mut points: Vec<(i64, f64)> = named[&q.id].iter().map(|(t, v)| (*t, *v)).collect();
        if !ascending {
            points.reverse();
        }
        total += points.len() as i64;
        if total > max {
            return Err(refused(Bad::Value(format!(
                "The query asks for more than MaxDatapoints ({max}) datapoints: ask for a shorter time or a longer period."
            ))));
        }
        // By default a MetricStat query's data is returned and so is an expression's.
        if q.return_data == Some(false) {
            continue;
        }
        results.push(MetricDataResult {
            id: q.id.clone(),
            label: labels[q.id.as_str()].clone(),
            timestamps: points
                .iter()
                .map(|(at, _)| format_timestamp(from_ms(*at)))
                .collect(),
            values: points.iter().map(|(_, v)| *v).collect(),
            status_code: "Complete".into(),
            messages: Vec::new(),
        });
    }
    Ok(GetMetricDataOutput {
        metric_data_results: results,
        next_token: None,
        messages: Vec::new(),
    })
}
