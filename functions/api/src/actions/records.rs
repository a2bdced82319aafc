//! Writes of instance records, each in one record guarded by the group and by each record's
//! revision, retried from a fresh read when either moved: what the instance actions and the
//! lifecycle actions build on.

use super::{group_not_found, pending_delete};
use crate::App;
use phantom_rules::group::Group;
use phantom_rules::identity::Caller;
use phantom_rules::reconcile::Member;
use phantom_seams::store::cas::{compare_and_set, Try};
use phantom_seams::store::{Record, StoreError};
use phantom_wire::{ApiError, ApiResult};

pub(super) fn not_in_a_group(id: &str) -> ApiError {
    ApiError::validation(format!(
        "Instance Id not found - No managed instance found for instance ID: {id}"
    ))
}

/// The instance's group and record, with the group as it stands.
pub(super) async fn find(app: &App, caller: &Caller, id: &str) -> ApiResult<(Group, Member)> {
    let (name, member) = app
        .store
        .all_instances(&caller.user)
        .await?
        .into_iter()
        .find(|(_, m)| m.id == id)
        .ok_or_else(|| not_in_a_group(id))?;
    let g = app
        .store
        .group(&caller.user, &name)
        .await?
        .ok_or_else(|| not_in_a_group(id))?;
    if g.deleting() {
        return Err(pending_delete());
    }
    if member.lifecycle.is_warm() {
        return Err(in_warm_pool(id, &name));
    }
    Ok((g, member))
}

/// An instance action names a VM of the group's warm pool: the pool's VMs are moved by the pool
/// alone (PutWarmPool, DeleteWarmPool).
fn in_warm_pool(id: &str, group: &str) -> ApiError {
    ApiError::validation(format!(
        "The instance {id} is in the warm pool of Auto Scaling group {group}; change the pool with PutWarmPool or DeleteWarmPool."
    ))
}

pub(super) fn not_in_group(id: &str, group: &str) -> ApiError {
    ApiError::validation(format!(
        "The instance {id} is not part of Auto Scaling group {group}."
    ))
}

/// Writes the record `make` gives for the instance and its group, retrying (from a fresh read)
/// when the group or the record moved under it.
pub(super) async fn write(
    app: &App,
    caller: &Caller,
    id: &str,
    make: impl Fn(&Group, &Member) -> ApiResult<Option<Record>>,
) -> ApiResult<Option<Record>> {
    compare_and_set(|| async {
        let (g, m) = find(app, caller, id).await?;
        let Some(mut r) = make(&g, &m)? else {
            return Ok(Try::Done(None));
        };
        r.ask_ms = Some(app.clock.now_ms());
        match app.store.record(&caller.user, &g, &r).await {
            Ok(()) => {
                super::reconcile(app, caller, &g.name, "instance action").await;
                Ok(Try::Done(Some(r)))
            }
            Err(StoreError::Conflict) => Ok(Try::Lost),
            Err(StoreError::NotFound) => Err(group_not_found(&g.name)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

/// Writes the record `make` gives for the named group and its instances (none: nothing to
/// write), retrying from a fresh read when the group or a record moved under it; with `reason`,
/// the provisioner is asked to look afterwards.
pub(super) async fn write_group(
    app: &App,
    caller: &Caller,
    name: &str,
    reason: Option<&str>,
    make: impl Fn(&Group, &[Member]) -> ApiResult<Option<Record>>,
) -> ApiResult<Option<Record>> {
    compare_and_set(|| async {
        let Some(g) = app.store.group(&caller.user, name).await? else {
            return Err(group_not_found(name));
        };
        if g.deleting() {
            return Err(pending_delete());
        }
        let members = app.store.instances(&caller.user, name).await?;
        let Some(mut r) = make(&g, &members)? else {
            return Ok(Try::Done(None));
        };
        r.ask_ms = reason.map(|_| app.clock.now_ms());
        match app.store.record(&caller.user, &g, &r).await {
            Ok(()) => {
                if let Some(reason) = reason {
                    super::reconcile(app, caller, name, reason).await;
                }
                Ok(Try::Done(Some(r)))
            }
            Err(StoreError::Conflict) => Ok(Try::Lost),
            Err(StoreError::NotFound) => Err(group_not_found(name)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

pub(super) fn member<'a>(members: &'a [Member], id: &str, group: &str) -> ApiResult<&'a Member> {
    let m = members
        .iter()
        .find(|m| m.id == id)
        .ok_or_else(|| not_in_group(id, group))?;
    if m.lifecycle.is_warm() {
        return Err(in_warm_pool(id, group));
    }
    Ok(m)
}
