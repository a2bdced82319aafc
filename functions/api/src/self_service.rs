//! Phantom's own API beside Auto Scaling's: what users do for themselves that AWS has no action
//! for, starting with their credentials on each cloud (the console is built on it). JSON over
//! `POST /phantom/v1/<Operation>`, SigV4-signed with the user's Phantom key like every request
//! (service `autoscaling`); errors are `{"Error": {"Code", "Message"}, "RequestId"}` with AWS's
//! status codes. Secrets go in and never come out, in answers or logs.

use crate::{auth, App, HttpRequest, HttpResponse};
use phantom::identity::Caller;
use phantom::store::{CloudCredentials, StoreError};
use phantom::ApiError;
use serde_json::{json, Value};
use std::time::Instant;

pub const PREFIX: &str = "/phantom/v1/";
const JSON: &str = "application/json";

/// Whether a request is for this API (by its path, which may sit under a stage: `/Prod/phantom/v1/`).
pub fn is_for(path_and_query: &str) -> bool {
    let path = path_and_query.split('?').next().unwrap_or_default();
    path.contains(PREFIX)
}

pub async fn handle(app: &App, req: HttpRequest<'_>) -> HttpResponse {
    let started = Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
    let path = req.path_and_query.split('?').next().unwrap_or_default();
    let operation = path
        .rsplit_once(PREFIX)
        .map(|(_, op)| op)
        .unwrap_or_default();
    let mut user = String::new();
    let outcome = run(app, &req, operation, &mut user).await;
    let (status, body, code) = match outcome {
        Ok(v) => (200, v, ""),
        Err(e) => {
            let body = json!({"Error": {"Code": e.code, "Message": e.message}});
            (e.status, body, e.code)
        }
    };
    let mut body = body;
    body["RequestId"] = request_id.clone().into();
    crate::log_request(&request_id, operation, &user, status, code, started);
    HttpResponse {
        status,
        content_type: JSON,
        body: body.to_string(),
    }
}

async fn run(
    app: &App,
    req: &HttpRequest<'_>,
    operation: &str,
    user: &mut String,
) -> Result<Value, ApiError> {
    let caller = auth::authenticate(app.store.as_ref(), &app.keys, app.clock.now(), req).await?;
    user.clone_from(&caller.user);
    if req.method != "POST" {
        return Err(ApiError::validation(format!(
            "Phantom's API takes POST, not {}.",
            req.method
        )));
    }
    let input: Value = if req.body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(req.body)
            .map_err(|e| serialization(format!("The body is not JSON: {e}")))?
    };
    if !input.is_object() {
        return Err(serialization("The body must be a JSON object."));
    }
    match operation {
        "ListClouds" => list_clouds(app, &caller).await,
        "PutCloudCredentials" => put_credentials(app, &caller, &input).await,
        "DeleteCloudCredentials" => delete_credentials(app, &caller, &input).await,
        other => Err(ApiError::invalid_action(other, "phantom/v1")),
    }
}

fn serialization(message: impl Into<String>) -> ApiError {
    ApiError {
        code: "SerializationException",
        status: 400,
        message: message.into(),
    }
}

/// A required, non-empty string member of the input.
fn required<'a>(input: &'a Value, name: &str) -> Result<&'a str, ApiError> {
    match input.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(_) => Err(ApiError::validation(format!(
            "{name} must be a non-empty string."
        ))),
        None => Err(ApiError::validation(format!("{name} is required."))),
    }
}

/// Every registered cloud, with whether the caller has credentials there (and which access key
/// id; never the secret).
async fn list_clouds(app: &App, caller: &Caller) -> Result<Value, ApiError> {
    let clouds = app.store.clouds().await?;
    let mine = app.store.all_cloud_credentials(&caller.user).await?;
    let list: Vec<Value> = clouds
        .iter()
        .map(|c| {
            let creds = mine.iter().find(|m| m.cloud == c.name);
            let mut v = json!({
                "Name": c.name,
                "Region": c.region,
                "Zone": c.zone,
                "LaunchTemplates": c.launch_templates,
                "HasCredentials": creds.is_some(),
            });
            if let Some(creds) = creds {
                v["AccessKeyId"] = creds.access_key_id.clone().into();
            }
            v
        })
        .collect();
    Ok(json!({ "Clouds": list }))
}

async fn put_credentials(app: &App, caller: &Caller, input: &Value) -> Result<Value, ApiError> {
    let cloud = required(input, "Cloud")?;
    let creds = CloudCredentials {
        cloud: cloud.to_string(),
        access_key_id: required(input, "AccessKeyId")?.to_string(),
        secret: required(input, "SecretAccessKey")?.to_string(),
    };
    match app.store.put_cloud_credentials(&caller.user, &creds).await {
        Ok(()) => Ok(json!({})),
        Err(StoreError::NotFound) => Err(ApiError::validation(format!(
            "Cloud '{cloud}' is not registered (ListClouds lists those that are)."
        ))),
        Err(e) => Err(e.into()),
    }
}

async fn delete_credentials(app: &App, caller: &Caller, input: &Value) -> Result<Value, ApiError> {
    let cloud = required(input, "Cloud")?;
    match app
        .store
        .delete_cloud_credentials(&caller.user, cloud)
        .await
    {
        Ok(()) => Ok(json!({})),
        Err(StoreError::NotFound) => Err(ApiError::validation(format!(
            "You have no credentials for cloud '{cloud}'."
        ))),
        Err(e) => Err(e.into()),
    }
}
