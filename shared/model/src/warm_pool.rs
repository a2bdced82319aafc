//! A group's warm pool (PutWarmPool), in botocore's `WarmPoolConfiguration` shape: stopped (or
//! running) VMs kept ready beside the group, started when it scales out (`phantom_rules::warm`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct WarmPoolConfiguration {
    /// The most VMs the group and its pool hold together; absent (given as -1): the group's
    /// MaxSize.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_group_prepared_capacity: Option<i64>,
    pub min_size: i64,
    pub pool_state: PoolState,
    /// PendingDelete once DeleteWarmPool is asked: the pool drains, then goes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<PoolStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_reuse_policy: Option<InstanceReusePolicy>,
}

impl WarmPoolConfiguration {
    pub fn deleting(&self) -> bool {
        self.status == Some(PoolStatus::PendingDelete)
    }

    /// Whether VMs the group lets go on scale-in return to the pool.
    pub fn reuse_on_scale_in(&self) -> bool {
        self.instance_reuse_policy
            .as_ref()
            .and_then(|p| p.reuse_on_scale_in)
            .unwrap_or(false)
    }
}

/// What state the pool keeps its VMs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PoolState {
    Stopped,
    Running,
    Hibernated,
}

impl PoolState {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Stopped" => Some(Self::Stopped),
            "Running" => Some(Self::Running),
            "Hibernated" => Some(Self::Hibernated),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PoolStatus {
    PendingDelete,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceReusePolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reuse_on_scale_in: Option<bool>,
}
