//! Target tracking, run with the scheduler on its schedule: each due group with an enabled target
//! tracking policy gets each such policy's last datapoints from the metric source (one range
//! query a policy), `phantom::tracking::decide` says whether its desired capacity moves, and a
//! move is one conditional write of the group with its scaling activity, then a reconcile.
//!
//! It keeps nothing between runs (Prometheus keeps the history), so a run that dies half-way
//! leaves nothing half-done, and a write that loses a race is decided again by the next run.
//! A group whose metric has no data, or a source that cannot be reached, stays as it is; the run
//! says so in its one log line. Groups without such a policy are never read here (the index of
//! due groups lists only the groups with work for the run).

use futures::stream::{self, StreamExt};
use phantom::activity::{self, Context};
use phantom::group::Group;
use phantom::model::group::ScalingPolicy;
use phantom::model::instance::{Lifecycle, Member};
use phantom::model::tracking::TargetTrackingConfiguration;
use phantom::prometheus::{self, Prometheus, QueryError, Range};
use phantom::queue::{Reconcile, WorkQueue};
use phantom::store::{MetricSource, Store, StoreError};
use phantom::tracking::{self, Decision, Fleet, Reading};
use serde::Serialize;
use std::sync::Arc;

/// How many groups are evaluated at once.
const PARALLEL: usize = 16;

/// What one run of target tracking did.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct Evaluated {
    /// Groups with an enabled target tracking policy.
    pub groups: usize,
    /// Groups whose desired capacity it changed.
    pub scaled: usize,
    /// Groups left as they are because a policy's metric had no data or could not be read.
    pub no_data: usize,
    /// Groups not evaluated this run (a store error, or a write that lost a race).
    pub errors: usize,
    /// Range queries made.
    pub queries: usize,
}

/// The run's settings: where metrics come from, and the metric period (a datapoint's width).
pub struct Tracker<'a> {
    pub store: &'a dyn Store,
    pub queue: &'a dyn WorkQueue,
    pub connect: &'a dyn prometheus::Connect,
    pub period_ms: i64,
    pub now_ms: i64,
}

/// One group's outcome.
enum Outcome {
    Skipped,
    Stayed { queries: usize },
    NoData { queries: usize, why: String },
    Scaled { queries: usize },
}

impl Tracker<'_> {
    /// Evaluates the due groups (as the index listed them) that track a target.
    pub async fn run(&self, due: &[(String, String)]) -> Result<Evaluated, StoreError> {
        let mut out = Evaluated::default();
        if due.is_empty() {
            return Ok(out);
        }
        // Read once a run, and only when some group may need it.
        let source = self.store.metric_source().await?;
        let prometheus = source.as_ref().map(|s| (s, self.connect.connect(s)));
        let prometheus = prometheus.as_ref();
        // Owned pairs: a stream of borrowed ones cannot be proven `Send` for a spawned task.
        let outcomes: Vec<Result<Outcome, StoreError>> = stream::iter(due.to_vec())
            .map(|(user, group)| async move { self.group(&user, &group, prometheus).await })
            .buffer_unordered(PARALLEL)
            .collect()
            .await;
        let mut reasons = Vec::new();
        for o in outcomes {
            match o {
                Ok(Outcome::Skipped) => continue,
                Ok(Outcome::Stayed { queries }) => out.queries += queries,
                Ok(Outcome::NoData { queries, why }) => {
                    out.queries += queries;
                    out.no_data += 1;
                    if !reasons.contains(&why) {
                        reasons.push(why);
                    }
                }
                Ok(Outcome::Scaled { queries }) => {
                    out.queries += queries;
                    out.scaled += 1;
                }
                Err(_) => out.errors += 1,
            }
            out.groups += 1;
        }
        if out.groups > 0 {
            let level_warn = out.no_data > 0 || out.errors > 0;
            let why = reasons.join("; ");
            if level_warn {
                tracing::warn!(
                    groups = out.groups,
                    scaled = out.scaled,
                    no_data = out.no_data,
                    errors = out.errors,
                    queries = out.queries,
                    why,
                    "target tracking"
                );
            } else {
                tracing::info!(
                    groups = out.groups,
                    scaled = out.scaled,
                    queries = out.queries,
                    "target tracking"
                );
            }
        }
        Ok(out)
    }

    async fn group(
        &self,
        user: &str,
        name: &str,
        prometheus: Option<&(&MetricSource, Arc<dyn Prometheus>)>,
    ) -> Result<Outcome, StoreError> {
        let Some(g) = self.store.group(user, name).await? else {
            return Ok(Outcome::Skipped);
        };
        let policies: Vec<&ScalingPolicy> = g
            .settings
            .scaling_policies
            .iter()
            .filter(|p| p.tracking().is_some())
            .collect();
        if policies.is_empty() || g.deleting() {
            return Ok(Outcome::Skipped);
        }
        // AWS's process for alarm-driven scaling: suspended, the policies are not run.
        if phantom::processes::suspended(&g.settings.suspended_processes)
            .iter()
            .any(|p| p == "AlarmNotification")
        {
            return Ok(Outcome::Stayed { queries: 0 });
        }
        let Some((source, prometheus)) = prometheus else {
            return Ok(Outcome::NoData {
                queries: 0,
                why: "no metric source is set".into(),
            });
        };
        let members = self.store.instances(user, name).await?;
        let mut readings = Vec::new();
        let mut queries = 0;
        for p in &policies {
            let (cfg, warmup) = p.tracking().expect("filtered to tracking policies");
            let warmup_ms = warmup_secs(&g, warmup) * 1000;
            let warmed = warmed(&members, self.now_ms, warmup_ms);
            let datapoints = if warmed.is_empty() {
                vec![None; tracking::DATAPOINTS as usize]
            } else {
                queries += 1;
                let promql =
                    tracking::promql(cfg, &source.instance_label, &warmed, self.period_ms / 1000);
                let range = Range::last(tracking::DATAPOINTS, self.period_ms, self.now_ms);
                let read = prometheus
                    .query_range(&promql, range)
                    .await
                    .map_err(|e| match e {
                        QueryError::Refused(why) => format!(
                            "policy {}: Prometheus refused its query: {why}",
                            p.policy_name
                        ),
                        QueryError::Unreachable(why) => {
                            format!("the metric source could not be asked: {why}")
                        }
                    })
                    .and_then(|series| {
                        prometheus::datapoints(&series, range)
                            .map_err(|e| format!("policy {}: {e}", p.policy_name))
                    });
                match read {
                    Ok(d) => d,
                    Err(why) => return Ok(Outcome::NoData { queries, why }),
                }
            };
            readings.push(Reading {
                target: cfg.target_value,
                disable_scale_in: cfg.disable_scale_in,
                datapoints,
                fleet: Fleet {
                    desired: g.desired,
                    warmed: warmed.len() as i64,
                },
            });
        }
        let Some(d) = tracking::decide(&readings, g.desired, g.min, g.max) else {
            // A policy without its latest datapoint cannot scale: say so.
            if let Some(i) = readings.iter().position(|r| r.now().is_none()) {
                return Ok(Outcome::NoData {
                    queries,
                    why: format!("policy {}: no datapoint", policies[i].policy_name),
                });
            }
            return Ok(Outcome::Stayed { queries });
        };
        self.scale(user, &g, policies[d.by], &readings[d.by], d)
            .await?;
        Ok(Outcome::Scaled { queries })
    }

    /// Writes the new desired capacity with its activity, as a compare-and-set on the group as
    /// read, then asks the provisioner to reconcile. A lost race is left to the next run.
    async fn scale(
        &self,
        user: &str,
        g: &Group,
        p: &ScalingPolicy,
        r: &Reading,
        d: Decision,
    ) -> Result<(), StoreError> {
        let (cfg, _) = p.tracking().expect("the decision is a tracking policy's");
        let mut next = g.clone();
        next.desired = d.to;
        let ctx = Context {
            group: &g.name,
            group_arn: &g.settings.arn,
            now_ms: self.now_ms,
        };
        // The high condition scales out, the low one in (AWS's AlarmHigh, AlarmLow).
        let alarm = p
            .alarms
            .get(usize::from(!d.up))
            .map(|a| a.alarm_name.as_str())
            .unwrap_or(p.policy_name.as_str());
        let what = activity::Tracked {
            alarm,
            policy: &p.policy_name,
            metric: &metric_name(cfg),
            value: r.now().expect("a policy that asks has its datapoint"),
            target: cfg.target_value,
        };
        let record = activity::tracked(&ctx, &what, g.desired, d.to);
        self.store.update_group_with(user, g, &next, &[record]).await.inspect_err(|e| {
            tracing::warn!(user, group = g.name, error = %e, "target tracking's change not written; the next run decides again");
        })?;
        tracing::info!(
            user,
            group = g.name,
            policy = p.policy_name,
            from = g.desired,
            to = d.to,
            metric = what.value,
            target = what.target,
            "target tracking scaled"
        );
        let msg = Reconcile::new(user, &g.name, "a target tracking policy");
        if let Err(e) = self.queue.send(&msg.into(), 0).await {
            tracing::error!(group = g.name, error = %e, "could not queue a reconcile; the health sweep will find it");
        }
        Ok(())
    }
}

/// A policy's warm-up: its own, else the group's DefaultInstanceWarmup, else its DefaultCooldown
/// (AWS's order for EstimatedInstanceWarmup).
fn warmup_secs(g: &Group, policy: Option<i64>) -> i64 {
    policy
        .or(g.settings.default_instance_warmup)
        .unwrap_or(g.settings.default_cooldown)
}

/// The ids of the VMs that serve past their warm-up: the ones whose load the metric measures.
fn warmed(members: &[Member], now_ms: i64, warmup_ms: i64) -> Vec<&str> {
    members
        .iter()
        .filter(|m| m.healthy && m.lifecycle == Lifecycle::InService)
        .filter(|m| now_ms >= m.in_group_since_ms() + warmup_ms)
        .map(|m| m.id.as_str())
        .collect()
}

/// How an activity names a policy's metric.
fn metric_name(cfg: &TargetTrackingConfiguration) -> String {
    if let Some(p) = &cfg.predefined_metric_specification {
        return p.predefined_metric_type.as_str().to_string();
    }
    let m = cfg
        .customized_metric_specification
        .as_ref()
        .and_then(|c| c.metrics.first())
        .expect("a policy without a predefined metric has its one customized query");
    m.label.clone().unwrap_or_else(|| m.id.clone())
}
