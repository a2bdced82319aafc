//! The work-queue seam: reconcile messages for the provisioner, as a trait with the SQS adapter and
//! an in-memory queue (delays, redelivery) for the in-process tests. Messages say only which group
//! to look at; the provisioner reads the rest, so a duplicate or a late one does no harm.

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
}

impl Reconcile {
    pub fn new(owner: &str, group: &str, reason: &str) -> Self {
        Self {
            owner: owner.to_string(),
            group: group.to_string(),
            reason: reason.to_string(),
        }
    }
}

/// Where reconcile messages go.
#[async_trait]
pub trait WorkQueue: Send + Sync {
    /// Sends one message, visible after `delay_secs` (SQS allows up to 900).
    async fn send(&self, msg: &Reconcile, delay_secs: i32) -> Result<(), String>;
    /// Sends many, visible at once.
    async fn send_all(&self, msgs: &[Reconcile]) -> Result<(), String>;
}

#[derive(Clone)]
pub struct SqsQueue {
    sqs: aws_sdk_sqs::Client,
    url: String,
}

impl SqsQueue {
    pub fn new(sdk: &aws_config::SdkConfig, url: impl Into<String>) -> Self {
        Self {
            sqs: aws_sdk_sqs::Client::new(sdk),
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

fn body(msg: &Reconcile) -> String {
    serde_json::to_string(msg).expect("a Reconcile serializes")
}

#[async_trait]
impl WorkQueue for SqsQueue {
    async fn send(&self, msg: &Reconcile, delay_secs: i32) -> Result<(), String> {
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

    /// Ten to a request.
    async fn send_all(&self, msgs: &[Reconcile]) -> Result<(), String> {
        for chunk in msgs.chunks(10) {
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

    fn put(&self, msg: &Reconcile, delay_secs: i32) -> Result<(), String> {
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
    async fn send(&self, msg: &Reconcile, delay_secs: i32) -> Result<(), String> {
        let out = self.put(msg, delay_secs);
        self.trip.step().await;
        out
    }

    async fn send_all(&self, msgs: &[Reconcile]) -> Result<(), String> {
        let out = msgs.iter().try_for_each(|m| self.put(m, 0));
        self.trip.step().await;
        out
    }
}
