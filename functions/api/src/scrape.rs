//! `GET <api>/phantom/v1/metrics`: a user's group metrics in Prometheus's text format, for the
//! user's own Prometheus to scrape with HTTP Basic authentication (the user's name and the
//! password of `CreateScrapeCredential`). Only that user's groups with metrics enabled, only the
//! metrics enabled, answered from what the store holds: the user, its groups and its instances,
//! three reads whatever the number of groups (each paged by the store at 1 MB). Anything but the
//! right credential: 403, whatever the reason.

use crate::{App, HttpRequest, HttpResponse};
use phantom::group_metrics::{self, Sample};
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
        return Err(ApiError::throttling());
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
    let samples: Vec<(String, Vec<Sample>)> = groups
        .iter()
        .map(|g| {
            let of = members.get(&g.name).map_or(&[][..], Vec::as_slice);
            (g.name.clone(), group_metrics::samples(g, of))
        })
        .collect();
    Ok(group_metrics::exposition(&samples))
}
