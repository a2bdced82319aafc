//! CloudTrail's LookupEvents at Phantom's endpoint (issue 63), in its JSON 1.1 protocol and
//! botocore's `cloudtrail` shapes: an account's audit trail (`crate::trail`) by time range and
//! one lookup attribute, newest first, 90 days of it.

use crate::{auth, authorize, App, HttpRequest, HttpResponse};
use phantom_model::trail as m;
use phantom_rules::identity::Caller;
use phantom_wire::query::{self, Document};
use phantom_wire::rpc::{self, Protocol};
use phantom_wire::shapes::Service;
use phantom_wire::ApiError;
use std::time::Instant;

const SERVICE: Service = Service::CloudTrail;
const CONTENT_TYPE: &str = "application/x-amz-json-1.1";
/// LookupEvents' page when MaxResults is not given, as CloudTrail's.
const PAGE: usize = 50;

/// The operation a request for CloudTrail names (`X-Amz-Target`), if it is one.
pub fn operation_of(req: &HttpRequest<'_>) -> Option<String> {
    let target = req.headers.get("x-amz-target")?.to_str().ok()?;
    rpc::json_operation(SERVICE, target).map(String::from)
}

pub async fn handle(app: &App, req: HttpRequest<'_>, operation: String) -> HttpResponse {
    let started = Instant::now();
    let request_id = phantom_rules::ids::uuid();
    let mut user = String::new();
    let outcome = run(app, &req, &operation, &mut user).await;
    let (status, body, code, mut headers) = match outcome {
        Ok(result) => (
            200,
            rpc::json_response(SERVICE, &operation, result.as_ref()),
            "",
            Vec::new(),
        ),
        Err(e) => {
            if e.status >= 500 {
                tracing::error!(request_id, code = e.code, message = %e.message, "request failed");
            }
            let body = rpc::error_body(SERVICE, Protocol::Json, &e);
            (e.status, body, e.code, Vec::new())
        }
    };
    headers.push(("x-amzn-requestid", request_id.clone().into()));
    crate::log_request(&request_id, &operation, &user, status, code, started);
    HttpResponse {
        status,
        content_type: CONTENT_TYPE,
        headers,
        body: body.into(),
    }
}

async fn run(
    app: &App,
    req: &HttpRequest<'_>,
    operation: &str,
    user: &mut String,
) -> Result<Option<Document>, ApiError> {
    let caller =
        auth::authenticate(SERVICE, app.store.as_ref(), &app.keys, app.clock.now(), req).await?;
    user.clone_from(&caller.user);
    app.admit(&caller.user, caller.limits.as_ref(), operation)
        .await?;
    let params = rpc::params_of_json(SERVICE, operation, req.body)?;
    let input = query::decode_input_of(SERVICE, operation, &params)?;
    authorize::check(app, &caller, req, &format!("cloudtrail:{operation}"), "*")?;
    match operation {
        "LookupEvents" => query::output(lookup_events(app, &caller, query::input(input)?).await?),
        other => Err(ApiError::invalid_action_because(
            other,
            "Phantom's CloudTrail answers LookupEvents over each account's trail (docs/security.md)",
        )),
    }
}

fn time_of(text: Option<&str>, or_ms: i64) -> Result<i64, ApiError> {
    match text {
        None => Ok(or_ms),
        Some(t) => phantom_model::time::parse_timestamp(t)
            .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
            .ok_or_else(|| ApiError::invalid_time_range(format!("{t} is not a time."))),
    }
}

async fn lookup_events(
    app: &App,
    caller: &Caller,
    r: m::LookupEvents,
) -> Result<m::LookupEventsResponse, ApiError> {
    let now_ms = app.clock.now_ms();
    let end = time_of(r.end_time.as_deref(), now_ms)?;
    let start = time_of(
        r.start_time.as_deref(),
        now_ms - phantom_rules::trail::RETENTION_MS,
    )?;
    if start > end {
        return Err(ApiError::invalid_time_range(
            "Start time must be before end time.",
        ));
    }
    if r.lookup_attributes.len() > 1 {
        return Err(ApiError::invalid_lookup_attributes(
            "You can look up events by one lookup attribute at a time.",
        ));
    }
    // The trail holds management events; there are no insight events to show.
    if r.event_category.as_deref() == Some("insight") {
        return Ok(m::LookupEventsResponse {
            events: Vec::new(),
            next_token: None,
        });
    }
    if let Some(token) = &r.next_token {
        let well_formed = token.len() > 14
            && token.as_bytes()[13] == b'#'
            && token[..13].bytes().all(|b| b.is_ascii_digit());
        if !well_formed {
            return Err(ApiError::invalid_next_token_exception(
                "The NextToken is not one this lookup gave.",
            ));
        }
    }
    let attribute = r.lookup_attributes.first();
    let keep = |e: &m::TrailEvent| {
        attribute
            .is_none_or(|a| phantom_rules::trail::matches(e, &a.attribute_key, &a.attribute_value))
    };
    let want = r
        .max_results
        .map_or(PAGE, |n| n.clamp(1, PAGE as i64) as usize);
    let (events, next_token) = app
        .store
        .events(
            &caller.user,
            start,
            end,
            r.next_token.as_deref(),
            want,
            &keep,
        )
        .await?;
    Ok(m::LookupEventsResponse {
        events: events.iter().map(phantom_rules::trail::shown).collect(),
        next_token,
    })
}
