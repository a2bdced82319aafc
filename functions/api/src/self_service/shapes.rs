//! Phantom's own API's requests and answers, as Rust types: the JSON bodies are read into these
//! (`read`, a ValidationError naming the member that cannot be read) and written from them. A
//! required name is a `Name`: present, a string, and not empty.

use serde::{Deserialize, Deserializer, Serialize};
use std::ops::Deref;

/// A required member that must be a non-empty string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name(String);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.is_empty() {
            return Err(serde::de::Error::custom("must be a non-empty string"));
        }
        Ok(Self(s))
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

// Requests.

/// A request naming one cloud (DeleteCloudCredentials, DescribeCloudImages, ...).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct OfCloud {
    pub cloud: Name,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutCloudCredentials {
    pub cloud: Name,
    pub access_key_id: Name,
    pub secret_access_key: Name,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ImportKeyPair {
    pub key_name: Name,
    pub public_key_material: Name,
    /// Absent: every cloud the caller has credentials for.
    pub clouds: Option<Vec<Name>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutCloud {
    pub name: Name,
    pub endpoint: Name,
    pub region: Name,
    /// Absent: the region's first zone.
    pub zone: Option<Name>,
    /// Absent: the cloud has launch templates.
    pub launch_templates: Option<bool>,
    /// Absent: the cloud has load balancers.
    pub load_balancers: Option<bool>,
    /// Absent: the cloud does not send its VMs' state changes to the deployment's event bus.
    pub events: Option<bool>,
}

/// The deployment's metric source (PutMetricSource): Prometheus's URL, the label of its series
/// that holds a VM's instance id, and a bearer token or basic auth, if it needs one.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutMetricSource {
    pub url: Name,
    pub instance_label: Name,
    pub bearer_token: Option<String>,
    pub basic_auth_user: Option<String>,
    pub basic_auth_password: Option<String>,
}

/// The metric source as DescribeMetricSource shows it: never its secret.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricSourceView {
    pub url: String,
    pub instance_label: String,
    /// `none`, `bearer` or `basic`.
    pub auth: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basic_auth_user: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricSourceOf {
    /// Absent when none is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_source: Option<MetricSourceView>,
}

/// A request naming one cloud by `Name` (DeleteCloud).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Named {
    pub name: Name,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateUser {
    pub user_name: Name,
    pub admin: Option<bool>,
}

/// A request naming one user (DisableUser, RotateAccessKey, DescribeUserGroups).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct OfUser {
    pub user_name: Name,
}

/// A request naming one policy of a group (CreatePolicyWebhook, DeletePolicyWebhook).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct OfPolicy {
    pub auto_scaling_group_name: Name,
    pub policy_name: Name,
}

/// GetHeartbeatUrl: the group (by name; it need not exist yet).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct OfGroupName {
    pub auto_scaling_group_name: Name,
}

/// A group's heartbeat URL: its VMs call it with `?instance=<their id>`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct HeartbeatUrl {
    pub auto_scaling_group_name: String,
    pub url: String,
}

/// DescribePolicyWebhooks: one group's, or (absent) all the caller's.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeWebhooks {
    pub auto_scaling_group_name: Option<Name>,
}

/// PutPolicyAlarm: a step policy's alarm on the metric source.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutPolicyAlarm {
    pub auto_scaling_group_name: Name,
    pub policy_name: Name,
    /// PromQL; `$instances` is the group's VMs serving past their warm-up.
    pub expression: Name,
    pub comparison_operator: Name,
    pub threshold: f64,
    pub evaluation_periods: i64,
    /// Absent: EvaluationPeriods (all of them must breach).
    pub datapoints_to_alarm: Option<i64>,
}

/// GetPolicyMetric: a target tracking policy's metric, or a step policy alarm's, recently.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetPolicyMetric {
    pub auto_scaling_group_name: Name,
    pub policy_name: Name,
    /// How far back, in minutes (1 to 1440); absent: 60.
    pub minutes: Option<i64>,
}

/// GetGroupMetrics: a group's capacity recently, as the deployment's Prometheus scraped it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetGroupMetrics {
    pub auto_scaling_group_name: Name,
    /// How far back, in minutes (1 to 1440); absent: 180.
    pub minutes: Option<i64>,
}

/// GetOperatingMetrics: Phantom's operating figures recently (administrators).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetOperatingMetrics {
    /// How far back, in minutes (1 to 1440); absent: 60.
    pub minutes: Option<i64>,
}

// Answers.

/// An answer without members: `{}`.
#[derive(Debug, Serialize)]
pub struct Done {}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CallerIdentity {
    pub user_name: String,
    pub account: String,
    pub access_key_id: String,
    pub admin: bool,
}

/// A cloud as a user sees it, with whether they have credentials there (never the secret).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CloudOfMine {
    pub name: String,
    pub region: String,
    pub zone: String,
    pub launch_templates: bool,
    pub load_balancers: bool,
    pub has_credentials: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_key_id: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Clouds<T> {
    pub clouds: Vec<T>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Image {
    pub image_id: String,
    pub name: String,
    pub description: String,
    pub architecture: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Images {
    pub images: Vec<Image>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct KeyPair {
    pub key_name: String,
    pub key_fingerprint: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct KeyPairs {
    pub key_pairs: Vec<KeyPair>,
}

/// One cloud's outcome of ImportKeyPair: its fingerprint, or its error.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Imported {
    pub cloud: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_fingerprint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorShape>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ErrorShape {
    pub code: String,
    pub message: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Results {
    pub results: Vec<Imported>,
}

/// A cloud as an administrator sees it: whether it answers, and what Phantom runs there.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CloudOfAll {
    pub name: String,
    pub endpoint: String,
    pub region: String,
    pub zone: String,
    pub launch_templates: bool,
    pub load_balancers: bool,
    pub events: bool,
    /// Whether its EC2 API answers DescribeInstanceStatus (false once it said it has none: its
    /// VMs are judged by their state alone, until the cloud is put again).
    pub status_checks: bool,
    pub reachable: bool,
    pub groups: i64,
    pub instances: usize,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct UserView {
    pub user_name: String,
    pub account: String,
    pub access_key_id: String,
    pub created: String,
    pub admin: bool,
    pub disabled: bool,
    pub groups: i64,
    /// Its request limits (the deployment's where it has none of its own).
    pub limits: LimitsView,
}

/// A rate and a burst, as Phantom's API writes them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RateView {
    /// Requests a second, sustained.
    pub rate: f64,
    /// Requests at once.
    pub burst: f64,
}

impl RateView {
    pub fn rate(self) -> phantom_rules::throttle::Rate {
        phantom_rules::throttle::Rate {
            per_sec: self.rate,
            burst: self.burst,
        }
    }
}

/// A user's request limits: describing and changing calls, and whether they are its own.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LimitsView {
    pub describe: RateView,
    pub mutate: RateView,
    /// Set by an administrator for this user (false: the deployment's).
    pub own: bool,
}

impl LimitsView {
    pub fn of(own: Option<&phantom_rules::throttle::Limits>) -> Self {
        let l = own.unwrap_or(&phantom_rules::throttle::DEFAULT);
        let view = |r: phantom_rules::throttle::Rate| RateView {
            rate: r.per_sec,
            burst: r.burst,
        };
        Self {
            describe: view(l.describe),
            mutate: view(l.mutate),
            own: own.is_some(),
        }
    }
}

/// PutUserLimits: both classes, or neither (back to the deployment's).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutUserLimits {
    pub user_name: Name,
    pub describe: Option<RateView>,
    pub mutate: Option<RateView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AccessKey {
    pub access_key_id: String,
    pub secret_access_key: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NewUser {
    pub user: UserView,
    pub access_key: AccessKey,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Users {
    pub users: Vec<UserView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Rotated {
    pub access_key: AccessKey,
}

/// A user's group at a glance.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GroupAtAGlance {
    pub name: String,
    /// Absent for a group launched from a launch template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_configuration: Option<String>,
    pub min_size: i64,
    pub max_size: i64,
    pub desired_capacity: i64,
    pub instances: usize,
    pub in_service: usize,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Groups {
    pub groups: Vec<GroupAtAGlance>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct WebhookView {
    pub auto_scaling_group_name: String,
    pub policy_name: String,
    pub webhook_id: String,
    pub created: String,
    /// Only when it is made: the URL holds the secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NewWebhook {
    pub webhook: WebhookView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Webhooks {
    pub webhooks: Vec<WebhookView>,
}

/// A step policy's alarm as PutPolicyAlarm and DescribePolicyAlarms show it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AlarmView {
    pub auto_scaling_group_name: String,
    pub policy_name: String,
    #[serde(flatten)]
    pub alarm: phantom_model::tracking::MetricAlarm,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Alarms {
    pub alarms: Vec<AlarmView>,
}

/// A policy's metric over a recent span: the query as sent, what it is held against, and a
/// datapoint a step apart (no `Value` where the metric had none).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PolicyMetric {
    pub auto_scaling_group_name: String,
    pub policy_name: String,
    pub query: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    pub step_seconds: i64,
    pub datapoints: Vec<Datapoint>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Datapoint {
    pub timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
}

/// CreateScrapeCredential's answer: the only time the password is shown.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NewScrapeCredential {
    pub scrape_credential: ScrapeCredential,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ScrapeCredential {
    /// Prometheus's `basic_auth.username`.
    pub user_name: String,
    /// Prometheus's `basic_auth.password`.
    pub password: String,
    /// Prometheus's `metrics_path`, below the API's address.
    pub path: &'static str,
}

/// GetGroupMetrics' answer: a series for each charted metric, a datapoint a step apart.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GroupMetrics {
    pub auto_scaling_group_name: String,
    pub step_seconds: i64,
    pub series: Vec<GroupSeries>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GroupSeries {
    /// AWS's name of the metric.
    pub metric: &'static str,
    /// Whether the group has it enabled (EnableMetricsCollection); none is queried otherwise.
    pub enabled: bool,
    pub query: String,
    pub datapoints: Vec<Datapoint>,
}

/// GetOperatingMetrics' answer: a series for each figure the console charts.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct OperatingMetrics {
    pub step_seconds: i64,
    pub series: Vec<OperatingSeries>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct OperatingSeries {
    pub name: &'static str,
    pub unit: &'static str,
    pub query: &'static str,
    pub datapoints: Vec<Datapoint>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct OfGroup {
    pub auto_scaling_group_name: Name,
}

/// Each VM of a group, healthy or not and why, which Auto Scaling's shapes do not say.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceHealths {
    pub instances: Vec<InstanceHealth>,
    /// The clouds whose status checks could not be asked now, with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unasked: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceHealth {
    pub instance_id: String,
    /// `Healthy` or `Unhealthy`, as a group's `Instances` say it.
    pub health_status: &'static str,
    /// The check that failed, in the words of the activity that replaces it, and what it saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// How each VM of a group is bought, which Auto Scaling's `Instance` shape does not say.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceMarkets {
    pub instances: Vec<InstanceMarket>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceMarket {
    pub instance_id: String,
    /// EC2's words: `spot` (its InstanceLifecycle) or `on-demand`.
    pub market: &'static str,
}
