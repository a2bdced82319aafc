//! Instances: as Phantom records them (`Member`, in their `Lifecycle`, waiting on lifecycle
//! hooks), as a cloud shows them (`Seen`, in a `CloudState`), and where a new one goes
//! (`Placement`).

use super::launch_template::LaunchTemplateSpecification;
use super::Refusal;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    Pending,
    /// Launched, held by the group's launch lifecycle hooks (`Member::waits`).
    PendingWait,
    InService,
    /// Chosen to leave, held by the group's termination lifecycle hooks before it is terminated.
    TerminatingWait,
    Terminating,
    /// Its termination hooks ended with ABANDON and the group's InstanceLifecyclePolicy retains
    /// it: running, not counted, until TerminateInstanceInAutoScalingGroup.
    TerminatingRetained,
    /// Taken out of service by EnterStandby: kept, not counted, not checked.
    Standby,
    /// Named by AttachInstances: counted; the provisioner looks it up on the cloud and tags it
    /// (shown as Pending, as AWS shows an instance being attached).
    Attaching,
    /// Named by DetachInstances: not counted; the provisioner removes the group's tags from it
    /// and forgets it.
    Detaching,
    /// In the warm pool (`phantom_rules::warm`), not counted: launched (or returned) and on its way to
    /// the pool's state.
    WarmedPending,
    /// Launched into the warm pool, held by the group's launch lifecycle hooks (`Member::waits`)
    /// before it is brought to the pool's state.
    WarmedPendingWait,
    /// In the warm pool, in its state: ready to join the group.
    WarmedStopped,
    WarmedRunning,
    WarmedHibernated,
    /// Leaving the warm pool, held by the group's termination lifecycle hooks first.
    WarmedTerminatingWait,
    /// Leaving the warm pool: terminated, not yet gone.
    WarmedTerminating,
}

impl Lifecycle {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::PendingWait => "Pending:Wait",
            Self::InService => "InService",
            Self::TerminatingWait => "Terminating:Wait",
            Self::Terminating => "Terminating",
            Self::TerminatingRetained => "Terminating:Retained",
            Self::Standby => "Standby",
            Self::Attaching => "Attaching",
            Self::Detaching => "Detaching",
            Self::WarmedPending => "Warmed:Pending",
            Self::WarmedPendingWait => "Warmed:Pending:Wait",
            Self::WarmedStopped => "Warmed:Stopped",
            Self::WarmedRunning => "Warmed:Running",
            Self::WarmedHibernated => "Warmed:Hibernated",
            Self::WarmedTerminatingWait => "Warmed:Terminating:Wait",
            Self::WarmedTerminating => "Warmed:Terminating",
        }
    }
    /// The LifecycleState a client sees (AWS's names).
    pub fn shown(self) -> &'static str {
        match self {
            Self::Attaching => "Pending",
            other => other.as_str(),
        }
    }
    /// On its way out of the group (or retained outside its count): counted for nothing.
    pub fn is_leaving(self) -> bool {
        matches!(
            self,
            Self::Terminating | Self::TerminatingWait | Self::TerminatingRetained | Self::Detaching
        )
    }
    /// On its way to termination (held by hooks or not), from the group or its warm pool: an
    /// activity open on it is its termination's.
    pub fn is_terminating(self) -> bool {
        matches!(
            self,
            Self::Terminating
                | Self::TerminatingWait
                | Self::WarmedTerminating
                | Self::WarmedTerminatingWait
        )
    }
    /// In the warm pool: beside the group, not in it.
    pub fn is_warm(self) -> bool {
        matches!(
            self,
            Self::WarmedPending
                | Self::WarmedPendingWait
                | Self::WarmedStopped
                | Self::WarmedRunning
                | Self::WarmedHibernated
                | Self::WarmedTerminatingWait
                | Self::WarmedTerminating
        )
    }
    /// In the warm pool in its state, ready to join the group.
    pub fn is_ready(self) -> bool {
        matches!(
            self,
            Self::WarmedStopped | Self::WarmedRunning | Self::WarmedHibernated
        )
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Pending" => Some(Self::Pending),
            "Pending:Wait" => Some(Self::PendingWait),
            "InService" => Some(Self::InService),
            "Terminating:Wait" => Some(Self::TerminatingWait),
            "Terminating" => Some(Self::Terminating),
            "Terminating:Retained" => Some(Self::TerminatingRetained),
            "Standby" => Some(Self::Standby),
            "Attaching" => Some(Self::Attaching),
            "Detaching" => Some(Self::Detaching),
            "Warmed:Pending" => Some(Self::WarmedPending),
            "Warmed:Pending:Wait" => Some(Self::WarmedPendingWait),
            "Warmed:Stopped" => Some(Self::WarmedStopped),
            "Warmed:Running" => Some(Self::WarmedRunning),
            "Warmed:Hibernated" => Some(Self::WarmedHibernated),
            "Warmed:Terminating:Wait" => Some(Self::WarmedTerminatingWait),
            "Warmed:Terminating" => Some(Self::WarmedTerminating),
            _ => None,
        }
    }
}

/// An instance as Phantom recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub id: String,
    /// The cloud it runs on (a group may span clouds, `phantom_rules::spread`).
    pub cloud: String,
    pub zone: String,
    /// The subnet it was launched into, if the launch named one (None for one attached, adopted
    /// or recorded before 2026-11-27).
    pub subnet: Option<String>,
    pub lifecycle: Lifecycle,
    pub healthy: bool,
    pub launched_ms: i64,
    /// When it joined the group from the warm pool (Unix ms); None if launched into the group.
    pub joined_ms: Option<i64>,
    /// A replacement on its way: when the VM it replaces was found dead (Unix ms), until it is
    /// InService (`phantom_rules::replacement`).
    pub replaces_ms: Option<i64>,
    /// When its cloud said it is at risk of interruption (EC2's rebalance recommendation or spot
    /// interruption warning, Unix ms): with CapacityRebalance, it is replaced launch-first
    /// (`phantom_rules::rebalance`).
    pub at_risk_ms: Option<i64>,
    /// What the group's probe saw when it found the VM failing (`phantom_rules::probe`): the VM
    /// is then Unhealthy, and its replacement's activity says this.
    pub probe_failed: Option<String>,
    /// Which check found it Unhealthy (`phantom_rules::health::Failed::label`) while it is kept
    /// so (ReplaceUnhealthy suspended, or under a maintenance policy): what the group's
    /// `GroupUnhealthyInstances` counts it under. None while healthy.
    pub unhealthy_check: Option<String>,
    pub protected: bool,
    /// None for a VM attached with AttachInstances, or launched from a launch template.
    pub launch_configuration: Option<String>,
    /// The launch template (as the group named it) a VM was launched from, if it was.
    pub launch_template: Option<LaunchTemplateSpecification>,
    /// The launch template it was launched from (the group's, or its instance type's override's
    /// own), named as the group names templates, at the number of the version (`$Latest` or
    /// `$Default` as they were then): shown as its `LaunchTemplate`. None for a VM recorded before
    /// 2026-11-27, which shows `launch_template`.
    pub launched_from: Option<LaunchTemplateSpecification>,
    pub instance_type: String,
    pub market: Market,
    /// The capacity units its type weighed when it was launched (a MixedInstancesPolicy
    /// override's WeightedCapacity; None without weights): `phantom_rules::weights`.
    pub weight: Option<i64>,
    /// The lifecycle hooks it waits on (Pending:Wait, Terminating:Wait).
    pub waits: Vec<Wait>,
    /// An activity open on it until done: a user's request that lets it go
    /// (TerminateInstanceInAutoScalingGroup, DetachInstances), or a termination its hooks hold
    /// (MidLifecycleAction), until it has gone; EnterStandby until a round has taken it out of
    /// service, ExitStandby until it is InService again.
    pub open: Option<super::activity::OpenActivity>,
    /// Writes of this record so far (0: not yet stored): each write is conditional on it, so two
    /// writers of one instance (the provisioner, an instance action) cannot overwrite each other.
    pub rev: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloudState {
    Pending,
    Running,
    Stopping,
    Stopped,
    ShuttingDown,
    Terminated,
    /// A state this code does not know (or none given): the VM is kept as it is, neither judged
    /// dead and replaced nor adopted, until the cloud says something known.
    Unknown,
}

impl CloudState {
    pub fn parse(s: &str) -> Self {
        match s {
            "pending" => Self::Pending,
            "running" => Self::Running,
            "stopping" => Self::Stopping,
            "stopped" => Self::Stopped,
            "shutting-down" => Self::ShuttingDown,
            "terminated" => Self::Terminated,
            _ => Self::Unknown,
        }
    }
    pub fn alive(self) -> bool {
        matches!(self, Self::Pending | Self::Running)
    }
    /// EC2's name of the state.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Stopping => "stopping",
            Self::Stopped => "stopped",
            Self::ShuttingDown => "shutting-down",
            Self::Terminated => "terminated",
            Self::Unknown => "unknown",
        }
    }
}

/// An instance as the cloud shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub id: String,
    pub state: CloudState,
    pub zone: String,
    pub launched_ms: i64,
    pub instance_type: String,
    pub market: Market,
    /// Launched into its group's warm pool (tagged so): found unrecorded, it goes back there.
    pub pool: bool,
}

impl Member {
    /// Since when it has been in the group: its health check's grace and its warm-up count
    /// from then.
    pub fn in_group_since_ms(&self) -> i64 {
        self.joined_ms.unwrap_or(self.launched_ms)
    }
}

impl Seen {
    pub fn is_alive(&self) -> bool {
        self.state.alive()
    }
}

/// Where one new VM goes: a zone, or a subnet (whose zone the cloud knows), and on which market.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub zone: Option<String>,
    pub subnet: Option<String>,
    pub market: Market,
    /// The capacity units the VM is to cover (`phantom_rules::weights`; 1 without weights).
    pub units: i64,
}

/// How a VM is bought: on demand, or as spot capacity the cloud may take back (EC2's
/// `InstanceLifecycle`, absent for on-demand).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Market {
    OnDemand,
    Spot,
}

impl Market {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OnDemand => "on-demand",
            Self::Spot => "spot",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "on-demand" => Some(Self::OnDemand),
            "spot" => Some(Self::Spot),
            _ => None,
        }
    }

    /// From EC2's `InstanceLifecycle`: absent on an on-demand VM; `scheduled` and
    /// `capacity-block` are bought ahead and never taken back, so they count as on-demand.
    pub fn of_lifecycle(lifecycle: Option<&str>) -> Self {
        match lifecycle {
            Some("spot") => Self::Spot,
            _ => Self::OnDemand,
        }
    }
}

/// What a lifecycle hook's wait ends with (its DefaultResult, or CompleteLifecycleAction's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    #[serde(rename = "CONTINUE")]
    Continue,
    #[serde(rename = "ABANDON")]
    Abandon,
}

impl Outcome {
    pub fn parse(s: &str) -> Result<Self, Refusal> {
        match s {
            "CONTINUE" => Ok(Self::Continue),
            "ABANDON" => Ok(Self::Abandon),
            other => Err(Refusal::Invalid(format!(
                "The lifecycle action result '{other}' is not valid: give CONTINUE or ABANDON."
            ))),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Continue => "CONTINUE",
            Self::Abandon => "ABANDON",
        }
    }
}

/// One hook an instance waits on. Each wait carries what it needs (heartbeat, default), so a
/// hook changed or deleted meanwhile does not change a wait already begun, except that a deleted
/// hook's waits end (see `outcome`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wait {
    pub hook: String,
    pub deadline_ms: i64,
    pub heartbeat_ms: i64,
    /// When the wait ends whatever its heartbeats: its hook's GlobalTimeout from its start (none
    /// on records written before it was kept, and for a drain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_deadline_ms: Option<i64>,
    pub default_result: Outcome,
    /// CompleteLifecycleAction's answer, once given.
    pub result: Option<Outcome>,
    /// The LifecycleActionToken this wait answers to, given when the instance starts waiting
    /// (`phantom_rules::round::record`); none on records written before tokens were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// The wait of a leaving VM deregistered from its load balancers, for their drain time: no hook
/// of a user's (a hook's name cannot hold `:`), and it ends by its deadline alone.
pub const DRAIN: &str = "phantom:deregistration";

impl Wait {
    /// The drain's wait, not a hook's.
    pub fn is_drain(&self) -> bool {
        self.hook == DRAIN
    }
}

impl Member {
    /// Leaving while its load balancers drain it, before its termination hooks hold it: AWS's
    /// `Terminating` (deregistered first, then `Terminating:Wait`).
    pub fn draining(&self) -> bool {
        self.lifecycle == Lifecycle::TerminatingWait
            && !self.waits.is_empty()
            && self.waits.iter().all(Wait::is_drain)
    }
}

/// A VM with Phantom's tags, as the cloud shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tagged {
    pub seen: Seen,
    /// The owner's, group's name and id tags as the answer shows them; None on a VM that
    /// carries no such tag.
    pub owner: Option<String>,
    pub group: Option<String>,
    pub group_id: Option<String>,
    /// Its addresses, where it has them (a probe calls one: `phantom_rules::probe`).
    pub private_ip: Option<String>,
    pub public_ip: Option<String>,
}

impl Tagged {
    /// Whether the answer shows it with the owner's tag (and the group's id, if one is asked).
    /// EC2's tag filters are eventually consistent: a VM untagged a moment ago (detached) may
    /// still match them, showing the tags it has now.
    pub fn carries(&self, owner: &str, group_id: Option<&str>) -> bool {
        self.owner.as_deref() == Some(owner)
            && group_id.is_none_or(|id| self.group_id.as_deref() == Some(id))
    }
}

/// What a VM was launched with, as its cloud describes it: a launch configuration made from an
/// instance (InstanceId) copies these, as AWS's does (its block devices come from the image).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchedWith {
    pub image_id: String,
    pub instance_type: String,
    pub key_name: Option<String>,
    /// Security group ids.
    pub security_groups: Vec<String>,
    pub kernel_id: Option<String>,
    pub ramdisk_id: Option<String>,
    /// Detailed monitoring on.
    pub monitoring: bool,
    pub ebs_optimized: bool,
    /// The instance profile's ARN.
    pub iam_instance_profile: Option<String>,
    /// `default`, `dedicated` or `host`.
    pub tenancy: Option<String>,
    pub zone: String,
    pub subnet: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::Lifecycle::{self, *};

    #[test]
    fn every_lifecycle_is_stored_and_read_back_by_its_aws_name() {
        let all = [
            Pending,
            PendingWait,
            InService,
            TerminatingWait,
            Terminating,
            TerminatingRetained,
            Standby,
            Attaching,
            Detaching,
            WarmedPending,
            WarmedPendingWait,
            WarmedStopped,
            WarmedRunning,
            WarmedHibernated,
            WarmedTerminatingWait,
            WarmedTerminating,
        ];
        for l in all {
            assert_eq!(Lifecycle::parse(l.as_str()), Some(l), "{l:?}");
            assert_eq!(l.is_warm(), l.as_str().starts_with("Warmed:"), "{l:?}");
        }
        assert_eq!(Lifecycle::parse("Warmed:Frozen"), None);
    }
}

#[cfg(test)]
mod tagged_tests {
    use super::*;

    fn shown(owner: Option<&str>, group_id: Option<&str>) -> Tagged {
        Tagged {
            seen: Seen {
                id: "i-1".into(),
                state: CloudState::Running,
                zone: "a".into(),
                launched_ms: 0,
                instance_type: "t2.micro".into(),
                market: Market::OnDemand,
                pool: false,
            },
            owner: owner.map(str::to_string),
            group: None,
            group_id: group_id.map(str::to_string),
            private_ip: None,
            public_ip: None,
        }
    }

    #[test]
    fn a_vm_is_the_owners_and_the_groups_only_as_its_answer_shows_it() {
        assert!(shown(Some("u"), Some("g1")).carries("u", Some("g1")));
        assert!(shown(Some("u"), None).carries("u", None));
        // Untagged since the filter matched it (detached), or moved to another group of theirs.
        assert!(!shown(None, None).carries("u", None));
        assert!(!shown(Some("v"), Some("g1")).carries("u", Some("g1")));
        assert!(!shown(Some("u"), Some("g2")).carries("u", Some("g1")));
        assert!(!shown(Some("u"), None).carries("u", Some("g1")));
    }
}
