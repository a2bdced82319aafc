//! PHANTOM_RUNTIME=lambda: the three functions as Lambda runs them. Each is its real bootstrap (the
//! binary cargo builds for this machine) under cargo lambda's Runtime API emulator (`cargo lambda
//! watch --only-lambda-apis`, which up.sh starts), with the environment template.yaml gives it
//! (`localstack/bootstrap.py --functions`). This runner plays only what AWS plays around them:
//! - Lambda's own part: an instance is started with the runtime's variables, a new one when an
//!   instance dies, and an instance that outlives its Timeout or outgrows its MemorySize is
//!   killed, as Lambda ends its sandbox;
//! - API Gateway's REST API in front of the api (payload 1.0, stage `Prod`: `phantom_wire::gateway`);
//! - the SQS event source mappings: batches of the size the template sets; with
//!   ReportBatchItemFailures the items the function names are left to come back after the queue's
//!   visibility timeout and the others deleted; an invocation that fails or is killed deletes none;
//!   a queue whose visibility timeout is shorter than the function's timeout is refused, as Lambda
//!   refuses the mapping; a batch that comes back says so in the log ("N redelivered");
//! - the schedule: every PHANTOM_HEALTH_INTERVAL_SECS (default 5) for the template's rate, as the
//!   in-process runner does (the local stack is quick to converge).
//!
//! EC2's EventBridge rules have no stand-in: the local clouds send no events (their looks find the
//! changes).

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// What `bootstrap.py --functions` writes.
#[derive(Debug, Deserialize)]
pub struct Functions {
    pub functions: Vec<Function>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Function {
    /// The binary, and the function's name for the emulator.
    pub name: String,
    pub timeout_secs: u64,
    pub memory_mb: u64,
    pub env: BTreeMap<String, String>,
    pub events: Vec<Event>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type")]
pub enum Event {
    Api {
        path: String,
        method: String,
    },
    #[serde(rename = "SQS")]
    Sqs {
        queue_url: String,
        batch_size: i32,
        report_failures: bool,
        max_concurrency: Option<u32>,
    },
    Schedule {
        schedule: String,
    },
}

/// The variables of the runner's own that a function gets, as Lambda gives a function its role's
/// credentials and region; here also the emulators' endpoints.
const PASSED: [&str; 5] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_REGION",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_ENDPOINT_URL",
];

/// The functions' instances and the emulator they poll.
pub struct Lambda {
    emulator: String,
    functions: BTreeMap<String, Running>,
    client: hyper_util::client::legacy::Client<
        hyper_util::client::legacy::connect::HttpConnector,
        Full<Bytes>,
    >,
}

/// One function: its settings, a signal that kills its instances (a timeout), and one that an
/// instance ended.
struct Running {
    function: Function,
    kill: Arc<Notify>,
    ended: Arc<Notify>,
}

impl Lambda {
    /// Starts `instances` instances of each function (their binaries beside this one's), each
    /// started again whenever it ends.
    pub fn start(
        functions: Functions,
        emulator: &str,
        instances: usize,
    ) -> Result<Arc<Self>, String> {
        let dir = std::env::current_exe()
            .map_err(|e| format!("where phantom-local is: {e}"))?
            .parent()
            .ok_or("phantom-local has no folder")?
            .to_path_buf();
        let mut running = BTreeMap::new();
        for f in functions.functions {
            let (kill, ended) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
            let bin = dir.join(&f.name);
            if !bin.exists() {
                return Err(format!(
                    "{} is not built (cargo build -p {})",
                    bin.display(),
                    f.name
                ));
            }
            for n in 0..instances {
                tokio::spawn(instance(
                    f.clone(),
                    bin.clone(),
                    emulator.to_string(),
                    n,
                    (kill.clone(), ended.clone()),
                ));
            }
            let r = Running {
                function: f,
                kill,
                ended,
            };
            running.insert(r.function.name.clone(), r);
        }
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http();
        Ok(Arc::new(Self {
            emulator: emulator.trim_end_matches('/').to_string(),
            functions: running,
            client,
        }))
    }

    /// Every function's events: what each is invoked for.
    pub fn events(&self) -> Vec<(&Function, &Event)> {
        self.functions
            .values()
            .flat_map(|r| r.function.events.iter().map(move |e| (&r.function, e)))
            .collect()
    }

    /// Invokes `function` with `payload` as Lambda's Invoke does, within its timeout: its answer,
    /// or why there is none. An instance that outlives the timeout is killed (and another started).
    pub async fn invoke(
        &self,
        function: &str,
        what: &str,
        payload: &Value,
    ) -> Result<Value, String> {
        let running = self
            .functions
            .get(function)
            .ok_or_else(|| format!("no function {function}"))?;
        let started = Instant::now();
        let uri = format!(
            "{}/2015-03-31/functions/{function}/invocations",
            self.emulator
        );
        let req = Request::post(uri)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(payload.to_string())))
            .map_err(|e| e.to_string())?;
        let timeout = Duration::from_secs(running.function.timeout_secs);
        // Lambda answers an invocation whose sandbox died at once: which instance took this one
        // is the emulator's to know, so any instance's end fails it (its messages come back; the
        // work is idempotent).
        let ended = running.ended.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        let call = tokio::time::timeout(timeout, async {
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|e| format!("the emulator: {e}"))?;
            let status = resp.status();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("the emulator: {e}"))?
                .to_bytes();
            let text = String::from_utf8_lossy(&body).into_owned();
            if !status.is_success() {
                return Err(format!("the function failed ({status}): {text}"));
            }
            serde_json::from_slice::<Value>(&body)
                .map_err(|e| format!("an answer that is not JSON ({e}): {text}"))
        });
        let out = tokio::select! {
            answer = call => match answer {
                Ok(out) => out,
                Err(_) => {
                    // Lambda ends an invocation at its timeout with its sandbox. Which instance
                    // is the emulator's to know (cargo lambda routes by the function's binary
                    // name), so all of the function's end: harsher than Lambda, never milder.
                    running.kill.notify_waiters();
                    Err(format!("Task timed out after {:.2} seconds", timeout.as_secs_f64()))
                }
            },
            () = &mut ended => Err("an instance ended during the invocation (Runtime exited)".into()),
        };
        let ms = started.elapsed().as_millis() as u64;
        match &out {
            Ok(_) => tracing::info!(function, what, ms, "invocation"),
            Err(e) => tracing::warn!(function, what, ms, error = e, "invocation failed"),
        }
        out
    }
}

/// One instance of `f`, started again each time it ends, as Lambda starts a new sandbox.
async fn instance(
    f: Function,
    bin: std::path::PathBuf,
    emulator: String,
    n: usize,
    (kill, ended): (Arc<Notify>, Arc<Notify>),
) {
    loop {
        let mut cmd = tokio::process::Command::new(&bin);
        cmd.env_clear()
            .envs(&f.env)
            .envs(
                PASSED
                    .iter()
                    .filter_map(|k| std::env::var(k).ok().map(|v| (*k, v))),
            )
            .envs(std::env::vars().filter(|(k, _)| k.starts_with("AWS_ENDPOINT_URL_")))
            .envs(std::env::var("AWS_REGION").map(|r| ("AWS_DEFAULT_REGION", r)))
            .env("AWS_LAMBDA_FUNCTION_NAME", &f.name)
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", f.memory_mb.to_string())
            .env(
                "AWS_LAMBDA_LOG_GROUP_NAME",
                format!("/aws/lambda/{}", f.name),
            )
            .env(
                "AWS_LAMBDA_RUNTIME_API",
                format!("{emulator}/.rt/{}", f.name),
            )
            .kill_on_drop(true);
        let started = Instant::now();
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(function = f.name, error = %e, "cannot start an instance");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        tracing::info!(
            function = f.name,
            instance = n,
            pid = child.id(),
            "instance started"
        );
        let (limit_kb, pid) = (f.memory_mb * 1024, child.id());
        let why = tokio::select! {
            status = child.wait() => format!("it ended ({})", status.map_or_else(|e| e.to_string(), |s| s.to_string())),
            _ = kill.notified() => "its invocation timed out".to_string(),
            kb = over_memory(pid, limit_kb) => format!("it used {kb} KB, over its {} MB", f.memory_mb),
        };
        let _ = child.kill().await;
        ended.notify_waiters();
        tracing::warn!(
            function = f.name,
            instance = n,
            after_ms = started.elapsed().as_millis() as u64,
            why,
            "instance stopped; another starts"
        );
        // A function that cannot start would otherwise spin.
        if started.elapsed() < Duration::from_secs(1) {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

/// Returns once the process's resident memory passes `limit_kb` (Lambda's MemorySize).
async fn over_memory(pid: Option<u32>, limit_kb: u64) -> u64 {
    let Some(pid) = pid else {
        return std::future::pending().await;
    };
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let rss = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
        if let Some(kb) = rss.filter(|kb| *kb > limit_kb) {
            return kb;
        }
    }
}

/// API Gateway in front of the api: the request as the REST API's proxy event, the function's
/// answer as the response; 502 as API Gateway gives when the function fails.
pub async fn gateway(
    lambda: Arc<Lambda>,
    function: String,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let Ok(body) = Limited::new(body, crate::MAX_BODY)
        .collect()
        .await
        .map(|b| b.to_bytes())
    else {
        return Ok(respond(
            413,
            &[],
            Bytes::from_static(b"Request body too large"),
        ));
    };
    let host = parts
        .headers
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost")
        .to_string();
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let Ok(uri) = format!("http://{host}{path_and_query}").parse::<http::Uri>() else {
        return Ok(respond(400, &[], Bytes::from_static(b"Bad request target")));
    };
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .filter_map(|(k, v)| Some((k.to_string(), v.to_str().ok()?.to_string())))
        .collect();
    let event =
        phantom_wire::gateway::rest_event("Prod", parts.method.as_str(), &uri, &headers, &body);
    let answer = lambda
        .invoke(&function, "api", &event)
        .await
        .and_then(|a| phantom_wire::gateway::rest_answer(&a));
    Ok(match answer {
        Ok((status, headers, body)) => respond(status, &headers, Bytes::from(body)),
        Err(_) => respond(
            502,
            &[("content-type".into(), "application/json".into())],
            Bytes::from_static(br#"{"message": "Internal server error"}"#),
        ),
    })
}

fn respond(status: u16, headers: &[(String, String)], body: Bytes) -> Response<Full<Bytes>> {
    let mut r = Response::builder().status(status);
    for (k, v) in headers {
        r = r.header(k, v);
    }
    r.body(Full::new(body)).unwrap_or_else(|_| {
        Response::new(Full::new(Bytes::from_static(
            b"a response API Gateway cannot carry",
        )))
    })
}

/// An SQS event source mapping: batches from the queue to the function, as Lambda's pollers take
/// them.
pub async fn event_source(
    lambda: Arc<Lambda>,
    sqs: aws_sdk_sqs::Client,
    function: String,
    queue_url: String,
    batch_size: i32,
    report_failures: bool,
    region: String,
) {
    let arn = queue_arn(&queue_url, &region);
    loop {
        let received = sqs
            .receive_message()
            .queue_url(&queue_url)
            .max_number_of_messages(batch_size)
            .wait_time_seconds(crate::LONG_POLL_SECS)
            .message_attribute_names("All")
            .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::All)
            .send()
            .await;
        let messages = match received {
            Ok(r) => r.messages.unwrap_or_default(),
            Err(e) => {
                tracing::warn!(function, error = %aws_sdk_sqs::error::DisplayErrorContext(e), "receiving from the queue");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        if messages.is_empty() {
            continue;
        }
        let records: Vec<Value> = messages.iter().map(|m| record(m, &arn, &region)).collect();
        let what = match redelivered(&messages) {
            0 => format!("a batch of {}", records.len()),
            again => format!("a batch of {}, {again} redelivered", records.len()),
        };
        let answer = lambda
            .invoke(&function, &what, &json!({ "Records": records }))
            .await;
        // A failed invocation deletes nothing: the batch comes back after the visibility timeout.
        let Ok(answer) = answer else { continue };
        let failed: Vec<&str> = if report_failures {
            answer["batchItemFailures"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["itemIdentifier"].as_str())
                .collect()
        } else {
            Vec::new()
        };
        for m in &messages {
            let (Some(id), Some(receipt)) = (m.message_id(), m.receipt_handle()) else {
                continue;
            };
            if failed.contains(&id) {
                continue;
            }
            if let Err(e) = sqs
                .delete_message()
                .queue_url(&queue_url)
                .receipt_handle(receipt)
                .send()
                .await
            {
                tracing::warn!(function, message_id = id, error = %aws_sdk_sqs::error::DisplayErrorContext(e), "deleting a message");
            }
        }
    }
}

/// Lambda's check when a queue is mapped to a function: the queue's visibility timeout is at
/// least the function's timeout (CreateEventSourceMapping's InvalidParameterValueException).
pub async fn visibility_covers(
    sqs: &aws_sdk_sqs::Client,
    queue_url: &str,
    timeout_secs: u64,
) -> Result<(), String> {
    let attributes = sqs
        .get_queue_attributes()
        .queue_url(queue_url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::VisibilityTimeout)
        .send()
        .await
        .map_err(|e| {
            format!(
                "{queue_url}: {}",
                aws_sdk_sqs::error::DisplayErrorContext(e)
            )
        })?;
    let visibility: u64 = attributes
        .attributes()
        .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::VisibilityTimeout))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{queue_url}: no VisibilityTimeout in its attributes"))?;
    if visibility < timeout_secs {
        return Err(format!(
            "Queue visibility timeout: {visibility} seconds is less than Function timeout: \
             {timeout_secs} seconds ({queue_url})"
        ));
    }
    Ok(())
}

/// How many of a batch's messages were received before (ApproximateReceiveCount above 1): a
/// batch that came back after its invocation failed.
fn redelivered(messages: &[aws_sdk_sqs::types::Message]) -> usize {
    messages
        .iter()
        .filter(|m| {
            m.attributes()
                .and_then(|a| {
                    a.get(&aws_sdk_sqs::types::MessageSystemAttributeName::ApproximateReceiveCount)
                })
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n > 1)
        })
        .count()
}

/// A message as Lambda's SQS event record carries it.
fn record(m: &aws_sdk_sqs::types::Message, arn: &str, region: &str) -> Value {
    let attributes: serde_json::Map<String, Value> = m
        .attributes()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str().to_string(), json!(v)))
        .collect();
    let message_attributes: serde_json::Map<String, Value> = m
        .message_attributes()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                json!({"stringValue": v.string_value(), "dataType": v.data_type(),
                       "stringListValues": [], "binaryListValues": []}),
            )
        })
        .collect();
    json!({
        "messageId": m.message_id(),
        "receiptHandle": m.receipt_handle(),
        "body": m.body().unwrap_or_default(),
        "attributes": attributes,
        "messageAttributes": message_attributes,
        "md5OfBody": m.md5_of_body(),
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": region,
    })
}

/// The queue's ARN from its URL (`.../<account>/<name>`).
fn queue_arn(url: &str, region: &str) -> String {
    let mut parts = url.rsplit('/');
    let name = parts.next().unwrap_or_default();
    let account = parts.next().unwrap_or_default();
    format!("arn:aws:sqs:{region}:{account}:{name}")
}

/// EventBridge's schedule: the function invoked with a Scheduled Event every `every`.
pub async fn schedule(
    lambda: Arc<Lambda>,
    function: String,
    rule: String,
    every: Duration,
    region: String,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let now = phantom_model::time::format_timestamp(phantom_model::time::now());
        let event = json!({
            "version": "0", "id": uuid::Uuid::new_v4().to_string(), "detail-type": "Scheduled Event",
            "source": "aws.events", "account": "123456789012", "time": now, "region": region,
            "resources": [format!("arn:aws:events:{region}:123456789012:rule/{rule}")],
            "detail": {},
        });
        let _ = lambda.invoke(&function, "the schedule", &event).await;
    }
}
