//! An instance refresh as a group keeps it: botocore's `InstanceRefresh` shape (what
//! DescribeInstanceRefreshes shows) plus Phantom's own members, which no AWS shape has and so are
//! never rendered: the instances it replaces and where its checkpoints and waits stand.

use super::launch_template::{LaunchTemplateSpecification, MixedInstancesPolicy};
use serde::{Deserialize, Serialize};

/// Where a refresh stands (botocore's `InstanceRefreshStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    Pending,
    InProgress,
    Successful,
    Failed,
    Cancelling,
    Cancelled,
    RollbackInProgress,
    RollbackFailed,
    RollbackSuccessful,
    Baking,
}

impl Status {
    /// Still running: it blocks another refresh, and CancelInstanceRefresh finds it.
    pub fn active(self) -> bool {
        matches!(
            self,
            Self::Pending
                | Self::InProgress
                | Self::Cancelling
                | Self::Baking
                | Self::RollbackInProgress
        )
    }
}

/// What to do with instances protected from scale in, or in Standby (botocore's
/// `ScaleInProtectedInstances` and `StandbyInstances`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Held {
    /// Replace them anyway (`Refresh` for protected instances, `Terminate` for Standby ones).
    #[serde(alias = "Terminate")]
    Refresh,
    Ignore,
    Wait,
}

/// The preferences a refresh runs with, AWS's defaults filled in (botocore's `RefreshPreferences`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Preferences {
    pub min_healthy_percentage: i64,
    pub max_healthy_percentage: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_warmup: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoint_percentages: Vec<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint_delay: Option<i64>,
    pub skip_matching: bool,
    pub auto_rollback: bool,
    pub scale_in_protected_instances: Held,
    /// Shown as AWS names it: `Terminate`, `Ignore` or `Wait`.
    #[serde(serialize_with = "standby_name")]
    pub standby_instances: Held,
    pub bake_time: i64,
    /// The group's alarms (PutPolicyAlarm) that fail the refresh when one goes into ALARM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alarm_specification: Option<AlarmSpecification>,
}

/// An instance refresh's AlarmSpecification (botocore's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AlarmSpecification {
    #[serde(default)]
    pub alarms: Vec<String>,
}

fn standby_name<S: serde::Serializer>(h: &Held, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match h {
        Held::Refresh => "Terminate",
        Held::Ignore => "Ignore",
        Held::Wait => "Wait",
    })
}

/// What a refresh moves the group to when it succeeds (botocore's `DesiredConfiguration`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DesiredConfiguration {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template: Option<LaunchTemplateSpecification>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixed_instances_policy: Option<MixedInstancesPolicy>,
}

/// Why and from where a refresh is being rolled back (botocore's `RollbackDetails`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RollbackDetails {
    pub rollback_reason: String,
    pub rollback_start_time: String,
    pub percentage_complete_on_rollback: i64,
    pub instances_to_update_on_rollback: i64,
}

/// What a group launches from, as its instances record it: SkipMatching compares with it, and a
/// rollback returns to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Source {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_configuration: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template: Option<LaunchTemplateSpecification>,
}

/// One instance refresh of a group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceRefresh {
    pub instance_refresh_id: String,
    pub auto_scaling_group_name: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    pub start_time: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_time: Option<String>,
    /// Kept as of the last change of status; DescribeInstanceRefreshes works out a running one's
    /// from the group's instances.
    pub percentage_complete: i64,
    pub instances_to_update: i64,
    pub preferences: Preferences,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired_configuration: Option<DesiredConfiguration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollback_details: Option<RollbackDetails>,
    pub strategy: String,
    /// When it started (Unix ms).
    #[serde(rename = "PhantomStartMs")]
    pub start_ms: i64,
    /// The instances it replaces, as the group had them when it started (emptied when it ends).
    #[serde(rename = "PhantomReplace", default)]
    pub replace: Vec<String>,
    /// How many it had to replace when it started.
    #[serde(rename = "PhantomTotal")]
    pub total: i64,
    /// How long a new instance warms up before it counts as healthy (ms).
    #[serde(rename = "PhantomWarmupMs")]
    pub warmup_ms: i64,
    /// Checkpoints reached so far.
    #[serde(rename = "PhantomCheckpoints", default)]
    pub checkpoints_reached: usize,
    /// Replacing waits until then: a checkpoint's delay, or the bake time (Unix ms).
    #[serde(
        rename = "PhantomPausedUntilMs",
        skip_serializing_if = "Option::is_none"
    )]
    pub paused_until_ms: Option<i64>,
    /// Since when only instances it waits for (protected, in Standby) are left (Unix ms).
    #[serde(
        rename = "PhantomBlockedSinceMs",
        skip_serializing_if = "Option::is_none"
    )]
    pub blocked_since_ms: Option<i64>,
    /// What the group launched from when a refresh with a DesiredConfiguration started: what a
    /// rollback returns to.
    #[serde(rename = "PhantomRollbackTo", skip_serializing_if = "Option::is_none")]
    pub rollback_to: Option<Source>,
}
