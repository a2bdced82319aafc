//! The buckets of `phantom_rules::throttle`, kept by this instance of the function: a request costs no
//! store call more. With N instances serving one user at once, the user gets up to N times the
//! rate (each instance refills its own bucket); Lambda keeps few instances for one user's calls
//! unless they come concurrently, and then each instance's bucket still bounds them
//! (docs/request-limits.md).

use phantom_rules::throttle::{Bucket, Class, Limits};
use std::collections::HashMap;
use std::sync::Mutex;

/// Buckets kept at most; past it the map starts again full (a bound, not a policy).
const ENTRIES: usize = 100_000;

pub struct Throttle {
    pub limits: Limits,
    buckets: Mutex<HashMap<(String, Class), Bucket>>,
}

impl Default for Throttle {
    fn default() -> Self {
        Self::new(phantom_rules::throttle::DEFAULT)
    }
}

impl Throttle {
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a token of the user's bucket for this class of action, at the user's own limits if
    /// an administrator set them: false if it is empty.
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
}
