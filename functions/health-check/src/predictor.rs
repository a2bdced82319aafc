//! ForecastAndScale, run with the scheduler on its schedule: a due group with an enabled
//! predictive policy in ForecastAndScale mode whose next hour, less the buffer, has come gets
//! each such policy's forecast from the metric source (`phantom_seams::prometheus::forecast`,
//! over every VM the group had in the history's two weeks), and the hour's capacity put in place
//! (`phantom_rules::predictive::put_in_place`): one conditional write of the group, with its
//! activity where the desired capacity rose, then a reconcile.
//!
//! The hour is written even where there is no forecast yet (less than a day of data), so the
//! group is due again only at the next hour; a source that cannot be asked leaves the group due,
//! for the next run. A write that loses a race is decided again by the next run.

use futures::stream::{self, StreamExt};
use phantom_rules::activity::{self, Context};
use phantom_rules::forecast::{HISTORY_HOURS, HOUR_MS};
use phantom_rules::group::Group;
use phantom_rules::predictive;
use phantom_seams::counts;
use phantom_seams::prometheus::{self, forecast, Prometheus};
use phantom_seams::queue::{Reconcile, WorkQueue};
use phantom_seams::store::{members, MetricSource, Store, StoreError};
use serde::Serialize;
use std::sync::Arc;

/// How many groups are forecast at once.
const PARALLEL: usize = 16;

/// What one run of ForecastAndScale did.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct Prepared {
    /// Groups with an hour to prepare.
    pub groups: usize,
    /// Groups whose desired capacity it raised.
    pub raised: usize,
    /// Groups left due: no metric source, or it could not be asked.
    pub no_data: usize,
    /// Groups not prepared this run (a store error, or a write that lost a race).
    pub errors: usize,
}

pub struct Predictor<'a> {
    pub store: &'a dyn Store,
    pub queue: &'a dyn WorkQueue,
    pub connect: &'a dyn prometheus::Connect,
    pub period_ms: i64,
    pub now_ms: i64,
}

enum Outcome {
    Skipped,
    Placed { raised: bool },
    NoData(String),
}

impl Predictor<'_> {
    pub async fn run(&self, due: &[(String, Group)]) -> Result<Prepared, StoreError> {
        let mut out = Prepared::default();
        let waiting: Vec<(String, Group)> = due
            .iter()
            .filter(|(_, g)| self.hour(g).is_some())
            .cloned()
            .collect();
        if waiting.is_empty() {
            return Ok(out);
        }
        let source = self.store.metric_source().await?;
        let prometheus = source.as_ref().map(|s| (s, self.connect.connect(s)));
        let prometheus = prometheus.as_ref();
        let outcomes: Vec<Result<Outcome, StoreError>> = stream::iter(waiting)
            .map(|(user, g)| async move { self.group(&user, &g, prometheus).await })
            .buffer_unordered(PARALLEL)
            .collect()
            .await;
        let mut reasons = Vec::new();
        for o in outcomes {
            match o {
                Ok(Outcome::Skipped) => continue,
                Ok(Outcome::Placed { raised }) => out.raised += usize::from(raised),
                Ok(Outcome::NoData(why)) => {
                    out.no_data += 1;
                    if !reasons.contains(&why) {
                        reasons.push(why);
                    }
                }
                Err(e) => {
                    out.errors += 1;
                    reasons.push(e.to_string());
                }
            }
            out.groups += 1;
        }
        if out.no_data > 0 || out.errors > 0 {
            let why = reasons.join("; ");
            counts!(
                warn,
                out,
                [groups, raised, no_data, errors],
                why,
                "forecast and scale"
            );
        } else {
            counts!(info, out, [groups, raised], "forecast and scale");
        }
        Ok(out)
    }

    /// The hour the group has to prepare now, with its start less the buffer, if any.
    fn hour(&self, g: &Group) -> Option<(i64, i64)> {
        if g.deleting() {
            return None;
        }
        let buffer = predictive::scaling(g)
            .into_iter()
            .map(predictive::buffer_ms)
            .max()?;
        let hour = predictive::hour_due(self.now_ms, buffer);
        let done = g.settings.predicted.is_some_and(|p| p.hour_ms >= hour);
        (!done).then_some((hour, hour - buffer))
    }

    async fn group(
        &self,
        user: &str,
        g: &Group,
        prometheus: Option<&(&MetricSource, Arc<dyn Prometheus>)>,
    ) -> Result<Outcome, StoreError> {
        let Some((hour, from)) = self.hour(g) else {
            return Ok(Outcome::Skipped);
        };
        let Some((source, prometheus)) = prometheus else {
            return Ok(Outcome::NoData("no metric source is set".into()));
        };
        let since = self.now_ms - HISTORY_HOURS as i64 * HOUR_MS;
        let vms = members::since(self.store, user, g, since).await?;
        let vms: Vec<&str> = vms.iter().map(String::as_str).collect();
        let mut next = g.clone();
        let mut by = None;
        for p in &g.settings.scaling_policies {
            let Some(cfg) = p.forecast_and_scale() else {
                continue;
            };
            let metric = &cfg.metric_specifications[0];
            let made = forecast::forecast(
                prometheus.as_ref(),
                source,
                metric,
                &vms,
                self.now_ms,
                self.period_ms / 1000,
            )
            .await;
            let wanted = match made {
                Ok(f) => f.and_then(|f| f.capacity_at(hour)).unwrap_or(0),
                Err(e) => {
                    return Ok(Outcome::NoData(format!("policy {}: {e}", p.policy_name)));
                }
            };
            let before = next.desired;
            next = predictive::put_in_place(&next, cfg, hour, from, wanted);
            if next.desired > before {
                by = Some(p.policy_name.clone());
            }
        }
        let raised = next.desired > g.desired;
        let ctx = Context {
            group: &g.name,
            group_arn: &g.settings.arn,
            now_ms: self.now_ms,
            audience: phantom_rules::notification::Audience::NONE,
        };
        let records: Vec<_> = by
            .filter(|_| raised)
            .map(|policy| activity::predicted(&ctx, &policy, hour, g.desired, next.desired))
            .into_iter()
            .collect();
        self.store.update_group_with(user, g, &next, &records, raised.then_some(self.now_ms)).await.inspect_err(|e| {
            tracing::warn!(user, group = g.name, error = %e, "a forecast's capacity not written; the next run decides again");
        })?;
        let capacity = next.settings.predicted.map_or(0, |p| p.capacity);
        tracing::info!(
            user,
            group = g.name,
            hour = phantom_model::time::format_seconds(phantom_model::time::from_ms(hour)),
            capacity,
            from = g.desired,
            to = next.desired,
            max = next.max,
            "forecast capacity in place"
        );
        if raised {
            let msg = Reconcile::new(user, &g.name, "a predictive scaling policy");
            if let Err(e) = self.queue.send(&msg.into(), 0).await {
                tracing::error!(group = g.name, error = %e, "could not queue a reconcile; the pulse queues it from the group's ask");
            }
        }
        Ok(Outcome::Placed { raised })
    }
}
