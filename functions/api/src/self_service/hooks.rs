//! Each scaling policy's alert webhook, made, listed and revoked by its owner (the calls it
//! answers: `crate::webhooks`). The webhook lives on the policy in the group's settings: its id,
//! the SHA-256 of its secret, when it was made; the secret itself is shown once, in the URL.

use super::shapes::{self, DescribeWebhooks, OfPolicy};
use super::{answer, read, Failure, Json, Outcome, PREFIX};
use crate::actions::change_group;
use crate::{App, HttpRequest};
use phantom_model::group::{ScalingPolicy, Webhook};
use phantom_rules::group::Group;
use phantom_rules::identity::Caller;
use phantom_rules::webhook;
use phantom_wire::{ApiError, ApiResult};
use std::sync::Mutex;

/// Runs `operation` if it is one of these; `None` if it is not.
pub async fn run(
    app: &App,
    caller: &Caller,
    operation: &str,
    input: &Json,
    req: &HttpRequest<'_>,
) -> Option<Outcome> {
    Some(match operation {
        "CreatePolicyWebhook" => {
            answer(async { create(app, caller, read(input)?, req).await }.await)
        }
        "DescribePolicyWebhooks" => {
            answer(async { describe(app, caller, read(input)?).await }.await)
        }
        "DeletePolicyWebhook" => answer(async { delete(app, caller, read(input)?).await }.await),
        "GetHeartbeatUrl" => answer(async { heartbeat_url(app, read(input)?, req).await }.await),
        _ => return None,
    })
}

/// The API's own base URL, as the caller reached it (scheme from API Gateway's
/// X-Forwarded-Proto, the stage kept).
fn base(req: &HttpRequest<'_>) -> ApiResult<String> {
    let header = |k: &str| req.headers.get(k).and_then(|v| v.to_str().ok());
    let scheme = header("x-forwarded-proto").unwrap_or("http");
    // Signed by every accepted request (sigv4::check_request refuses one without it).
    let host =
        header("host").ok_or_else(|| ApiError::validation("The request has no Host header."))?;
    let path = crate::path_of(req.path_and_query);
    let stage = path.split_once(PREFIX).map_or(path, |(stage, _)| stage);
    Ok(format!("{scheme}://{host}{stage}"))
}

/// The URL a group's VMs call with their heartbeats (`phantom_rules::heartbeat`): signed by the
/// caller's access key, so it is the same every time (the VMs' user data can carry it before the
/// group exists) and a rotated key revokes it.
async fn heartbeat_url(
    app: &App,
    input: shapes::OfGroupName,
    req: &HttpRequest<'_>,
) -> Result<shapes::HeartbeatUrl, Failure> {
    let group = input.auto_scaling_group_name.to_string();
    let key = crate::auth::key_of_request(app, req).await?;
    let path = phantom_rules::heartbeat::path(&key.access_key_id, &group, &key.secret);
    Ok(shapes::HeartbeatUrl {
        url: format!("{}{path}", base(req)?),
        auto_scaling_group_name: group,
    })
}

/// Makes the policy's webhook, or a new one in place of the old (whose URL stops working).
async fn create(
    app: &App,
    caller: &Caller,
    input: OfPolicy,
    req: &HttpRequest<'_>,
) -> Result<shapes::NewWebhook, Failure> {
    let group: &str = &input.auto_scaling_group_name;
    let name: &str = &input.policy_name;
    let (id, secret, digest) = webhook::new_webhook();
    let created = phantom_model::time::format_timestamp(app.clock.now());
    let policy_name = Mutex::new(String::new());
    change_policy(app, caller, group, name, |p| {
        if p.policy_type() == phantom_rules::policy::TRACKING {
            return Err(ApiError::validation(format!(
                "Policy {name} is a TargetTrackingScaling policy: Phantom runs it on its metric. \
                 A webhook runs a SimpleScaling or StepScaling policy."
            )));
        }
        p.webhook = Some(Webhook {
            id: id.clone(),
            secret_sha256: digest.clone(),
            created: created.clone(),
        });
        *policy_name.lock().expect("no panic while held") = p.policy_name.clone();
        Ok(())
    })
    .await?;
    let path = webhook::path(&caller.user, group, &id, &secret);
    Ok(shapes::NewWebhook {
        webhook: shapes::WebhookView {
            auto_scaling_group_name: group.to_string(),
            policy_name: policy_name.into_inner().expect("no panic while held"),
            webhook_id: id,
            created,
            url: Some(format!("{}{path}", base(req)?)),
        },
    })
}

fn no_policy(group: &str, name: &str) -> ApiError {
    ApiError::validation(format!("Group {group} has no scaling policy {name}."))
}

/// Changes the caller's policy `name` (or ARN) of group `group` as `change` says, as one
/// compare-and-set of the group; `change` is given the policy and may refuse.
pub async fn change_policy(
    app: &App,
    caller: &Caller,
    group: &str,
    name: &str,
    change: impl Fn(&mut ScalingPolicy) -> ApiResult<()>,
) -> ApiResult<Group> {
    change_group(app, caller, group, None, |g| {
        let mut next = g.clone();
        let p = next
            .settings
            .scaling_policies
            .iter_mut()
            .find(|p| p.is(name))
            .ok_or_else(|| no_policy(group, name))?;
        change(p)?;
        Ok(next)
    })
    .await
}

async fn describe(
    app: &App,
    caller: &Caller,
    input: DescribeWebhooks,
) -> Result<shapes::Webhooks, Failure> {
    let groups = groups_of(app, caller, input.auto_scaling_group_name.as_deref()).await?;
    let webhooks = groups
        .iter()
        .flat_map(|g| &g.settings.scaling_policies)
        .filter_map(|p| {
            let w = p.webhook.as_ref()?;
            Some(shapes::WebhookView {
                auto_scaling_group_name: p.auto_scaling_group_name.clone(),
                policy_name: p.policy_name.clone(),
                webhook_id: w.id.clone(),
                created: w.created.clone(),
                url: None,
            })
        })
        .collect();
    Ok(shapes::Webhooks { webhooks })
}

/// The caller's group `name`, or (None) all its groups.
pub async fn groups_of(
    app: &App,
    caller: &Caller,
    name: Option<&str>,
) -> Result<Vec<Group>, Failure> {
    Ok(match name {
        None => app.store.all_groups(&caller.user).await?,
        Some(name) => vec![app
            .store
            .group(&caller.user, name)
            .await?
            .ok_or_else(|| ApiError::validation(format!("Group {name} does not exist.")))?],
    })
}

/// Revokes the policy's webhook: its URL answers 403 from now on.
async fn delete(app: &App, caller: &Caller, input: OfPolicy) -> Result<shapes::Done, Failure> {
    let group: &str = &input.auto_scaling_group_name;
    let name: &str = &input.policy_name;
    change_policy(app, caller, group, name, |p| match p.webhook.take() {
        Some(_) => Ok(()),
        None => Err(ApiError::validation(format!(
            "Policy {name} of group {group} has no webhook."
        ))),
    })
    .await?;
    Ok(shapes::Done {})
}

/// The policy of `g` whose webhook is `id` with this secret, if any.
pub fn policy_of<'a>(g: &'a Group, id: &str, secret: &str) -> Option<&'a ScalingPolicy> {
    g.settings.scaling_policies.iter().find(|p| {
        p.webhook
            .as_ref()
            .is_some_and(|w| w.id == id && webhook::matches(secret, &w.secret_sha256))
    })
}
