//! A scaling activity as stored: its group, when it began (the store's key), and AWS's `Activity`
//! document, typed. Decoded once where the store reads an item: a member that is missing or of
//! the wrong type is an error there, never a default.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    pub group: String,
    /// Unix ms; activities are listed newest first.
    pub start_ms: i64,
    pub doc: ScalingActivity,
    /// The event it tells the group's topics of, if any, once written (not stored: an activity
    /// read back has none).
    pub tells: Option<Told>,
}

/// An instance event a scaling activity stands for, as a group's notifications name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    pub kind: super::notification::NotificationType,
    /// Into or out of the warm pool, or the group's own.
    pub passage: super::notification::Passage,
    /// The instance, or empty (a launch that failed before any instance was made).
    pub instance: String,
}

/// An activity InProgress until its instance has gone (TerminateInstanceInAutoScalingGroup,
/// DetachInstances) or has moved (EnterStandby, ExitStandby): kept on the instance's record so
/// the round that sees it done can write it again, finished, under the same key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct OpenActivity {
    /// Unix ms: with the group and the id, its key in the store.
    pub start_ms: i64,
    pub doc: ScalingActivity,
}

/// botocore's `Activity`: what DescribeScalingActivities shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ScalingActivity {
    pub activity_id: String,
    pub auto_scaling_group_name: String,
    #[serde(rename = "AutoScalingGroupARN")]
    pub auto_scaling_group_arn: String,
    pub description: String,
    pub cause: String,
    pub start_time: String,
    /// None while it is InProgress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<String>,
    pub status_code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    pub progress: i64,
    /// A JSON document in a string on the wire, as AWS gives it.
    #[serde(with = "in_a_string")]
    pub details: Details,
}

impl ScalingActivity {
    /// Its StartTime in Unix ms, if it can be read.
    pub fn start_ms(&self) -> Option<i64> {
        crate::time::parse_timestamp(&self.start_time)
            .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
    }
}

/// What an activity's `Details` say: the subnet and zone of an instance, the cloud of a group
/// across clouds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Details {
    #[serde(rename = "Subnet ID", default, skip_serializing_if = "Option::is_none")]
    pub subnet: Option<String>,
    #[serde(rename = "Availability Zone", skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    #[serde(rename = "Cloud", skip_serializing_if = "Option::is_none")]
    pub cloud: Option<String>,
}

/// `Details` as a JSON document inside a string.
mod in_a_string {
    use super::Details;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Details, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&serde_json::to_string(d).expect("details serialise"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Details, D::Error> {
        let text = String::deserialize(d)?;
        serde_json::from_str(&text).map_err(serde::de::Error::custom)
    }
}
