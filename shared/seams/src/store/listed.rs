//! The CloudWatch metrics an instance (of the api, of the health check) listed lately: a
//! metric's listing is written with its datum only when this instance has not written it
//! within `LISTING_REFRESH_MS`, which halves a datum's DynamoDB cost (`Watch::put_data`'s
//! `listed`).

use phantom_model::cloudwatch::MetricId;

/// A metric's listing (what ListMetrics reads) is written again at most this often by one
/// instance: a datum a minute would otherwise write it each minute, half of PutMetricData's
/// DynamoDB cost. ListMetrics' `RecentlyActive` (three hours) stays right.
pub const LISTING_REFRESH_MS: i64 = 3_600_000;
/// The most (user, metric) pairs an instance remembers; past it, it forgets them all.
const LISTED_MAX: usize = 100_000;

/// The metrics this instance listed, and when.
#[derive(Default)]
pub struct Listed(std::sync::Mutex<std::collections::HashMap<(String, MetricId), i64>>);

impl Listed {
    /// Of `metrics`, those this instance listed within `LISTING_REFRESH_MS` of `now_ms`; the
    /// others are taken as listed now.
    pub fn fresh(&self, user: &str, metrics: &[&MetricId], now_ms: i64) -> Vec<MetricId> {
        let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() > LISTED_MAX {
            seen.clear();
        }
        let mut fresh = Vec::new();
        for m in metrics {
            let key = (user.to_string(), (*m).clone());
            match seen.get(&key) {
                Some(at) if now_ms - at < LISTING_REFRESH_MS => fresh.push((*m).clone()),
                _ => {
                    seen.insert(key, now_ms);
                }
            }
        }
        fresh
    }

    /// Forgets that `metrics` were listed (their write failed).
    pub fn forget(&self, user: &str, metrics: &[&MetricId]) {
        let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for m in metrics {
            seen.remove(&(user.to_string(), (*m).clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_is_listed_again_once_an_hour_by_an_instance() {
        let listed = Listed::default();
        let m = MetricId::new("App", "Load", &[]);
        assert!(listed.fresh("u", &[&m], 0).is_empty(), "first: listed now");
        assert_eq!(listed.fresh("u", &[&m], 60_000), std::slice::from_ref(&m));
        assert!(
            listed.fresh("v", &[&m], 60_000).is_empty(),
            "another user's is its own"
        );
        assert!(
            listed.fresh("u", &[&m], LISTING_REFRESH_MS).is_empty(),
            "an hour on"
        );
        listed.forget("u", &[&m]);
        assert!(listed.fresh("u", &[&m], LISTING_REFRESH_MS + 1).is_empty());
    }
}
