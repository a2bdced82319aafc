//! Scheduled actions: ScheduledUpdateGroupActionRequest, BatchPutScheduledUpdateGroupAction,
//! DescribeScheduledActions, DeleteScheduledAction, BatchDeleteScheduledAction: changes to the
//! group's settings (`phantom_rules::schedule`), each a compare-and-set of the group that also moves it
//! in the store's index of due groups. The scheduler (functions/health-check) fires them.

use super::{change_group, groups_named_or_all, names};
use crate::App;
use phantom_model::request::{
    BatchDeleteScheduledAction, BatchPutScheduledUpdateGroupAction, DeleteScheduledAction,
    DescribeScheduledActions, PutScheduledUpdateGroupAction, ScheduledUpdateGroupActionRequest,
};
use phantom_model::response;
use phantom_rules::group::Group;
use phantom_rules::identity::Caller;
use phantom_rules::schedule::{self, ScheduledAction, MAX_ACTIONS};
use phantom_wire::{paging, ApiError, ApiResult};
use std::sync::Mutex;

/// The most entries one batch may carry, as AWS allows.
const MAX_BATCH: usize = 50;

fn arn(app: &App, caller: &Caller, group: &str, name: &str) -> String {
    format!(
        "arn:aws:autoscaling:{}:{}:scheduledUpdateGroupAction:{}:autoScalingGroupName/{group}:scheduledActionName/{name}",
        app.config.region,
        caller.account_id,
        phantom_rules::ids::uuid()
    )
}

/// Puts `entry` into `list` (replacing the action of its name, which keeps its ARN), or the error.
fn put_one(
    app: &App,
    caller: &Caller,
    group: &str,
    list: &mut Vec<ScheduledAction>,
    entry: &ScheduledUpdateGroupActionRequest,
    now_ms: i64,
) -> ApiResult<()> {
    let name = &entry.scheduled_action_name;
    let existing = list.iter().position(|a| &a.scheduled_action_name == name);
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

pub async fn put(
    app: &App,
    caller: &Caller,
    input: PutScheduledUpdateGroupAction,
) -> ApiResult<()> {
    let group = &input.auto_scaling_group_name;
    let now = app.clock.now_ms();
    change_group(app, caller, group, None, |g| {
        let mut list = g.settings.scheduled_actions.clone();
        put_one(app, caller, group, &mut list, &input.action, now)?;
        Ok(with_actions(g, list))
    })
    .await?;
    Ok(())
}

/// Each entry is put or refused on its own, as AWS does; the refused ones are listed.
pub async fn batch_put(
    app: &App,
    caller: &Caller,
    input: BatchPutScheduledUpdateGroupAction,
) -> ApiResult<response::BatchPutScheduledUpdateGroupAction> {
    let group = &input.auto_scaling_group_name;
    let entries = &input.scheduled_update_group_actions;
    check_batch(entries.len(), "ScheduledUpdateGroupActions")?;
    let now = app.clock.now_ms();
    let failed = Mutex::new(Vec::new());
    change_group(app, caller, group, None, |g| {
        let mut list = g.settings.scheduled_actions.clone();
        let refused = entries
            .iter()
            .filter_map(|e| {
                put_one(app, caller, group, &mut list, e, now)
                    .err()
                    .map(|err| failure(&e.scheduled_action_name, &err))
            })
            .collect();
        *failed.lock().expect("no panic while held") = refused;
        Ok(with_actions(g, list))
    })
    .await?;
    let failed = failed.into_inner().expect("no panic while held");
    Ok(response::BatchPutScheduledUpdateGroupAction {
        failed_scheduled_update_group_actions: failed,
    })
}

fn failure(name: &str, e: &ApiError) -> response::FailedScheduledAction {
    response::FailedScheduledAction {
        scheduled_action_name: name.to_string(),
        error_code: e.code,
        error_message: e.message.clone(),
    }
}

fn check_batch(n: usize, member: &str) -> ApiResult<()> {
    if n == 0 || n > MAX_BATCH {
        return Err(ApiError::validation(format!(
            "{member} must have between 1 and {MAX_BATCH} entries; it has {n}."
        )));
    }
    Ok(())
}

/// AWS's words (moto's too), naming neither the action nor the group.
fn not_found() -> ApiError {
    ApiError::validation("Scheduled action name not found")
}

pub async fn delete(app: &App, caller: &Caller, input: DeleteScheduledAction) -> ApiResult<()> {
    let group = &input.auto_scaling_group_name;
    let name = &input.scheduled_action_name;
    change_group(app, caller, group, None, |g| {
        let list = &g.settings.scheduled_actions;
        if !list.iter().any(|a| &a.scheduled_action_name == name) {
            return Err(not_found());
        }
        Ok(with_actions(
            g,
            list.iter()
                .filter(|a| &a.scheduled_action_name != name)
                .cloned()
                .collect(),
        ))
    })
    .await?;
    Ok(())
}

/// The named actions are deleted; the names the group does not have are listed as failed.
pub async fn batch_delete(
    app: &App,
    caller: &Caller,
    input: BatchDeleteScheduledAction,
) -> ApiResult<response::BatchDeleteScheduledAction> {
    let group = &input.auto_scaling_group_name;
    let wanted = &input.scheduled_action_names;
    check_batch(wanted.len(), "ScheduledActionNames")?;
    let failed = Mutex::new(Vec::new());
    change_group(app, caller, group, None, |g| {
        let list = &g.settings.scheduled_actions;
        let missing = wanted
            .iter()
            .filter(|w| !list.iter().any(|a| &a.scheduled_action_name == *w))
            .map(|w| failure(w, &not_found()))
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
    Ok(response::BatchDeleteScheduledAction {
        failed_scheduled_actions: failed,
    })
}

/// The caller's scheduled actions, of one group or all, by names or by when they next run
/// (StartTime and EndTime bound it; names given, they are not applied, as in AWS), by group then
/// name, paged.
pub async fn describe(
    app: &App,
    caller: &Caller,
    input: DescribeScheduledActions,
) -> ApiResult<response::DescribeScheduledActions> {
    let limit = paging::max_records(input.paging.max_records)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let groups = groups_named_or_all(app, caller, input.auto_scaling_group_name.as_deref()).await?;
    let wanted = names(input.scheduled_action_names);
    let (from, until) = match wanted {
        Some(_) => (None, None),
        None => (
            schedule::ms_of("StartTime", input.start_time.as_deref())?,
            schedule::ms_of("EndTime", input.end_time.as_deref())?,
        ),
    };
    let mut found: Vec<(String, response::ScheduledUpdateGroupAction)> = groups
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
    Ok(response::DescribeScheduledActions {
        scheduled_update_group_actions: page.items.into_iter().map(|(_, a)| a).collect(),
        next_token: page.next_token,
    })
}
