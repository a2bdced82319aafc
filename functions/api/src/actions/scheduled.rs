//! Scheduled actions: PutScheduledUpdateGroupAction, BatchPutScheduledUpdateGroupAction,
//! DescribeScheduledActions, DeleteScheduledAction, BatchDeleteScheduledAction: changes to the
//! group's settings (`phantom::schedule`), each a compare-and-set of the group that also moves it
//! in the store's index of due groups. The scheduler (functions/health-check) fires them.

use super::{change_group, groups_named_or_all, names, string};
use crate::App;
use phantom::group::Group;
use phantom::identity::Caller;
use phantom::schedule::{self, ScheduledAction, MAX_ACTIONS};
use phantom::{paging, ApiError, ApiResult};
use serde_json::{json, Value};
use std::sync::Mutex;

/// The most entries one batch may carry, as AWS allows.
const MAX_BATCH: usize = 50;

fn arn(app: &App, caller: &Caller, group: &str, name: &str) -> String {
    format!(
        "arn:aws:autoscaling:{}:{}:scheduledUpdateGroupAction:{}:autoScalingGroupName/{group}:scheduledActionName/{name}",
        app.config.region,
        caller.account_id,
        uuid::Uuid::new_v4()
    )
}

/// The name an entry of a request gives.
fn name_of(entry: &Value) -> &str {
    entry["ScheduledActionName"].as_str().unwrap_or_default()
}

/// Puts `entry` into `list` (replacing the action of its name, which keeps its ARN), or the error.
fn put_one(
    app: &App,
    caller: &Caller,
    group: &str,
    list: &mut Vec<ScheduledAction>,
    entry: &Value,
    now_ms: i64,
) -> ApiResult<()> {
    let name = name_of(entry);
    let existing = list.iter().position(|a| a.scheduled_action_name == name);
    let arn = match existing {
        Some(i) => list[i].arn.clone(),
        None => arn(app, caller, group, name),
    };
    let doc = schedule::document(entry, group, &arn, now_ms)?;
    match existing {
        Some(i) => list[i] = doc,
        None if list.len() >= MAX_ACTIONS => {
            return Err(ApiError::limit_exceeded(format!(
                "Group {group} has {MAX_ACTIONS} scheduled actions, the most it may have."
            )))
        }
        None => list.push(doc),
    }
    Ok(())
}

fn with_actions(g: &Group, list: Vec<ScheduledAction>) -> Group {
    let mut next = g.clone();
    next.settings.scheduled_actions = list;
    next
}

pub async fn put(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let group = string(&input, "AutoScalingGroupName");
    let now = app.clock.now_ms();
    change_group(app, caller, group, None, |g| {
        let mut list = g.settings.scheduled_actions.clone();
        put_one(app, caller, group, &mut list, &input, now)?;
        Ok(with_actions(g, list))
    })
    .await?;
    Ok(None)
}

/// Each entry is put or refused on its own, as AWS does; the refused ones are listed.
pub async fn batch_put(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let group = string(&input, "AutoScalingGroupName");
    let entries = input["ScheduledUpdateGroupActions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    check_batch(entries.len(), "ScheduledUpdateGroupActions")?;
    let now = app.clock.now_ms();
    let failed = Mutex::new(Vec::new());
    change_group(app, caller, group, None, |g| {
        let mut list = g.settings.scheduled_actions.clone();
        let refused: Vec<Value> = entries
            .iter()
            .filter_map(|e| {
                put_one(app, caller, group, &mut list, e, now)
                    .err()
                    .map(|err| failure(name_of(e), &err))
            })
            .collect();
        *failed.lock().expect("no panic while held") = refused;
        Ok(with_actions(g, list))
    })
    .await?;
    let failed = failed.into_inner().expect("no panic while held");
    Ok(Some(json!({ "FailedScheduledUpdateGroupActions": failed })))
}

fn failure(name: &str, e: &ApiError) -> Value {
    json!({ "ScheduledActionName": name, "ErrorCode": e.code, "ErrorMessage": e.message })
}

fn check_batch(n: usize, member: &str) -> ApiResult<()> {
    if n == 0 || n > MAX_BATCH {
        return Err(ApiError::validation(format!(
            "{member} must have between 1 and {MAX_BATCH} entries; it has {n}."
        )));
    }
    Ok(())
}

fn not_found(name: &str, group: &str) -> ApiError {
    ApiError::validation(format!(
        "Scheduled action name not found - Scheduled action {name} not found for AutoScalingGroup {group}"
    ))
}

pub async fn delete(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let group = string(&input, "AutoScalingGroupName");
    let name = string(&input, "ScheduledActionName");
    change_group(app, caller, group, None, |g| {
        let list = &g.settings.scheduled_actions;
        if !list.iter().any(|a| a.scheduled_action_name == name) {
            return Err(not_found(name, group));
        }
        Ok(with_actions(
            g,
            list.iter()
                .filter(|a| a.scheduled_action_name != name)
                .cloned()
                .collect(),
        ))
    })
    .await?;
    Ok(None)
}

/// The named actions are deleted; the names the group does not have are listed as failed.
pub async fn batch_delete(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let group = string(&input, "AutoScalingGroupName");
    let wanted = names(&input, "ScheduledActionNames").unwrap_or_default();
    check_batch(wanted.len(), "ScheduledActionNames")?;
    let failed = Mutex::new(Vec::new());
    change_group(app, caller, group, None, |g| {
        let list = &g.settings.scheduled_actions;
        let missing: Vec<Value> = wanted
            .iter()
            .filter(|w| !list.iter().any(|a| &a.scheduled_action_name == *w))
            .map(|w| failure(w, &not_found(w, group)))
            .collect();
        *failed.lock().expect("no panic while held") = missing;
        Ok(with_actions(
            g,
            list.iter()
                .filter(|a| !wanted.contains(&a.scheduled_action_name))
                .cloned()
                .collect(),
        ))
    })
    .await?;
    let failed = failed.into_inner().expect("no panic while held");
    Ok(Some(json!({ "FailedScheduledActions": failed })))
}

/// The caller's scheduled actions, of one group or all, by names or by when they next run
/// (StartTime and EndTime bound it; names given, they are not applied, as in AWS), by group then
/// name, paged.
pub async fn describe(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let limit = paging::max_records(input["MaxRecords"].as_i64())?;
    let after = paging::resume_after(input["NextToken"].as_str())?;
    let groups = groups_named_or_all(app, caller, &input).await?;
    let wanted = names(&input, "ScheduledActionNames");
    let (from, until) = match wanted {
        Some(_) => (None, None),
        None => (
            schedule::ms_of("StartTime", &input["StartTime"])?,
            schedule::ms_of("EndTime", &input["EndTime"])?,
        ),
    };
    let mut found: Vec<(String, Value)> = groups
        .iter()
        .flat_map(|g| &g.settings.scheduled_actions)
        .filter(|a| {
            wanted
                .as_ref()
                .is_none_or(|w| w.contains(&a.scheduled_action_name))
        })
        .filter(|a| from.is_none_or(|f| a.next_ms >= f) && until.is_none_or(|u| a.next_ms <= u))
        .map(|a| {
            let position = format!(
                "{}\u{0}{}",
                a.auto_scaling_group_name, a.scheduled_action_name
            );
            (position, schedule::described(a))
        })
        .filter(|(position, _)| after.as_deref().is_none_or(|a| position.as_str() > a))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let page = paging::page(found, limit, |(p, _)| p);
    Ok(Some(json!({
        "ScheduledUpdateGroupActions": page.items.into_iter().map(|(_, a)| a).collect::<Vec<_>>(),
        "NextToken": page.next_token,
    })))
}
