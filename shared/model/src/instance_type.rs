//! Instance types: a MixedInstancesPolicy override's `InstanceRequirements` (attribute-based
//! instance type selection, as AWS's model has them), and what a cloud says of each instance type
//! it offers (EC2's DescribeInstanceTypes).

use serde::{Deserialize, Serialize};

/// A range of whole numbers; either end may be left open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Range {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
}

/// A range of numbers with fractions; either end may be left open.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RangeF {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

/// AWS's `InstanceRequirements`: the attributes an instance type must have. The members Phantom
/// does not act on yet are read only to be refused (`phantom_rules::requirements::check`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceRequirements {
    #[serde(rename = "VCpuCount")]
    pub vcpu_count: Range,
    #[serde(rename = "MemoryMiB")]
    pub memory_mib: Range,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_manufacturers: Vec<String>,
    #[serde(rename = "MemoryGiBPerVCpu", skip_serializing_if = "Option::is_none")]
    pub memory_gib_per_vcpu: Option<RangeF>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded_instance_types: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_instance_types: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instance_generations: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bare_metal: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burstable_performance: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub require_hibernate_support: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_interface_count: Option<Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_storage: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local_storage_types: Vec<String>,
    #[serde(
        rename = "TotalLocalStorageGB",
        skip_serializing_if = "Option::is_none"
    )]
    pub total_local_storage_gb: Option<RangeF>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_ebs_bandwidth_mbps: Option<Range>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accelerator_types: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accelerator_count: Option<Range>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accelerator_manufacturers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accelerator_names: Vec<String>,
    #[serde(
        rename = "AcceleratorTotalMemoryMiB",
        skip_serializing_if = "Option::is_none"
    )]
    pub accelerator_total_memory_mib: Option<Range>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_bandwidth_gbps: Option<RangeF>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_max_price_percentage_over_lowest_price: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_spot_price_as_percentage_of_optimal_on_demand_price: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_demand_max_price_percentage_over_lowest_price: Option<i64>,
    #[serde(skip_serializing)]
    pub baseline_performance_factors: Option<serde::de::IgnoredAny>,
}

/// One accelerator of an instance type (a GPU, an FPGA, an inference chip).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accelerator {
    /// AWS's words: `gpu`, `fpga` or `inference`.
    pub kind: &'static str,
    pub count: i64,
    pub manufacturer: String,
    pub name: String,
    pub memory_mib: i64,
}

/// What a cloud says of an instance type it offers (EC2's DescribeInstanceTypes).
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceTypeInfo {
    pub name: String,
    pub vcpus: i64,
    pub memory_mib: i64,
    /// EC2's ProcessorInfo.Manufacturer (`Intel`, `AMD`, `AWS`, `Apple`), where it says.
    pub manufacturer: Option<String>,
    pub current_generation: bool,
    pub burstable: bool,
    pub bare_metal: bool,
    pub hibernation: bool,
    /// The most network interfaces it takes, where the cloud says.
    pub network_interfaces: Option<i64>,
    /// The first network card's baseline bandwidth, where the cloud says.
    pub network_gbps: Option<f64>,
    /// Instance storage: its total size (GB) and disk types (`hdd`, `ssd`); None without.
    pub local_storage: Option<(f64, Vec<String>)>,
    pub ebs_baseline_mbps: Option<i64>,
    pub accelerators: Vec<Accelerator>,
}
