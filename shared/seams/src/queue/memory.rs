//! The work queue in memory, for the in-process tests and the simulation.

use super::{body, Received, Work, WorkQueue};
use crate::fault::Tripwire;
use async_trait::async_trait;
use phantom_model::time::Clock;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

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

    /// Takes up to `max` messages visible now (each due when it became visible).
    pub fn receive(&self, max: usize) -> Vec<Received> {
        let now = self.clock.now_ms();
        let mut st = self.state();
        let due: Vec<(i64, u64)> = st
            .waiting
            .range(..(now + 1, 0))
            .take(max)
            .map(|(k, _)| *k)
            .collect();
        due.into_iter()
            .filter_map(|k| {
                st.waiting.remove(&k).map(|body| Received {
                    id: k.1.to_string(),
                    body,
                    due_ms: k.0,
                })
            })
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
