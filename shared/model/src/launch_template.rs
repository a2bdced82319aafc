//! What a group launches from besides a launch configuration: a launch template and its version
//! (as a group, a refresh and an instance name it), or a mixed instances policy.

use serde::{Deserialize, Serialize};

/// A launch template and its version (botocore's `LaunchTemplateSpecification`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LaunchTemplateSpecification {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MixedInstancesPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template: Option<MixedLaunchTemplate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances_distribution: Option<InstancesDistribution>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MixedLaunchTemplate {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template_specification: Option<LaunchTemplateSpecification>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<Override>,
}

/// One instance type to try, or the attributes of those to try (checked by `template::of`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Override {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// The capacity units a VM of this type counts for (`phantom_rules::weights`), as AWS's model
    /// gives it: a string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weighted_capacity: Option<String>,
    /// The template VMs of this type launch from, instead of the group's (on the group's
    /// template's cloud).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template_specification: Option<LaunchTemplateSpecification>,
    /// The attributes of the instance types to run (attribute-based instance type selection),
    /// instead of an InstanceType.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_requirements: Option<super::instance_type::InstanceRequirements>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstancesDistribution {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_demand_allocation_strategy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_demand_base_capacity: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_demand_percentage_above_base_capacity: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_allocation_strategy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_instance_pools: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_max_price: Option<String>,
}
