//! The local runner: Phantom's three functions on one machine, the same handlers as on Lambda.
//!
//! - api: served over HTTP on PHANTOM_BIND (default 127.0.0.1:4580); bodies over 10 MiB (API
//!   Gateway's limit) get 413;
//! - provisioner: fed from the emulator's real SQS queue (PHANTOM_WORK_QUEUE_URL), as Lambda's
//!   event source mapping would: PHANTOM_POLLERS (default 4) pollers, each taking batches of up to
//!   10 (Lambda runs batches concurrently too), the failed ones left to their visibility (which
//!   the provisioner itself shortens), the rest deleted; they and
//!   the health check run on threads of their own, the api's requests on others;
//! - health-check (with the scheduler): every PHANTOM_HEALTH_INTERVAL_SECS (default 5), as the
//!   schedule would on AWS, and a beat of the pulse with it (the timer stands in for the chain of
//!   ticks: `local_pulse`).
//!
//! PHANTOM_RUNTIME=lambda runs the functions as Lambda does instead (`lambda`): their bootstraps
//! under the Runtime API emulator at PHANTOM_LAMBDA_EMULATOR, as PHANTOM_FUNCTIONS describes them
//! (PHANTOM_LAMBDA_INSTANCES of each, default 2), this runner playing API Gateway, the event
//! source mappings and the schedule.
//!
//! PHANTOM_TRUST_FORWARDED=true (up.sh sets it when LocalStack's API Gateway is in front): the
//! client's Host and path are read from the gateway's X-Forwarded-Host and X-Forwarded-Prefix
//! (`forwarded`), as Lambda's event would give them.

mod forwarded;
mod lambda;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use phantom_seams::wiring::Seams;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

pub(crate) const MAX_BODY: usize = 10 * 1024 * 1024;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    phantom_seams::logging::init();
    let bind = std::env::var("PHANTOM_BIND").unwrap_or_else(|_| "127.0.0.1:4580".into());
    // Read before anything else, so that a wrong value fails at once, whatever else is missing.
    let trust_forwarded = match std::env::var("PHANTOM_TRUST_FORWARDED").as_deref() {
        Err(_) | Ok("false") => false,
        Ok("true") => true,
        Ok(v) => {
            return Err(format!("PHANTOM_TRUST_FORWARDED={v} is neither true nor false").into())
        }
    };
    match std::env::var("PHANTOM_RUNTIME").as_deref() {
        Err(_) | Ok("local") => {}
        Ok("lambda") => return as_lambda(&bind).await,
        Ok(v) => return Err(format!("PHANTOM_RUNTIME={v} is neither local nor lambda").into()),
    }
    // The real adapters (the emulators' services): each handler gets its own clients and
    // connection pools, as each is a function of its own on AWS.
    let app = Arc::new(api::App::new(&Seams::from_env().await?));
    let listener = TcpListener::bind(&bind).await?;
    tracing::info!(
        bind,
        table = app.config.table,
        trust_forwarded,
        "phantom-local serving the api"
    );
    // The provisioner's pollers and the health check run on a runtime of their own (threads of
    // their own), as Lambda gives them reserved concurrency: a flood of API requests cannot take
    // all of the machine from the work that keeps VMs alive.
    let fleet: &'static tokio::runtime::Runtime = Box::leak(Box::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("phantom-fleet")
            .enable_all()
            .build()?,
    ));
    let seams = Seams::from_env().await?;
    if let Some(queue) = phantom_seams::queue::SqsQueue::from_env(&seams.sdk) {
        let clouds = Arc::new(phantom_seams::cloud::ec2_cloud::Ec2Clouds::default());
        let provisioner = Arc::new(provisioner::Provisioner::new(&seams, clouds));
        // Receiving and deleting is Lambda's part (the functions only send): the SDK's client.
        let sqs = aws_sdk_sqs::Client::new(&seams.sdk);
        for _ in 0..number("PHANTOM_POLLERS", 4.0)? as usize {
            let url = queue.url().to_string();
            fleet.spawn(poll_queue(sqs.clone(), url, provisioner.clone()));
        }
    }
    let interval = number("PHANTOM_HEALTH_INTERVAL_SECS", 5.0)?;
    if interval > 0.0 {
        let mut health = health_check::HealthCheck::new(&Seams::from_env().await?)?;
        health.pulse = Some(Arc::new(local_pulse(interval)?));
        fleet.spawn(health_timer(health, Duration::from_secs_f64(interval)));
    }
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = shutdown() => return Ok(()),
        };
        let app = app.clone();
        tokio::spawn(async move {
            let service =
                service_fn(move |req| serve(app.clone(), trust_forwarded, peer.ip(), req));
            if let Err(e) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %e, "connection closed");
            }
        });
    }
}

/// PHANTOM_RUNTIME=lambda (see the module's comment).
async fn as_lambda(bind: &str) -> Result<(), Box<dyn std::error::Error>> {
    let var = |name: &str| std::env::var(name).map_err(|_| format!("{name} is not set"));
    let file = var("PHANTOM_FUNCTIONS")?;
    let functions: lambda::Functions =
        serde_json::from_str(&std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?)
            .map_err(|e| format!("{file}: {e}"))?;
    let instances = number("PHANTOM_LAMBDA_INSTANCES", 2.0)? as usize;
    let lambda = lambda::Lambda::start(functions, &var("PHANTOM_LAMBDA_EMULATOR")?, instances)?;
    let every = Duration::from_secs_f64(number("PHANTOM_HEALTH_INTERVAL_SECS", 5.0)?.max(0.1));
    // The region Lambda's events name (the functions get it as AWS_REGION too).
    let region = var("AWS_REGION")?;
    let sdk = phantom_seams::config::aws_sdk_config().await;
    let sqs = aws_sdk_sqs::Client::new(&sdk);
    let (mut api, mut routes) = (None, Vec::new());
    for (f, event) in lambda.events() {
        match event.clone() {
            // Every route of the template goes to the api (`/` and `/{proxy+}`, ANY).
            lambda::Event::Api { path, method } => {
                routes.push(format!("{method} {path}"));
                api = Some(f.name.clone());
            }
            lambda::Event::Sqs {
                queue_url,
                batch_size,
                report_failures,
                max_concurrency,
            } => {
                // As CreateEventSourceMapping, which refuses a queue that would hand a batch
                // out again while its invocation may still run.
                lambda::visibility_covers(&sqs, &queue_url, f.timeout_secs).await?;
                // Lambda's pollers: several on a queue, as many as its concurrency allows.
                let pollers = max_concurrency
                    .unwrap_or(instances as u32)
                    .min(instances as u32);
                for _ in 0..pollers.max(1) {
                    tokio::spawn(lambda::event_source(
                        lambda.clone(),
                        sqs.clone(),
                        f.name.clone(),
                        queue_url.clone(),
                        batch_size,
                        report_failures,
                        region.clone(),
                    ));
                }
            }
            lambda::Event::Schedule { schedule } => {
                tracing::info!(
                    function = f.name,
                    schedule,
                    every_secs = every.as_secs_f64(),
                    "the schedule, locally"
                );
                tokio::spawn(lambda::schedule(
                    lambda.clone(),
                    f.name.clone(),
                    format!("{}-schedule", f.name),
                    every,
                    region.clone(),
                ));
            }
        }
    }
    let api = api.ok_or("no function serves the API (an Api event)")?;
    let listener = TcpListener::bind(bind).await?;
    tracing::info!(
        bind,
        api,
        "phantom-local as API Gateway, event sources and schedules in front of Lambda's functions"
    );
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = shutdown() => return Ok(()),
        };
        let (lambda, api) = (lambda.clone(), api.clone());
        tokio::spawn(async move {
            let service = service_fn(move |req| lambda::gateway(lambda.clone(), api.clone(), req));
            if let Err(e) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %e, "connection closed");
            }
        });
    }
}

/// A number from the environment, or `default` when unset; an unreadable one is an error.
fn number(name: &str, default: f64) -> Result<f64, String> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => v
            .parse::<f64>()
            .ok()
            .filter(|n| *n >= 0.0)
            .ok_or_else(|| format!("{name}={v} is not a number of 0 or more")),
    }
}

/// How long a receive waits for a message, as Lambda's SQS pollers wait: a message ends the wait at
/// once, and an idle queue costs a poller one request every 20 s, not one a second.
pub(crate) const LONG_POLL_SECS: i32 = 20;

/// Lambda's SQS event source, locally: receive, call the provisioner, delete what succeeded.
async fn poll_queue(sqs: aws_sdk_sqs::Client, url: String, p: Arc<provisioner::Provisioner>) {
    loop {
        let received = sqs
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .wait_time_seconds(LONG_POLL_SECS)
            .message_attribute_names(phantom_seams::queue::DUE_ATTRIBUTE)
            .message_system_attribute_names(
                aws_sdk_sqs::types::MessageSystemAttributeName::SentTimestamp,
            )
            .send()
            .await;
        let messages = match received {
            Ok(r) => r.messages.unwrap_or_default(),
            Err(e) => {
                tracing::warn!(error = %aws_sdk_sqs::error::DisplayErrorContext(e), "receiving from the queue");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        if messages.is_empty() {
            continue;
        }
        let receipts: Vec<(String, String)> = messages
            .iter()
            .filter_map(|m| Some((m.message_id()?.to_string(), m.receipt_handle()?.to_string())))
            .collect();
        let mut batch = Vec::new();
        let mut unreadable = Vec::new();
        for m in messages {
            let due = m
                .message_attributes()
                .and_then(|a| a.get(phantom_seams::queue::DUE_ATTRIBUTE))
                .and_then(|a| a.string_value())
                .map(str::to_string);
            let sent = m
                .attributes()
                .and_then(|a| a.get(&aws_sdk_sqs::types::MessageSystemAttributeName::SentTimestamp))
                .cloned();
            let (Some(id), Some(receipt)) = (m.message_id, m.receipt_handle) else {
                continue;
            };
            // SQS always gives a body (possibly empty, which is then unreadable work).
            let body = m.body.unwrap_or_default();
            match phantom_seams::queue::Received::from_sqs(
                id.clone(),
                receipt,
                body,
                due.as_deref(),
                sent.as_deref(),
            ) {
                Ok(r) => batch.push(r),
                Err(e) => {
                    tracing::warn!(
                        message_id = id,
                        error = e,
                        "an unreadable message left to its redrive"
                    );
                    unreadable.push(id);
                }
            }
        }
        // As Lambda's event source with partial batch failures: the failed ones are left to
        // their visibility (the provisioner hides them for a few seconds), the rest deleted.
        let mut failed = p.handle_batch(batch).await;
        failed.extend(unreadable);
        for (id, receipt) in receipts {
            if failed.contains(&id) {
                continue;
            }
            if let Err(e) = sqs
                .delete_message()
                .queue_url(&url)
                .receipt_handle(receipt)
                .send()
                .await
            {
                tracing::warn!(message_id = id, error = %aws_sdk_sqs::error::DisplayErrorContext(e), "deleting a message");
            }
        }
    }
}

/// The pulse, locally: the timer gives the beats (no chain: it has no minute granularity to work
/// around). Each pair is looked at every PHANTOM_LOOK_SECS (the interval unless set) and swept in
/// full when a look finds a change, when busy (each beat), and every PHANTOM_SWEEP_SECS (60 unless
/// set), as on Lambda: a sweep of every pair each beat kept one moto busy at 200 pairs. At most
/// PHANTOM_LOOK_CONCURRENCY (4 unless set) looks are in flight at once.
fn local_pulse(interval: f64) -> Result<health_check::pulse::Pulse, String> {
    let beats = |name: &str, default: f64| -> Result<u64, String> {
        Ok((number(name, default)? / interval).round().max(1.0) as u64)
    };
    let look = beats("PHANTOM_LOOK_SECS", interval)?;
    let cadence = phantom_rules::pulse::Cadence {
        look,
        look_events: look,
        busy: 1,
        sweep: beats("PHANTOM_SWEEP_SECS", interval.max(60.0))?,
    };
    let mut pulse = health_check::pulse::Pulse::new(
        None,
        (interval * 1000.0) as i64,
        cadence,
        Arc::new(phantom_seams::cloud::ec2_query::Ec2Lookups::default()),
    );
    // The local clouds are emulators sharing this machine: a few looks at a time, so that a
    // round's calls wait behind a few of them, not behind all of a beat's.
    let looks = number("PHANTOM_LOOK_CONCURRENCY", 4.0)?;
    if looks < 1.0 || looks.fract() != 0.0 {
        return Err(format!(
            "PHANTOM_LOOK_CONCURRENCY={looks} is not a whole number of 1 or more"
        ));
    }
    pulse.look_concurrency = looks as usize;
    Ok(pulse)
}

/// The schedule and the pulse's beats, locally.
async fn health_timer(h: health_check::HealthCheck, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut seq: u64 = 0;
    loop {
        tick.tick().await;
        if let Err(e) = h.run().await {
            tracing::error!(error = %e, "health check failed");
        }
        seq += 1;
        h.beat(seq).await;
    }
}

async fn shutdown() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
    tracing::info!("phantom-local stopping");
}

async fn serve(
    app: Arc<api::App>,
    trust_forwarded: bool,
    peer: std::net::IpAddr,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (mut parts, body) = req.into_parts();
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return Ok(Response::builder()
                .status(413)
                .body(Full::new(Bytes::from_static(b"Request body too large")))
                .expect("a valid response"));
        }
    };
    let mut path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    if trust_forwarded {
        match forwarded::restore(&mut parts.headers, &path_and_query) {
            Ok(original) => path_and_query = original,
            Err(e) => {
                tracing::warn!(error = e, "a forwarded request we cannot read");
                return Ok(Response::builder()
                    .status(400)
                    .body(Full::new(Bytes::from(e)))
                    .expect("a valid response"));
            }
        }
    }
    let out = app
        .handle(api::HttpRequest {
            method: parts.method.as_str(),
            path_and_query: &path_and_query,
            headers: &parts.headers,
            body: &body,
            source_ip: Some(peer),
            secure: false,
        })
        .await;
    Ok(out.into_http().map(|body| {
        Full::new(match body {
            std::borrow::Cow::Borrowed(s) => Bytes::from_static(s),
            std::borrow::Cow::Owned(s) => Bytes::from(s),
        })
    }))
}
