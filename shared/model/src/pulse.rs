//! What the pulse keeps in the store (the rules: `phantom_rules::pulse`).

use serde::{Deserialize, Serialize};

/// The chain's lease: the sequence of the last tick that ran, and when the chain counts as lost
/// if no tick has run since.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub seq: u64,
    pub until_ms: i64,
}

/// What a pair's last full sweep saw: the fingerprint of the user's VMs on that cloud, and
/// whether it left work behind (reconciles queued, orphans, the cloud not answering, groups
/// whose health a load balancer judges or that span clouds), which the next sweeps must follow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairView {
    pub fingerprint: String,
    pub busy: bool,
    /// Since when (Unix ms) sweeps have found no group and no VM of the user's there: the pair
    /// leaves the list once that is longer than a new VM may be missing from DescribeInstances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_since_ms: Option<i64>,
}
