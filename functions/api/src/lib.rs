//! The `api` function: one handler for every Auto Scaling action. It verifies the caller's SigV4
//! signature, decodes the action's input, runs the action (one module each, in `actions`) against
//! DynamoDB and renders AWS's XML. The same `App::handle` serves Lambda (main.rs) and the local
//! runner.

pub mod actions;
mod auth;
pub mod authorize;
pub mod cloudtrail;
pub mod cloudwatch;
pub mod console;
pub mod heartbeats;
pub mod iam;
pub mod lambda;
mod later;
pub mod scrape;
pub mod self_service;
pub mod throttle;
mod trail;
pub mod webhooks;

pub use auth::{KeyCache, KEY_CACHE_MS};

use phantom_model::time::Clock;
use phantom_seams::cloud::ConnectLookup;
use phantom_seams::config::Config;
use phantom_seams::queue::WorkQueue;
use phantom_seams::store::Store;
use phantom_seams::wiring::Seams;
use phantom_wire::query::Params;
use phantom_wire::shapes::{Service, API_VERSION};
use phantom_wire::{xml, ApiError};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

/// What the function keeps between requests: its seams and configuration, no state.
pub struct App {
    pub store: Arc<dyn Store>,
    /// Where reconcile messages go (PHANTOM_WORK_QUEUE_URL); without it groups change only in
    /// the store and nothing launches.
    pub queue: Option<Arc<dyn WorkQueue>>,
    pub config: Config,
    pub clock: Arc<dyn Clock>,
    /// The clouds, for the lookups an action makes before it answers (`actions::lookups`).
    pub clouds: Arc<dyn ConnectLookup>,
    /// The metric source, which checks a target tracking policy's query when it is put and
    /// gives a policy's recent datapoints (the console's chart).
    pub metrics: Arc<dyn phantom_seams::prometheus::Connect>,
    /// A metric's datapoints are this far apart (PHANTOM_METRIC_PERIOD_SECS).
    pub metric_period_ms: i64,
    /// The deployment's SNS and SQS: a notification configuration's or a lifecycle hook's test
    /// message when it is put.
    pub publisher: Arc<dyn phantom_seams::publish::Publisher>,
    /// Access keys read recently (`auth::KEY_CACHE_MS`).
    pub keys: KeyCache,
    /// Each user's request buckets in this instance (`throttle`).
    pub throttle: throttle::Throttle,
    /// Each user's heartbeat buckets in this instance (`heartbeats::HEARTBEATS`).
    pub heartbeats: throttle::Throttle,
    /// The CloudWatch metrics this instance listed lately (`phantom_seams::store::Listed`).
    pub listed: phantom_seams::store::Listed,
}

/// An HTTP request as it reached the function, whatever served it.
pub struct HttpRequest<'a> {
    pub method: &'a str,
    /// Path and query exactly as the client sent them (SigV4 signs them).
    pub path_and_query: &'a str,
    pub headers: &'a http::HeaderMap,
    pub body: &'a [u8],
    /// The caller's address, where whatever served the request knows it (`aws:SourceIp`).
    pub source_ip: Option<std::net::IpAddr>,
    /// Whether the request came over TLS (`aws:SecureTransport`).
    pub secure: bool,
}

pub struct HttpResponse {
    pub status: u16,
    pub content_type: &'static str,
    /// Headers beyond the content type (the console's caching and policy, CloudWatch's error
    /// code for JSON and CBOR clients).
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    /// The API's XML, JSON and CBOR, the console's files.
    pub body: Cow<'static, [u8]>,
}

pub const CONTENT_TYPE: &str = "text/xml";

impl HttpResponse {
    /// As an `http::Response`, for whatever serves it (Lambda, the local runner).
    pub fn into_http(self) -> http::Response<Cow<'static, [u8]>> {
        let mut response = http::Response::builder()
            .status(self.status)
            .header("content-type", self.content_type);
        for (name, value) in self.headers {
            response = response.header(name, value.as_ref());
        }
        // Our own statuses and static header values: always valid.
        response.body(self.body).expect("a valid response")
    }
}

impl App {
    /// The api over the seams a main built.
    pub fn new(seams: &Seams) -> Self {
        if seams.queue.is_none() {
            tracing::warn!("PHANTOM_WORK_QUEUE_URL is not set: no reconcile messages will be sent");
        }
        Self {
            store: seams.store.clone(),
            queue: seams.queue.clone(),
            config: seams.config.clone(),
            clock: seams.clock.clone(),
            clouds: seams.lookups.clone(),
            metrics: seams.metrics.clone(),
            metric_period_ms: seams.metric_period_ms,
            publisher: seams.publisher.clone(),
            keys: KeyCache::default(),
            throttle: throttle::Throttle::default(),
            heartbeats: throttle::Throttle::new(heartbeats::HEARTBEATS),
            listed: phantom_seams::store::Listed::default(),
        }
    }

    pub async fn handle(&self, req: HttpRequest<'_>) -> HttpResponse {
        if let Some(file) = console::file_of(req.path_and_query) {
            return console::serve(req.method, file);
        }
        let path = path_of(req.path_and_query);
        if path.contains(webhooks::PREFIX) {
            return webhooks::handle(self, req).await;
        }
        if path.contains(heartbeats::PREFIX) {
            return heartbeats::handle(self, req).await;
        }
        if path.ends_with(phantom_rules::scrape::PATH) {
            return scrape::handle(self, req).await;
        }
        // Under a stage or not (`/Prod/phantom/v1/`).
        if path.contains(self_service::PREFIX) {
            return self_service::handle(self, req).await;
        }
        if let Some(protocol) = cloudwatch::protocol_of(&req, path) {
            return cloudwatch::handle(self, req, protocol).await;
        }
        if let Some(operation) = cloudtrail::operation_of(&req) {
            return cloudtrail::handle(self, req, operation).await;
        }
        if let Some(service) = iam::service_of(&req) {
            return iam::handle(self, req, service).await;
        }
        let started = Instant::now();
        let request_id = phantom_rules::ids::uuid();
        let mut action = String::new();
        let mut user = String::new();
        let mut auth_us = 0;
        // On the heap: an action's future is large, and a test's thread stack small.
        let dispatched =
            Box::pin(self.dispatch(&req, &request_id, &mut action, &mut user, &mut auth_us));
        let (outcome, spent) = phantom_seams::metrics::measured(dispatched).await;
        let outcome = outcome.map(|result| xml::response(&action, result.as_ref(), &request_id));
        let (status, body, code) = match outcome {
            Ok(body) => (200, body, ""),
            Err(e) => {
                if e.status >= 500 {
                    tracing::error!(request_id, code = e.code, message = %e.message, "request failed");
                }
                (e.status, xml::error_response(&e, &request_id), e.code)
            }
        };
        let took = Took {
            started,
            split: Some((auth_us, spent)),
        };
        log_request(&request_id, &action, &user, status, code, took);
        HttpResponse {
            status,
            content_type: CONTENT_TYPE,
            headers: Vec::new(),
            body: body.into_bytes().into(),
        }
    }

    async fn dispatch(
        &self,
        req: &HttpRequest<'_>,
        request_id: &str,
        action: &mut String,
        user: &mut String,
        auth_us: &mut u64,
    ) -> Result<Option<phantom_wire::query::Document>, ApiError> {
        let checking = Instant::now();
        let caller = auth::authenticate(
            Service::AutoScaling,
            self.store.as_ref(),
            &self.keys,
            self.clock.now(),
            req,
        )
        .await;
        *auth_us = checking.elapsed().as_micros() as u64;
        let caller = caller?;
        user.clone_from(&caller.user);
        let params = parameters(req)?;
        let version = params.get("Version").unwrap_or(API_VERSION);
        match params.get("Action").filter(|a| !a.is_empty()) {
            Some(a) => *action = a.to_string(),
            None => return Err(ApiError::invalid_action("(none)", version)),
        }
        let found = actions::action(action).filter(|_| version == API_VERSION);
        let Some(found) = found else {
            return Err(ApiError::invalid_action(action, version));
        };
        self.admit(&caller.user, caller.limits.as_ref(), action)
            .await?;
        let input = phantom_wire::query::decode_input(action, &params);
        let decoded = input.as_ref().ok().map(|i| i.as_value().clone());
        let (outcome, reconciles) = later::collecting(async {
            match input {
                Ok(input) => self.run(req, &caller, action, found, input).await,
                Err(e) => Err(e),
            }
        })
        .await;
        let asked = trail::Asked {
            service: Service::AutoScaling.signing_name(),
            action,
            params: decoded.as_ref(),
            request_id,
        };
        // The trail's event and the reconcile messages side by side.
        let sends = reconciles
            .into_iter()
            .map(|msg| actions::send_reconcile(self, msg));
        futures::join!(
            trail::record(self, req, &caller, &asked, crate::trail::refused(&outcome)),
            futures::future::join_all(sends)
        );
        outcome
    }

    /// An action, once its caller's policies allow it.
    async fn run(
        &self,
        req: &HttpRequest<'_>,
        caller: &phantom_rules::identity::Caller,
        action: &str,
        found: &actions::Action,
        input: phantom_wire::query::Document,
    ) -> Result<Option<phantom_wire::query::Document>, ApiError> {
        authorize::autoscaling(self, caller, req, action, input.as_value()).await?;
        (found.run)(self, caller, input).await
    }
}

impl App {
    /// A token of the account's bucket for `action`'s class, shared by every api instance
    /// (`throttle`): `Throttling` when it is empty, before anything is read or written.
    pub(crate) async fn admit(
        &self,
        account: &str,
        limits: Option<&phantom_rules::throttle::Limits>,
        action: &str,
    ) -> Result<(), ApiError> {
        let class = phantom_rules::throttle::Class::of(action);
        let now_ms = self.clock.now_ms();
        let store = self.store.as_ref();
        if self
            .throttle
            .admit_shared(store, account, limits, class, now_ms)
            .await
        {
            return Ok(());
        }
        phantom_metrics::ops::count(phantom_metrics::ops::THROTTLED, &[("class", class.name())]);
        Err(ApiError::throttling())
    }
}

/// A request target's path, without its query string.
pub(crate) fn path_of(path_and_query: &str) -> &str {
    path_and_query
        .split_once('?')
        .map_or(path_and_query, |(path, _)| path)
}

/// A request's time, and for Auto Scaling's where it went: the signature check (the key's read
/// and its secret's opening included when not cached) and each service's calls.
struct Took {
    started: Instant,
    split: Option<(u64, phantom_seams::metrics::Spent)>,
}

impl From<Instant> for Took {
    fn from(started: Instant) -> Self {
        Self {
            started,
            split: None,
        }
    }
}

/// The one log line of a request (never a secret), and its count and time in the operating
/// metrics (`phantom_metrics::ops`).
fn log_request(
    request_id: &str,
    action: &str,
    user: &str,
    status: u16,
    code: &str,
    took: impl Into<Took>,
) {
    let took: Took = took.into();
    let started = took.started;
    let auth_ms = took.split.map(|(us, _)| us as f64 / 1e3);
    let spent = took.split.map(|(_, spent)| spent);
    let label = if action.is_empty() { "(none)" } else { action };
    let counted = if code.is_empty() { "OK" } else { code };
    phantom_metrics::ops::count(
        phantom_metrics::ops::REQUESTS,
        &[("action", label), ("code", counted)],
    );
    phantom_metrics::ops::observe(
        phantom_metrics::ops::REQUEST_SECONDS,
        &[("action", label)],
        started.elapsed().as_secs_f64(),
    );
    tracing::info!(
        request_id,
        action,
        user,
        status,
        code,
        ms = started.elapsed().as_secs_f64() * 1e3,
        auth_ms,
        store_calls = spent.map(|s| s.dynamodb.calls),
        store_ms = spent.map(|s| s.dynamodb.ms()),
        cloud_calls = spent.map(|s| s.ec2.calls),
        cloud_ms = spent.map(|s| s.ec2.ms()),
        queue_calls = spent.map(|s| s.sqs.calls),
        queue_ms = spent.map(|s| s.sqs.ms()),
        kms_calls = spent.map(|s| s.kms.calls),
        "request"
    );
}

/// The query string's parameters, then the form body's (which win).
fn parameters(req: &HttpRequest<'_>) -> Result<Params, ApiError> {
    let query = req
        .path_and_query
        .split_once('?')
        .map(|(_, q)| q)
        .unwrap_or("");
    let mut form = query.as_bytes().to_vec();
    if !req.body.is_empty() {
        form.push(b'&');
        form.extend_from_slice(req.body);
    }
    Params::parse(&form)
}
