//! Crash injection for the in-memory adapters: every operation of a memory store, cloud or queue
//! that shares one `Tripwire` is a step; armed at step k, the k-th operation does its work and then
//! never returns, as if the process died right after it. The harness drops the stalled future and
//! starts a new provisioner: whatever the k-th step wrote stays written, nothing after it happens.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

#[derive(Default)]
pub struct Tripwire {
    steps: AtomicU64,
    /// 0: not armed.
    at: AtomicU64,
    tripped: Notify,
}

impl Tripwire {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Counts steps from now and stalls the `k`-th (k >= 1).
    pub fn arm(&self, k: u64) {
        self.steps.store(0, Ordering::SeqCst);
        self.at.store(k, Ordering::SeqCst);
    }

    pub fn disarm(&self) {
        self.at.store(0, Ordering::SeqCst);
    }

    /// Steps counted since the last `arm` (or ever).
    pub fn steps(&self) -> u64 {
        self.steps.load(Ordering::SeqCst)
    }

    /// Resolves once an armed step has stalled.
    pub async fn tripped(&self) {
        self.tripped.notified().await
    }

    /// Called by an adapter after it did an operation's work, before it answers.
    pub async fn step(&self) {
        let n = self.steps.fetch_add(1, Ordering::SeqCst) + 1;
        if self.at.load(Ordering::SeqCst) == n {
            self.at.store(0, Ordering::SeqCst);
            self.tripped.notify_one();
            std::future::pending::<()>().await;
        }
    }
}

/// A tripwire that is never armed, for adapters built without one.
pub fn none() -> Arc<Tripwire> {
    Tripwire::new()
}
