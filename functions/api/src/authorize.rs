//! Whether a caller's policies allow a request (issue 63). An account's root is allowed
//! everything; an IAM user's policies came with its key (`auth`), and are evaluated here over every
//! resource the request names (`phantom_rules::iam`). A refusal is AWS's AccessDenied in AWS's
//! words.

use crate::{App, HttpRequest};
use phantom_model::iam::Identity;
use phantom_rules::iam::{self, principal, Context};
use phantom_rules::identity::Caller;
use phantom_wire::ApiError;
use serde_json::Value;

/// An IAM user's request, as its policies see it.
struct Asking<'a> {
    identity: &'a Identity,
    base: Context,
}

fn asking<'a>(app: &App, caller: &'a Caller, req: &HttpRequest<'_>) -> Option<Asking<'a>> {
    let identity = caller.identity.as_ref()?;
    let now = app.clock.now();
    let source_ip = req.source_ip.map(|ip| ip.to_string());
    let base = principal::global_keys(&principal::Facts {
        account_id: &caller.account_id,
        identity,
        current_time: &phantom_model::time::format_seconds(now),
        epoch_secs: now.unix_timestamp(),
        source_ip: source_ip.as_deref(),
        secure: req.secure,
        region: &app.config.region,
    });
    Some(Asking { identity, base })
}

/// The request's condition keys and `extra` beside them (for a root: those alone).
pub fn context(
    app: &App,
    caller: &Caller,
    req: &HttpRequest<'_>,
    extra: &[(&str, &str)],
) -> Context {
    let mut ctx = asking(app, caller, req).map_or_else(Context::default, |a| a.base);
    ctx.set("aws:PrincipalArn", vec![principal_arn(caller)]);
    for (k, v) in extra {
        ctx.set(k, vec![v.to_string()]);
    }
    ctx
}

/// The ARN a policy names the caller by: a role's session by its role's.
fn principal_arn(caller: &Caller) -> String {
    let identity = caller.identity.as_ref();
    identity
        .and_then(|i| i.role_arn(&caller.account_id))
        .unwrap_or_else(|| principal::arn(&caller.account_id, identity))
}

/// What the caller's own policies say of `action` on `resource` with `ctx` (a root: Allow).
pub fn decision(caller: &Caller, action: &str, resource: &str, ctx: &Context) -> iam::Decision {
    let Some(identity) = caller.identity.as_ref() else {
        return iam::Decision::Allow;
    };
    let policies = principal::policies_of(identity);
    let session = principal::session_policies_of(identity);
    let resources = [(resource.to_string(), ctx.clone())];
    match principal::first_refused(&policies, session.as_deref(), action, &resources) {
        None => iam::Decision::Allow,
        Some((_, d)) => d,
    }
}

/// AWS's refusal of `action` on `resource` for the caller.
pub fn refusal(caller: &Caller, action: &str, resource: &str, d: iam::Decision) -> ApiError {
    let who = principal::arn(&caller.account_id, caller.identity.as_ref());
    ApiError::access_denied(principal::refusal(&who, action, resource, d))
}

/// Refuses `action` (`iam:CreateUser`, `phantom:PutCloudCredentials`, ...) on `resource` unless
/// the caller's policies allow it.
pub fn check(
    app: &App,
    caller: &Caller,
    req: &HttpRequest<'_>,
    action: &str,
    resource: &str,
) -> Result<(), ApiError> {
    let Some(a) = asking(app, caller, req) else {
        return Ok(());
    };
    decide(
        caller,
        &a,
        action,
        &[(resource.to_string(), a.base.clone())],
    )
}

/// Refuses an Auto Scaling action unless the caller's policies allow it on every resource it
/// names, each with its tags (a group's are read for an IAM user's request; a root's reads
/// nothing).
pub async fn autoscaling(
    app: &App,
    caller: &Caller,
    req: &HttpRequest<'_>,
    action: &str,
    input: &Value,
) -> Result<(), ApiError> {
    let Some(mut a) = asking(app, caller, req) else {
        return Ok(());
    };
    iam::autoscaling::request_keys(action, input, &mut a.base);
    let named = iam::autoscaling::named(action, input);
    let region = &app.config.region;
    let account = &caller.account_id;
    let mut resources = Vec::new();
    if named.is_any() {
        resources.push(("*".to_string(), a.base.clone()));
    }
    let mut groups = named.groups.clone();
    if let Some(instance) = &named.instance {
        let owners = app.store.owners_of(instance).await?;
        match owners.into_iter().find(|(user, _)| *user == caller.user) {
            Some((_, group)) => groups.push(group),
            // A VM of no group of the account's: the action refuses it on its own.
            None => resources.push(("*".to_string(), a.base.clone())),
        }
    }
    for name in &groups {
        let mut ctx = a.base.clone();
        let arn = match app.store.group(&caller.user, name).await? {
            Some(g) => {
                let tags = g.settings.tags.iter();
                iam::autoscaling::resource_keys(
                    tags.map(|t| (t.key.as_str(), t.value.as_str())),
                    &mut ctx,
                );
                phantom_rules::group::arn(region, account, &g.id, &g.name)
            }
            None => iam::autoscaling::unknown_group_arn(region, account, name),
        };
        resources.push((arn, ctx));
    }
    if let Some(lc) = &named.launch_configuration {
        let arn = iam::autoscaling::launch_configuration_arn(region, account, lc);
        resources.push((arn, a.base.clone()));
    }
    decide(caller, &a, &format!("autoscaling:{action}"), &resources)
}

fn decide(
    caller: &Caller,
    a: &Asking<'_>,
    action: &str,
    resources: &[(String, Context)],
) -> Result<(), ApiError> {
    let policies = principal::policies_of(a.identity);
    let session = principal::session_policies_of(a.identity);
    match principal::first_refused(&policies, session.as_deref(), action, resources) {
        None => Ok(()),
        Some((resource, decision)) => {
            let who = principal::arn(&caller.account_id, Some(a.identity));
            tracing::info!(principal = who, action, resource, "access denied");
            Err(ApiError::access_denied(principal::refusal(
                &who, action, resource, decision,
            )))
        }
    }
}
