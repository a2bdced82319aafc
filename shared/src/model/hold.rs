//! What a group across clouds remembers of each cloud between rounds (the rules: `spread`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a group remembers of one of its clouds between rounds: launches failing there in a row
/// (the cloud is held at what it has until `retry_at_ms`), and since when it cannot be reached.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    pub failures: i64,
    pub retry_at_ms: i64,
    pub unreachable_since_ms: Option<i64>,
    /// What the cloud said last time it failed (for the activities of the clouds below it).
    pub last_error: Option<String>,
}

/// A group's holds, by cloud (only clouds with something to remember).
pub type Holds = BTreeMap<String, Hold>;
