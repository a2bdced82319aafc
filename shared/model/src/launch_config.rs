//! A launch configuration as the store keeps it: botocore's `LaunchConfiguration` shape, which is
//! what DescribeLaunchConfigurations returns and what the provisioner launches from. Decoded once
//! where the store reads an item: a member that is missing or of the wrong type is an error
//! there, never a default.

use serde::{Deserialize, Serialize};

/// A stored launch configuration and the cloud its VMs run on.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchConfig {
    pub name: String,
    pub cloud: String,
    pub settings: LaunchConfiguration,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LaunchConfiguration {
    pub launch_configuration_name: String,
    #[serde(rename = "LaunchConfigurationARN")]
    pub arn: String,
    pub image_id: String,
    pub instance_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_name: Option<String>,
    /// Ids (`sg-…`) or names.
    pub security_groups: Vec<String>,
    /// Always empty: EC2-Classic is gone, so ClassicLink is refused.
    #[serde(rename = "ClassicLinkVPCSecurityGroups")]
    pub classic_link_vpc_security_groups: Vec<String>,
    /// Base64, as the wire carries it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramdisk_id: Option<String>,
    pub block_device_mappings: Vec<BlockDeviceMapping>,
    pub instance_monitoring: InstanceMonitoring,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_price: Option<String>,
    /// A profile's name or ARN.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iam_instance_profile: Option<String>,
    pub created_time: String,
    pub ebs_optimized: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub associate_public_ip_address: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_tenancy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata_options: Option<MetadataOptions>,
}

impl LaunchConfiguration {
    /// One with AWS's defaults for every member but these.
    pub fn new(name: &str, arn: &str, image_id: &str, instance_type: &str, created: &str) -> Self {
        LaunchConfiguration {
            launch_configuration_name: name.to_string(),
            arn: arn.to_string(),
            image_id: image_id.to_string(),
            instance_type: instance_type.to_string(),
            key_name: None,
            security_groups: Vec::new(),
            classic_link_vpc_security_groups: Vec::new(),
            user_data: None,
            kernel_id: None,
            ramdisk_id: None,
            block_device_mappings: Vec::new(),
            instance_monitoring: InstanceMonitoring { enabled: true },
            spot_price: None,
            iam_instance_profile: None,
            created_time: created.to_string(),
            ebs_optimized: false,
            associate_public_ip_address: None,
            placement_tenancy: None,
            metadata_options: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceMonitoring {
    pub enabled: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetadataOptions {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_tokens: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_put_response_hop_limit: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_endpoint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BlockDeviceMapping {
    pub device_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub virtual_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ebs: Option<Ebs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_device: Option<bool>,
}

/// The numbers are 32-bit, as in botocore's model (the decoder refuses others).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Ebs {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume_size: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete_on_termination: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput: Option<i32>,
}
