//! Target tracking and step policy alarms, run with the scheduler on its schedule: each due group
//! with an enabled target tracking policy or step policy alarm gets each one's last datapoints
//! from the metric source (one range query each), `phantom_rules::tracking::decide` and
//! `phantom_rules::alarm` say what each asks, the largest capacity wins, and a move is one conditional
//! write of the group with its scaling activity, then a reconcile.
//!
//! It keeps nothing between runs (Prometheus keeps the history), so a run that dies half-way
//! leaves nothing half-done, and a write that loses a race is decided again by the next run.
//! A group whose metric has no data, or a source that cannot be reached, stays as it is; the run
//! says so in its one log line. Groups without such a policy are never read here (the index of
//! due groups lists only the groups with work for the run).

use futures::stream::{self, StreamExt};
use phantom_model::group::{MetricAggregation, ScalingPolicy};
use phantom_model::refresh::InstanceRefresh;
use phantom_model::tracking::TargetTrackingConfiguration;
use phantom_rules::activity::{self, Context};
use phantom_rules::alarm;
use phantom_rules::group::Group;
use phantom_rules::refresh::{self, Watch};
use phantom_rules::tracking::{self, Decision, Fleet, Reading};
use phantom_seams::counts;
use phantom_seams::prometheus::{self, Prometheus, QueryError, Range};
use phantom_seams::queue::{Reconcile, WorkQueue};
use phantom_seams::store::{MetricSource, Store, StoreError};
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
    /// Evaluates the metric policies of the due groups (as the index listed them, as the run read
    /// them: a group without such a policy costs no more reads).
    pub async fn run(&self, due: &[(String, Group)]) -> Result<Evaluated, StoreError> {
        let mut out = Evaluated::default();
        if due.is_empty() {
            return Ok(out);
        }
        // Read once a run, and only when some group may need it.
        let source = self.store.metric_source().await?;
        let prometheus = source.as_ref().map(|s| (s, self.connect.connect(s)));
        let prometheus = prometheus.as_ref();
        // Owned: a stream of borrowed ones cannot be proven `Send` for a spawned task.
        let outcomes: Vec<Result<Outcome, StoreError>> = stream::iter(due.to_vec())
            .map(|(user, g)| async move { self.group(&user, &g, prometheus).await })
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
                Err(e) => {
                    out.errors += 1;
                    reasons.push(e.to_string());
                }
            }
            out.groups += 1;
        }
        if out.groups > 0 {
            let level_warn = out.no_data > 0 || out.errors > 0;
            let why = reasons.join("; ");
            if level_warn {
                counts!(
                    warn,
                    out,
                    [groups, scaled, no_data, errors, queries],
                    why,
                    "metric policies"
                );
            } else {
                counts!(info, out, [groups, scaled, queries], "metric policies");
            }
        }
        Ok(out)
    }

    async fn group(
        &self,
        user: &str,
        g: &Group,
        prometheus: Option<&(&MetricSource, Arc<dyn Prometheus>)>,
    ) -> Result<Outcome, StoreError> {
        let name = g.name.as_str();
        let policies = &g.settings.scaling_policies;
        let tracking: Vec<&ScalingPolicy> =
            policies.iter().filter(|p| p.tracking().is_some()).collect();
        let alarmed: Vec<&ScalingPolicy> = policies
            .iter()
            .filter(|p| p.watched_alarm().is_some())
            .collect();
        // The alarms a running instance refresh watches (AlarmSpecification), policy and alarm.
        let running = refresh::active(&g.settings.instance_refreshes);
        let watched: Vec<Watch> = running
            .map(|r| refresh::watches(&g.settings, r))
            .unwrap_or_default();
        if (tracking.is_empty() && alarmed.is_empty() && watched.is_empty()) || g.deleting() {
            return Ok(Outcome::Skipped);
        }
        if let (Some(r), false) = (running, watched.is_empty()) {
            let (failed, queries) = self.watch_refresh(user, g, r, &watched, prometheus).await?;
            if failed || (tracking.is_empty() && alarmed.is_empty()) {
                return Ok(Outcome::Stayed { queries });
            }
        }
        // AWS's process for alarm-driven scaling: suspended, the policies are not run.
        if phantom_rules::processes::suspended(&g.settings.suspended_processes)
            .iter()
            .any(|p| p == "AlarmNotification")
        {
            return Ok(Outcome::Stayed { queries: 0 });
        }
        // Policies on CloudWatch metrics read Phantom's store; the others need the source.
        let source = prometheus.map(|(s, _)| *s);
        let members = self.store.instances(user, name).await?;
        let mut ask = Asker {
            tracker: self,
            prometheus: prometheus.map(|(_, p)| p.as_ref()),
            queries: 0,
        };
        let mut readings = Vec::new();
        for p in &tracking {
            let (cfg, warmup) = p.tracking().expect("filtered to tracking policies");
            let warmed = tracking::warmed(
                &members,
                self.now_ms,
                tracking::warmup_secs(g, warmup) * 1000,
            );
            let datapoints = if warmed.is_empty() {
                vec![None; tracking::DATAPOINTS as usize]
            } else {
                match ask.tracked(user, p, cfg, &warmed, source).await {
                    Ok(d) => d,
                    Err(why) => return Ok(ask.no_data(why)),
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
        // What each policy that acts asks for; the largest capacity wins (AWS's rule when
        // several policies act at once).
        let mut asks: Vec<Change> = Vec::new();
        // A ForecastAndScale policy's capacity for the hour is a floor the others keep.
        let min = phantom_rules::predictive::floor(g, self.now_ms);
        if let Some(d) = tracking::decide(&readings, g.desired, min, g.max) {
            asks.push(tracking_change(tracking[d.by], &readings[d.by], d));
        }
        for p in &alarmed {
            let a = p.watched_alarm().expect("filtered to alarmed policies");
            // Its own warm-up (EstimatedInstanceWarmup), else the group's.
            let warmup_ms = tracking::warmup_secs(g, p.step_warmup()) * 1000;
            let warmed_now = tracking::warmed(&members, self.now_ms, warmup_ms);
            // An expression over the group's VMs has nothing to read while none serves.
            if warmed_now.is_empty() && a.expression.contains(tracking::INSTANCES) {
                continue;
            }
            let Some(source) = source else {
                return Ok(ask.no_data("no metric source is set".into()));
            };
            let promql = tracking::fill(&a.expression, &source.instance_label, &warmed_now);
            let datapoints = match ask
                .datapoints(p, &promql, a.evaluation_periods, p.aggregation())
                .await
            {
                Ok(d) => d,
                Err(why) => return Ok(ask.no_data(why)),
            };
            let Some(value) = alarm::breached(a, &datapoints) else {
                continue;
            };
            let bounds = (min, g.max);
            let warmed = warmed_now.len() as i64;
            if let Some(to) = alarm::step_capacity(p, value, a.threshold, g.desired, warmed, bounds)
            {
                asks.push(Change {
                    to,
                    policy: p,
                    alarm: a.alarm_name.clone(),
                    reading: format!(
                        "The alarm's metric was {value} against the threshold {}.",
                        a.threshold
                    ),
                });
            }
        }
        let queries = ask.queries;
        let Some(change) = asks.into_iter().max_by_key(|c| c.to) else {
            // A target tracking policy without its latest datapoint cannot scale: say so.
            if let Some((r, p)) = readings
                .iter()
                .zip(&tracking)
                .find(|(r, _)| r.now().is_none())
            {
                let why = if r.fleet.warmed == 0 {
                    "no VM serves past its warm-up yet"
                } else {
                    "no datapoint now"
                };
                return Ok(Outcome::NoData {
                    queries,
                    why: format!("policy {}: {why}", p.policy_name),
                });
            }
            return Ok(Outcome::Stayed { queries });
        };
        self.scale(user, g, change).await?;
        Ok(Outcome::Scaled { queries })
    }

    /// Evaluates the alarms a running instance refresh watches; the first in ALARM fails it
    /// (rolled back with AutoRollback), written as a compare-and-set on the group as read, and a
    /// reconcile follows. Whether it failed it (not when none is in ALARM, none could be read, or
    /// the write lost a race: the next run asks again), and the range queries made.
    async fn watch_refresh(
        &self,
        user: &str,
        g: &Group,
        r: &InstanceRefresh,
        watched: &[Watch<'_>],
        prometheus: Option<&(&MetricSource, Arc<dyn Prometheus>)>,
    ) -> Result<(bool, usize), StoreError> {
        let source = prometheus.map(|(s, _)| *s);
        let members = self.store.instances(user, &g.name).await?;
        let mut ask = Asker {
            tracker: self,
            prometheus: prometheus.map(|(_, p)| p.as_ref()),
            queries: 0,
        };
        for watch in watched {
            let (p, warmup) = match *watch {
                Watch::Step(p, _) => (p, p.step_warmup()),
                Watch::Tracking { policy, warmup, .. } => (policy, warmup),
            };
            let warmup_ms = tracking::warmup_secs(g, warmup) * 1000;
            let warmed = tracking::warmed(&members, self.now_ms, warmup_ms);
            let (name, in_alarm): (&str, bool) = match *watch {
                Watch::Step(p, a) => {
                    if warmed.is_empty() && a.expression.contains(tracking::INSTANCES) {
                        continue;
                    }
                    let Some(source) = source else {
                        continue;
                    };
                    let promql = tracking::fill(&a.expression, &source.instance_label, &warmed);
                    let Ok(datapoints) = ask
                        .datapoints(p, &promql, a.evaluation_periods, p.aggregation())
                        .await
                    else {
                        continue;
                    };
                    (&a.alarm_name, alarm::breached(a, &datapoints).is_some())
                }
                // As the policy's own scaling reads it: its metric over the warmed VMs.
                Watch::Tracking {
                    config, high, name, ..
                } => {
                    if warmed.is_empty() {
                        continue;
                    }
                    let Ok(datapoints) = ask.tracked(user, p, config, &warmed, source).await else {
                        continue;
                    };
                    let alarmed = tracking::in_alarm(&datapoints, config.target_value, high);
                    (name, alarmed)
                }
            };
            if !in_alarm {
                continue;
            }
            let now =
                phantom_model::time::format_timestamp(phantom_model::time::from_ms(self.now_ms));
            let failed = refresh::alarmed(r, name, &members, self.now_ms, &now);
            let mut next = g.clone();
            next.settings = refresh::settled(&g.settings, &failed);
            // A lost race is decided again by the next run, from what is there then.
            match self
                .store
                .update_group_with(user, g, &next, &[], Some(self.now_ms))
                .await
            {
                Ok(()) => {}
                Err(StoreError::Conflict | StoreError::NotFound) => {
                    return Ok((false, ask.queries))
                }
                Err(e) => return Err(e),
            }
            tracing::info!(
                user,
                group = g.name,
                refresh = r.instance_refresh_id,
                alarm = name,
                status = ?failed.status,
                "instance refresh alarm"
            );
            let msg = Reconcile::new(user, &g.name, "an instance refresh's alarm");
            if let Err(e) = self.queue.send(&msg.into(), 0).await {
                tracing::error!(group = g.name, error = %e, "could not queue a reconcile; the pulse queues it from the group's ask");
            }
            return Ok((true, ask.queries));
        }
        Ok((false, ask.queries))
    }

    /// Writes the new desired capacity with its activity, as a compare-and-set on the group as
    /// read, then asks the provisioner to reconcile. A lost race is left to the next run.
    async fn scale(&self, user: &str, g: &Group, c: Change<'_>) -> Result<(), StoreError> {
        let mut next = g.clone();
        next.desired = c.to;
        let ctx = Context {
            group: &g.name,
            group_arn: &g.settings.arn,
            now_ms: self.now_ms,
            audience: phantom_rules::notification::Audience::NONE,
        };
        let record = activity::alarmed(
            &ctx,
            &c.alarm,
            &c.policy.policy_name,
            g.desired,
            c.to,
            &c.reading,
        );
        self.store.update_group_with(user, g, &next, &[record], Some(self.now_ms)).await.inspect_err(|e| {
            tracing::warn!(user, group = g.name, error = %e, "a metric policy's change not written; the next run decides again");
        })?;
        tracing::info!(
            user,
            group = g.name,
            policy = c.policy.policy_name,
            alarm = c.alarm,
            from = g.desired,
            to = c.to,
            reading = c.reading,
            "metric policy scaled"
        );
        let msg = Reconcile::new(user, &g.name, "a metric policy");
        if let Err(e) = self.queue.send(&msg.into(), 0).await {
            tracing::error!(group = g.name, error = %e, "could not queue a reconcile; the pulse queues it from the group's ask");
        }
        Ok(())
    }
}

/// A change one policy asks for, and what its activity says.
struct Change<'a> {
    to: i64,
    policy: &'a ScalingPolicy,
    alarm: String,
    /// The sentence after AWS's words: the metric against the target or threshold.
    reading: String,
}

/// A target tracking policy's change: its high condition scales out, its low one in (AWS's
/// AlarmHigh, AlarmLow).
fn tracking_change<'a>(p: &'a ScalingPolicy, r: &Reading, d: Decision) -> Change<'a> {
    let (cfg, _) = p.tracking().expect("the decision is a tracking policy's");
    let alarm = p
        .alarms
        .get(usize::from(!d.up))
        .map_or_else(|| p.policy_name.clone(), |a| a.alarm_name.clone());
    let value = r.now().expect("a policy that asks has its datapoint");
    Change {
        to: d.to,
        policy: p,
        alarm,
        reading: format!(
            "The metric {} was {value} against the target {}.",
            metric_name(cfg),
            cfg.target_value
        ),
    }
}

/// One group's range queries, counted.
struct Asker<'a> {
    tracker: &'a Tracker<'a>,
    /// None: no metric source is set (policies on CloudWatch metrics need none).
    prometheus: Option<&'a dyn Prometheus>,
    queries: usize,
}

impl Asker<'_> {
    /// The last `points` datapoints of `promql`, a metric period apart, or why there are none;
    /// several series reduced `by` an aggregation where one is given (a step policy's), else an
    /// error.
    async fn datapoints(
        &mut self,
        p: &ScalingPolicy,
        promql: &str,
        points: i64,
        by: Option<MetricAggregation>,
    ) -> Result<Vec<Option<f64>>, String> {
        let Some(source) = self.prometheus else {
            return Err("no metric source is set".into());
        };
        self.queries += 1;
        let range = Range::last(points, self.tracker.period_ms, self.tracker.now_ms);
        let series = source
            .query_range(promql, range)
            .await
            .map_err(|e| match e {
                QueryError::Refused(why) => format!(
                    "policy {}: Prometheus refused its query: {why}",
                    p.policy_name
                ),
                QueryError::Unreachable(why) => {
                    format!("the metric source could not be asked: {why}")
                }
            })?;
        match by {
            Some(by) => Ok(prometheus::aggregated(&series, range, by)),
            None => prometheus::datapoints(&series, range)
                .map_err(|e| format!("policy {}: {e}", p.policy_name)),
        }
    }

    /// A target tracking policy's last datapoints over the VMs `warmed`: a CloudWatch metric's
    /// from Phantom's store, else its PromQL's from the metric source.
    async fn tracked(
        &mut self,
        user: &str,
        p: &ScalingPolicy,
        cfg: &TargetTrackingConfiguration,
        warmed: &[&str],
        source: Option<&MetricSource>,
    ) -> Result<Vec<Option<f64>>, String> {
        let t = self.tracker;
        let n = tracking::DATAPOINTS as usize;
        if let Some((metric, statistic, unit)) = tracking::cloudwatch_metric(cfg) {
            let from = t.now_ms - (n as i64 + 1) * t.period_ms;
            let data = match phantom_rules::ec2_metrics::query(&metric) {
                // AWS/EC2 is read through from the metric source.
                Some(q) => {
                    self.queries += 1;
                    let source = source.zip(self.prometheus);
                    // The newest datapoints, as the PromQL policies read theirs.
                    let range = Range::last(n as i64, t.period_ms, t.now_ms);
                    let ask = (&metric, &q);
                    prometheus::ec2::data(t.store, source, user, ask, &[statistic], range).await?
                }
                None => t
                    .store
                    .data(user, &metric, from, t.now_ms)
                    .await
                    .map_err(|e| e.to_string())?,
            };
            return Ok(phantom_rules::metric_data::series(
                &data,
                (statistic, unit),
                t.now_ms,
                t.period_ms,
                n,
            ));
        }
        let Some(source) = source else {
            return Err("no metric source is set".into());
        };
        let Some(promql) =
            tracking::promql(cfg, &source.instance_label, warmed, t.period_ms / 1000)
        else {
            return Err(format!("policy {} names no metric", p.policy_name));
        };
        self.datapoints(p, &promql, tracking::DATAPOINTS, None)
            .await
    }

    fn no_data(&self, why: String) -> Outcome {
        Outcome::NoData {
            queries: self.queries,
            why,
        }
    }
}

/// How an activity names a policy's metric.
fn metric_name(cfg: &TargetTrackingConfiguration) -> String {
    if let Some(p) = &cfg.predefined_metric_specification {
        return p.predefined_metric_type.as_str().to_string();
    }
    let Some(c) = &cfg.customized_metric_specification else {
        return "its metric".into();
    };
    match (&c.namespace, &c.metric_name, c.metrics.first()) {
        (Some(ns), Some(name), _) => format!("{ns} {name}"),
        (_, _, Some(m)) => m.label.clone().unwrap_or_else(|| m.id.clone()),
        _ => "its metric".into(),
    }
}
