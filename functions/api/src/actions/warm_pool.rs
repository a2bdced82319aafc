//! PutWarmPool, DescribeWarmPool, DeleteWarmPool: a group's warm pool is kept on the group
//! (`phantom_rules::warm`); the provisioner's rounds launch its VMs, stop them, start them into the
//! group on scale-out, and drain a deleted pool.

use super::{change_group, group_named};
use crate::App;
use phantom_model::request::{DeleteWarmPool, DescribeWarmPool, PutWarmPool};
use phantom_model::response;
use phantom_rules::identity::Caller;
use phantom_rules::warm::{self, PoolStatus};
use phantom_wire::{paging, ApiError, ApiResult};

pub async fn put(app: &App, caller: &Caller, input: PutWarmPool) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    change_group(app, caller, name, Some("PutWarmPool"), |g| {
        let s = &g.settings;
        let pool = warm::put(
            &input,
            s.warm_pool_configuration.as_ref(),
            s.mixed_instances_policy.is_some(),
        )?;
        let mut next = g.clone();
        next.settings.warm_pool_configuration = Some(pool);
        Ok(next)
    })
    .await?;
    Ok(())
}

/// The pool and its VMs (a page of them, by id); a group without a pool answers none, with the
/// VMs a forced delete left still on their way out.
pub async fn describe(
    app: &App,
    caller: &Caller,
    input: DescribeWarmPool,
) -> ApiResult<response::DescribeWarmPool> {
    // AWS's ceiling for this action is 50.
    let limit = paging::max_records_within(input.paging.max_records, 50, 50)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let name = &input.auto_scaling_group_name;
    let g = group_named(app, caller, name).await?;
    let mut warm: Vec<_> = app
        .store
        .instances(&caller.user, name)
        .await?
        .into_iter()
        .filter(|m| m.lifecycle.is_warm())
        .filter(|m| after.as_deref().is_none_or(|a| m.id.as_str() > a))
        .collect();
    warm.sort_by(|a, b| a.id.cmp(&b.id));
    let page = paging::page(warm, limit, |m| &m.id);
    Ok(response::DescribeWarmPool {
        warm_pool_configuration: g.settings.warm_pool_configuration,
        instances: page.items.iter().map(|m| m.describe()).collect(),
        next_token: page.next_token,
    })
}

/// Without ForceDelete, the pool is marked PendingDelete and goes once the provisioner has
/// terminated its VMs; with it (or with no VMs left), it goes at once and any VMs left are
/// terminated by the next round.
pub async fn delete(app: &App, caller: &Caller, input: DeleteWarmPool) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    let force = input.force_delete.unwrap_or(false);
    let members = app.store.instances(&caller.user, name).await?;
    let empty = !members.iter().any(|m| m.lifecycle.is_warm());
    change_group(app, caller, name, Some("DeleteWarmPool"), |g| {
        let Some(pool) = &g.settings.warm_pool_configuration else {
            return Err(ApiError::validation(format!(
                "No warm pool found for Auto Scaling group {name}."
            )));
        };
        let mut next = g.clone();
        next.settings.warm_pool_configuration = if force || empty {
            None
        } else {
            Some(warm::WarmPoolConfiguration {
                status: Some(PoolStatus::PendingDelete),
                ..pool.clone()
            })
        };
        Ok(next)
    })
    .await?;
    Ok(())
}
