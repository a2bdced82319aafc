//! The pulse queue (`phantom_rules::pulse`): a FIFO queue whose own delay is the pulse's period and which
//! drops a second send of one tick (SQS's deduplication, by the tick's sequence, for five
//! minutes), with the SQS adapter and an in-memory one (feature `memory`).

use async_trait::async_trait;
use phantom_rules::pulse::Tick;

pub const PULSE_QUEUE_URL_ENV: &str = "PHANTOM_PULSE_QUEUE_URL";
/// SQS FIFO's deduplication window.
pub const DEDUP_WINDOW_MS: i64 = 5 * 60 * 1000;

/// Where the next tick goes.
#[async_trait]
pub trait PulseQueue: Send + Sync {
    /// Sends a tick; it arrives after the queue's delay. A tick sent again within the
    /// deduplication window is dropped.
    async fn send(&self, tick: Tick) -> Result<(), String>;
}

/// The pulse queue on SQS (FIFO, one message group).
#[derive(Clone)]
pub struct SqsPulse {
    sqs: super::sqs::Sqs,
    url: String,
}

impl SqsPulse {
    pub fn new(sdk: &aws_config::SdkConfig, url: impl Into<String>) -> Self {
        Self {
            sqs: super::sqs::Sqs::new(sdk),
            url: url.into(),
        }
    }

    /// The queue named by PHANTOM_PULSE_QUEUE_URL, if set.
    pub fn from_env(sdk: &aws_config::SdkConfig) -> Option<Self> {
        std::env::var(PULSE_QUEUE_URL_ENV)
            .ok()
            .filter(|u| !u.is_empty())
            .map(|u| Self::new(sdk, u))
    }
}

#[async_trait]
impl PulseQueue for SqsPulse {
    async fn send(&self, tick: Tick) -> Result<(), String> {
        let input = serde_json::json!({
            "QueueUrl": self.url,
            "MessageBody": tick.body(),
            "MessageGroupId": "pulse",
            "MessageDeduplicationId": tick.seq.to_string(),
        });
        self.sqs
            .call("SendMessage", input)
            .await
            .map(|_| ())
            .map_err(|e| format!("{}: {}", e.code, e.message))
    }
}

#[cfg(any(test, feature = "memory"))]
pub use memory::MemoryPulse;

#[cfg(any(test, feature = "memory"))]
mod memory {
    use super::*;
    use crate::fault::Tripwire;
    use phantom_model::time::Clock;
    use std::collections::{BTreeMap, HashMap};
    use std::sync::{Arc, Mutex};

    /// The pulse queue in memory: the queue's delay, its deduplication window, redelivery of a
    /// tick whose run failed, and a tick lost on the way (`lose_next`).
    pub struct MemoryPulse {
        clock: Arc<dyn Clock>,
        trip: Arc<Tripwire>,
        delay_ms: i64,
        inner: Mutex<State>,
    }

    #[derive(Default)]
    struct State {
        next_id: u64,
        waiting: BTreeMap<(i64, u64), Tick>,
        /// seq -> when it was first sent
        sent: HashMap<u64, i64>,
        lose: usize,
        refuse: bool,
    }

    impl MemoryPulse {
        pub fn new(clock: Arc<dyn Clock>, trip: Arc<Tripwire>, delay_ms: i64) -> Self {
            Self {
                clock,
                trip,
                delay_ms,
                inner: Mutex::new(State::default()),
            }
        }

        fn state(&self) -> std::sync::MutexGuard<'_, State> {
            self.inner.lock().expect("no pulse queue operation panics")
        }

        /// The next tick visible now, if any (the function's event source).
        pub fn receive(&self) -> Option<Tick> {
            let now = self.clock.now_ms();
            let mut st = self.state();
            let k = *st.waiting.range(..(now + 1, 0)).next()?.0;
            st.waiting.remove(&k)
        }

        /// A received tick whose run failed, visible again after `after_ms` (the visibility
        /// timeout).
        pub fn redeliver(&self, tick: Tick, after_ms: i64) {
            let at = self.clock.now_ms() + after_ms;
            let mut st = self.state();
            st.next_id += 1;
            let id = st.next_id;
            st.waiting.insert((at, id), tick);
        }

        /// The next `n` ticks sent are lost (accepted, never delivered).
        pub fn lose_next(&self, n: usize) {
            self.state().lose = n;
        }

        /// Sends fail.
        pub fn refuse_sends(&self, refuse: bool) {
            self.state().refuse = refuse;
        }

        /// Ticks waiting, delivered or not yet visible.
        pub fn waiting(&self) -> Vec<Tick> {
            self.state().waiting.values().copied().collect()
        }

        /// When the next tick becomes visible.
        pub fn next_visible_ms(&self) -> Option<i64> {
            self.state().waiting.keys().next().map(|k| k.0)
        }
    }

    #[async_trait]
    impl PulseQueue for MemoryPulse {
        async fn send(&self, tick: Tick) -> Result<(), String> {
            crate::metrics::count(crate::metrics::Counter::Sqs);
            let now = self.clock.now_ms();
            let out = {
                let mut st = self.state();
                if st.refuse {
                    Err("the pulse queue refuses sends".to_string())
                } else {
                    // A repeat within the window is accepted and dropped, as SQS does.
                    let repeat = st
                        .sent
                        .get(&tick.seq)
                        .is_some_and(|at| now - at < DEDUP_WINDOW_MS);
                    if !repeat {
                        st.sent.insert(tick.seq, now);
                        if st.lose > 0 {
                            st.lose -= 1;
                        } else {
                            st.next_id += 1;
                            let id = st.next_id;
                            st.waiting.insert((now + self.delay_ms, id), tick);
                        }
                    }
                    st.sent.retain(|_, at| now - *at < DEDUP_WINDOW_MS);
                    Ok(())
                }
            };
            self.trip.step().await;
            out
        }
    }
}
