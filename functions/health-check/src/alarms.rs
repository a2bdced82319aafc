//! CloudWatch's alarms, run with the scheduler on its schedule (each minute): every alarm of
//! every account is read (the index `due` lists the accounts' alarms; each account's are read
//! in one Query), its metric's last periods read from the
//! store, its state decided by `phantom_rules::metric_alarm`, and the actions its state owes run:
//! its scaling policies (again each minute while it stays in the state, as CloudWatch's Auto
//! Scaling actions run), its SNS topics (once a transition).
//!
//! A state change and the claim of its actions are one compare-and-set on the alarm: a second run
//! at the same moment loses it and neither changes nor acts, so an action runs once. A run that
//! dies after the claim has not told the topic (at most once); a policy's action comes again the
//! next minute while the alarm stays in its state.

use futures::stream::{self, StreamExt};
use phantom_model::cloudwatch::{AlarmHistoryItem, MetricAlarm, StoredAlarm};
use phantom_rules::activity::{self, Context};
use phantom_rules::ec2_metrics;
use phantom_rules::metric_alarm::{self, Action};
use phantom_rules::tracking;
use phantom_seams::counts;
use phantom_seams::prometheus::{self, Connect, Prometheus};
use phantom_seams::publish::Publisher;
use phantom_seams::queue::{Reconcile, WorkQueue};
use phantom_seams::store::{Store, StoreError};
use serde::Serialize;

/// How many alarms are evaluated at once.
const PARALLEL: usize = 16;

/// What one run did.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct Evaluated {
    pub alarms: usize,
    /// Alarms that changed state.
    pub changed: usize,
    /// Actions run (a policy that changed its group's capacity, or a topic told).
    pub acted: usize,
    /// Actions that could not run (their group or policy gone, a topic refusing).
    pub failed: usize,
    /// Alarms not evaluated this run (a store error, or a write another run made first).
    pub errors: usize,
}

pub struct Watcher<'a> {
    pub store: &'a dyn Store,
    pub queue: &'a dyn WorkQueue,
    pub publisher: &'a dyn Publisher,
    /// Reaches the metric source, where alarms on `AWS/EC2` read their data.
    pub connect: &'a dyn Connect,
    pub now_ms: i64,
}

#[derive(Default)]
struct Outcome {
    changed: bool,
    acted: usize,
    failed: usize,
    /// Not evaluated: its data could not be read.
    unread: bool,
}

/// The metric source, read once a run where some alarm is on `AWS/EC2`.
type Source = Option<(
    phantom_seams::store::MetricSource,
    std::sync::Arc<dyn Prometheus>,
)>;

impl Watcher<'_> {
    pub async fn run(&self) -> Result<Evaluated, StoreError> {
        let due = self.store.due_alarms().await?;
        let mut out = Evaluated {
            alarms: due.len(),
            ..Evaluated::default()
        };
        if due.is_empty() {
            return Ok(out);
        }
        // Each account's alarms in one Query, not one GetItem an alarm.
        let mut by_user: std::collections::BTreeMap<String, usize> = Default::default();
        for (user, _) in due {
            *by_user.entry(user).or_default() += 1;
        }
        let accounts: Vec<(String, Result<Vec<StoredAlarm>, StoreError>, usize)> =
            stream::iter(by_user)
                .map(|(user, n)| async move {
                    let alarms = self.store.alarms(&user).await;
                    (user, alarms, n)
                })
                .buffer_unordered(PARALLEL)
                .collect()
                .await;
        let mut read = Vec::new();
        for (user, alarms, n) in accounts {
            match alarms {
                Ok(alarms) => read.extend(alarms.into_iter().map(|a| (user.clone(), a))),
                Err(_) => out.errors += n,
            }
        }
        let on_ec2 = read
            .iter()
            .any(|(_, a)| metric_alarm::metric(&a.alarm).is_some_and(|m| ec2_metrics::is_ec2(&m)));
        let source: Source = match on_ec2 {
            true => self
                .store
                .metric_source()
                .await?
                .map(|s| (s.clone(), self.connect.connect(&s))),
            false => None,
        };
        let source = &source;
        let outcomes: Vec<Result<Outcome, StoreError>> = stream::iter(read)
            .map(|(user, a)| async move { self.alarm(&user, a, source).await })
            .buffer_unordered(PARALLEL)
            .collect()
            .await;
        for o in outcomes {
            match o {
                Ok(o) if o.unread => out.errors += 1,
                Ok(o) => {
                    out.changed += usize::from(o.changed);
                    out.acted += o.acted;
                    out.failed += o.failed;
                }
                Err(_) => out.errors += 1,
            }
        }
        if out.errors > 0 || out.failed > 0 {
            counts!(
                warn,
                out,
                [alarms, changed, acted, failed, errors],
                "alarms"
            );
        } else {
            counts!(info, out, [alarms, changed, acted], "alarms");
        }
        Ok(out)
    }

    async fn alarm(
        &self,
        user: &str,
        mut s: StoredAlarm,
        source: &Source,
    ) -> Result<Outcome, StoreError> {
        let now = self.now_ms;
        let name = s.alarm.alarm_name.clone();
        let name = name.as_str();
        let old_state = s.alarm.state_value.clone();
        let mut history = Vec::new();
        let mut value = None;
        if let Some(metric) = metric_alarm::metric(&s.alarm) {
            let (from, to) = metric_alarm::window(&s.alarm, now);
            let data = match ec2_metrics::query(&metric) {
                Some(q) => {
                    let source = source.as_ref().map(|(s, p)| (s, p.as_ref()));
                    let statistic = metric_alarm::statistic(&s.alarm);
                    let period_ms = metric_alarm::period_ms(&s.alarm);
                    let read = match prometheus::ec2::whole_periods(from, to, period_ms) {
                        Some(range) => {
                            let ask = (&metric, &q);
                            let store = self.store;
                            prometheus::ec2::data(store, source, user, ask, &[statistic], range)
                                .await
                        }
                        None => Ok(Vec::new()),
                    };
                    match read {
                        Ok(data) => data,
                        // Not a metric without data: its state stays until it can be read.
                        Err(why) => {
                            tracing::warn!(
                                user,
                                alarm = name,
                                error = why,
                                "an alarm's AWS/EC2 data not read; its state stays"
                            );
                            return Ok(Outcome {
                                unread: true,
                                ..Outcome::default()
                            });
                        }
                    }
                }
                None => self.store.data(user, &metric, from, to).await?,
            };
            if let Some(e) = metric_alarm::evaluate(&s.alarm, &data, now) {
                value = e.value;
                // The reason is rewritten only with the state, as CloudWatch's.
                if e.state != s.alarm.state_value {
                    if let Some((next, item)) = metric_alarm::transition(
                        &s.alarm,
                        e.state,
                        &e.reason,
                        Some(&e.reason_data),
                        now,
                    ) {
                        s.alarm = next;
                        history.push(item);
                    }
                }
            }
        }
        let (account, region) = account_and_region(&s.alarm);
        let owed = metric_alarm::owed(&s, &account, now);
        if history.is_empty() && owed.is_empty() {
            return Ok(Outcome::default());
        }
        if !owed.is_empty() {
            s.acted_ms = Some(now);
        }
        // The state and the claim of its actions: one compare-and-set.
        self.store.put_alarm(user, &s, &history).await.inspect_err(|e| {
            tracing::warn!(user, alarm = name, error = %e, "an alarm's evaluation not written; the next run decides again");
        })?;
        s.version += 1;
        let changed = !history.is_empty();
        if changed {
            tracing::info!(
                user,
                alarm = name,
                from = old_state,
                to = s.alarm.state_value,
                reason = s.alarm.state_reason,
                "alarm state"
            );
        }
        let mut told: Vec<AlarmHistoryItem> = Vec::new();
        let mut out = Outcome {
            changed,
            ..Outcome::default()
        };
        for action in owed {
            let (arn, result) = match &action {
                Action::Policy { group, policy } => (
                    policy_arn(&s.alarm, group, policy),
                    self.run_policy(user, &s.alarm, (group, policy), value)
                        .await,
                ),
                Action::Topic(topic) => {
                    let notice =
                        metric_alarm::notice(&s.alarm, &old_state, topic, (&account, &region), now);
                    let sent = self.publisher.publish(&notice).await;
                    (
                        topic.clone(),
                        sent.map(|()| Some(format!("told topic {topic}")))
                            .map_err(|e| e.to_string()),
                    )
                }
            };
            match &result {
                // A policy run again that changes nothing is not news.
                Ok(None) => continue,
                Ok(Some(_)) => out.acted += 1,
                Err(why) => {
                    out.failed += 1;
                    tracing::warn!(
                        user,
                        alarm = name,
                        action = arn,
                        error = why,
                        "alarm action failed"
                    );
                }
            }
            told.push(metric_alarm::acted(
                &s,
                &arn,
                result
                    .as_ref()
                    .map(|r| r.as_deref().unwrap_or(""))
                    .map_err(String::as_str),
                now,
            ));
        }
        if !told.is_empty() {
            // The actions' history; lost to a write another run made meanwhile, only logged.
            if let Err(e) = self.store.put_alarm(user, &s, &told).await {
                tracing::warn!(user, alarm = name, error = %e, "an alarm's action history not written");
            }
        }
        Ok(out)
    }

    /// Runs a group's scaling policy for an alarm: what it changed (`None`: nothing, now), or why
    /// it could not run.
    async fn run_policy(
        &self,
        user: &str,
        a: &MetricAlarm,
        (group, policy): (&str, &str),
        value: Option<f64>,
    ) -> Result<Option<String>, String> {
        let now = self.now_ms;
        let g = match self.store.group(user, group).await {
            Ok(Some(g)) if !g.deleting() => g,
            Ok(_) => return Err(format!("group {group} does not exist")),
            Err(e) => return Err(e.to_string()),
        };
        if phantom_rules::processes::suspended(&g.settings.suspended_processes)
            .iter()
            .any(|p| p == "AlarmNotification")
        {
            return Ok(None);
        }
        let Some(p) = g
            .settings
            .scaling_policies
            .iter()
            .find(|p| p.policy_name == policy)
        else {
            return Err(format!("group {group} has no policy {policy}"));
        };
        let warmed = match p.kind {
            phantom_model::group::PolicyKind::Step { .. } => {
                let members = self
                    .store
                    .instances(user, group)
                    .await
                    .map_err(|e| e.to_string())?;
                let warmup_ms = tracking::warmup_secs(&g, p.step_warmup()) * 1000;
                tracking::warmed(&members, now, warmup_ms).len() as i64
            }
            _ => g.desired,
        };
        let threshold = a.threshold.unwrap_or(0.0);
        let Some(m) = metric_alarm::policy_move(&g, p, (value, threshold), warmed, now)? else {
            return Ok(None);
        };
        let mut next = g.clone();
        next.desired = m.to;
        if m.cooldown_ends_ms.is_some() {
            next.settings.cooldown_ends_ms = m.cooldown_ends_ms;
        }
        let ctx = Context {
            group: &g.name,
            group_arn: &g.settings.arn,
            now_ms: now,
            audience: phantom_rules::notification::Audience::NONE,
        };
        let by = format!(
            "a CloudWatch alarm {} in state {} triggered policy {policy}",
            a.alarm_name, a.state_value
        );
        let record = activity::desired_changed(&ctx, &by, g.desired, m.to);
        self.store
            .update_group_with(user, &g, &next, &[record], Some(now))
            .await
            .map_err(|e| {
                format!("the group's change not written ({e}); the next minute tries again")
            })?;
        let msg = Reconcile::new(user, group, "a CloudWatch alarm");
        if let Err(e) = self.queue.send(&msg.into(), 0).await {
            tracing::error!(group, error = %e, "could not queue a reconcile; the pulse queues it from the group's ask");
        }
        tracing::info!(
            user,
            group,
            policy,
            alarm = a.alarm_name,
            from = g.desired,
            to = m.to,
            "alarm scaled"
        );
        Ok(Some(format!(
            "changed the desired capacity of {group} from {} to {}",
            g.desired, m.to
        )))
    }
}

/// The account and region an alarm's ARN names (`arn:aws:cloudwatch:<region>:<account>:alarm:..`).
fn account_and_region(a: &MetricAlarm) -> (String, String) {
    let parts: Vec<&str> = a.alarm_arn.split(':').collect();
    (
        parts.get(4).copied().unwrap_or_default().to_string(),
        parts.get(3).copied().unwrap_or_default().to_string(),
    )
}

/// The ARN of the action as the alarm names it.
fn policy_arn(a: &MetricAlarm, group: &str, policy: &str) -> String {
    a.alarm_actions
        .iter()
        .chain(&a.ok_actions)
        .chain(&a.insufficient_data_actions)
        .find(|arn| {
            arn.ends_with(&format!(
                ":autoScalingGroupName/{group}:policyName/{policy}"
            ))
        })
        .cloned()
        .unwrap_or_else(|| format!("{group}/{policy}"))
}
