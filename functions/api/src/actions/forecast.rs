//! GetPredictiveScalingForecast: a predictive policy's load and capacity forecasts, made at the
//! call from the metric source's history (`phantom_seams::prometheus::forecast`: two weeks of
//! hourly load over every VM the group had then), for the hours of [StartTime, EndTime) that the
//! forecast covers: the current hour and the 47 after it, as AWS forecasts two days ahead.
//! Phantom keeps no past forecasts, so earlier hours are not answered. Less than a day of data:
//! empty forecasts, as AWS answers before its first. The capacity forecast is kept within the
//! group's MinSize and (under HonorMaxCapacity) MaxSize.

use super::group_named;
use crate::App;
use phantom_model::predictive::{CapacityForecast, LoadForecast};
use phantom_model::request::GetPredictiveScalingForecast;
use phantom_model::response;
use phantom_model::time::{format_timestamp, from_ms, parse_timestamp};
use phantom_rules::forecast::{HISTORY_HOURS, HOUR_MS};
use phantom_rules::identity::Caller;
use phantom_rules::predictive;
use phantom_seams::prometheus::{forecast, QueryError};
use phantom_seams::store::members;
use phantom_wire::{ApiError, ApiResult};

/// AWS's longest range between StartTime and EndTime.
const MAX_RANGE_MS: i64 = 30 * 24 * HOUR_MS;

fn ms(member: &str, given: &str) -> ApiResult<i64> {
    parse_timestamp(given)
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
        .ok_or_else(|| ApiError::validation(format!("{member} '{given}' is not a timestamp.")))
}

pub async fn run(
    app: &App,
    caller: &Caller,
    input: GetPredictiveScalingForecast,
) -> ApiResult<response::GetPredictiveScalingForecast> {
    let start = ms("StartTime", &input.start_time)?;
    let end = ms("EndTime", &input.end_time)?;
    if end <= start {
        return Err(ApiError::validation("EndTime must be after StartTime."));
    }
    if end - start > MAX_RANGE_MS {
        return Err(ApiError::validation(
            "The time range between StartTime and EndTime must not exceed 30 days.",
        ));
    }
    let group = &input.auto_scaling_group_name;
    let g = group_named(app, caller, group).await?;
    let name = &input.policy_name;
    let p = g
        .settings
        .scaling_policies
        .iter()
        .find(|p| &p.policy_name == name)
        .ok_or_else(|| {
            ApiError::validation(format!(
                "Policy {name} not found for AutoScalingGroup {group}"
            ))
        })?;
    let cfg = p.predictive().ok_or_else(|| {
        ApiError::validation(format!(
            "Policy {name} is a {} policy: only PredictiveScaling policies have forecasts.",
            p.policy_type()
        ))
    })?;
    let metric = &cfg.metric_specifications[0];
    let source = app.store.metric_source().await?.ok_or_else(|| {
        ApiError::validation(
            "No metric source is set in this deployment, so there is no history to forecast \
             from: an administrator sets one first (phantomctl metric-source set).",
        )
    })?;
    let now = app.clock.now_ms();
    let vms = members::since(
        app.store.as_ref(),
        &caller.user,
        &g,
        now - HISTORY_HOURS as i64 * HOUR_MS,
    )
    .await?;
    let vms: Vec<&str> = vms.iter().map(String::as_str).collect();
    let made = forecast::forecast(
        app.metrics.connect(&source).as_ref(),
        &source,
        metric,
        &vms,
        now,
        app.metric_period_ms / 1000,
    )
    .await
    .map_err(|e| match e {
        QueryError::Refused(why) => ApiError::validation(format!(
            "The policy's metric was refused by Prometheus: {why}"
        )),
        QueryError::Unreachable(why) => ApiError::service_unavailable(format!(
            "The metric source could not be asked for the policy's history: {why}"
        )),
    })?;
    let hours: Vec<(i64, f64, i64)> = made
        .iter()
        .flat_map(|f| {
            f.load
                .iter()
                .zip(&f.capacity)
                .enumerate()
                .map(|(i, (l, c))| (f.first_hour_ms + i as i64 * HOUR_MS, *l, *c))
        })
        .filter(|(hour, _, _)| (start..end).contains(hour))
        .collect();
    let timestamps: Vec<String> = hours
        .iter()
        .map(|(h, _, _)| format_timestamp(from_ms(*h)))
        .collect();
    Ok(response::GetPredictiveScalingForecast {
        load_forecast: vec![LoadForecast {
            timestamps: timestamps.clone(),
            values: hours.iter().map(|(_, l, _)| *l).collect(),
            metric_specification: metric.clone(),
        }],
        capacity_forecast: CapacityForecast {
            timestamps,
            values: hours
                .iter()
                .map(|(_, _, c)| predictive::bounded(cfg, *c, g.min, g.max) as f64)
                .collect(),
        },
        update_time: format_timestamp(from_ms(now)),
    })
}
