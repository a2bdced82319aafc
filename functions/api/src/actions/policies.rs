//! Scaling policies: PutScalingPolicy, DescribePolicies, DeletePolicy (the group's settings,
//! `phantom_rules::policy`) and ExecutePolicy, which changes the desired capacity as the policy says,
//! honouring the group's cooldown when asked, and records the change as a scaling activity.

use super::{change_group, groups_named_or_all, names};
use crate::App;
use phantom_model::group::Alarm;
use phantom_model::request::{DeletePolicy, DescribePolicies, ExecutePolicy, PutScalingPolicy};
use phantom_model::response;
use phantom_model::tracking::MetricSource;
use phantom_rules::activity::{self, Context};
use phantom_rules::group::Group;
use phantom_rules::identity::Caller;
use phantom_rules::policy::{self, PolicyKind, MAX_POLICIES};
use phantom_rules::predictive;
use phantom_rules::tracking;
use phantom_seams::prometheus::QueryError;
use phantom_seams::store::Record;
use phantom_wire::{paging, ApiError, ApiResult};
use std::sync::Mutex;

fn arn(app: &App, caller: &Caller, group: &str, name: &str) -> String {
    format!(
        "arn:aws:autoscaling:{}:{}:scalingPolicy:{}:autoScalingGroupName/{group}:policyName/{name}",
        app.config.region,
        caller.account_id,
        phantom_rules::ids::uuid()
    )
}

/// A target tracking policy's two alarms, named as AWS names those it makes for one: shown in
/// DescribeAlarms (`phantom_rules::policy_alarms`); the policy acts on its own readings.
fn alarms(app: &App, caller: &Caller, group: &str) -> Vec<Alarm> {
    let id = phantom_rules::ids::uuid();
    ["AlarmHigh", "AlarmLow"]
        .into_iter()
        .map(|which| {
            let name = format!("TargetTracking-{group}-{which}-{id}");
            Alarm {
                alarm_arn: format!(
                    "arn:aws:cloudwatch:{}:{}:alarm:{name}",
                    app.config.region, caller.account_id
                ),
                alarm_name: name,
            }
        })
        .collect()
}

/// A metric's query (`promql`, written for the source), asked of the metric source before what
/// follows it is kept: a query Prometheus refuses is the caller's ValidationError, in
/// Prometheus's words. A source that cannot be reached now does not block it (the runs say so
/// while it lasts).
pub async fn check_promql(
    app: &App,
    promql: impl FnOnce(&MetricSource) -> Option<String>,
) -> ApiResult<()> {
    let Some(source) = app.store.metric_source().await? else {
        return Err(ApiError::validation(
            "No metric source is set in this deployment, so there is no metric to follow: an \
             administrator sets one first (phantomctl metric-source set).",
        ));
    };
    // None: a metric that is not PromQL (a CloudWatch metric's, read from Phantom's store).
    let Some(promql) = promql(&source) else {
        return Ok(());
    };
    match app.metrics.connect(&source).query(&promql).await {
        Ok(_) => Ok(()),
        Err(QueryError::Refused(why)) => Err(ApiError::validation(format!(
            "The metric's query was refused by Prometheus: {why} (the query: {promql})"
        ))),
        Err(QueryError::Unreachable(why)) => {
            tracing::warn!(error = %why, "the metric source could not check a query");
            Ok(())
        }
    }
}

/// Any VM id will do: the check is whether Prometheus takes the query.
const SOME_VM: &[&str] = &["i-00000000"];

/// For a step policy's alarm: its expression, filled as a run fills it.
pub fn alarm_promql(expression: &str, source: &MetricSource) -> String {
    tracking::fill(expression, &source.instance_label, SOME_VM)
}

pub async fn put(
    app: &App,
    caller: &Caller,
    input: PutScalingPolicy,
) -> ApiResult<response::PolicyArn> {
    let group = &input.auto_scaling_group_name;
    let name = &input.policy_name;
    let fresh = arn(app, caller, group, name);
    let asked = policy::document(&input, group, &fresh)?;
    if let PolicyKind::TargetTracking {
        target_tracking_configuration,
        ..
    } = &asked.kind
    {
        // A CloudWatch metric is read from Phantom's store: no query to check, no source needed.
        if tracking::cloudwatch_metric(target_tracking_configuration).is_none() {
            check_promql(app, |s| {
                tracking::promql(
                    target_tracking_configuration,
                    &s.instance_label,
                    SOME_VM,
                    app.metric_period_ms / 1000,
                )
            })
            .await?;
        }
    }
    if let PolicyKind::Predictive {
        predictive_scaling_configuration: c,
    } = &asked.kind
    {
        // Each of its metrics' queries, asked of the source before the policy is kept.
        let period = app.metric_period_ms / 1000;
        let q = |s: &MetricSource| {
            predictive::promql(
                &c.metric_specifications[0],
                &s.instance_label,
                SOME_VM,
                period,
            )
        };
        check_promql(app, |s| Some(q(s).load)).await?;
        if let Some(source) = app.store.metric_source().await? {
            if let Some((scaling, capacity)) = q(&source).scaling_and_capacity {
                check_promql(app, |_| Some(scaling)).await?;
                check_promql(app, |_| Some(capacity)).await?;
            }
        }
    }
    let fresh_alarms = match asked.kind {
        PolicyKind::TargetTracking { .. } => alarms(app, caller, group),
        _ => Vec::new(),
    };
    let kept = Mutex::new((String::new(), Vec::new()));
    change_group(app, caller, group, None, |g| {
        let mut list = g.settings.scaling_policies.clone();
        let existing = list.iter().position(|p| &p.policy_name == name);
        // A policy put again keeps its ARN (webhooks and alarms name it), its webhook and, if it
        // still tracks a target or steps, its alarms.
        let old = existing.map(|i| &list[i]);
        let arn = old.map_or(fresh.clone(), |p| p.arn.clone());
        let doc = policy::document(&input, group, &arn)?;
        let alarm = match &doc.kind {
            PolicyKind::Step { .. } => old.and_then(|p| p.alarm.clone()),
            _ => None,
        };
        let tracked_before = old.filter(|p| matches!(p.kind, PolicyKind::TargetTracking { .. }));
        let alarms = match (&doc.kind, tracked_before) {
            (PolicyKind::TargetTracking { .. }, Some(p)) => p.alarms.clone(),
            (PolicyKind::TargetTracking { .. }, _) => fresh_alarms.clone(),
            _ => alarm.iter().map(Alarm::from).collect(),
        };
        let doc = policy::ScalingPolicy {
            webhook: old.and_then(|p| p.webhook.clone()),
            alarms,
            alarm,
            ..doc
        };
        *kept.lock().expect("no panic while held") = (arn, doc.alarms.clone());
        match existing {
            Some(i) => list[i] = doc,
            None if list.len() >= MAX_POLICIES => {
                return Err(ApiError::limit_exceeded(format!(
                    "Group {group} has {MAX_POLICIES} scaling policies, the most it may have."
                )))
            }
            None => list.push(doc),
        }
        let mut next = g.clone();
        next.settings.scaling_policies = list;
        Ok(next)
    })
    .await?;
    let (arn, alarms) = kept.into_inner().expect("no panic while held");
    Ok(response::PolicyArn {
        policy_arn: arn,
        alarms,
    })
}

/// The group a request means: named, or read from a policy ARN.
fn group_of<'a>(group: Option<&'a str>, policy: &'a str) -> ApiResult<&'a str> {
    if let Some(g) = group {
        return Ok(g);
    }
    policy
        .split_once(":autoScalingGroupName/")
        .and_then(|(_, rest)| rest.split_once(":policyName/"))
        .map(|(g, _)| g)
        .ok_or_else(|| {
            ApiError::validation("AutoScalingGroupName is required unless PolicyName is an ARN.")
        })
}

pub async fn delete(app: &App, caller: &Caller, input: DeletePolicy) -> ApiResult<()> {
    let wanted = &input.policy_name;
    let group = group_of(input.auto_scaling_group_name.as_deref(), wanted)?;
    change_group(app, caller, group, None, |g| {
        let list = &g.settings.scaling_policies;
        if !list.iter().any(|p| p.is(wanted)) {
            return Err(no_policy(wanted, group));
        }
        let mut next = g.clone();
        next.settings.scaling_policies.retain(|p| !p.is(wanted));
        Ok(next)
    })
    .await?;
    Ok(())
}

/// Tools take a ValidationError saying "not found" for a policy already gone (Terraform's
/// destroy does).
fn no_policy(wanted: &str, group: &str) -> ApiError {
    ApiError::validation(format!(
        "Policy {wanted} not found for AutoScalingGroup {group}"
    ))
}

/// The caller's policies, of one group or all, filtered by name (or ARN) and type, by group then
/// name, paged.
pub async fn describe(
    app: &App,
    caller: &Caller,
    input: DescribePolicies,
) -> ApiResult<response::DescribePolicies> {
    let limit = paging::max_records(input.paging.max_records)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let groups = groups_named_or_all(app, caller, input.auto_scaling_group_name.as_deref()).await?;
    let wanted = names(input.policy_names);
    let types = names(input.policy_types);
    let mut found: Vec<(String, &policy::ScalingPolicy)> = groups
        .iter()
        .flat_map(|g| &g.settings.scaling_policies)
        .filter(|p| wanted.as_ref().is_none_or(|w| w.iter().any(|n| p.is(n))))
        .filter(|p| {
            types
                .as_ref()
                .is_none_or(|t| t.iter().any(|t| p.policy_type() == t))
        })
        .map(|p| {
            let position = format!("{}\u{0}{}", p.auto_scaling_group_name, p.policy_name);
            (position, p)
        })
        .filter(|(position, _)| after.as_deref().is_none_or(|a| position.as_str() > a))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let page = paging::page(found, limit, |(p, _)| p);
    Ok(response::DescribePolicies {
        scaling_policies: page.items.into_iter().map(|(_, p)| p.clone()).collect(),
        next_token: page.next_token,
    })
}

/// What one execution decided: the group as written and the change.
struct Executed {
    group: Group,
    policy: String,
    from: i64,
    to: i64,
}

pub async fn execute(app: &App, caller: &Caller, input: ExecutePolicy) -> ApiResult<()> {
    let wanted = &input.policy_name;
    let run = Execution {
        group: group_of(input.auto_scaling_group_name.as_deref(), wanted)?,
        policy: wanted,
        honor: input.honor_cooldown == Some(true),
        metric: input.metric_value,
        breach: input.breach_threshold,
        by: "a user request executed",
    };
    run_policy(app, caller, &run).await?;
    Ok(())
}

/// One execution of a policy: by ExecutePolicy, or by its webhook.
pub struct Execution<'a> {
    pub group: &'a str,
    /// Its name or ARN.
    pub policy: &'a str,
    pub honor: bool,
    pub metric: Option<f64>,
    pub breach: Option<f64>,
    /// Who, in the activity's cause: "a user request executed".
    pub by: &'a str,
}

/// Runs a policy: the new desired capacity (written as a compare-and-set with the cooldown it
/// starts), the scaling activity, the provisioner asked. Returns (from, to).
pub async fn run_policy(app: &App, caller: &Caller, run: &Execution<'_>) -> ApiResult<(i64, i64)> {
    let group = run.group;
    let now = app.clock.now_ms();
    let outcome: Mutex<Option<Executed>> = Mutex::new(None);
    change_group(app, caller, group, Some("ExecutePolicy"), |g| {
        let p = g
            .settings
            .scaling_policies
            .iter()
            .find(|p| p.is(run.policy))
            .ok_or_else(|| no_policy(run.policy, group))?;
        let name = &p.policy_name;
        if !p.enabled {
            return Err(ApiError::validation(format!(
                "Policy {name} is disabled: enable it with PutScalingPolicy first."
            )));
        }
        let a = adjustment_of(p, run.metric, run.breach)?;
        if a.simple && run.honor {
            check_cooldown(g, now)?;
        }
        let to = policy::adjust(
            a.kind,
            a.adjustment,
            a.min_magnitude,
            g.desired,
            // A ForecastAndScale policy's capacity for the hour is a floor the others keep.
            phantom_rules::predictive::floor(g, now),
            g.max,
        );
        let mut next = g.clone();
        next.desired = to;
        if let (PolicyKind::Simple { cooldown, .. }, true) = (&p.kind, to != g.desired) {
            let cooldown = cooldown.unwrap_or(g.settings.default_cooldown);
            next.settings.cooldown_ends_ms = Some(now + cooldown * 1000);
        }
        *outcome.lock().expect("no panic while held") = Some(Executed {
            group: next.clone(),
            policy: name.to_string(),
            from: g.desired,
            to,
        });
        Ok(next)
    })
    .await?;
    let e = outcome
        .into_inner()
        .expect("no panic while held")
        .expect("a change that succeeded ran its closure");
    if e.from != e.to {
        let ctx = Context {
            group: &e.group.name,
            group_arn: &e.group.settings.arn,
            now_ms: now,
            audience: phantom_rules::notification::Audience::NONE,
        };
        let by = format!("{} policy {}", run.by, e.policy);
        let record = Record {
            activities: vec![activity::desired_changed(&ctx, &by, e.from, e.to)],
            ..Record::default()
        };
        // The change is made; an activity that cannot be written is logged, not the caller's.
        if let Err(err) = app.store.record(&caller.user, &e.group, &record).await {
            tracing::error!(group, error = %err, "could not record the policy's activity");
        }
    }
    Ok((e.from, e.to))
}

/// ScalingActivityInProgress while the group's cooldown runs (HonorCooldown of ExecutePolicy and
/// SetDesiredCapacity).
pub fn check_cooldown(g: &Group, now_ms: i64) -> ApiResult<()> {
    match g.settings.cooldown_ends_ms.filter(|e| now_ms < *e) {
        Some(ends) => Err(ApiError::scaling_activity_in_progress(format!(
            "Group {} is in its cooldown for another {} s; HonorCooldown waits for it.",
            g.name,
            (ends - now_ms + 999) / 1000
        ))),
        None => Ok(()),
    }
}

/// The adjustment a policy makes for one execution.
struct Adjustment {
    kind: policy::AdjustmentType,
    adjustment: i64,
    min_magnitude: Option<i64>,
    /// A simple policy: the only kind with a cooldown.
    simple: bool,
}

/// The adjustment a policy makes for this request: a step policy needs MetricValue and
/// BreachThreshold and picks its step; a target tracking policy is run by Phantom alone.
fn adjustment_of(
    p: &policy::ScalingPolicy,
    metric: Option<f64>,
    breach: Option<f64>,
) -> ApiResult<Adjustment> {
    let (kind, min_magnitude, steps) = match &p.kind {
        PolicyKind::Simple {
            adjustment_type,
            min_adjustment_magnitude,
            scaling_adjustment,
            ..
        } => {
            if metric.is_some() || breach.is_some() {
                return Err(ApiError::validation(
                    "MetricValue and BreachThreshold are only for StepScaling policies.",
                ));
            }
            return Ok(Adjustment {
                kind: *adjustment_type,
                adjustment: *scaling_adjustment,
                min_magnitude: *min_adjustment_magnitude,
                simple: true,
            });
        }
        PolicyKind::Step {
            adjustment_type,
            min_adjustment_magnitude,
            step_adjustments,
            ..
        } => (
            *adjustment_type,
            *min_adjustment_magnitude,
            step_adjustments,
        ),
        PolicyKind::TargetTracking { .. } | PolicyKind::Predictive { .. } => {
            return Err(ApiError::validation(format!(
                "Policy {} is a {} policy: Phantom runs it on its metric; \
                 ExecutePolicy runs SimpleScaling and StepScaling policies.",
                p.policy_name,
                p.policy_type()
            )))
        }
    };
    let (Some(metric), Some(breach)) = (metric, breach) else {
        return Err(ApiError::validation(
            "MetricValue and BreachThreshold are required to execute a StepScaling policy.",
        ));
    };
    let adjustment = policy::step_for(steps, metric, breach).ok_or_else(|| {
        ApiError::validation(format!(
            "No step adjustment of policy {} covers the metric value {metric} against the breach threshold {breach}.",
            p.policy_name
        ))
    })?;
    Ok(Adjustment {
        kind,
        adjustment,
        min_magnitude,
        simple: false,
    })
}
