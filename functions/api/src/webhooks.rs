//! The calls alert webhooks answer: `POST <api>/phantom/v1/webhooks/<user>/<group>/<id>.<secret>`
//! runs the policy whose webhook that is, honouring the group's cooldown, with no AWS signature:
//! the secret in the URL is the credential. Unknown, revoked or wrong: 403, whatever the reason.
//! A burst is absorbed by the cooldown (answered 200 with `"Executed": false`, so Alertmanager
//! does not retry it); `resolved` alerts do nothing.

use crate::actions::policies::{run_policy, Execution};
use crate::self_service::hooks;
use crate::{App, HttpRequest, HttpResponse};
use phantom::identity::Caller;
use phantom::webhook::{self, Call};
use phantom::ApiError;
use serde_json::{json, Value};
use std::time::Instant;

pub use webhook::PREFIX;

pub fn is_for(path_and_query: &str) -> bool {
    let path = crate::path_of(path_and_query);
    path.contains(PREFIX)
}

pub async fn handle(app: &App, req: HttpRequest<'_>) -> HttpResponse {
    let started = Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
    let (user, outcome) = match webhook::target(req.path_and_query) {
        Some(t) => (t.user.clone(), answer(app, &req, &t).await),
        None => (String::new(), Err(denied())),
    };
    let (status, mut body, code) = match outcome {
        Ok(v) => (200, v, ""),
        Err(e) => (
            e.status,
            json!({"Error": {"Code": e.code, "Message": e.message}}),
            e.code,
        ),
    };
    body["RequestId"] = request_id.clone().into();
    crate::log_request(&request_id, "Webhook", &user, status, code, started);
    HttpResponse {
        status,
        content_type: "application/json",
        headers: Vec::new(),
        body: body.to_string().into(),
    }
}

fn denied() -> ApiError {
    ApiError {
        code: "AccessDenied",
        status: 403,
        message: "This webhook does not exist or was revoked.".into(),
    }
}

async fn answer(app: &App, req: &HttpRequest<'_>, t: &webhook::Target) -> Result<Value, ApiError> {
    if req.method != "POST" {
        return Err(ApiError::validation("A webhook is called with POST."));
    }
    let Some(user) = app.store.user(&t.user).await?.filter(|u| !u.disabled) else {
        return Err(denied());
    };
    let Some(g) = app.store.group(&user.name, &t.group).await? else {
        return Err(denied());
    };
    let policy = hooks::policy_of(&g, &t.id, &t.secret)
        .ok_or_else(denied)?
        .policy_name
        .clone();
    let (metric, breach, alert) = match webhook::call(req.body).map_err(ApiError::validation)? {
        Call::Resolved => return Ok(json!({"Executed": false, "Reason": "resolved"})),
        Call::Fire {
            metric,
            breach,
            alert,
        } => (metric, breach, alert),
    };
    let by = match &alert {
        Some(name) => format!("an alert webhook for {name} triggered"),
        None => "a webhook request triggered".to_string(),
    };
    let caller = Caller {
        user: user.name.clone(),
        account_id: user.account_id.clone(),
    };
    let run = Execution {
        group: &t.group,
        policy: &policy,
        honor: true,
        metric,
        breach,
        by: &by,
    };
    match run_policy(app, &caller, &run).await {
        Ok((from, to)) => Ok(json!({
            "Executed": true,
            "PolicyName": policy,
            "FromDesiredCapacity": from,
            "DesiredCapacity": to,
        })),
        Err(e) if e.code == "ScalingActivityInProgress" => Ok(json!({
            "Executed": false,
            "Reason": "cooldown",
            "Message": e.message,
        })),
        Err(e) => Err(e),
    }
}
