//! CloudWatch's metrics as an account sees them at Phantom's endpoint: what is stored of a
//! published datapoint, and the metric actions' inputs and answers in botocore's `cloudwatch`
//! shapes (read from the decoded request as `request.rs`'s are).

use serde::{Deserialize, Serialize};

/// A dimension of a metric (the shape `Dimension`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Dimension {
    pub name: String,
    pub value: String,
}

/// A metric: its namespace, name and dimensions, the dimensions sorted by name (CloudWatch takes
/// the same set in any order as one metric).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MetricId {
    pub namespace: String,
    pub name: String,
    pub dimensions: Vec<Dimension>,
}

impl MetricId {
    pub fn new(namespace: &str, name: &str, dimensions: &[Dimension]) -> Self {
        let mut dimensions = dimensions.to_vec();
        dimensions.sort();
        Self {
            namespace: namespace.to_string(),
            name: name.to_string(),
            dimensions,
        }
    }

    /// As the shape `Metric` renders it.
    pub fn to_metric(&self) -> Metric {
        Metric {
            namespace: Some(self.namespace.clone()),
            metric_name: Some(self.name.clone()),
            dimensions: self.dimensions.clone(),
        }
    }
}

/// What datapoints say of one moment: CloudWatch's statistic set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub count: f64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    pub fn one(value: f64) -> Self {
        Self {
            count: 1.0,
            sum: value,
            min: value,
            max: value,
        }
    }

    /// Both sets as one.
    pub fn merge(self, o: Stats) -> Self {
        Self {
            count: self.count + o.count,
            sum: self.sum + o.sum,
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// A published datapoint as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Datum {
    pub metric: MetricId,
    /// Unix ms, as published (or when it was received).
    pub at_ms: i64,
    /// One of the model's `StandardUnit`s; `None` stands for CloudWatch's `None`.
    pub unit: Option<String>,
    pub stats: Stats,
    /// Published with StorageResolution 1 (a second's resolution), not 60.
    pub high_resolution: bool,
}

// Inputs.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutMetricData {
    pub namespace: String,
    #[serde(default)]
    pub metric_data: Vec<MetricDatum>,
    /// The CloudWatch agent's newer form: the same data, each batch with the entity (a service,
    /// a host) it is about. Phantom keeps the data; the entities are for CloudWatch's
    /// "Explore related", which Phantom does not have.
    #[serde(default)]
    pub entity_metric_data: Vec<EntityMetricData>,
    pub strict_entity_validation: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct EntityMetricData {
    #[serde(default)]
    pub metric_data: Vec<MetricDatum>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricDatum {
    pub metric_name: String,
    #[serde(default)]
    pub dimensions: Vec<Dimension>,
    pub timestamp: Option<String>,
    pub value: Option<f64>,
    pub statistic_values: Option<StatisticSet>,
    pub values: Option<Vec<f64>>,
    pub counts: Option<Vec<f64>>,
    pub unit: Option<String>,
    pub storage_resolution: Option<i64>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StatisticSet {
    pub sample_count: f64,
    pub sum: f64,
    pub minimum: f64,
    pub maximum: f64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListMetrics {
    pub namespace: Option<String>,
    pub metric_name: Option<String>,
    #[serde(default)]
    pub dimensions: Vec<DimensionFilter>,
    pub next_token: Option<String>,
    /// `PT3H`, the only value the model allows.
    pub recently_active: Option<String>,
    pub include_linked_accounts: Option<bool>,
    pub owning_account: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DimensionFilter {
    pub name: String,
    pub value: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetMetricStatistics {
    pub namespace: String,
    pub metric_name: String,
    #[serde(default)]
    pub dimensions: Vec<Dimension>,
    pub start_time: String,
    pub end_time: String,
    pub period: i64,
    #[serde(default)]
    pub statistics: Vec<String>,
    #[serde(default)]
    pub extended_statistics: Vec<String>,
    pub unit: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetMetricData {
    pub metric_data_queries: Vec<MetricDataQuery>,
    pub start_time: String,
    pub end_time: String,
    pub next_token: Option<String>,
    pub scan_by: Option<String>,
    pub max_datapoints: Option<i64>,
    pub label_options: Option<LabelOptions>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LabelOptions {
    pub timezone: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricDataQuery {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_stat: Option<MetricStat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_data: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricStat {
    pub metric: Metric,
    pub period: i64,
    pub stat: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// The shape `Metric` (every member optional in the model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Metric {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_name: Option<String>,
    #[serde(default)]
    pub dimensions: Vec<Dimension>,
}

// Answers.

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListMetricsOutput {
    pub metrics: Vec<Metric>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetMetricStatisticsOutput {
    pub label: String,
    pub datapoints: Vec<Datapoint>,
}

/// The shape `Datapoint`: only the statistics asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Datapoint {
    pub timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_count: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub average: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    pub unit: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetMetricDataOutput {
    pub metric_data_results: Vec<MetricDataResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
    pub messages: Vec<MessageData>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricDataResult {
    pub id: String,
    pub label: String,
    pub timestamps: Vec<String>,
    pub values: Vec<f64>,
    /// `Complete`, `PartialData` or `InternalError`.
    pub status_code: String,
    pub messages: Vec<MessageData>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MessageData {
    pub code: String,
    pub value: String,
}

// Alarms.

/// The shape `MetricAlarm`: an alarm as PutMetricAlarm keeps it and DescribeAlarms shows it, its
/// state with it. A member not sent is absent (Terraform and Ansible read back what they sent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricAlarm {
    pub alarm_name: String,
    pub alarm_arn: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alarm_description: Option<String>,
    pub alarm_configuration_updated_timestamp: String,
    pub actions_enabled: bool,
    #[serde(rename = "OKActions")]
    pub ok_actions: Vec<String>,
    pub alarm_actions: Vec<String>,
    pub insufficient_data_actions: Vec<String>,
    pub state_value: String,
    pub state_reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_reason_data: Option<String>,
    pub state_updated_timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statistic: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extended_statistic: Option<String>,
    pub dimensions: Vec<Dimension>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    pub evaluation_periods: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datapoints_to_alarm: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    pub comparison_operator: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub treat_missing_data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evaluate_low_sample_count_percentile: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricDataQuery>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold_metric_id: Option<String>,
    pub state_transitioned_timestamp: String,
}

/// An alarm as the store keeps it: the alarm, its tags, and its version (every write is a
/// compare-and-set on it).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAlarm {
    pub alarm: MetricAlarm,
    pub tags: Vec<Tag>,
    /// 0: not stored yet.
    pub version: i64,
    /// When its actions on Auto Scaling policies last ran (Unix ms): while it stays in ALARM they
    /// run again each minute, as CloudWatch's do.
    pub acted_ms: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Tag {
    pub key: String,
    pub value: String,
}

/// The shape `AlarmHistoryItem`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AlarmHistoryItem {
    pub alarm_name: String,
    pub alarm_type: String,
    pub timestamp: String,
    /// `ConfigurationUpdate`, `StateUpdate` or `Action`.
    pub history_item_type: String,
    pub history_summary: String,
    pub history_data: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutMetricAlarm {
    pub alarm_name: String,
    pub alarm_description: Option<String>,
    pub actions_enabled: Option<bool>,
    #[serde(default, rename = "OKActions")]
    pub ok_actions: Vec<String>,
    #[serde(default)]
    pub alarm_actions: Vec<String>,
    #[serde(default)]
    pub insufficient_data_actions: Vec<String>,
    pub metric_name: Option<String>,
    pub namespace: Option<String>,
    pub statistic: Option<String>,
    pub extended_statistic: Option<String>,
    #[serde(default)]
    pub dimensions: Vec<Dimension>,
    pub period: Option<i64>,
    pub unit: Option<String>,
    pub evaluation_periods: Option<i64>,
    pub datapoints_to_alarm: Option<i64>,
    pub threshold: Option<f64>,
    pub comparison_operator: Option<String>,
    pub treat_missing_data: Option<String>,
    pub evaluate_low_sample_count_percentile: Option<String>,
    #[serde(default)]
    pub metrics: Vec<MetricDataQuery>,
    #[serde(default)]
    pub tags: Vec<Tag>,
    pub threshold_metric_id: Option<String>,
    pub evaluation_criteria: Option<serde::de::IgnoredAny>,
    pub evaluation_interval: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAlarms {
    pub alarm_names: Option<Vec<String>>,
    pub alarm_name_prefix: Option<String>,
    pub alarm_types: Option<Vec<String>>,
    pub children_of_alarm_name: Option<String>,
    pub parents_of_alarm_name: Option<String>,
    pub state_value: Option<String>,
    pub action_prefix: Option<String>,
    pub max_records: Option<i64>,
    pub next_token: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAlarmsOutput {
    /// Always empty: composite alarms are not offered.
    pub composite_alarms: Vec<CompositeAlarm>,
    pub metric_alarms: Vec<MetricAlarm>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

/// The shape `CompositeAlarm`, of which Phantom has none (DescribeAlarms lists it empty).
#[derive(Debug, Serialize)]
pub struct CompositeAlarm {}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAlarmsForMetric {
    pub metric_name: String,
    pub namespace: String,
    pub statistic: Option<String>,
    pub extended_statistic: Option<String>,
    #[serde(default)]
    pub dimensions: Vec<Dimension>,
    pub period: Option<i64>,
    pub unit: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAlarmsForMetricOutput {
    pub metric_alarms: Vec<MetricAlarm>,
}

/// DeleteAlarms, EnableAlarmActions, DisableAlarmActions.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AlarmNames {
    pub alarm_names: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SetAlarmState {
    pub alarm_name: String,
    pub state_value: String,
    pub state_reason: String,
    pub state_reason_data: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAlarmHistory {
    pub alarm_name: Option<String>,
    pub alarm_contributor_id: Option<String>,
    pub alarm_types: Option<Vec<String>>,
    pub history_item_type: Option<String>,
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    pub max_records: Option<i64>,
    pub next_token: Option<String>,
    pub scan_by: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAlarmHistoryOutput {
    pub alarm_history_items: Vec<AlarmHistoryItem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TagResource {
    #[serde(rename = "ResourceARN")]
    pub resource_arn: String,
    pub tags: Vec<Tag>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UntagResource {
    #[serde(rename = "ResourceARN")]
    pub resource_arn: String,
    pub tag_keys: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListTagsForResource {
    #[serde(rename = "ResourceARN")]
    pub resource_arn: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListTagsForResourceOutput {
    pub tags: Vec<Tag>,
}
