//! The work queue in memory, for the in-process tests and the simulation: SQS's delays,
//! visibility timeout and receipts.

use super::{body, Received, Work, WorkQueue};
use crate::fault::Tripwire;
use async_trait::async_trait;
use phantom_model::time::Clock;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// How long a received message stays hidden unless its receiver says otherwise: template.yaml's
/// `WorkVisibilityTimeout` (360 s).
pub const VISIBILITY_MS: i64 = 360_000;

/// A queue in memory, as SQS keeps one: messages become visible at their delay on the given clock;
/// a received message is hidden for the visibility timeout (or as its receiver `hide`s it) and
/// comes back unless it is deleted by its receipt. It can be told to deliver every message more
/// than once, as SQS may, and to refuse sends or hides.
pub struct MemoryQueue {
    clock: Arc<dyn Clock>,
    trip: Arc<Tripwire>,
    inner: Mutex<QueueState>,
}

struct Message {
    body: String,
    /// When it was due (sent, plus its delay).
    due_ms: i64,
    /// Its last delivery's receipt, if it was received.
    receipt: Option<String>,
    receives: u32,
}

#[derive(Default)]
struct QueueState {
    next_id: u64,
    /// (visible at ms, id) -> the message, received ones included (hidden until then).
    waiting: BTreeMap<(i64, u64), Message>,
    /// A delivery's receipt -> where its message waits.
    receipts: HashMap<String, (i64, u64)>,
    copies: usize,
    refuse: bool,
    refuse_hides: bool,
    sent: u64,
}

impl QueueState {
    fn push(&mut self, at: i64, body: String) {
        self.next_id += 1;
        let id = self.next_id;
        let m = Message {
            body,
            due_ms: at,
            receipt: None,
            receives: 0,
        };
        self.waiting.insert((at, id), m);
    }

    /// Moves the message of this receipt to be visible at `at`; false if the receipt is not its
    /// last delivery's (or it was deleted).
    fn show_at(&mut self, receipt: &str, at: i64) -> bool {
        let Some(key) = self.receipts.get(receipt).copied() else {
            return false;
        };
        let m = self
            .waiting
            .remove(&key)
            .expect("a receipt names a message");
        self.receipts.insert(receipt.to_string(), (at, key.1));
        self.waiting.insert((at, key.1), m);
        true
    }
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

    /// Hides fail (a receiver's messages then come back after the visibility timeout).
    pub fn refuse_hides(&self, refuse: bool) {
        self.state().refuse_hides = refuse;
    }

    /// Messages sent so far (each copy counts once).
    pub fn sent(&self) -> u64 {
        self.state().sent
    }

    /// Takes up to `max` messages visible now, each hidden for `VISIBILITY_MS` with a new receipt.
    pub fn receive(&self, max: usize) -> Vec<Received> {
        let now = self.clock.now_ms();
        let mut st = self.state();
        let due: Vec<(i64, u64)> = st
            .waiting
            .range(..(now + 1, 0))
            .take(max)
            .map(|(k, _)| *k)
            .collect();
        let mut out = Vec::new();
        for key in due {
            let mut m = st.waiting.remove(&key).expect("just listed");
            if let Some(old) = m.receipt.take() {
                st.receipts.remove(&old);
            }
            m.receives += 1;
            let receipt = format!("{}.{}", key.1, m.receives);
            let hidden = (now + VISIBILITY_MS, key.1);
            out.push(Received {
                id: key.1.to_string(),
                receipt: receipt.clone(),
                body: m.body.clone(),
                due_ms: m.due_ms,
            });
            m.receipt = Some(receipt.clone());
            st.receipts.insert(receipt, hidden);
            st.waiting.insert(hidden, m);
        }
        out
    }

    /// Deletes a received message by its delivery's receipt: false if that is not its last
    /// delivery's, or it is gone.
    pub fn delete(&self, receipt: &str) -> bool {
        let mut st = self.state();
        let Some(key) = st.receipts.remove(receipt) else {
            return false;
        };
        st.waiting.remove(&key).is_some()
    }

    /// As Lambda's event source after an invocation that returned: deletes the batch's messages
    /// but the `failed` ones (by id), which are left to their visibility.
    pub fn settle(&self, batch: &[Received], failed: &[String]) {
        for m in batch.iter().filter(|m| !failed.contains(&m.id)) {
            self.delete(&m.receipt);
        }
    }

    /// Every message gone, received or not (SQS's PurgeQueue).
    pub fn purge(&self) {
        let mut st = self.state();
        st.waiting.clear();
        st.receipts.clear();
    }

    /// Puts a message on the queue, visible after `delay_ms` (a copy, as the simulation's faults
    /// make one).
    pub fn retry(&self, body: String, delay_ms: i64) {
        let at = self.clock.now_ms() + delay_ms;
        self.state().push(at, body);
    }

    /// When the next message becomes visible, if any is waiting (received ones included).
    pub fn next_visible_ms(&self) -> Option<i64> {
        self.state().waiting.keys().next().map(|k| k.0)
    }

    /// Messages on the queue, received ones not yet deleted included.
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
            st.push(at, body(msg));
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

    /// Not a step of the crash tripwire: a batch killed at it is one killed before it (its
    /// messages back after the visibility timeout) or after it.
    async fn hide(&self, receipts: &[String], secs: i32) -> Result<(), String> {
        for _ in receipts.chunks(10) {
            crate::metrics::count(crate::metrics::Counter::Sqs);
        }
        let at = self.clock.now_ms() + i64::from(secs.clamp(0, 43_200)) * 1000;
        let mut st = self.state();
        if st.refuse_hides {
            return Err("the queue refuses ChangeMessageVisibility".into());
        }
        let unknown: Vec<&String> = receipts.iter().filter(|r| !st.show_at(r, at)).collect();
        match unknown.first() {
            None => Ok(()),
            Some(r) => Err(format!(
                "ReceiptHandleIsInvalid: {} of {} receipts are no delivery's now ({r})",
                unknown.len(),
                receipts.len()
            )),
        }
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
