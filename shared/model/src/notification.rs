//! Notifications, typed: what a group tells its SNS topics (PutNotificationConfiguration), and a
//! message on its way to a topic or queue (the outbox the provisioner writes with the transition
//! it tells of, then sends).

use serde::{Deserialize, Serialize};

/// AWS's notification types (DescribeAutoScalingNotificationTypes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum NotificationType {
    #[serde(rename = "autoscaling:EC2_INSTANCE_LAUNCH")]
    Launch,
    #[serde(rename = "autoscaling:EC2_INSTANCE_LAUNCH_ERROR")]
    LaunchError,
    #[serde(rename = "autoscaling:EC2_INSTANCE_TERMINATE")]
    Terminate,
    #[serde(rename = "autoscaling:EC2_INSTANCE_TERMINATE_ERROR")]
    TerminateError,
    #[serde(rename = "autoscaling:TEST_NOTIFICATION")]
    Test,
}

impl NotificationType {
    pub const ALL: [Self; 5] = [
        Self::Launch,
        Self::LaunchError,
        Self::Terminate,
        Self::TerminateError,
        Self::Test,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Launch => "autoscaling:EC2_INSTANCE_LAUNCH",
            Self::LaunchError => "autoscaling:EC2_INSTANCE_LAUNCH_ERROR",
            Self::Terminate => "autoscaling:EC2_INSTANCE_TERMINATE",
            Self::TerminateError => "autoscaling:EC2_INSTANCE_TERMINATE_ERROR",
            Self::Test => "autoscaling:TEST_NOTIFICATION",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// One topic a group tells, and of what (kept on the group's settings, `PhantomNotifications`;
/// DescribeNotificationConfigurations lists it as one row per type, as AWS does).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NotificationConfiguration {
    #[serde(rename = "TopicARN")]
    pub topic_arn: String,
    pub notification_types: Vec<NotificationType>,
}

/// A message to send: written in the same store write as the transition it tells of, sent after,
/// then deleted. `id` keeps it apart from the group's other messages; the body carries AWS's own
/// ids (RequestId, ActivityId, LifecycleActionToken), the same if a crash makes it go twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Unique; a recorded notice's sorts by when it was written (`round::record`).
    pub id: String,
    /// When it was made (Unix ms): the store forgets one that could not be sent for a day.
    pub at_ms: i64,
    /// An SNS topic's or SQS queue's ARN.
    pub target: String,
    /// SNS's Subject (AWS gives one for a group's events; none for a lifecycle hook's).
    pub subject: Option<String>,
    /// The JSON document AWS sends.
    pub body: String,
}

/// Where an instance comes from and goes to, in AWS's words (a notification's or lifecycle
/// message's `Origin` and `Destination`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passage {
    /// Launched into the group, or leaving it.
    Group,
    /// Launched into the warm pool.
    IntoPool,
    /// From the warm pool: into the group, or terminated.
    FromPool,
}
