//! A predictive scaling policy's configuration as PutScalingPolicy takes it and DescribePolicies
//! shows it (botocore's `PredictiveScalingConfiguration`), what ForecastAndScale set for an hour,
//! and a forecast as GetPredictiveScalingForecast answers it. The metrics are PromQL on the
//! deployment's Prometheus (`phantom_rules::predictive`).

use super::tracking::{MetricQuery, MetricQueryRequest, MetricType};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PredictiveScalingConfiguration {
    /// Exactly one, as on AWS.
    pub metric_specifications: Vec<PredictiveMetric>,
    pub mode: Mode,
    /// Seconds before the hour its capacity is put in place (absent: 300, AWS's default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduling_buffer_time: Option<i64>,
    pub max_capacity_breach_behavior: Breach,
    /// Percent over the forecast the maximum may be raised to (IncreaseMaxCapacity only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_capacity_buffer: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    ForecastOnly,
    ForecastAndScale,
}

/// What a forecast above the group's maximum does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Breach {
    HonorMaxCapacity,
    IncreaseMaxCapacity,
}

/// The load to forecast and the scaling metric its target is in: a predefined pair, or a
/// scaling metric and a load metric each predefined or a PromQL expression, and optionally the
/// capacity metric that relates them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PredictiveMetric {
    pub target_value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predefined_metric_pair_specification: Option<PredefinedPair>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predefined_scaling_metric_specification: Option<PredefinedScaling>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predefined_load_metric_specification: Option<PredefinedLoad>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customized_scaling_metric_specification: Option<Queries>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customized_load_metric_specification: Option<Queries>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customized_capacity_metric_specification: Option<Queries>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PredefinedPair {
    pub predefined_metric_type: PairType,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PredefinedScaling {
    pub predefined_metric_type: MetricType,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PredefinedLoad {
    pub predefined_metric_type: LoadType,
}

/// A metric the user writes: one PromQL expression, in AWS's metric-math field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Queries {
    pub metric_data_queries: Vec<MetricQuery>,
}

impl Queries {
    pub fn expression(&self) -> &str {
        &self
            .metric_data_queries
            .first()
            .expect("a customized metric has its one query")
            .expression
    }
}

/// A predefined pair: the group's total of a node_exporter measure is the load, its average
/// over the group's VMs the scaling metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PairType {
    #[serde(rename = "ASGCPUUtilization")]
    Cpu,
    #[serde(rename = "ASGNetworkIn")]
    NetworkIn,
    #[serde(rename = "ASGNetworkOut")]
    NetworkOut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LoadType {
    #[serde(rename = "ASGTotalCPUUtilization")]
    Cpu,
    #[serde(rename = "ASGTotalNetworkIn")]
    NetworkIn,
    #[serde(rename = "ASGTotalNetworkOut")]
    NetworkOut,
}

impl PairType {
    pub fn load(self) -> LoadType {
        match self {
            Self::Cpu => LoadType::Cpu,
            Self::NetworkIn => LoadType::NetworkIn,
            Self::NetworkOut => LoadType::NetworkOut,
        }
    }
}

/// What ForecastAndScale put in place for one hour: the capacity the forecast asks for then, a
/// floor under the group's desired capacity from the hour's start less the buffer to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Predicted {
    /// The hour's start (Unix ms).
    pub hour_ms: i64,
    /// When it took effect: the hour's start less the policy's buffer (Unix ms).
    pub from_ms: i64,
    pub capacity: i64,
}

/// PredictiveScalingConfiguration as PutScalingPolicy is asked it: enum members as text for the
/// rules to read, CloudWatch's members only to be refused.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PredictiveRequest {
    pub metric_specifications: Vec<PredictiveMetricRequest>,
    pub mode: Option<String>,
    pub scheduling_buffer_time: Option<i64>,
    pub max_capacity_breach_behavior: Option<String>,
    pub max_capacity_buffer: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PredictiveMetricRequest {
    pub target_value: f64,
    pub predefined_metric_pair_specification: Option<PredefinedRequest>,
    pub predefined_scaling_metric_specification: Option<PredefinedRequest>,
    pub predefined_load_metric_specification: Option<PredefinedRequest>,
    pub customized_scaling_metric_specification: Option<QueriesRequest>,
    pub customized_load_metric_specification: Option<QueriesRequest>,
    pub customized_capacity_metric_specification: Option<QueriesRequest>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PredefinedRequest {
    /// A name from botocore's enum (the decoder checked it), not yet one Phantom reads.
    pub predefined_metric_type: String,
    pub resource_label: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct QueriesRequest {
    pub metric_data_queries: Vec<MetricQueryRequest>,
}

/// GetPredictiveScalingForecast's answer: hourly timestamps and values.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LoadForecast {
    pub timestamps: Vec<String>,
    pub values: Vec<f64>,
    pub metric_specification: PredictiveMetric,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CapacityForecast {
    pub timestamps: Vec<String>,
    pub values: Vec<f64>,
}
