//! StartInstanceRefresh, DescribeInstanceRefreshes, CancelInstanceRefresh, RollbackInstanceRefresh:
//! a refresh is kept on its group (`phantom_rules::refresh`); the provisioner's rounds replace the
//! instances, and write its status as it goes.

use super::{change_group, group_named, lookups};
use crate::App;
use phantom_model::request::{
    CancelInstanceRefresh, DescribeInstanceRefreshes, RollbackInstanceRefresh, StartInstanceRefresh,
};
use phantom_model::response::{self, InstanceRefreshId};
use phantom_rules::group::GroupRules;
use phantom_rules::group::Launching;
use phantom_rules::identity::Caller;
use phantom_rules::refresh::{self, DesiredConfiguration, InstanceRefresh, Status};
use phantom_rules::template;
use phantom_wire::{paging, ApiError, ApiResult};

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
    let desired = input.desired_configuration;
    // Checked before anything is looked up; the defaults are the group's, read below.
    refresh::preferences(&input.preferences, desired.is_some(), None)?;
    let name = &input.auto_scaling_group_name;
    // The desired template as its cloud names it, kept beside the group's (the group moves to it).
    let desired_name = match &desired {
        Some(d) => check_desired(app, caller, name, d).await?,
        None => None,
    };
    // What it replaces: the group's instances now (those launched after come from what the
    // group launches from by then).
    let members = app.store.instances(&caller.user, name).await?;
    let id = phantom_rules::ids::uuid();
    let now = app.clock.now();
    let now_ms = app.clock.now_ms();
    change_group(app, caller, name, Some("StartInstanceRefresh"), |g| {
        if refresh::active(&g.settings.instance_refreshes).is_some() {
            return Err(ApiError::instance_refresh_in_progress(refresh::IN_PROGRESS));
        }
        let prefs = refresh::preferences(
            &input.preferences,
            desired.is_some(),
            g.settings.instance_maintenance_policy.as_ref(),
        )?;
        if let Some(why) = refresh::unknown_alarm(&g.settings, &prefs) {
            return Err(ApiError::validation(why));
        }
        let own = Launching::of_settings(&g.settings);
        if prefs.auto_rollback {
            if let Some(why) = refresh::unreturnable(&own.source()) {
                return Err(ApiError::validation(format!(
                    "AutoRollback cannot be used: {why}"
                )));
            }
        }
        let to = match &desired {
            Some(d) => Launching::of_desired(d),
            None => own,
        };
        // Across clouds, each cloud's instances come from the group's configuration there.
        let source = to.source();
        let replace = refresh::to_replace(&members, |m| {
            prefs.skip_matching && refresh::launched_from(m, &source)
        });
        let warmup = prefs.instance_warmup.unwrap_or(g.warmup_secs());
        let r = InstanceRefresh {
            instance_refresh_id: id.clone(),
            auto_scaling_group_name: name.clone(),
            status: Status::Pending,
            status_reason: None,
            start_time: phantom_model::time::format_timestamp(now),
            end_time: None,
            percentage_complete: 0,
            instances_to_update: replace.len() as i64,
            preferences: prefs.clone(),
            desired_configuration: desired.clone(),
            rollback_details: None,
            strategy: "Rolling".into(),
            start_ms: now_ms,
            total: replace.len() as i64,
            replace,
            warmup_ms: warmup * 1000,
            checkpoints_reached: 0,
            paused_until_ms: None,
            blocked_since_ms: None,
            rollback_to: desired.is_some().then(|| own.source()),
        };
        let mut next = g.clone();
        next.settings.instance_refreshes = refresh::begin(&g.settings.instance_refreshes, r);
        if let Some(n) = desired_name
            .as_ref()
            .filter(|n| !g.settings.template_names.contains(n))
        {
            next.settings.template_names.push(n.clone());
        }
        Ok(next)
    })
    .await?;
    Ok(InstanceRefreshId {
        instance_refresh_id: id,
    })
}

/// A DesiredConfiguration is checked as UpdateAutoScalingGroup checks a group's template: on the
/// group's own cloud, a cloud that has templates, a template that exists there; for a group
/// across clouds, by name on each of its clouds.
async fn check_desired(
    app: &App,
    caller: &Caller,
    name: &str,
    d: &DesiredConfiguration,
) -> ApiResult<Option<phantom_seams::cloud::TemplateName>> {
    let Some(spec) = template::of(
        d.launch_template.as_ref(),
        d.mixed_instances_policy.as_ref(),
    )?
    else {
        return Err(ApiError::validation(
            "A DesiredConfiguration must have a LaunchTemplate or a MixedInstancesPolicy.",
        ));
    };
    let g = group_named(app, caller, name).await?;
    let cloud = lookups::template_cloud(app, &spec).await?;
    if cloud.name != g.cloud {
        return Err(ApiError::validation(format!(
            "The DesiredConfiguration's launch template is on cloud '{}', but \
             AutoScalingGroup {name} runs on cloud '{}'.",
            cloud.name, g.cloud
        )));
    }
    if let Some(spread) = g.spread()? {
        super::across::check_templates(app, caller, &spread, &spec).await?;
    }
    lookups::check_template(app, caller, &cloud.name, &spec.template).await
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
    let now = phantom_model::time::format_timestamp(app.clock.now());
    change_running(app, caller, name, "CancelInstanceRefresh", |r| {
        Ok(refresh::cancel(r, wait, &now))
    })
    .await
}

/// Rolls a running refresh back: the instances it launched are replaced with ones from the
/// configuration the group had (only a refresh with a DesiredConfiguration has one to return to).
pub async fn rollback(
    app: &App,
    caller: &Caller,
    input: RollbackInstanceRefresh,
) -> ApiResult<InstanceRefreshId> {
    let name = &input.auto_scaling_group_name;
    let members = app.store.instances(&caller.user, name).await?;
    let now_ms = app.clock.now_ms();
    let now = phantom_model::time::format_timestamp(app.clock.now());
    change_running(app, caller, name, "RollbackInstanceRefresh", |r| {
        if let Some(why) = refresh::irreversible(r) {
            return Err(ApiError::irreversible_instance_refresh(why));
        }
        Ok(refresh::rollback(
            r,
            "The rollback was started with RollbackInstanceRefresh.",
            &members,
            now_ms,
            &now,
        ))
    })
    .await
}

/// Changes the group's running refresh as `f` makes it (a compare-and-set on the group) and
/// answers its id.
async fn change_running(
    app: &App,
    caller: &Caller,
    name: &str,
    action: &str,
    f: impl Fn(&InstanceRefresh) -> ApiResult<InstanceRefresh>,
) -> ApiResult<InstanceRefreshId> {
    let written = change_group(app, caller, name, Some(action), |g| {
        let mut next = g.clone();
        next.settings.instance_refreshes[0] = f(running(g, name, action)?)?;
        Ok(next)
    })
    .await?;
    Ok(InstanceRefreshId {
        instance_refresh_id: written.settings.instance_refreshes[0]
            .instance_refresh_id
            .clone(),
    })
}

/// The group's running refresh, or AWS's refusal of `action` without one.
fn running<'a>(
    g: &'a phantom_rules::group::Group,
    name: &str,
    action: &str,
) -> ApiResult<&'a InstanceRefresh> {
    // AWS's words for each (Cancel's as Terraform's and Ansible's users meet them).
    let which = match action {
        "CancelInstanceRefresh" => "in progress, baking, pending, or cancelling",
        _ => "in progress or pending",
    };
    refresh::active(&g.settings.instance_refreshes).ok_or_else(|| {
        ApiError::active_instance_refresh_not_found(format!(
            "No {which} Instance Refresh found for Auto Scaling group {name}"
        ))
    })
}
