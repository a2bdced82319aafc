//! The calls VMs make to their group's heartbeat URL (`phantom_rules::heartbeat`): `POST` (or `GET`)
//! `<api>/phantom/v1/heartbeats/<access key id>/<group>/<mac>?instance=<id>`, no AWS signature: the
//! mac, made with the owner's secret access key, is the credential. Unknown key or wrong mac: 403,
//! whatever the reason. Each call keeps the VM's last heartbeat (one write); the health check
//! judges the silence (`health_check::prober`). Heartbeats have request limits of their own,
//! sized for thousands of VMs an account (`HEARTBEATS`), apart from the API's.

use crate::{App, HttpRequest, HttpResponse};
use phantom_rules::heartbeat;
use phantom_rules::throttle::{Class, Limits, Rate};
use phantom_wire::ApiError;
use std::time::Instant;

pub use heartbeat::PREFIX;

/// A user's heartbeats an instance of the function takes: 200 a second, 2,000 at once (6,000 VMs
/// calling every 30 s). Held in the throttle's Describe bucket of its own `Throttle`.
pub const HEARTBEATS: Limits = Limits {
    describe: Rate {
        per_sec: 200.0,
        burst: 2000.0,
    },
    mutate: Rate {
        per_sec: 200.0,
        burst: 2000.0,
    },
};

pub async fn handle(app: &App, req: HttpRequest<'_>) -> HttpResponse {
    let started = Instant::now();
    let request_id = phantom_rules::ids::uuid();
    let mut user = String::new();
    let outcome = beat(app, &req, &mut user).await;
    let (status, code, body) = match &outcome {
        Ok(()) => (200, "", "{}".to_string()),
        Err(e) => (
            e.status,
            e.code,
            serde_json::json!({"Error": {"Code": e.code, "Message": e.message}, "RequestId": request_id})
                .to_string(),
        ),
    };
    crate::log_request(&request_id, "Heartbeat", &user, status, code, started);
    HttpResponse {
        status,
        content_type: "application/json",
        headers: Vec::new(),
        body: body.into_bytes().into(),
    }
}

async fn beat(app: &App, req: &HttpRequest<'_>, user: &mut String) -> Result<(), ApiError> {
    if !matches!(req.method, "POST" | "GET" | "PUT") {
        return Err(ApiError::validation(format!(
            "A heartbeat is a POST, not {}.",
            req.method
        )));
    }
    let t = heartbeat::target(req.path_and_query).ok_or_else(denied)?;
    let key = crate::auth::key(app, &t.access_key_id)
        .await?
        .ok_or_else(denied)?;
    if !heartbeat::matches(&key.secret, &t.group, &t.mac) {
        return Err(denied());
    }
    user.clone_from(&key.user);
    let now = app.clock.now_ms();
    if !app.heartbeats.admit(&key.user, None, Class::Describe, now) {
        return Err(ApiError::throttling());
    }
    app.store
        .beat(&key.user, &t.group, &t.instance, now)
        .await?;
    Ok(())
}

fn denied() -> ApiError {
    ApiError {
        code: "AccessDenied",
        status: 403,
        message: "The heartbeat URL is not valid.".into(),
    }
}
