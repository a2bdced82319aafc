//! LaunchInstances: the request recorded (once per client token), the provisioner asked to carry
//! it out, and its answer awaited: the VMs launched at the placement named, or the cloud's
//! refusal. A retry with the same token gets the same answer; a different request with it is
//! IdempotentParameterMismatch. One not carried out in time is ServiceUnavailable, which SDKs
//! retry with the same token.

use super::{group_not_found, pending_delete};
use crate::App;
use phantom_model::request::LaunchInstances;
use phantom_model::response;
use phantom_rules::identity::Caller;
use phantom_rules::sync_launch::{self, SyncLaunch};
use phantom_seams::store::StoreError;
use phantom_wire::{ApiError, ApiResult};
use std::time::Duration;

/// How long the api waits for the provisioner: under API Gateway's 29 s.
const WAIT: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(200);

pub async fn run(
    app: &App,
    caller: &Caller,
    mut input: LaunchInstances,
) -> ApiResult<response::LaunchInstances> {
    let Some(g) = app
        .store
        .group(&caller.user, &input.auto_scaling_group_name)
        .await?
    else {
        return Err(group_not_found(&input.auto_scaling_group_name));
    };
    if g.deleting() {
        return Err(pending_delete());
    }
    let ids = sync_launch::zone_ids(&input)?.to_vec();
    if !ids.is_empty() {
        let found = super::lookups::zone_names(app, caller, &g.cloud, &ids).await?;
        sync_launch::name_zone_ids(&mut input, &found)?;
    }
    let name = &input.auto_scaling_group_name;
    let resolved = sync_launch::resolve(&g, &input, app.clock.now_ms())?;
    // A request with this token already: its answer, not a new launch.
    let earlier = app
        .store
        .launches(&caller.user, name)
        .await?
        .into_iter()
        .find(|l| l.client_token == resolved.client_token);
    let asked = match earlier {
        Some(earlier) => {
            if earlier.result.is_none() {
                // Still pending: the provisioner asked again, in case the round that took it
                // was lost.
                super::reconcile_now(app, caller, name, sync_launch::REASON).await;
            }
            resolved
        }
        None => {
            sync_launch::fits(&g, resolved.requested)?;
            match app.store.put_launch(&caller.user, name, &resolved).await {
                // Another request with the token came first: the loop below compares.
                Ok(()) | Err(StoreError::Exists) => {}
                Err(e) => return Err(e.into()),
            }
            super::reconcile_now(app, caller, name, sync_launch::REASON).await;
            resolved
        }
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let found = find(app, caller, name, &asked.client_token).await?;
        if !found.same_ask(&asked) {
            return Err(ApiError::idempotent_parameter_mismatch(format!(
                "Client token {} was used with other parameters for LaunchInstances.",
                asked.client_token
            )));
        }
        if let Some(result) = found.result {
            return Ok(response::LaunchInstances {
                auto_scaling_group_name: name.clone(),
                client_token: asked.client_token,
                instances: result.instances,
                errors: result.errors,
            });
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(ApiError::service_unavailable(format!(
                "The launch of client token {} is still under way: ask again with the same client token for its instances.",
                asked.client_token
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

async fn find(app: &App, caller: &Caller, group: &str, token: &str) -> ApiResult<SyncLaunch> {
    app.store
        .launches(&caller.user, group)
        .await?
        .into_iter()
        .find(|l| l.client_token == token)
        .ok_or_else(|| {
            ApiError::internal(format!(
                "the LaunchInstances request {token} of group {group} is not in the store"
            ))
        })
}
