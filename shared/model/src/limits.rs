//! A user's request limits (the rules that apply them: `phantom_rules::throttle`).

use serde::{Deserialize, Serialize};

/// A steady rate and a burst.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Requests a second, sustained.
    pub per_sec: f64,
    /// Requests at once after a quiet time (the bucket's size).
    pub burst: f64,
}

/// A user's limits, by class of action.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Describe* and Get* actions.
    pub describe: Rate,
    /// Every other action.
    pub mutate: Rate,
}

/// CloudWatch's PutMetricData, which VMs and agents send: an account's thousands of VMs each
/// publishing every minute, far beyond the API's changes (CloudWatch's own quota is 500 a second).
pub const PUBLISH: Rate = Rate {
    per_sec: 500.0,
    burst: 1_500.0,
};

/// Which bucket an action draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Describe,
    Mutate,
    /// PutMetricData (`PUBLISH`, the same for every user).
    Publish,
}

impl Class {
    /// Its name in the operating metrics.
    pub fn name(self) -> &'static str {
        match self {
            Class::Describe => "Describe",
            Class::Mutate => "Mutate",
            Class::Publish => "Publish",
        }
    }

    pub fn of(action: &str) -> Self {
        if action == "PutMetricData" {
            Class::Publish
        } else if ["Describe", "Get", "List", "Lookup"]
            .iter()
            .any(|p| action.starts_with(p))
        {
            Class::Describe
        } else {
            Class::Mutate
        }
    }
}

impl Limits {
    pub fn rate(&self, class: Class) -> Rate {
        match class {
            Class::Describe => self.describe,
            Class::Mutate => self.mutate,
            Class::Publish => PUBLISH,
        }
    }

    /// Checks limits an administrator sets: rates above 0, bursts of at least one request.
    pub fn check(&self) -> Result<(), String> {
        for (what, r) in [("describing", self.describe), ("changing", self.mutate)] {
            if !(r.per_sec.is_finite() && r.per_sec > 0.0) {
                return Err(format!(
                    "the rate for {what} must be a number of requests a second above 0"
                ));
            }
            if !(r.burst.is_finite() && r.burst >= 1.0) {
                return Err(format!("the burst for {what} must be 1 request or more"));
            }
        }
        Ok(())
    }
}
