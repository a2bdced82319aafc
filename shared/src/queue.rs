//! The work-queue seam: work for the provisioner's fleet (reconcile a group, sweep one user's VMs on
//! one cloud), as a trait with the SQS adapter and an in-memory queue (delays, redelivery) for the
//! in-process tests. Messages say only what to look at; the provisioner reads the rest, so a
//! duplicate or a late one does no harm.

use crate::fault::Tripwire;
use crate::time::Clock;
use async_trait::async_trait;
use aws_sdk_sqs::error::DisplayErrorContext;
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

pub const QUEUE_URL_ENV: &str = "PHANTOM_WORK_QUEUE_URL";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconcile {
    pub owner: String,
    pub group: String,
    /// What asked for it (for the logs).
    pub reason: String,
    /// Its place in a chain of follow-ups at a group whose VMs are on their way in or out (0: not
    /// a follow-up); bounds the chain (`phantom::round::follow_up_delay_secs`).
    #[serde(default)]
    pub follow_up: u32,
}

impl Reconcile {
    pub fn new(owner: &str, group: &str, reason: &str) -> Self {
        Self {
            owner: owner.to_string(),
            group: group.to_string(),
            reason: reason.to_string(),
            follow_up: 0,
        }
    }

    /// The next look in a chain of follow-ups.
    pub fn follow_up(&self) -> Self {
        Self {
            reason: "follow-up".into(),
            follow_up: self.follow_up + 1,
            ..self.clone()
        }
    }
}

/// Look at everything one user runs on one cloud: the health check's unit of work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sweep {
    pub owner: String,
    pub cloud: String,
}

/// One message on the work queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Work {
    Reconcile(Reconcile),
    Sweep(Sweep),
}

impl From<Reconcile> for Work {
    fn from(r: Reconcile) -> Self {
        Work::Reconcile(r)
    }
}

impl From<Sweep> for Work {
    fn from(s: Sweep) -> Self {
        Work::Sweep(s)
    }
}

impl Work {
    /// A message body as it travels.
    pub fn parse(body: &str) -> Result<Self, String> {
        serde_json::from_str(body).map_err(|e| e.to_string())
    }
}

/// Where work goes.
#[async_trait]
pub trait WorkQueue: Send + Sync {
    /// Sends one message, visible after `delay_secs` (SQS allows up to 900).
    async fn send(&self, msg: &Work, delay_secs: i32) -> Result<(), String>;
    /// Sends many, visible at once.
    async fn send_all(&self, msgs: &[Work]) -> Result<(), String>;
    /// About how many messages wait to be received now (SQS's ApproximateNumberOfMessages).
    async fn backlog(&self) -> Result<u64, String>;
}

#[derive(Clone)]
pub struct SqsQueue {
    sqs: aws_sdk_sqs::Client,
    url: String,
}

impl SqsQueue {
    pub fn new(sdk: &aws_config::SdkConfig, url: impl Into<String>) -> Self {
        let config = aws_sdk_sqs::config::Builder::from(sdk)
            .interceptor(crate::metrics::Counter::Sqs)
            .build();
        Self {
            sqs: aws_sdk_sqs::Client::from_conf(config),
            url: url.into(),
        }
    }

    /// The queue named by PHANTOM_WORK_QUEUE_URL, if set.
    pub fn from_env(sdk: &aws_config::SdkConfig) -> Option<Self> {
        std::env::var(QUEUE_URL_ENV)
            .ok()
            .filter(|u| !u.is_empty())
            .map(|u| Self::new(sdk, u))
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn client(&self) -> &aws_sdk_sqs::Client {
        &self.sqs
    }
}

fn body(msg: &Work) -> String {
    serde_json::to_string(msg).expect("a work message serializes")
}

#[async_trait]
impl WorkQueue for SqsQueue {
    async fn send(&self, msg: &Work, delay_secs: i32) -> Result<(), String> {
        self.sqs
            .send_message()
            .queue_url(&self.url)
            .message_body(body(msg))
            .delay_seconds(delay_secs.clamp(0, 900))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| DisplayErrorContext(e).to_string())
    }

    async fn backlog(&self) -> Result<u64, String> {
        use aws_sdk_sqs::types::QueueAttributeName;
        let out = self
            .sqs
            .get_queue_attributes()
            .queue_url(&self.url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .send()
            .await
            .map_err(|e| DisplayErrorContext(e).to_string())?;
        let n = out
            .attributes()
            .and_then(|a| a.get(&QueueAttributeName::ApproximateNumberOfMessages))
            .ok_or("the queue did not say how many messages it holds")?;
        n.parse()
            .map_err(|_| format!("ApproximateNumberOfMessages is not a number: {n}"))
    }

    /// Ten to a request, up to `SEND_CONCURRENCY` requests at a time (a sweep fans out thousands).
    async fn send_all(&self, msgs: &[Work]) -> Result<(), String> {
        use futures::stream::{self, StreamExt, TryStreamExt};
        let batches: Vec<_> = msgs
            .chunks(10)
            .map(|chunk| Box::pin(self.send_batch(chunk)))
            .collect();
        stream::iter(batches)
            .buffer_unordered(SEND_CONCURRENCY)
            .try_collect::<()>()
            .await
    }
}

/// SendMessageBatch requests in flight at once in `send_all`.
const SEND_CONCURRENCY: usize = 16;

impl SqsQueue {
    async fn send_batch(&self, chunk: &[Work]) -> Result<(), String> {
        let entries: Vec<SendMessageBatchRequestEntry> = chunk
            .iter()
            .enumerate()
            .map(|(i, m)| {
                SendMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .message_body(body(m))
                    .build()
                    .expect("id and body are set")
            })
            .collect();
        let out = self
            .sqs
            .send_message_batch()
            .queue_url(&self.url)
            .set_entries(Some(entries))
            .send()
            .await
            .map_err(|e| DisplayErrorContext(e).to_string())?;
        if !out.failed().is_empty() {
            return Err(format!("{} messages not sent", out.failed().len()));
        }
        Ok(())
    }
}

/// A queue in memory: messages become visible at their delay on the given clock; a received
/// message is gone unless it is given back (`retry`). It can be told to deliver every message more
/// than once, as SQS may, and to refuse sends.
pub struct MemoryQueue {
    clock: Arc<dyn Clock>,
    trip: Arc<Tripwire>,
    inner: Mutex<QueueState>,
}

#[derive(Default)]
struct QueueState {
    next_id: u64,
    /// (visible at ms, id) -> body
    waiting: BTreeMap<(i64, u64), String>,
    copies: usize,
    refuse: bool,
    sent: u64,
}

impl MemoryQueue {
    pub fn new(clock: Arc<dyn Clock>, trip: Arc<Tripwire>) -> Self {
        Self {
            clock,
            trip,
            inner: Mutex::new(QueueState {
                copies: 1,
                ..Default::default()
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.inner.lock().expect("no queue operation panics")
    }

    /// Every message sent from now on is delivered `n` times.
    pub fn deliver_each(&self, n: usize) {
        self.state().copies = n.max(1);
    }

    /// Sends fail (the api then relies on the health check).
    pub fn refuse_sends(&self, refuse: bool) {
        self.state().refuse = refuse;
    }

    /// Messages sent so far (each copy counts once).
    pub fn sent(&self) -> u64 {
        self.state().sent
    }

    /// Takes up to `max` messages visible now, as (message id, body).
    pub fn receive(&self, max: usize) -> Vec<(String, String)> {
        let now = self.clock.now_ms();
        let mut st = self.state();
        let due: Vec<(i64, u64)> = st
            .waiting
            .range(..(now + 1, 0))
            .take(max)
            .map(|(k, _)| *k)
            .collect();
        due.into_iter()
            .filter_map(|k| st.waiting.remove(&k).map(|b| (k.1.to_string(), b)))
            .collect()
    }

    /// Gives a received message back, visible again after `delay_ms`.
    pub fn retry(&self, body: String, delay_ms: i64) {
        let at = self.clock.now_ms() + delay_ms;
        let mut st = self.state();
        st.next_id += 1;
        let id = st.next_id;
        st.waiting.insert((at, id), body);
    }

    /// When the next message becomes visible, if any is waiting.
    pub fn next_visible_ms(&self) -> Option<i64> {
        self.state().waiting.keys().next().map(|k| k.0)
    }

    pub fn len(&self) -> usize {
        self.state().waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn put(&self, msg: &Work, delay_secs: i32) -> Result<(), String> {
        let at = self.clock.now_ms() + i64::from(delay_secs.clamp(0, 900)) * 1000;
        let mut st = self.state();
        if st.refuse {
            return Err("the queue refuses sends".into());
        }
        st.sent += 1;
        for _ in 0..st.copies {
            st.next_id += 1;
            let id = st.next_id;
            st.waiting.insert((at, id), body(msg));
        }
        Ok(())
    }
}

#[async_trait]
impl WorkQueue for MemoryQueue {
    async fn send(&self, msg: &Work, delay_secs: i32) -> Result<(), String> {
        crate::metrics::count(crate::metrics::Counter::Sqs);
        let out = self.put(msg, delay_secs);
        self.trip.step().await;
        out
    }

    async fn backlog(&self) -> Result<u64, String> {
        crate::metrics::count(crate::metrics::Counter::Sqs);
        let now = self.clock.now_ms();
        let n = self.state().waiting.range(..(now + 1, 0)).count() as u64;
        self.trip.step().await;
        Ok(n)
    }

    async fn send_all(&self, msgs: &[Work]) -> Result<(), String> {
        for _ in msgs.chunks(10) {
            crate::metrics::count(crate::metrics::Counter::Sqs);
        }
        let out = msgs.iter().try_for_each(|m| self.put(m, 0));
        self.trip.step().await;
        out
    }
}
