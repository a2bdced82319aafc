//! The calls alert webhooks answer: `POST <api>/phantom/v1/webhooks/<user>/<group>/<id>.<secret>`
//! runs the policy whose webhook that is, honouring the group's cooldown, with no AWS signature:
//! the secret in the URL is the credential. Unknown, revoked or wrong: 403, whatever the reason.
//! A burst is absorbed by the cooldown (answered 200 with `"Executed": false`, so Alertmanager
//! does not retry it); `resolved` alerts do nothing.

use crate::actions::policies::{run_policy, Execution};
use crate::self_service::hooks;
use crate::{App, HttpRequest, HttpResponse};
use phantom_rules::identity::Caller;
use phantom_rules::webhook::{self, Call};
use phantom_wire::ApiError;
use serde::Serialize;
use std::time::Instant;

pub use webhook::PREFIX;

pub async fn handle(app: &App, req: HttpRequest<'_>) -> HttpResponse {
    let started = Instant::now();
    let request_id = phantom_rules::ids::uuid();
    let (user, outcome) = match webhook::target(req.path_and_query) {
        Some(t) => (t.user.clone(), answer(app, &req, &t).await),
        None => (String::new(), Err(denied())),
    };
    let (status, code) = match &outcome {
        Ok(_) => (200, ""),
        Err(e) => (e.status, e.code),
    };
    crate::log_request(&request_id, "Webhook", &user, status, code, started);
    let body = match outcome {
        Ok(answer) => Body {
            answer: Some(answer),
            error: None,
            request_id,
        },
        Err(e) => Body {
            answer: None,
            error: Some(Error {
                code: e.code,
                message: e.message,
            }),
            request_id,
        },
    };
    HttpResponse {
        status,
        content_type: "application/json",
        headers: Vec::new(),
        body: serde_json::to_vec(&body)
            .expect("strings and numbers serialize")
            .into(),
    }
}

/// What a call is answered, as JSON: the outcome or the error, and the request's id.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Body {
    #[serde(flatten)]
    answer: Option<Answer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Error>,
    request_id: String,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Error {
    code: &'static str,
    message: String,
}

/// Whether the policy ran: if it did, the capacity it changed; if not, why not.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Answer {
    executed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    from_desired_capacity: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    desired_capacity: Option<i64>,
}

impl Answer {
    fn not_run(reason: &'static str, message: Option<String>) -> Self {
        Self {
            executed: false,
            reason: Some(reason),
            message,
            policy_name: None,
            from_desired_capacity: None,
            desired_capacity: None,
        }
    }
}

fn denied() -> ApiError {
    ApiError {
        code: "AccessDenied",
        status: 403,
        message: "This webhook does not exist or was revoked.".into(),
    }
}

async fn answer(app: &App, req: &HttpRequest<'_>, t: &webhook::Target) -> Result<Answer, ApiError> {
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
        Call::Resolved => return Ok(Answer::not_run("resolved", None)),
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
        limits: user.limits,
        // A webhook acts for the account that made it, as its root.
        identity: None,
        access_key_id: None,
        session: None,
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
        Ok((from, to)) => Ok(Answer {
            executed: true,
            reason: None,
            message: None,
            policy_name: Some(policy),
            from_desired_capacity: Some(from),
            desired_capacity: Some(to),
        }),
        Err(e) if e.code == "ScalingActivityInProgress" => {
            Ok(Answer::not_run("cooldown", Some(e.message)))
        }
        Err(e) => Err(e),
    }
}
