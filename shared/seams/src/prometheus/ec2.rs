//! `AWS/EC2` read through from the metric source (`phantom_rules::ec2_metrics`): the account's
//! VMs the metric is about, from the store, then one range query. For alarms, target tracking
//! on a CloudWatch metric, and the api's reads of metric data.

use super::{MetricSource, Prometheus, QueryError, Range};
use crate::store::Store;
use phantom_model::cloudwatch::Datum;
use phantom_rules::ec2_metrics::{self, Query, Scope};
use phantom_rules::metric_data::Statistic;

/// The deployment's metric source, connected, if one is set.
pub type Source<'a> = Option<(&'a MetricSource, &'a dyn Prometheus)>;

/// The datapoints of the `AWS/EC2` metric `q` (named `metric`) for `user` at the steps of
/// `range` (each the end of a period of its step), the `statistics` asked (a range query each);
/// none for a group the user does not have or a VM that is not the user's. An error says why the
/// source could not be read.
pub async fn data(
    store: &dyn Store,
    source: Source<'_>,
    user: &str,
    (metric, q): (&phantom_model::cloudwatch::MetricId, &Query),
    statistics: &[Statistic],
    range: Range,
) -> Result<Vec<Datum>, String> {
    let period_ms = range.step_ms;
    let instances: Vec<String> = match &q.scope {
        Scope::Group(name) => store
            .instances(user, name)
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|m| !m.lifecycle.is_warm())
            .map(|m| m.id)
            .collect(),
        Scope::Instance(id) => {
            let owners = store.owners_of(id).await.map_err(|e| e.to_string())?;
            match owners.iter().any(|(owner, _)| owner == user) {
                true => vec![id.clone()],
                false => Vec::new(),
            }
        }
    };
    if instances.is_empty() {
        return Ok(Vec::new());
    }
    let Some((source, prometheus)) = source else {
        return Err("no metric source is set, so AWS/EC2 has no data".into());
    };
    let ids: Vec<&str> = instances.iter().map(String::as_str).collect();
    let mut answers = Vec::new();
    for &statistic in statistics {
        let label = &source.instance_label;
        let promql = ec2_metrics::promql(q.kind, statistic, label, &ids, period_ms / 1000);
        let series = prometheus
            .query_range(&promql, range)
            .await
            .map_err(|e: QueryError| e.to_string())?;
        // One series (the statistic across the VMs), or none where no VM had data.
        let points: Vec<(i64, f64)> = series.into_iter().flat_map(|s| s.points).collect();
        answers.push((statistic, points));
    }
    Ok(ec2_metrics::datums(metric, q.kind, &answers, period_ms))
}

/// The range of the whole periods of `period_ms` in `[from_ms, to_ms)`, as CloudWatch's reads
/// and alarms take them; None where there is none.
pub fn whole_periods(from_ms: i64, to_ms: i64, period_ms: i64) -> Option<Range> {
    let (start_ms, end_ms) = ec2_metrics::whole_periods(from_ms, to_ms, period_ms)?;
    Some(Range {
        start_ms,
        end_ms,
        step_ms: period_ms,
    })
}
