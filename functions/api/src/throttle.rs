//! Each account's request limits across every api instance (docs/request-limits.md). The
//! account's bucket lives in the store (`Buckets`, GCRA's one timestamp); an instance takes a few
//! tokens at a time from it (`phantom_rules::throttle::lease`, a fifth of a second's worth) and
//! serves requests from them for up to `LEASE_MS`, so a store call serves several requests and
//! the account's rate holds whatever the number of instances. A bucket found empty is not asked
//! again for one token's time: a flood is refused here, costing the store nothing. When the store
//! cannot be reached, this instance's own bucket decides (the account then gets up to N times
//! its rate over N instances, as before the shared buckets). Heartbeats keep per-instance buckets
//! alone (`heartbeats::HEARTBEATS`).

use phantom_rules::throttle::{self, Bucket, Class, Limits, LEASE_MS};
use phantom_seams::store::Buckets;
use std::collections::HashMap;
use std::sync::Mutex;

/// Buckets kept at most; past it the map starts again full (a bound, not a policy).
const ENTRIES: usize = 100_000;

/// What this instance holds of an account's shared bucket.
#[derive(Debug, Clone, Copy, Default)]
struct Held {
    /// Tokens taken and not yet used, until `until_ms`.
    tokens: u32,
    until_ms: i64,
    /// The bucket was found empty: refused here until then.
    refused_until_ms: i64,
    /// When its next arrival time is past at the latest, as far as this instance knows (the
    /// store's likely case).
    idle_after_ms: i64,
}

pub struct Throttle {
    pub limits: Limits,
    buckets: Mutex<HashMap<(String, Class), Bucket>>,
    held: Mutex<HashMap<(String, Class), Held>>,
}

impl Default for Throttle {
    fn default() -> Self {
        Self::new(throttle::DEFAULT)
    }
}

impl Throttle {
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            buckets: Mutex::new(HashMap::new()),
            held: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a token of the user's bucket in this instance, at the user's own limits if an
    /// administrator set them: false if it is empty.
    pub fn admit(&self, user: &str, own: Option<&Limits>, class: Class, now_ms: i64) -> bool {
        let rate = own.unwrap_or(&self.limits).rate(class);
        let mut buckets = self.buckets.lock().expect("no throttle user panics");
        if buckets.len() >= ENTRIES {
            buckets.clear();
        }
        buckets
            .entry((user.to_string(), class))
            .or_insert_with(|| Bucket::full(rate, now_ms))
            .take(rate, now_ms)
            .is_ok()
    }

    /// Takes a token of the account's shared bucket: from what this instance holds, else a
    /// lease of the store's; false if the bucket is empty.
    pub async fn admit_shared(
        &self,
        store: &dyn Buckets,
        account: &str,
        own: Option<&Limits>,
        class: Class,
        now_ms: i64,
    ) -> bool {
        let rate = own.unwrap_or(&self.limits).rate(class);
        let id = (account.to_string(), class);
        let idle = {
            let mut held = self.held.lock().expect("no throttle user panics");
            if held.len() >= ENTRIES {
                held.clear();
            }
            let h = held.entry(id.clone()).or_default();
            if h.tokens > 0 && now_ms < h.until_ms {
                h.tokens -= 1;
                return true;
            }
            if now_ms < h.refused_until_ms {
                return false;
            }
            now_ms >= h.idle_after_ms
        };
        // A lease, or (the bucket nearly empty) the one token this request needs.
        let lease = throttle::lease(rate);
        let mut taken = Ok(false);
        let (mut n, mut take) = (lease, throttle::take_of(rate, lease));
        let wants: &[u32] = if lease > 1 { &[lease, 1] } else { &[1] };
        for &want in wants {
            (n, take) = (want, throttle::take_of(rate, want));
            let idle = idle && want == lease;
            taken = store
                .take_tokens(account, class.name(), take, now_ms * 1000, idle)
                .await;
            if !matches!(taken, Ok(false)) {
                break;
            }
        }
        let mut held = self.held.lock().expect("no throttle user panics");
        let h = held.entry(id).or_default();
        match taken {
            Ok(true) => {
                h.tokens = n - 1;
                h.until_ms = now_ms + LEASE_MS;
                h.idle_after_ms = now_ms + take.cost_us / 1000;
                true
            }
            Ok(false) => {
                // One token's time before asking again.
                h.refused_until_ms = now_ms + (1000.0 / rate.per_sec).ceil() as i64;
                h.idle_after_ms = h.refused_until_ms + take.limit_us / 1000;
                false
            }
            Err(e) => {
                drop(held);
                tracing::warn!(error = %e, "the shared request bucket could not be read; this instance's decides");
                self.admit(account, own, class, now_ms)
            }
        }
    }
}
