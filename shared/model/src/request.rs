//! What each action is asked: its input as botocore's input shape names the members, read from
//! the decoded Query request (`query::input`). The decoder has already checked the wire shape
//! and the required members, so a required member is a plain field and an optional one an
//! `Option` (absent: `None`, never a default). A list is a plain `Vec` (absent: empty) only where
//! AWS reads an absent list as an empty one. A member Phantom reads only to refuse is kept as
//! whatever tells whether it was given.

use super::group::{LaunchTemplateSpecification, MixedInstancesPolicy, Step};
use super::launch_config::{BlockDeviceMapping, InstanceMonitoring, MetadataOptions};
use super::refresh::Held;
use super::tracking::TargetTrackingRequest;
use serde::de::IgnoredAny;
use serde::Deserialize;

/// A request with no members Phantom reads (the catalogues).
#[derive(Debug, Default, Deserialize)]
pub struct Nothing {}

/// The paging members of a Describe action.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Paging {
    pub max_records: Option<i64>,
    pub next_token: Option<String>,
}

// Launch configurations.

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateLaunchConfiguration {
    pub launch_configuration_name: String,
    pub image_id: Option<String>,
    pub instance_type: Option<String>,
    pub instance_id: Option<String>,
    pub key_name: Option<String>,
    #[serde(default)]
    pub security_groups: Vec<String>,
    pub user_data: Option<String>,
    #[serde(rename = "ClassicLinkVPCId")]
    pub classic_link_vpc_id: Option<String>,
    #[serde(default, rename = "ClassicLinkVPCSecurityGroups")]
    pub classic_link_vpc_security_groups: Vec<String>,
    pub kernel_id: Option<String>,
    pub ramdisk_id: Option<String>,
    #[serde(default)]
    pub block_device_mappings: Vec<BlockDeviceMapping>,
    pub instance_monitoring: Option<InstanceMonitoring>,
    pub spot_price: Option<String>,
    pub iam_instance_profile: Option<String>,
    pub ebs_optimized: Option<bool>,
    pub associate_public_ip_address: Option<bool>,
    pub placement_tenancy: Option<String>,
    pub metadata_options: Option<MetadataOptions>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteLaunchConfiguration {
    pub launch_configuration_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeLaunchConfigurations {
    pub launch_configuration_names: Option<Vec<String>>,
    #[serde(flatten)]
    pub paging: Paging,
}

// Groups.

/// The settings CreateAutoScalingGroup and UpdateAutoScalingGroup both take.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GroupSettings {
    pub launch_configuration_name: Option<String>,
    pub launch_template: Option<LaunchTemplateSpecification>,
    pub mixed_instances_policy: Option<MixedInstancesPolicy>,
    pub default_cooldown: Option<i64>,
    pub availability_zones: Option<Vec<String>>,
    pub health_check_type: Option<String>,
    pub health_check_grace_period: Option<i64>,
    #[serde(rename = "VPCZoneIdentifier")]
    pub vpc_zone_identifier: Option<String>,
    pub termination_policies: Option<Vec<String>>,
    pub new_instances_protected_from_scale_in: Option<bool>,
    pub max_instance_lifetime: Option<i64>,
    pub context: Option<String>,
    pub desired_capacity_type: Option<String>,
    pub placement_group: Option<String>,
    pub availability_zone_distribution: Option<crate::group::AvailabilityZoneDistribution>,
    /// Named as the group's cloud names them (`group::name_zone_ids`) before the rules see it.
    pub availability_zone_ids: Option<Vec<String>>,
    // Read only to be refused (`group::REFUSED`).
    #[serde(rename = "ServiceLinkedRoleARN")]
    pub service_linked_role_arn: Option<String>,
    pub capacity_rebalance: Option<bool>,
    pub default_instance_warmup: Option<i64>,
    pub instance_maintenance_policy: Option<MaintenancePolicyAsked>,

    pub availability_zone_impairment_policy: Option<IgnoredAny>,
    pub skip_zonal_shift_validation: Option<bool>,
    pub capacity_reservation_specification: Option<crate::group::CapacityReservationSpecification>,
    pub instance_lifecycle_policy: Option<crate::group::InstanceLifecyclePolicy>,
    pub deletion_protection: Option<crate::group::DeletionProtection>,
}

/// An InstanceMaintenancePolicy as asked: both members are needed, -1 in both takes it off.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MaintenancePolicyAsked {
    pub min_healthy_percentage: Option<i64>,
    pub max_healthy_percentage: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateAutoScalingGroup {
    pub auto_scaling_group_name: String,
    pub min_size: i64,
    pub max_size: i64,
    pub desired_capacity: Option<i64>,
    #[serde(default)]
    pub tags: Vec<Tag>,
    #[serde(default)]
    pub lifecycle_hook_specification_list: Vec<PutLifecycleHook>,
    // Read only to be refused.
    pub instance_id: Option<String>,
    #[serde(default)]
    pub load_balancer_names: Vec<String>,
    #[serde(default, rename = "TargetGroupARNs")]
    pub target_group_arns: Vec<String>,
    #[serde(default)]
    pub traffic_sources: Vec<super::group::TrafficSource>,
    #[serde(flatten)]
    pub settings: GroupSettings,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateAutoScalingGroup {
    pub auto_scaling_group_name: String,
    pub min_size: Option<i64>,
    pub max_size: Option<i64>,
    pub desired_capacity: Option<i64>,
    #[serde(flatten)]
    pub settings: GroupSettings,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteAutoScalingGroup {
    pub auto_scaling_group_name: String,
    pub force_delete: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAutoScalingGroups {
    pub auto_scaling_group_names: Option<Vec<String>>,
    pub include_instances: Option<bool>,
    #[serde(default)]
    pub filters: Vec<Filter>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SetDesiredCapacity {
    pub auto_scaling_group_name: String,
    pub desired_capacity: i64,
    pub honor_cooldown: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LaunchInstances {
    pub auto_scaling_group_name: String,
    pub requested_capacity: i64,
    pub client_token: String,
    pub availability_zones: Option<Vec<String>>,
    pub availability_zone_ids: Option<Vec<String>>,
    pub subnet_ids: Option<Vec<String>>,
    /// `none` (AWS's default) or `retry-with-group-configuration`.
    pub retry_strategy: Option<String>,
}

/// A filter of DescribeAutoScalingGroups, DescribeTags or DescribeScalingActivities.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Filter {
    pub name: Option<String>,
    #[serde(default)]
    pub values: Vec<String>,
}

/// A tag as CreateAutoScalingGroup, CreateOrUpdateTags and DeleteTags take it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Tag {
    pub key: String,
    pub resource_id: Option<String>,
    pub resource_type: Option<String>,
    pub value: Option<String>,
    pub propagate_at_launch: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Tags {
    pub tags: Vec<Tag>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeTags {
    #[serde(default)]
    pub filters: Vec<Filter>,
    #[serde(flatten)]
    pub paging: Paging,
}

// Activities and instances.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeScalingActivities {
    pub activity_ids: Option<Vec<String>>,
    pub auto_scaling_group_name: Option<String>,
    pub include_deleted_groups: Option<bool>,
    #[serde(default)]
    pub filters: Vec<Filter>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAutoScalingInstances {
    pub instance_ids: Option<Vec<String>>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TerminateInstanceInAutoScalingGroup {
    pub instance_id: String,
    pub should_decrement_desired_capacity: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SetInstanceHealth {
    pub instance_id: String,
    pub health_status: String,
    pub should_respect_grace_period: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SetInstanceProtection {
    pub auto_scaling_group_name: String,
    pub instance_ids: Vec<String>,
    pub protected_from_scale_in: bool,
}

/// AttachInstances and ExitStandby: instances coming (back) into service.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstancesJoining {
    pub auto_scaling_group_name: String,
    #[serde(default)]
    pub instance_ids: Vec<String>,
}

/// DetachInstances and EnterStandby: instances going out of service.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstancesLeaving {
    pub auto_scaling_group_name: String,
    #[serde(default)]
    pub instance_ids: Vec<String>,
    pub should_decrement_desired_capacity: bool,
}

// Processes and metrics.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ScalingProcesses {
    pub auto_scaling_group_name: String,
    pub scaling_processes: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct EnableMetricsCollection {
    pub auto_scaling_group_name: String,
    pub metrics: Option<Vec<String>>,
    pub granularity: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DisableMetricsCollection {
    pub auto_scaling_group_name: String,
    pub metrics: Option<Vec<String>>,
}

// Lifecycle hooks.

/// PutLifecycleHook's input, and a LifecycleHookSpecification of CreateAutoScalingGroup (which
/// has no group name: the group's own).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutLifecycleHook {
    pub lifecycle_hook_name: String,
    pub auto_scaling_group_name: Option<String>,
    pub lifecycle_transition: Option<String>,
    pub heartbeat_timeout: Option<i64>,
    pub default_result: Option<String>,
    pub notification_metadata: Option<String>,
    // Read only to be refused.
    #[serde(rename = "NotificationTargetARN")]
    pub notification_target_arn: Option<String>,
    #[serde(rename = "RoleARN")]
    pub role_arn: Option<String>,
}

/// DeleteLifecycleHook.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LifecycleHookName {
    pub auto_scaling_group_name: String,
    pub lifecycle_hook_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeLifecycleHooks {
    pub auto_scaling_group_name: String,
    pub lifecycle_hook_names: Option<Vec<String>>,
}

/// CompleteLifecycleAction (with a result) and RecordLifecycleActionHeartbeat.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LifecycleAction {
    pub auto_scaling_group_name: String,
    pub lifecycle_hook_name: String,
    /// The instance, or the token of its wait (one of the two).
    pub instance_id: Option<String>,
    pub lifecycle_action_token: Option<String>,
    pub lifecycle_action_result: Option<String>,
}

// Scaling policies.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutScalingPolicy {
    pub auto_scaling_group_name: String,
    pub policy_name: String,
    pub policy_type: Option<String>,
    pub adjustment_type: Option<String>,
    pub min_adjustment_step: Option<i64>,
    pub min_adjustment_magnitude: Option<i64>,
    pub scaling_adjustment: Option<i64>,
    pub cooldown: Option<i64>,
    pub metric_aggregation_type: Option<String>,
    pub step_adjustments: Option<Vec<StepAdjustment>>,
    pub estimated_instance_warmup: Option<i64>,
    pub enabled: Option<bool>,
    pub target_tracking_configuration: Option<TargetTrackingRequest>,
    pub predictive_scaling_configuration: Option<super::predictive::PredictiveRequest>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetPredictiveScalingForecast {
    pub auto_scaling_group_name: String,
    pub policy_name: String,
    pub start_time: String,
    pub end_time: String,
}

/// A step as PutScalingPolicy takes it.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StepAdjustment {
    pub metric_interval_lower_bound: Option<f64>,
    pub metric_interval_upper_bound: Option<f64>,
    pub scaling_adjustment: i64,
}

impl From<StepAdjustment> for Step {
    fn from(s: StepAdjustment) -> Self {
        Step {
            lower: s.metric_interval_lower_bound,
            upper: s.metric_interval_upper_bound,
            adjustment: s.scaling_adjustment,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribePolicies {
    pub auto_scaling_group_name: Option<String>,
    pub policy_names: Option<Vec<String>>,
    pub policy_types: Option<Vec<String>>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeletePolicy {
    pub auto_scaling_group_name: Option<String>,
    pub policy_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ExecutePolicy {
    pub auto_scaling_group_name: Option<String>,
    pub policy_name: String,
    pub honor_cooldown: Option<bool>,
    pub metric_value: Option<f64>,
    pub breach_threshold: Option<f64>,
}

// Scheduled actions.

/// An action PutScheduledUpdateGroupAction puts, and an entry of BatchPutScheduledUpdateGroupAction
/// (whose group is the batch's). Timestamps as the wire gives them (ISO 8601).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ScheduledUpdateGroupActionRequest {
    pub scheduled_action_name: String,
    pub time: Option<String>,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub recurrence: Option<String>,
    pub min_size: Option<i64>,
    pub max_size: Option<i64>,
    pub desired_capacity: Option<i64>,
    pub time_zone: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutScheduledUpdateGroupAction {
    pub auto_scaling_group_name: String,
    #[serde(flatten)]
    pub action: ScheduledUpdateGroupActionRequest,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchPutScheduledUpdateGroupAction {
    pub auto_scaling_group_name: String,
    pub scheduled_update_group_actions: Vec<ScheduledUpdateGroupActionRequest>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeScheduledActions {
    pub auto_scaling_group_name: Option<String>,
    pub scheduled_action_names: Option<Vec<String>>,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteScheduledAction {
    pub auto_scaling_group_name: String,
    pub scheduled_action_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchDeleteScheduledAction {
    pub auto_scaling_group_name: String,
    pub scheduled_action_names: Vec<String>,
}

// Instance refresh.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StartInstanceRefresh {
    pub auto_scaling_group_name: String,
    pub strategy: Option<String>,
    pub desired_configuration: Option<super::refresh::DesiredConfiguration>,
    /// Absent: every preference at AWS's default.
    #[serde(default)]
    pub preferences: RefreshPreferences,
}

/// StartInstanceRefresh's preferences as given (botocore's `RefreshPreferences`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RefreshPreferences {
    pub min_healthy_percentage: Option<i64>,
    pub max_healthy_percentage: Option<i64>,
    pub instance_warmup: Option<i64>,
    #[serde(default)]
    pub checkpoint_percentages: Vec<i64>,
    pub checkpoint_delay: Option<i64>,
    pub skip_matching: Option<bool>,
    pub auto_rollback: Option<bool>,
    pub scale_in_protected_instances: Option<Held>,
    pub standby_instances: Option<Held>,
    pub alarm_specification: Option<super::refresh::AlarmSpecification>,
    pub bake_time: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeInstanceRefreshes {
    pub auto_scaling_group_name: String,
    pub instance_refresh_ids: Option<Vec<String>>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CancelInstanceRefresh {
    pub auto_scaling_group_name: String,
    pub wait_for_transitioning_instances: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RollbackInstanceRefresh {
    pub auto_scaling_group_name: String,
}

// Warm pools.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutWarmPool {
    pub auto_scaling_group_name: String,
    pub max_group_prepared_capacity: Option<i64>,
    pub min_size: Option<i64>,
    pub pool_state: Option<String>,
    pub instance_reuse_policy: Option<super::warm_pool::InstanceReusePolicy>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeWarmPool {
    pub auto_scaling_group_name: String,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteWarmPool {
    pub auto_scaling_group_name: String,
    pub force_delete: Option<bool>,
}

// Notifications.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutNotificationConfiguration {
    pub auto_scaling_group_name: String,
    #[serde(rename = "TopicARN")]
    pub topic_arn: String,
    pub notification_types: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteNotificationConfiguration {
    pub auto_scaling_group_name: String,
    #[serde(rename = "TopicARN")]
    pub topic_arn: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeNotificationConfigurations {
    pub auto_scaling_group_names: Option<Vec<String>>,
    #[serde(flatten)]
    pub paging: Paging,
}

// Load balancers.

/// AttachLoadBalancers, DetachLoadBalancers.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LoadBalancerNames {
    pub auto_scaling_group_name: String,
    pub load_balancer_names: Vec<String>,
}

/// AttachLoadBalancerTargetGroups, DetachLoadBalancerTargetGroups.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TargetGroupArns {
    pub auto_scaling_group_name: String,
    #[serde(rename = "TargetGroupARNs")]
    pub target_group_arns: Vec<String>,
}

/// AttachTrafficSources, DetachTrafficSources.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TrafficSourcesOfGroup {
    pub auto_scaling_group_name: String,
    pub traffic_sources: Vec<super::group::TrafficSource>,
    /// AWS's zonal shift check: nothing of Phantom's to skip.
    pub skip_zonal_shift_validation: Option<bool>,
}

/// DescribeLoadBalancers, DescribeLoadBalancerTargetGroups: one group's, a page.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GroupPage {
    pub auto_scaling_group_name: String,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeTrafficSources {
    pub auto_scaling_group_name: String,
    pub traffic_source_type: Option<String>,
    #[serde(flatten)]
    pub paging: Paging,
}
