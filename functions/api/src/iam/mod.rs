//! IAM and STS at Phantom's endpoint (issue 63): the identities inside an account and their
//! short-lived credentials, in IAM's and STS's Query APIs and botocore's `iam` and `sts` shapes,
//! so `aws iam ...` and `aws sts ...` with `--endpoint-url` work unmodified. Each Phantom user is
//! an account; its own key is the account's root; the IAM users it makes act on the account's
//! groups within their policies (`crate::authorize`).

mod managed;
mod policies;
mod roles;
mod root_keys;
mod simulate;
mod sts;
mod users;

use crate::{auth, authorize, trail, App, HttpRequest, HttpResponse};
use phantom_model::iam::IamUser;
use phantom_rules::identity::Caller;
use phantom_wire::query::{self, Document};
use phantom_wire::shapes::Service;
use phantom_wire::{xml, ApiError};
use std::time::Instant;

/// The service a Query request is for, if it is IAM or STS (its `Version`).
pub fn service_of(req: &HttpRequest<'_>) -> Option<Service> {
    let params = crate::parameters(req).ok()?;
    let version = params.get("Version")?;
    [Service::Iam, Service::Sts]
        .into_iter()
        .find(|s| s.version() == version)
}

pub async fn handle(app: &App, req: HttpRequest<'_>, service: Service) -> HttpResponse {
    let started = Instant::now();
    let request_id = phantom_rules::ids::uuid();
    let mut operation = String::new();
    let mut user = String::new();
    let outcome = run(app, &req, service, &request_id, &mut operation, &mut user).await;
    let (status, body, code) = match outcome {
        Ok(result) => (
            200,
            xml::response_of(service, &operation, result.as_ref(), &request_id),
            "",
        ),
        Err(e) => {
            if e.status >= 500 {
                tracing::error!(request_id, code = e.code, message = %e.message, "request failed");
            }
            (
                e.status,
                xml::error_response_of(service, &e, &request_id),
                e.code,
            )
        }
    };
    crate::log_request(&request_id, &operation, &user, status, code, started);
    HttpResponse {
        status,
        content_type: crate::CONTENT_TYPE,
        headers: vec![("x-amzn-requestid", request_id.into())],
        body: body.into_bytes().into(),
    }
}

async fn run(
    app: &App,
    req: &HttpRequest<'_>,
    service: Service,
    request_id: &str,
    operation: &mut String,
    user: &mut String,
) -> Result<Option<Document>, ApiError> {
    let caller =
        auth::authenticate(service, app.store.as_ref(), &app.keys, app.clock.now(), req).await?;
    user.clone_from(&caller.user);
    let params = crate::parameters(req)?;
    match params.get("Action").filter(|a| !a.is_empty()) {
        Some(a) => *operation = a.to_string(),
        None => return Err(ApiError::invalid_action("(none)", service.version())),
    }
    app.admit(&caller.user, caller.limits.as_ref(), operation)
        .await?;
    let input = query::decode_input_of(service, operation, &params);
    let decoded = input.as_ref().ok().map(|i| i.as_value().clone());
    let at = Ask {
        app,
        caller: &caller,
        req,
    };
    let outcome = match (input, service) {
        (Err(e), _) => Err(e),
        (Ok(input), Service::Sts) => sts::dispatch(&at, operation, input).await,
        (Ok(input), _) => dispatch(&at, operation, input).await,
    };
    let asked = trail::Asked {
        service: service.signing_name(),
        action: operation,
        params: decoded.as_ref(),
        request_id,
    };
    trail::record(app, req, &caller, &asked, crate::trail::refused(&outcome)).await;
    outcome
}

/// A request being answered: the api, who asks, and the request (for its policies' keys).
pub(crate) struct Ask<'a> {
    pub app: &'a App,
    pub caller: &'a Caller,
    pub req: &'a HttpRequest<'a>,
}

impl Ask<'_> {
    /// Refuses `iam:<operation>` on `resource` unless the caller's policies allow it.
    fn allow(&self, operation: &str, resource: &str) -> Result<(), ApiError> {
        authorize::check(
            self.app,
            self.caller,
            self.req,
            &format!("iam:{operation}"),
            resource,
        )
    }

    /// The user a request names, or (none named) the caller's own, once `operation` is allowed
    /// on it. The account's root names itself by naming no user.
    async fn user(&self, operation: &str, named: Option<&str>) -> Result<IamUser, ApiError> {
        let name = match (named, &self.caller.identity) {
            (Some(n), _) => n.to_string(),
            (None, Some(me)) => me.name.clone(),
            (None, None) => {
                return Err(ApiError::invalid_input(
                    "The account's root is no IAM user: name one (UserName).",
                ))
            }
        };
        let found = self.app.store.iam_user(&self.caller.user, &name).await?;
        let path = found.as_ref().map_or("/", |u| u.path.as_str());
        let arn = phantom_model::iam::user_arn(&self.caller.account_id, path, &name);
        self.allow(operation, &arn)?;
        found.ok_or_else(|| no_such_user(&name))
    }
}

/// A page of IAM's List actions: `items` by name (without case), those after `marker` (the
/// last name of the page before), `max_items` of them (100 when not given, as IAM's), and
/// whether more follow.
fn page<T>(
    mut items: Vec<T>,
    name: impl Fn(&T) -> &String,
    marker: Option<String>,
    max_items: Option<i64>,
) -> (Vec<T>, bool) {
    items.sort_by_key(|i| name(i).to_lowercase());
    let after = marker.map(|m| m.to_lowercase());
    items.retain(|i| after.as_ref().is_none_or(|m| name(i).to_lowercase() > *m));
    let max = max_items.map_or(100, |n| n as usize);
    let truncated = items.len() > max;
    items.truncate(max);
    (items, truncated)
}

fn no_such_user(name: &str) -> ApiError {
    ApiError::no_such_entity(format!("The user with name {name} cannot be found."))
}

/// A conflicting write's answer: IAM's ConcurrentModification.
fn concurrent() -> ApiError {
    ApiError::resource_contention("The user was changed by another request; retry.")
}

async fn dispatch(
    at: &Ask<'_>,
    operation: &str,
    input: Document,
) -> Result<Option<Document>, ApiError> {
    use query::{input as read, output};
    match operation {
        "CreateUser" => output(users::create_user(at, read(input)?).await?),
        "GetUser" => output(users::get_user(at, read(input)?).await?),
        "ListUsers" => output(users::list_users(at, read(input)?).await?),
        "DeleteUser" => output(users::delete_user(at, read(input)?).await?),
        "CreateAccessKey" => output(users::create_access_key(at, read(input)?).await?),
        "UpdateAccessKey" => output(users::update_access_key(at, read(input)?).await?),
        "DeleteAccessKey" => output(users::delete_access_key(at, read(input)?).await?),
        "ListAccessKeys" => output(users::list_access_keys(at, read(input)?).await?),
        "GetAccessKeyLastUsed" => output(users::get_access_key_last_used(at, read(input)?).await?),
        "PutUserPolicy" => output(policies::put_user_policy(at, read(input)?).await?),
        "GetUserPolicy" => output(policies::get_user_policy(at, read(input)?).await?),
        "ListUserPolicies" => output(policies::list_user_policies(at, read(input)?).await?),
        "DeleteUserPolicy" => output(policies::delete_user_policy(at, read(input)?).await?),
        "CreatePolicy" => output(managed::create_policy(at, read(input)?).await?),
        "GetPolicy" => output(managed::get_policy(at, read(input)?).await?),
        "ListPolicies" => output(managed::list_policies(at, read(input)?).await?),
        "DeletePolicy" => output(managed::delete_policy(at, read(input)?).await?),
        "CreatePolicyVersion" => output(managed::create_policy_version(at, read(input)?).await?),
        "GetPolicyVersion" => output(managed::get_policy_version(at, read(input)?).await?),
        "ListPolicyVersions" => output(managed::list_policy_versions(at, read(input)?).await?),
        "DeletePolicyVersion" => output(managed::delete_policy_version(at, read(input)?).await?),
        "SetDefaultPolicyVersion" => {
            output(managed::set_default_policy_version(at, read(input)?).await?)
        }
        "AttachUserPolicy" => output(managed::attach_user_policy(at, read(input)?).await?),
        "DetachUserPolicy" => output(managed::detach_user_policy(at, read(input)?).await?),
        "ListAttachedUserPolicies" => {
            output(managed::list_attached_user_policies(at, read(input)?).await?)
        }
        "SimulatePrincipalPolicy" | "SimulateCustomPolicy" => {
            output(simulate::simulate(at, read(input)?).await?)
        }
        "CreateRole" => output(roles::create_role(at, read(input)?).await?),
        "GetRole" => output(roles::get_role(at, read(input)?).await?),
        "ListRoles" => output(roles::list_roles(at, read(input)?).await?),
        "DeleteRole" => output(roles::delete_role(at, read(input)?).await?),
        "UpdateAssumeRolePolicy" => {
            output(roles::update_assume_role_policy(at, read(input)?).await?)
        }
        "PutRolePolicy" => output(roles::put_role_policy(at, read(input)?).await?),
        "GetRolePolicy" => output(roles::get_role_policy(at, read(input)?).await?),
        "ListRolePolicies" => output(roles::list_role_policies(at, read(input)?).await?),
        "DeleteRolePolicy" => output(roles::delete_role_policy(at, read(input)?).await?),
        "AttachRolePolicy" => output(roles::attach_role_policy(at, read(input)?).await?),
        "DetachRolePolicy" => output(roles::detach_role_policy(at, read(input)?).await?),
        "ListAttachedRolePolicies" => {
            output(roles::list_attached_role_policies(at, read(input)?).await?)
        }
        other => Err(ApiError::invalid_action_because(
            other,
            "Phantom's IAM keeps users, their access keys, roles, inline and managed policies (docs/security.md)",
        )),
    }
}
