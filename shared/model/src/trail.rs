//! The audit trail (issue 63): one event for each change an account's identities asked for, and
//! for each request a policy refused, as CloudTrail records them; and LookupEvents' input and
//! answer in botocore's `cloudtrail` shapes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A recorded request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrailEvent {
    pub event_id: String,
    /// When it was answered (Unix ms).
    pub at_ms: i64,
    /// `autoscaling.amazonaws.com`, `iam.amazonaws.com`, ...
    pub event_source: String,
    pub event_name: String,
    pub region: String,
    pub source_ip: Option<String>,
    pub user_agent: Option<String>,
    pub who: Who,
    /// The request's parameters, secrets replaced (`phantom_rules::trail::redact`).
    pub request_parameters: Value,
    /// Its refusal, if it was refused.
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    pub request_id: String,
    pub read_only: bool,
    pub resources: Vec<TrailResource>,
}

/// Who asked: CloudTrail's `userIdentity`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Who {
    /// `Root` or `IAMUser`.
    pub kind: String,
    pub principal_id: String,
    pub arn: String,
    pub account_id: String,
    pub access_key_id: Option<String>,
    /// The IAM user's name (None: the root).
    pub user_name: Option<String>,
    /// Signed in a session (GetSessionToken's key).
    pub in_session: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrailResource {
    /// `AWS::AutoScaling::AutoScalingGroup`, ...
    pub kind: String,
    pub name: String,
}

// LookupEvents.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LookupEvents {
    #[serde(default)]
    pub lookup_attributes: Vec<LookupAttribute>,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub event_category: Option<String>,
    pub max_results: Option<i64>,
    pub next_token: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LookupAttribute {
    pub attribute_key: String,
    pub attribute_value: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LookupEventsResponse {
    pub events: Vec<Event>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Event {
    pub event_id: String,
    pub event_name: String,
    pub read_only: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_key_id: Option<String>,
    pub event_time: String,
    pub event_source: String,
    pub username: String,
    pub resources: Vec<Resource>,
    pub cloud_trail_event: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Resource {
    pub resource_type: String,
    pub resource_name: String,
}
