//! `GET <api>/phantom/v1/metrics`: a user's group metrics in Prometheus's text format, for the
//! user's own Prometheus to scrape with HTTP Basic authentication (the user's name and the
//! password of `CreateScrapeCredential`). Only that user's groups with metrics enabled, only the
//! metrics enabled, answered from what the store holds: the user, its groups and its instances,
//! three reads whatever the number of groups (each paged by the store at 1 MB). Anything but the
//! right credential: 403, whatever the reason.
//!
//! `?users=all` with an administrator's credential answers every user's groups with metrics
//! enabled, for the deployment's own Prometheus (the console's charts): the index of due groups,
//! then each such group and its instances. `?scope=operations` with an administrator's credential
//! answers Phantom's own operating metrics as this process keeps them (`phantom::ops`: exact
//! where one process runs every function, as locally; on Lambda, one api instance's, so there
//! CloudWatch has them from each function's EMF lines), and the work queue's depth.

use crate::{App, HttpRequest, HttpResponse};
use futures::stream::{self, StreamExt};
use phantom::group_metrics;
use phantom::group_metrics::GroupSamples;
use phantom::scrape;
use phantom::throttle::Class;
use phantom::ApiError;
use std::collections::BTreeMap;
use std::time::Instant;

pub fn is_for(path_and_query: &str) -> bool {
    crate::path_of(path_and_query).ends_with(scrape::PATH)
}

pub async fn handle(app: &App, req: HttpRequest<'_>) -> HttpResponse {
    let started = Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
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
        body: body.into(),
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
    if !app.throttle.admit(
        &user.name,
        user.limits.as_ref(),
        Class::Describe,
        app.clock.now_ms(),
    ) {
        phantom::ops::count(
            phantom::ops::THROTTLED,
            &[("class", Class::Describe.name())],
        );
        return Err(ApiError::throttling());
    }
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
    let groups = app
        .store
        .groups(&user.name, None, None, usize::MAX, &|g| {
            !g.settings.enabled_metrics.is_empty()
        })
        .await?;
    if groups.is_empty() {
        return Ok(String::new());
    }
    let mut members: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for (group, m) in app.store.all_instances(&user.name).await? {
        members.entry(group).or_default().push(m);
    }
    let samples: Vec<GroupSamples> = groups
        .iter()
        .map(|g| GroupSamples {
            user: user.name.clone(),
            group: g.name.clone(),
            samples: group_metrics::samples(g, members.get(&g.name).map_or(&[][..], Vec::as_slice)),
        })
        .collect();
    Ok(group_metrics::exposition(&samples))
}

/// Whether the query string holds `param` (`users=all`, `scope=operations`).
fn asks(path_and_query: &str, param: &str) -> bool {
    path_and_query
        .split_once('?')
        .is_some_and(|(_, q)| q.split('&').any(|p| p == param))
}

/// This process's operating metrics, and the work queue's depth now.
async fn operating(app: &App) -> Result<String, ApiError> {
    let mut text = phantom::ops::exposition();
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
    let read: Vec<Result<Option<GroupSamples>, _>> = stream::iter(due)
        .map(|(user, group)| async move {
            phantom::store::samples::of(app.store.as_ref(), &user, &group).await
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let mut groups = Vec::new();
    for r in read {
        if let Some(g) = r? {
            groups.push(g);
        }
    }
    groups.sort_by(|a, b| (&a.user, &a.group).cmp(&(&b.user, &b.group)));
    Ok(group_metrics::exposition(&groups))
}
