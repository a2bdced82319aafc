//! The alarm actions: PutMetricAlarm and the rest. The health check's scheduled run evaluates the
//! alarms and runs their actions (`health-check/src/alarms.rs`); these keep and show them.

use super::refused;
use crate::App;
use phantom_model::cloudwatch::{
    AlarmNames, DescribeAlarmHistory, DescribeAlarmHistoryOutput, DescribeAlarms,
    DescribeAlarmsForMetric, DescribeAlarmsForMetricOutput, DescribeAlarmsOutput,
    ListTagsForResource, ListTagsForResourceOutput, MetricAlarm, MetricId, PutMetricAlarm,
    SetAlarmState, StoredAlarm, TagResource, UntagResource,
};
use phantom_model::time::parse_timestamp;
use phantom_rules::identity::Caller;
use phantom_rules::metric_alarm;
use phantom_rules::metric_data::Bad;
use phantom_rules::policy_alarms;
use phantom_seams::store::StoreError;
use phantom_wire::{paging, ApiError};

/// A compare-and-set that lost to another writer is tried again this many times.
const TRIES: usize = 3;

fn arn(app: &App, caller: &Caller, name: &str) -> String {
    format!(
        "arn:aws:cloudwatch:{}:{}:alarm:{name}",
        app.config.region, caller.account_id
    )
}

fn not_found(name: &str) -> ApiError {
    ApiError::resource_not_found(format!("Could not find alarm {name}."))
}

fn contention() -> ApiError {
    ApiError::resource_contention("The alarm was changed by another request at once; try again.")
}

pub async fn put_metric_alarm(
    app: &App,
    caller: &Caller,
    req: PutMetricAlarm,
) -> Result<(), ApiError> {
    let user = caller.user.as_str();
    // A policy's alarm changes with its policy: another of its name would hide it.
    if policy_alarms::may_name(&req.alarm_name) {
        let name = req.alarm_name.as_str();
        if !super::policy_alarms::shown(app, user, |a| a.alarm_name == name)
            .await?
            .is_empty()
        {
            return Err(refused(Bad::Value(format!(
                "The alarm {name} is a scaling policy's: change the policy (PutScalingPolicy, PutPolicyAlarm) instead."
            ))));
        }
    }
    for _ in 0..TRIES {
        let now = app.clock.now_ms();
        let before = app.store.alarm(user, &req.alarm_name).await?;
        if before.is_none() && app.store.alarms(user).await?.len() >= metric_alarm::MAX_ALARMS {
            return Err(ApiError::limit_exceeded(format!(
                "The maximum number of alarms ({}) has been reached.",
                metric_alarm::MAX_ALARMS
            )));
        }
        let alarm = metric_alarm::put(
            &req,
            &arn(app, caller, &req.alarm_name),
            &caller.account_id,
            before.as_ref().map(|b| &b.alarm),
            now,
        )
        .map_err(refused)?;
        let history = [metric_alarm::configured(&alarm, before.is_none(), now)];
        // Tags given to an existing alarm are ignored, as CloudWatch ignores them (TagResource
        // changes them).
        let stored = match before {
            Some(b) => StoredAlarm { alarm, ..b },
            // Made: no transition is owed its actions yet.
            None => StoredAlarm {
                alarm,
                tags: req.tags.clone(),
                version: 0,
                acted_ms: Some(now),
            },
        };
        match app.store.put_alarm(user, &stored, &history).await {
            Err(StoreError::Conflict | StoreError::Exists) => continue,
            other => return Ok(other?),
        }
    }
    Err(contention())
}

pub async fn describe_alarms(
    app: &App,
    user: &str,
    req: DescribeAlarms,
) -> Result<DescribeAlarmsOutput, ApiError> {
    if req.alarm_names.is_some() && req.alarm_name_prefix.is_some() {
        return Err(refused(Bad::Combination(
            "AlarmNames and AlarmNamePrefix may not be given together.".into(),
        )));
    }
    let limit = paging::max_records_within(req.max_records, 50, 100)?;
    let after = paging::resume_after(req.next_token.as_deref())?;
    // Composite alarms are not offered: asked for alone, or by a parent or child, none are.
    let metric_alarms_asked = req
        .alarm_types
        .as_ref()
        .is_none_or(|t| t.iter().any(|t| t == "MetricAlarm"));
    let relatives = req.children_of_alarm_name.is_some() || req.parents_of_alarm_name.is_some();
    // By name and action first; by state once a policy's alarm has been evaluated.
    let named = |a: &MetricAlarm| {
        req.alarm_names
            .as_ref()
            .is_none_or(|names| names.contains(&a.alarm_name))
            && req
                .alarm_name_prefix
                .as_ref()
                .is_none_or(|p| a.alarm_name.starts_with(p.as_str()))
            && req.action_prefix.as_ref().is_none_or(|p| {
                a.alarm_actions
                    .iter()
                    .chain(&a.ok_actions)
                    .chain(&a.insufficient_data_actions)
                    .any(|x| x.starts_with(p.as_str()))
            })
            && after.as_ref().is_none_or(|n| a.alarm_name > *n)
    };
    let mut alarms: Vec<MetricAlarm> = Vec::new();
    if metric_alarms_asked && !relatives {
        alarms.extend(app.store.alarms(user).await?.into_iter().map(|s| s.alarm));
        alarms.retain(named);
        // The alarms the account's scaling policies stand for, as on AWS.
        alarms.extend(super::policy_alarms::shown(app, user, named).await?);
        alarms.retain(|a| req.state_value.as_ref().is_none_or(|s| *s == a.state_value));
        alarms.sort_by(|a, b| a.alarm_name.cmp(&b.alarm_name));
    }
    let page = paging::page(alarms, limit, |a| a.alarm_name.as_str());
    Ok(DescribeAlarmsOutput {
        composite_alarms: Vec::new(),
        metric_alarms: page.items,
        next_token: page.next_token,
    })
}

pub async fn describe_alarms_for_metric(
    app: &App,
    user: &str,
    req: DescribeAlarmsForMetric,
) -> Result<DescribeAlarmsForMetricOutput, ApiError> {
    let metric = MetricId::new(&req.namespace, &req.metric_name, &req.dimensions);
    let on_it = |a: &MetricAlarm| {
        // Dimensions are compared only when given, as CloudWatch compares them.
        let same = if req.dimensions.is_empty() {
            a.namespace.as_deref() == Some(metric.namespace.as_str())
                && a.metric_name.as_deref() == Some(metric.name.as_str())
        } else {
            metric_alarm::metric(a).as_ref() == Some(&metric)
        };
        same && req
            .statistic
            .as_ref()
            .is_none_or(|s| a.statistic.as_ref() == Some(s))
            && req.period.is_none_or(|p| a.period == Some(p))
            && req.unit.as_ref().is_none_or(|u| a.unit.as_ref() == Some(u))
            && req.extended_statistic.is_none()
    };
    let mut metric_alarms: Vec<MetricAlarm> = app
        .store
        .alarms(user)
        .await?
        .into_iter()
        .map(|s| s.alarm)
        .filter(on_it)
        .collect();
    // The scaling policies' alarms on it too, as AWS lists a target tracking policy's.
    metric_alarms.extend(super::policy_alarms::shown(app, user, on_it).await?);
    Ok(DescribeAlarmsForMetricOutput { metric_alarms })
}

pub async fn delete_alarms(app: &App, user: &str, req: AlarmNames) -> Result<(), ApiError> {
    // All or none: every named alarm is looked for before any is deleted.
    for name in &req.alarm_names {
        if app.store.alarm(user, name).await?.is_none() {
            return Err(not_found(name));
        }
    }
    for name in &req.alarm_names {
        match app.store.delete_alarm(user, name).await {
            // Deleted meanwhile by another request: gone all the same.
            Ok(()) | Err(StoreError::NotFound) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Enables or disables the named alarms' actions (names that are no alarm are passed over, as
/// CloudWatch passes them over).
pub async fn set_actions_enabled(
    app: &App,
    user: &str,
    req: AlarmNames,
    enabled: bool,
) -> Result<(), ApiError> {
    for name in &req.alarm_names {
        change(app, user, name, |s| {
            s.alarm.actions_enabled = enabled;
            Some(Vec::new())
        })
        .await
        .or_else(|e| {
            if e.code == "ResourceNotFound" {
                Ok(())
            } else {
                Err(e)
            }
        })?;
    }
    Ok(())
}

pub async fn set_alarm_state(app: &App, user: &str, req: SetAlarmState) -> Result<(), ApiError> {
    if let Some(data) = &req.state_reason_data {
        if serde_json::from_str::<serde_json::Value>(data).is_err() {
            return Err(ApiError::invalid_format("StateReasonData must be JSON."));
        }
    }
    let now = app.clock.now_ms();
    change(app, user, &req.alarm_name, |s| {
        let (next, item) = metric_alarm::transition(
            &s.alarm,
            &req.state_value,
            &req.state_reason,
            req.state_reason_data.as_deref(),
            now,
        )?;
        s.alarm = next;
        Some(vec![item])
    })
    .await
}

pub async fn describe_alarm_history(
    app: &App,
    user: &str,
    req: DescribeAlarmHistory,
) -> Result<DescribeAlarmHistoryOutput, ApiError> {
    let limit = paging::max_records_within(req.max_records, 100, 100)?;
    let skip: usize = match &req.next_token {
        None => 0,
        Some(t) => paging::resume_after(Some(t))?
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| ApiError::invalid_next_token("The token is invalid."))?,
    };
    let at = |t: &Option<String>| t.as_deref().and_then(parse_timestamp);
    let (start, end) = (at(&req.start_date), at(&req.end_date));
    let metric_asked = req
        .alarm_types
        .as_ref()
        .is_none_or(|t| t.iter().any(|t| t == "MetricAlarm"));
    let mut items: Vec<_> = app
        .store
        .alarm_history(user, req.alarm_name.as_deref())
        .await?
        .into_iter()
        .filter(|h| {
            let when = parse_timestamp(&h.timestamp);
            metric_asked
                && req.alarm_contributor_id.is_none()
                && req
                    .history_item_type
                    .as_ref()
                    .is_none_or(|t| *t == h.history_item_type)
                && start.is_none_or(|s| when.is_some_and(|w| w >= s))
                && end.is_none_or(|e| when.is_some_and(|w| w <= e))
        })
        .collect();
    if req.scan_by.as_deref() == Some("TimestampAscending") {
        items.reverse();
    }
    let more = items.len() > skip + limit;
    let alarm_history_items: Vec<_> = items.into_iter().skip(skip).take(limit).collect();
    Ok(DescribeAlarmHistoryOutput {
        alarm_history_items,
        next_token: more.then(|| paging::token_after(&(skip + limit).to_string())),
    })
}

/// The alarm a tag action names by its ARN (this account's, in this region).
fn alarm_of_arn<'a>(app: &App, caller: &Caller, resource: &'a str) -> Result<&'a str, ApiError> {
    let prefix = arn(app, caller, "");
    resource
        .strip_prefix(prefix.as_str())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            ApiError::resource_not_found_exception(format!(
                "{resource} is not an alarm of this account: Phantom's CloudWatch tags alarms ({prefix}<name>)."
            ))
        })
}

pub async fn tag_resource(app: &App, caller: &Caller, req: TagResource) -> Result<(), ApiError> {
    let name = alarm_of_arn(app, caller, &req.resource_arn)?;
    change(app, &caller.user, name, |s| {
        for t in &req.tags {
            match s.tags.iter_mut().find(|x| x.key == t.key) {
                Some(x) => x.value.clone_from(&t.value),
                None => s.tags.push(t.clone()),
            }
        }
        Some(Vec::new())
    })
    .await
    .map_err(|e| tag_not_found(e, &req.resource_arn))
}

pub async fn untag_resource(
    app: &App,
    caller: &Caller,
    req: UntagResource,
) -> Result<(), ApiError> {
    let name = alarm_of_arn(app, caller, &req.resource_arn)?;
    change(app, &caller.user, name, |s| {
        s.tags.retain(|t| !req.tag_keys.contains(&t.key));
        Some(Vec::new())
    })
    .await
    .map_err(|e| tag_not_found(e, &req.resource_arn))
}

pub async fn list_tags_for_resource(
    app: &App,
    caller: &Caller,
    req: ListTagsForResource,
) -> Result<ListTagsForResourceOutput, ApiError> {
    let name = alarm_of_arn(app, caller, &req.resource_arn)?;
    match app.store.alarm(&caller.user, name).await? {
        Some(s) => Ok(ListTagsForResourceOutput { tags: s.tags }),
        None => Err(tag_not_found(not_found(name), &req.resource_arn)),
    }
}

/// The tag actions' own code for an alarm that is not there.
fn tag_not_found(e: ApiError, resource: &str) -> ApiError {
    if e.code == "ResourceNotFound" {
        ApiError::resource_not_found_exception(format!("{resource} does not exist."))
    } else {
        e
    }
}

/// Changes alarm `name` with `f` (`None`: nothing to change) and writes it, with the history
/// items `f` gives, as a compare-and-set, tried again if another writer came first.
async fn change(
    app: &App,
    user: &str,
    name: &str,
    f: impl Fn(&mut StoredAlarm) -> Option<Vec<phantom_model::cloudwatch::AlarmHistoryItem>>,
) -> Result<(), ApiError> {
    for _ in 0..TRIES {
        let Some(mut stored) = app.store.alarm(user, name).await? else {
            return Err(not_found(name));
        };
        let Some(history) = f(&mut stored) else {
            return Ok(());
        };
        match app.store.put_alarm(user, &stored, &history).await {
            Err(StoreError::Conflict) => continue,
            Err(StoreError::NotFound) => return Err(not_found(name)),
            other => return Ok(other?),
        }
    }
    Err(contention())
}
