//! A target tracking policy's configuration as PutScalingPolicy takes it and DescribePolicies
//! shows it (botocore's `TargetTrackingConfiguration`), and a deployment's metric source: the
//! Prometheus server whose series the policies follow (`phantom_rules::tracking`).

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

/// What a target tracking policy keeps near its target. Exactly one of the two metrics is given
/// (`phantom_rules::policy` checks it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TargetTrackingConfiguration {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predefined_metric_specification: Option<PredefinedMetric>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customized_metric_specification: Option<CustomizedMetric>,
    pub target_value: f64,
    pub disable_scale_in: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PredefinedMetric {
    pub predefined_metric_type: MetricType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_label: Option<String>,
}

/// The predefined metrics Phantom follows (ALBRequestCountPerTarget needs a load balancer, which
/// Phantom has not: it is refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MetricType {
    #[serde(rename = "ASGAverageCPUUtilization")]
    Cpu,
    #[serde(rename = "ASGAverageNetworkIn")]
    NetworkIn,
    #[serde(rename = "ASGAverageNetworkOut")]
    NetworkOut,
}

impl MetricType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cpu => "ASGAverageCPUUtilization",
            Self::NetworkIn => "ASGAverageNetworkIn",
            Self::NetworkOut => "ASGAverageNetworkOut",
        }
    }
}

/// A metric the user names: one PromQL expression, in AWS's metric-math field (`Metrics`), or a
/// CloudWatch metric its VMs or tools publish to Phantom's CloudWatch (`MetricName`,
/// `Namespace`, `Dimensions`, `Statistic`, `Unit`). What was not given is not shown: Terraform
/// and Ansible compare what they read back with what they sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CustomizedMetric {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// In the order given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<Vec<crate::cloudwatch::Dimension>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricQuery>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricQuery {
    pub id: String,
    pub expression: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub return_data: bool,
}

/// TargetTrackingConfiguration as PutScalingPolicy is asked it: the CloudWatch-only members are
/// read only to be refused.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TargetTrackingRequest {
    pub predefined_metric_specification: Option<PredefinedMetricRequest>,
    pub customized_metric_specification: Option<CustomizedMetricRequest>,
    pub target_value: f64,
    pub disable_scale_in: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PredefinedMetricRequest {
    /// A name from botocore's enum (the decoder checked it), not yet one Phantom follows.
    pub predefined_metric_type: String,
    pub resource_label: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CustomizedMetricRequest {
    pub metric_name: Option<String>,
    pub namespace: Option<String>,
    pub dimensions: Option<Vec<crate::cloudwatch::Dimension>>,
    pub statistic: Option<String>,
    pub unit: Option<String>,
    pub period: Option<IgnoredAny>,
    pub metrics: Option<Vec<MetricQueryRequest>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricQueryRequest {
    pub id: String,
    pub expression: Option<String>,
    pub metric_stat: Option<IgnoredAny>,
    pub label: Option<String>,
    pub period: Option<IgnoredAny>,
    pub return_data: Option<bool>,
}

/// A step policy's alarm of Phantom's own: a PromQL expression compared with a threshold every
/// run, in alarm when `datapoints_to_alarm` of its last `evaluation_periods` datapoints breach
/// (CloudWatch's M of N). In alarm, it runs its policy with the latest datapoint as the metric
/// value and the threshold as the breach threshold, as a CloudWatch alarm's action would.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricAlarm {
    pub alarm_name: String,
    #[serde(rename = "AlarmARN")]
    pub alarm_arn: String,
    pub expression: String,
    pub comparison_operator: Comparison,
    pub threshold: f64,
    pub evaluation_periods: i64,
    pub datapoints_to_alarm: i64,
}

/// CloudWatch's comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Comparison {
    GreaterThanOrEqualToThreshold,
    GreaterThanThreshold,
    LessThanThreshold,
    LessThanOrEqualToThreshold,
}

impl Comparison {
    pub const ALL: [Self; 4] = [
        Self::GreaterThanOrEqualToThreshold,
        Self::GreaterThanThreshold,
        Self::LessThanThreshold,
        Self::LessThanOrEqualToThreshold,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::GreaterThanOrEqualToThreshold => "GreaterThanOrEqualToThreshold",
            Self::GreaterThanThreshold => "GreaterThanThreshold",
            Self::LessThanThreshold => "LessThanThreshold",
            Self::LessThanOrEqualToThreshold => "LessThanOrEqualToThreshold",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Whether `value` breaches `threshold`.
    pub fn breaches(self, value: f64, threshold: f64) -> bool {
        match self {
            Self::GreaterThanOrEqualToThreshold => value >= threshold,
            Self::GreaterThanThreshold => value > threshold,
            Self::LessThanThreshold => value < threshold,
            Self::LessThanOrEqualToThreshold => value <= threshold,
        }
    }
}

/// The deployment's metric source: a Prometheus server, and the label of its series that holds
/// a VM's instance id (as Prometheus's EC2 service discovery gives it, relabelled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricSource {
    /// Its base URL (`http://prometheus:9090`): queries go to `<url>/api/v1/query_range`.
    pub url: String,
    pub instance_label: String,
    pub auth: Option<MetricAuth>,
}

/// How Phantom proves itself to the metric source. The secret is sealed at rest.
#[derive(Clone, PartialEq, Eq)]
pub enum MetricAuth {
    Bearer(String),
    Basic { user: String, password: String },
}

impl std::fmt::Debug for MetricAuth {
    // Never a secret in a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Bearer(_) => f.write_str("Bearer(..)"),
            Self::Basic { user, .. } => write!(f, "Basic({user}, ..)"),
        }
    }
}
