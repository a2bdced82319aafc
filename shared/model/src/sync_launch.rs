//! LaunchInstances: a launch the caller waits for. The api records the request; the provisioner
//! launches it at the placement it names, under the group's lease, and records what came of it;
//! the api answers with that.

use serde::{Deserialize, Serialize};

/// One LaunchInstances request of a group, by its client token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SyncLaunch {
    pub client_token: String,
    /// Capacity units (VMs, without weights).
    pub requested: i64,
    pub zone: Option<String>,
    pub subnet: Option<String>,
    /// `retry-with-group-configuration`: what could not be launched here is added to the
    /// desired capacity for the group to launch its own way; else it is not asked for again.
    pub retry: bool,
    pub asked_ms: i64,
    /// None while the provisioner has not launched it.
    pub result: Option<SyncResult>,
}

impl SyncLaunch {
    /// Whether another request with the same token asks for the same thing (else AWS's
    /// IdempotentParameterMismatch).
    pub fn same_ask(&self, other: &Self) -> bool {
        (self.requested, &self.zone, &self.subnet, self.retry)
            == (other.requested, &other.zone, &other.subnet, other.retry)
    }
}

/// What a LaunchInstances got: botocore's `Instances` and `Errors`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SyncResult {
    pub instances: Vec<InstanceCollection>,
    pub errors: Vec<LaunchError>,
}

/// Instances launched alike: botocore's `InstanceCollection`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceCollection {
    pub instance_type: String,
    /// `OnDemand` or `Spot`.
    pub market_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subnet_id: Option<String>,
    pub availability_zone: String,
    pub instance_ids: Vec<String>,
}

/// A launch that failed: botocore's `LaunchInstancesError`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LaunchError {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// `OnDemand` or `Spot`; None where the group's purchase options gave none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub market_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subnet_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub availability_zone: Option<String>,
    pub error_code: String,
    pub error_message: String,
}
