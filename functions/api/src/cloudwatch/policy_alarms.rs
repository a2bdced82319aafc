//! The alarms the account's scaling policies stand for (`phantom_rules::policy_alarms`), their
//! state evaluated when asked: on their CloudWatch metric (`AWS/EC2` from the metric source, the
//! rest published), or on their PromQL over the group's VMs.

use super::metrics::Source;
use crate::App;
use phantom_model::cloudwatch::{Datum, MetricAlarm, MetricId, Stats};
use phantom_rules::group::Group;
use phantom_rules::metric_alarm;
use phantom_rules::policy_alarms::{self, PolicyAlarm, Source as Read};
use phantom_rules::tracking;
use phantom_seams::prometheus;
use phantom_wire::ApiError;

/// The alarms of the account's policies that `keep` takes, each evaluated now.
pub async fn shown(
    app: &App,
    user: &str,
    keep: impl Fn(&MetricAlarm) -> bool,
) -> Result<Vec<MetricAlarm>, ApiError> {
    let now = app.clock.now_ms();
    let groups = app.store.all_groups(user).await?;
    let mut source = super::metrics::Source::default();
    let mut out = Vec::new();
    for g in groups.iter().filter(|g| !g.deleting()) {
        for pa in policy_alarms::of(g, now) {
            if !keep(&pa.alarm) {
                continue;
            }
            let (from, to) = metric_alarm::window(&pa.alarm, now);
            let data = match &pa.source {
                Read::Metric(m) => metric(app, user, &pa, m, (from, to), &mut source).await,
                Read::PromQL(e) => promql(app, user, g, &pa, e, (from, to), &mut source).await,
            };
            let alarm = match data {
                Ok(data) => match metric_alarm::evaluate(&pa.alarm, &data, now) {
                    Some(e) => policy_alarms::settled(pa.alarm, e),
                    None => pa.alarm,
                },
                // Its state unknown: shown as it is made, the reason said.
                Err(why) => MetricAlarm {
                    state_reason: format!("Its metric could not be read: {why}"),
                    ..pa.alarm
                },
            };
            out.push(alarm);
        }
    }
    Ok(out)
}

/// A CloudWatch metric's data over the alarm's window.
async fn metric(
    app: &App,
    user: &str,
    pa: &PolicyAlarm,
    m: &MetricId,
    window: (i64, i64),
    source: &mut Source,
) -> Result<Vec<Datum>, String> {
    let statistic = metric_alarm::statistic(&pa.alarm);
    let period_ms = metric_alarm::period_ms(&pa.alarm);
    let asked = (m, std::slice::from_ref(&statistic));
    super::metrics::data(app, user, asked, period_ms, window, source)
        .await
        .map_err(|e| e.message)
}

/// A PromQL expression's values over the alarm's whole periods, over the group's VMs.
async fn promql(
    app: &App,
    user: &str,
    g: &Group,
    pa: &PolicyAlarm,
    expression: &str,
    (from, to): (i64, i64),
    source: &mut Source,
) -> Result<Vec<Datum>, String> {
    let period_ms = metric_alarm::period_ms(&pa.alarm);
    let Some(range) = prometheus::ec2::whole_periods(from, to, period_ms) else {
        return Ok(Vec::new());
    };
    let Some((source, prometheus)) = source.get(app).await.map_err(|e| e.message)? else {
        return Err("no metric source is set".into());
    };
    let members = app
        .store
        .instances(user, &g.name)
        .await
        .map_err(|e| e.to_string())?;
    let ids: Vec<&str> = members
        .iter()
        .filter(|m| !m.lifecycle.is_warm())
        .map(|m| m.id.as_str())
        .collect();
    let query = tracking::fill(expression, &source.instance_label, &ids);
    let series = prometheus
        .query_range(&query, range)
        .await
        .map_err(|e| e.to_string())?;
    let values = prometheus::aggregated(
        &series,
        range,
        phantom_model::group::MetricAggregation::Average,
    );
    let metric = MetricId::new("Phantom/PromQL", &pa.alarm.alarm_name, &[]);
    Ok(values
        .iter()
        .enumerate()
        .filter_map(|(k, v)| {
            let end = range.start_ms + k as i64 * range.step_ms;
            v.map(|v| Datum {
                metric: metric.clone(),
                at_ms: end - period_ms,
                unit: None,
                stats: Stats::one(v),
                high_resolution: false,
            })
        })
        .collect())
}
