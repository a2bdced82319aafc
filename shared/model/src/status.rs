//! What a cloud says of a VM beyond its state: EC2's status checks and scheduled events, as
//! DescribeInstanceStatus answers them. `phantom_rules::health` judges them.

/// One status check's verdict (EC2's `InstanceStatusSummary.Status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatus {
    Ok,
    Impaired,
    Initializing,
    InsufficientData,
    NotApplicable,
}

impl CheckStatus {
    /// EC2's word, or None for one this code does not know.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "ok" => Self::Ok,
            "impaired" => Self::Impaired,
            "initializing" => Self::Initializing,
            "insufficient-data" => Self::InsufficientData,
            "not-applicable" => Self::NotApplicable,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Impaired => "impaired",
            Self::Initializing => "initializing",
            Self::InsufficientData => "insufficient-data",
            Self::NotApplicable => "not-applicable",
        }
    }
}

/// A status check: its verdict and, when impaired, since when (EC2's `ImpairedSince` of its
/// failed detail; None where the cloud does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    pub status: CheckStatus,
    pub impaired_since_ms: Option<i64>,
}

impl Check {
    pub const NOT_APPLICABLE: Check = Check {
        status: CheckStatus::NotApplicable,
        impaired_since_ms: None,
    };
    pub const OK: Check = Check {
        status: CheckStatus::Ok,
        impaired_since_ms: None,
    };
}

/// The kinds of scheduled event EC2 announces for a VM (`InstanceStatusEvent.Code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventCode {
    InstanceReboot,
    SystemReboot,
    SystemMaintenance,
    InstanceRetirement,
    InstanceStop,
}

impl EventCode {
    pub const ALL: [EventCode; 5] = [
        Self::InstanceReboot,
        Self::SystemReboot,
        Self::SystemMaintenance,
        Self::InstanceRetirement,
        Self::InstanceStop,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::InstanceReboot => "instance-reboot",
            Self::SystemReboot => "system-reboot",
            Self::SystemMaintenance => "system-maintenance",
            Self::InstanceRetirement => "instance-retirement",
            Self::InstanceStop => "instance-stop",
        }
    }

    /// The VM will not run on after it: replaced launch-first before it comes.
    pub fn ends_the_vm(self) -> bool {
        matches!(self, Self::InstanceRetirement | Self::InstanceStop)
    }
}

/// A scheduled event of a VM still to come (EC2 keeps completed and canceled ones listed for a
/// while, their descriptions starting `[Completed]` or `[Canceled]`: those are not kept here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledEvent {
    pub code: EventCode,
    /// The earliest it may start (Unix ms).
    pub not_before_ms: i64,
    pub description: String,
}

impl ScheduledEvent {
    /// Whether EC2's description says the event is over (done or canceled).
    pub fn is_over(description: &str) -> bool {
        description.starts_with("[Completed]") || description.starts_with("[Canceled]")
    }
}

/// One VM's statuses: the instance's own check, its host's (system), its attached EBS volumes'
/// (`AttachedEbsStatus`; not applicable where the cloud gives none), and its events to come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceStatus {
    pub id: String,
    pub instance: Check,
    pub system: Check,
    pub ebs: Check,
    pub events: Vec<ScheduledEvent>,
}

impl InstanceStatus {
    /// A VM whose checks all pass and that has nothing scheduled.
    pub fn ok(id: &str) -> Self {
        Self {
            id: id.to_string(),
            instance: Check::OK,
            system: Check::OK,
            ebs: Check::NOT_APPLICABLE,
            events: Vec::new(),
        }
    }

    /// What the pulse's fingerprint folds in: the checks that are not ok and the events to come,
    /// so that a VM turning impaired, or given an event, changes its pair's fingerprint.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for (name, c) in [("i", self.instance), ("s", self.system), ("e", self.ebs)] {
            if c.status == CheckStatus::Impaired {
                s.push_str(name);
            }
        }
        for e in &self.events {
            s.push('+');
            s.push_str(e.code.name());
        }
        s
    }
}
