//! `GET <api>/phantom/v1/metrics`: a user's group metrics in Prometheus's text format, for the
//! user's own Prometheus to scrape with HTTP Basic authentication (the user's name and the
//! password of `CreateScrapeCredential`). Only that user's groups with metrics enabled, only the
//! metrics enabled, answered from what the store holds: the user, its groups and its instances,
//! three reads whatever the number of groups (each paged by the store at 1 MB). Anything but the
//! right credential: 403, whatever the reason.
//!
//! `?users=all` with an administrator's credential answers every user's groups with metrics
//! enabled, for the deployment's own Prometheus (the console's charts): the index of due groups,
//! then a user with many of them whole, as its own scrape reads it, and each group of the others
//! with its instances (`phantom_seams::store::samples::of_due`). `?scope=operations` with an administrator's credential
//! answers Phantom's own operating metrics as this process keeps them (`phantom_metrics::ops`: exact
//! where one process runs every function, as locally; on Lambda, one api instance's, so there
//! CloudWatch has them from each function's EMF lines), and the work queue's depth.

use crate::{App, HttpRequest, HttpResponse};
use phantom_rules::group_metrics;
use phantom_rules::scrape;
use phantom_wire::ApiError;
use std::time::Instant;

pub async fn handle(app: &App, req: HttpRequest<'_>) -> HttpResponse {
    let started = Instant::now();
    let request_id = phantom_rules::ids::uuid();
    let mut user = String::new();
    let outcome = answer(app, &req, &mut user).await;
    let (status, code, body, content_type) = match outcome {
        Ok(text) => (200, "", text, scrape::CONTENT_TYPE),
        Err(e) => {
            if e.status >= 500 {
                tracing::error!(request_id, code = e.code, message = %e.message, "scrape failed");
            }
            let text = format!("{}: {}\n", e.code, e.message);
            (e.status, e.code, text, "text/plain; charset=utf-8")
        }
    };
    crate::log_request(&request_id, "Metrics", &user, status, code, started);
    HttpResponse {
        status,
        content_type,
        headers: Vec::new(),
        body: body.into_bytes().into(),
    }
}

fn denied() -> ApiError {
    ApiError {
        code: "AccessDenied",
        status: 403,
        message: "A scrape needs HTTP Basic authentication with a user's name and scrape password (CreateScrapeCredential).".into(),
    }
}

async fn answer(app: &App, req: &HttpRequest<'_>, who: &mut String) -> Result<String, ApiError> {
    if req.method != "GET" {
        return Err(ApiError {
            code: "MethodNotAllowed",
            status: 405,
            message: "The metrics endpoint answers GET.".into(),
        });
    }
    let (name, password) = req
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(scrape::basic)
        .ok_or_else(denied)?;
    let user = app.store.user(&name).await?.ok_or_else(denied)?;
    let stored = user.scrape_sha256.as_deref().ok_or_else(denied)?;
    if user.disabled || !scrape::matches(&password, stored) {
        return Err(denied());
    }
    who.clone_from(&user.name);
    // A scrape is a read: the account's describing bucket.
    app.admit(&user.name, user.limits.as_ref(), "DescribeMetrics")
        .await?;
    let every = asks(req.path_and_query, "users=all");
    let operations = asks(req.path_and_query, "scope=operations");
    if (every || operations) && !user.admin {
        return Err(ApiError {
            code: "AccessDenied",
            status: 403,
            message:
                "Only an administrator's credential scrapes every user's or Phantom's own metrics."
                    .into(),
        });
    }
    if operations {
        return operating(app).await;
    }
    if every {
        return all_users(app).await;
    }
    let groups = phantom_seams::store::samples::of_user(app.store.as_ref(), &user.name).await?;
    Ok(group_metrics::exposition(&groups))
}

/// Whether the query string holds `param` (`users=all`, `scope=operations`).
fn asks(path_and_query: &str, param: &str) -> bool {
    path_and_query
        .split_once('?')
        .is_some_and(|(_, q)| q.split('&').any(|p| p == param))
}

/// This process's operating metrics, and the work queue's depth now.
async fn operating(app: &App) -> Result<String, ApiError> {
    let mut text = phantom_metrics::ops::exposition();
    if let Some(queue) = &app.queue {
        let depth = queue.backlog().await.map_err(|e| {
            ApiError::service_unavailable(format!("The work queue could not be asked: {e}"))
        })?;
        text.push_str(&format!(
            "# HELP phantom_queue_messages Messages waiting on the work queue to be received (SQS's ApproximateNumberOfMessages).\n\
             # TYPE phantom_queue_messages gauge\nphantom_queue_messages {depth}\n"
        ));
    }
    Ok(text)
}

/// Every user's groups with metrics enabled: the index of due groups lists them all.
async fn all_users(app: &App) -> Result<String, ApiError> {
    let due = app.store.due(app.clock.now_ms()).await?;
    let mut groups = Vec::new();
    for read in phantom_seams::store::samples::of_due(app.store.as_ref(), &due).await {
        groups.extend(read.groups?);
    }
    Ok(group_metrics::exposition(&groups))
}
