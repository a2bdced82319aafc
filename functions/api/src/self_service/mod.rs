//! Phantom's own API beside Auto Scaling's: what users do for themselves that AWS has no action
//! for (`mine`: their credentials, images and key pairs on each cloud) and what administrators do
//! (`admin`: clouds and users). The console is built on it. JSON over
//! `POST /phantom/v1/<Operation>`, SigV4-signed with the user's Phantom key like every request
//! (service `autoscaling`); errors are `{"Error": {"Code", "Message"}, "RequestId"}` with AWS's
//! status codes. Secrets go in and never come out, in answers or logs, except a new access key's
//! secret, once, to the administrator who made it.

mod admin;
/// The operations only administrators may call.
pub use admin::OPERATIONS as ADMIN_OPERATIONS;
mod alarms;
pub mod hooks;
mod metric;
mod mine;
mod shapes;

use crate::{auth, App, HttpRequest, HttpResponse};
use phantom_seams::cloud::CloudError;
use phantom_wire::shapes::Service;
use phantom_wire::ApiError;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::time::Instant;

pub const PREFIX: &str = "/phantom/v1/";
const JSON: &str = "application/json";

pub async fn handle(app: &App, req: HttpRequest<'_>) -> HttpResponse {
    let started = Instant::now();
    let request_id = phantom_rules::ids::uuid();
    let path = crate::path_of(req.path_and_query);
    // Only paths with the prefix are routed here.
    let operation = path.rsplit_once(PREFIX).map_or(path, |(_, op)| op);
    let mut user = String::new();
    let outcome = run(app, &req, &request_id, operation, &mut user).await;
    let (status, mut body, code) = match outcome {
        Ok(Json(v)) => (200, v, Cow::Borrowed("")),
        Err(e) => {
            if e.status >= 500 {
                tracing::error!(request_id, code = %e.code, message = %e.message, "request failed");
            }
            let body = json!({"Error": {"Code": e.code, "Message": e.message}});
            (e.status, body, e.code)
        }
    };
    body["RequestId"] = request_id.clone().into();
    crate::log_request(&request_id, operation, &user, status, &code, started);
    HttpResponse {
        status,
        content_type: JSON,
        headers: Vec::new(),
        body: body.to_string().into_bytes().into(),
    }
}

/// An error of this API: AWS's, or a cloud's own code passed through.
#[derive(Debug)]
pub struct Failure {
    pub status: u16,
    pub code: Cow<'static, str>,
    pub message: String,
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Self {
            status: e.status,
            code: Cow::Borrowed(e.code),
            message: e.message,
        }
    }
}

impl From<phantom_seams::store::StoreError> for Failure {
    fn from(e: phantom_seams::store::StoreError) -> Self {
        ApiError::from(e).into()
    }
}

impl Failure {
    /// A cloud's refusal keeps its code, its message prefixed with the cloud's name; a cloud that
    /// cannot be asked, or fails with a 5xx of its own, is 503 CloudUnavailable.
    fn from_cloud(cloud: &str, e: CloudError) -> Self {
        let unreachable = e.code == CloudError::unreachable("").code || e.code.starts_with("HTTP5");
        Self {
            status: if unreachable { 503 } else { 400 },
            code: if unreachable {
                Cow::Borrowed("CloudUnavailable")
            } else {
                Cow::Owned(e.code)
            },
            message: format!("{cloud}: {}", e.message),
        }
    }

    fn shape(&self) -> shapes::ErrorShape {
        shapes::ErrorShape {
            code: self.code.to_string(),
            message: self.message.clone(),
        }
    }
}

/// A request's body or an answer: the JSON object this API's wire carries, which only this file
/// reads and writes; the operations see their typed request and answer (`shapes`).
pub struct Json(Value);

pub type Outcome = Result<Json, Failure>;

async fn run(
    app: &App,
    req: &HttpRequest<'_>,
    request_id: &str,
    operation: &str,
    user: &mut String,
) -> Outcome {
    let caller = auth::authenticate(
        Service::AutoScaling,
        app.store.as_ref(),
        &app.keys,
        app.clock.now(),
        req,
    )
    .await?;
    user.clone_from(&caller.user);
    if req.method != "POST" {
        return Err(
            ApiError::validation(format!("Phantom's API takes POST, not {}.", req.method)).into(),
        );
    }
    let input = Json(if req.body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(req.body)
            .map_err(|e| serialization(format!("The body is not JSON: {e}")))?
    });
    if !input.0.is_object() {
        return Err(serialization("The body must be a JSON object.").into());
    }
    let outcome = act(app, req, &caller, operation, &input).await;
    let asked = crate::trail::Asked {
        service: "phantom",
        action: operation,
        params: Some(&input.0),
        request_id,
    };
    let refused = outcome
        .as_ref()
        .err()
        .map(|f| (f.code.as_ref(), f.message.as_str()));
    crate::trail::record(app, req, &caller, &asked, refused).await;
    outcome
}

/// An operation, once its caller's policies allow it.
async fn act(
    app: &App,
    req: &HttpRequest<'_>,
    caller: &phantom_rules::identity::Caller,
    operation: &str,
    input: &Json,
) -> Outcome {
    // Who the caller is needs no permission, as STS's GetCallerIdentity (the console's sign-in).
    if operation != "GetCallerIdentity" {
        crate::authorize::check(app, caller, req, &format!("phantom:{operation}"), "*")?;
    }
    if let Some(outcome) = mine::run(app, caller, operation, input).await {
        return outcome;
    }
    if let Some(outcome) = hooks::run(app, caller, operation, input, req).await {
        return outcome;
    }
    if let Some(outcome) = alarms::run(app, caller, operation, input).await {
        return outcome;
    }
    if let Some(outcome) = metric::run(app, caller, operation, input).await {
        return outcome;
    }
    if admin::OPERATIONS.contains(&operation) {
        admin::require(app, caller, operation).await?;
        return admin::run(app, caller, operation, input).await;
    }
    Err(ApiError::invalid_action(operation, "phantom/v1").into())
}

fn serialization(message: impl Into<String>) -> ApiError {
    ApiError {
        code: "SerializationException",
        status: 400,
        message: message.into(),
    }
}

/// The body as an operation's request type (`shapes`): a member missing, of the wrong type or
/// an empty name is a ValidationError naming it.
fn read<T: serde::de::DeserializeOwned>(input: &Json) -> Result<T, Failure> {
    serde_path_to_error::deserialize(&input.0).map_err(|e| {
        let message = match e.path().to_string().as_str() {
            "." => format!("{}.", e.inner()),
            member => format!("{member}: {}.", e.inner()),
        };
        ApiError::validation(message).into()
    })
}

/// An operation's answer (`shapes`) as the body.
fn answer<T: serde::Serialize>(answer: Result<T, Failure>) -> Outcome {
    answer.map(|a| Json(serde_json::to_value(a).expect("an answer serialises")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clouds_refusal_keeps_its_code_and_a_broken_cloud_is_unavailable() {
        let refused = Failure::from_cloud("hotel", CloudError::new("AuthFailure", "bad key"));
        assert_eq!(
            (refused.status, refused.code.as_ref()),
            (400, "AuthFailure")
        );
        assert_eq!(refused.message, "hotel: bad key");
        for e in [
            CloudError::unreachable("connection refused"),
            CloudError::new("HTTP500", "answered HTTP 500"),
        ] {
            let f = Failure::from_cloud("hotel", e);
            assert_eq!((f.status, f.code.as_ref()), (503, "CloudUnavailable"));
        }
    }
}
