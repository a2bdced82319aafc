//! StartInstanceRefresh, DescribeInstanceRefreshes, CancelInstanceRefresh, RollbackInstanceRefresh:
//! a refresh is kept on its group (`phantom::refresh`); the provisioner's rounds replace the
//! instances, and write its status as it goes.

use super::{change_group, group_named};
use crate::App;
use phantom::identity::Caller;
use phantom::model::request::{
    CancelInstanceRefresh, DescribeInstanceRefreshes, RollbackInstanceRefresh, StartInstanceRefresh,
};
use phantom::model::response::{self, InstanceRefreshId};
use phantom::refresh::{self, InstanceRefresh, Status};
use phantom::{paging, ApiError, ApiResult};

pub async fn start(
    app: &App,
    caller: &Caller,
    input: StartInstanceRefresh,
) -> ApiResult<InstanceRefreshId> {
    if let Some(s) = input.strategy.as_deref().filter(|s| *s != "Rolling") {
        return Err(ApiError::validation(format!(
            "Strategy {s} is not supported: Phantom replaces instances (Rolling)."
        )));
    }
    if input.desired_configuration.is_some() {
        return Err(ApiError::validation(
            "DesiredConfiguration is not supported yet: change the group's launch configuration \
             or template with UpdateAutoScalingGroup, then start the refresh.",
        ));
    }
    let prefs = refresh::preferences(&input.preferences)?;
    let name = &input.auto_scaling_group_name;
    // What it replaces: the group's instances now (those launched after come from what the
    // group launches from by then).
    let members = app.store.instances(&caller.user, name).await?;
    let id = uuid::Uuid::new_v4().to_string();
    let now = app.clock.now();
    let now_ms = app.clock.now_ms();
    change_group(app, caller, name, Some("StartInstanceRefresh"), |g| {
        if refresh::active(&g.settings.instance_refreshes).is_some() {
            return Err(ApiError::instance_refresh_in_progress(refresh::IN_PROGRESS));
        }
        if g.spread()?.is_some() {
            return Err(ApiError::validation(
                "An instance refresh of a group across clouds is not supported yet.",
            ));
        }
        let s = &g.settings;
        let source = refresh::Source {
            launch_configuration: g.launch_configuration().map(str::to_string),
            launch_template: g.target().launch_template,
        };
        let replace = refresh::to_replace(&members, &source, prefs.skip_matching);
        let warmup = prefs.instance_warmup.unwrap_or(g.warmup_secs());
        let r = InstanceRefresh {
            instance_refresh_id: id.clone(),
            auto_scaling_group_name: name.clone(),
            status: Status::Pending,
            status_reason: None,
            start_time: phantom::time::format_timestamp(now),
            end_time: None,
            percentage_complete: 0,
            instances_to_update: replace.len() as i64,
            preferences: prefs.clone(),
            strategy: "Rolling".into(),
            start_ms: now_ms,
            total: replace.len() as i64,
            replace,
            warmup_ms: warmup * 1000,
            checkpoints_reached: 0,
            paused_until_ms: None,
            blocked_since_ms: None,
        };
        let mut next = g.clone();
        next.settings.instance_refreshes = refresh::begin(&s.instance_refreshes, r);
        Ok(next)
    })
    .await?;
    Ok(InstanceRefreshId {
        instance_refresh_id: id,
    })
}

/// The group's refreshes, the newest first; a running one's progress worked out from its
/// instances now.
pub async fn describe(
    app: &App,
    caller: &Caller,
    input: DescribeInstanceRefreshes,
) -> ApiResult<response::DescribeInstanceRefreshes> {
    let limit = paging::max_records(input.paging.max_records)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let name = &input.auto_scaling_group_name;
    let g = group_named(app, caller, name).await?;
    let ids = input.instance_refresh_ids.filter(|ids| !ids.is_empty());
    let mut found: Vec<(String, InstanceRefresh)> = g
        .settings
        .instance_refreshes
        .iter()
        .filter(|r| {
            ids.as_ref()
                .is_none_or(|ids| ids.contains(&r.instance_refresh_id))
        })
        .map(|r| (refresh::position(r), r.clone()))
        .filter(|(p, _)| after.as_deref().is_none_or(|a| p.as_str() > a))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    if found.iter().any(|(_, r)| r.status.active()) {
        let members = app.store.instances(&caller.user, name).await?;
        let now_ms = app.clock.now_ms();
        for (_, r) in found.iter_mut().filter(|(_, r)| r.status.active()) {
            (r.percentage_complete, r.instances_to_update) = refresh::progress(r, &members, now_ms);
        }
    }
    let page = paging::page(found, limit, |(p, _)| p);
    Ok(response::DescribeInstanceRefreshes {
        instance_refreshes: page.items.into_iter().map(|(_, r)| r).collect(),
        next_token: page.next_token,
    })
}

pub async fn cancel(
    app: &App,
    caller: &Caller,
    input: CancelInstanceRefresh,
) -> ApiResult<InstanceRefreshId> {
    let name = &input.auto_scaling_group_name;
    let wait = input.wait_for_transitioning_instances.unwrap_or(true);
    let now = phantom::time::format_timestamp(app.clock.now());
    let written = change_group(app, caller, name, Some("CancelInstanceRefresh"), |g| {
        let mut next = g.clone();
        next.settings.instance_refreshes[0] = refresh::cancel(running(g, name)?, wait, &now);
        Ok(next)
    })
    .await?;
    Ok(InstanceRefreshId {
        instance_refresh_id: written.settings.instance_refreshes[0]
            .instance_refresh_id
            .clone(),
    })
}

/// A refresh started without a DesiredConfiguration (the only kind Phantom takes yet) has no
/// configuration to go back to: AWS refuses to roll it back, and so does Phantom.
pub async fn rollback(
    app: &App,
    caller: &Caller,
    input: RollbackInstanceRefresh,
) -> ApiResult<InstanceRefreshId> {
    let name = &input.auto_scaling_group_name;
    let g = group_named(app, caller, name).await?;
    running(&g, name)?;
    Err(ApiError::irreversible_instance_refresh(
        "The instance refresh cannot be rolled back: it was started without a \
         DesiredConfiguration, so there is no earlier configuration to return to.",
    ))
}

fn running<'a>(g: &'a phantom::group::Group, name: &str) -> ApiResult<&'a InstanceRefresh> {
    refresh::active(&g.settings.instance_refreshes).ok_or_else(|| {
        ApiError::active_instance_refresh_not_found(format!(
            "No in progress or pending Instance Refresh found for Auto Scaling group {name}"
        ))
    })
}
