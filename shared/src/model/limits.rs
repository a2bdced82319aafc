//! A user's request limits (the rules that apply them: `crate::throttle`).

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
