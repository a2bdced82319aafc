//! What the actions answer, in botocore's output shapes (`xml.rs` renders them by walking the
//! shape, so a member no shape has, such as a group's `PhantomCooldownEndsMs`, is never shown).
//! An action with no output answers `()`.

use super::activity::ScalingActivity;
use super::group::Group;
use super::group::{
    Alarm, LaunchTemplateSpecification, LifecycleHook, ScalingPolicy, Settings, TagDescription,
};
use super::instance::{Lifecycle, Member};
use super::launch_config::LaunchConfiguration;
use serde::Serialize;

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeLaunchConfigurations {
    pub launch_configurations: Vec<LaunchConfiguration>,
    pub next_token: Option<String>,
}

/// botocore's `AutoScalingGroup`: the settings as stored, the sizes, the instances.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AutoScalingGroup {
    #[serde(flatten)]
    pub settings: Settings,
    pub min_size: i64,
    pub max_size: i64,
    pub desired_capacity: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    pub instances: Vec<Instance>,
    /// The instances in its warm pool, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm_pool_size: Option<i64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAutoScalingGroups {
    pub auto_scaling_groups: Vec<AutoScalingGroup>,
    pub next_token: Option<String>,
}

/// botocore's `Instance` (of a group), and with the group's name its `AutoScalingInstanceDetails`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Instance {
    pub instance_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_scaling_group_name: Option<String>,
    pub instance_type: String,
    pub availability_zone: String,
    pub lifecycle_state: &'static str,
    pub health_status: &'static str,
    /// None for an attached instance, launched from no launch configuration of Phantom's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_configuration_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template: Option<LaunchTemplateSpecification>,
    pub protected_from_scale_in: bool,
    /// The capacity units it counts for, where its group's overrides give weights (a string,
    /// as AWS's model has it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weighted_capacity: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAutoScalingInstances {
    pub auto_scaling_instances: Vec<Instance>,
    pub next_token: Option<String>,
}

/// LaunchInstances' answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LaunchInstances {
    pub auto_scaling_group_name: String,
    pub client_token: String,
    pub instances: Vec<crate::sync_launch::InstanceCollection>,
    pub errors: Vec<crate::sync_launch::LaunchError>,
}

/// GetPredictiveScalingForecast's answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetPredictiveScalingForecast {
    pub load_forecast: Vec<crate::predictive::LoadForecast>,
    pub capacity_forecast: crate::predictive::CapacityForecast,
    pub update_time: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Activities {
    pub activities: Vec<ScalingActivity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ActivityType {
    pub activity: ScalingActivity,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeTags {
    pub tags: Vec<TagDescription>,
    pub next_token: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeLifecycleHooks {
    pub lifecycle_hooks: Vec<LifecycleHook>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PolicyArn {
    #[serde(rename = "PolicyARN")]
    pub policy_arn: String,
    /// A target tracking policy's two conditions (`ScalingPolicy::alarms`); empty for the others.
    pub alarms: Vec<Alarm>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribePolicies {
    pub scaling_policies: Vec<ScalingPolicy>,
    pub next_token: Option<String>,
}

/// A scheduled action as DescribeScheduledActions shows it: its next run as StartTime and as
/// Time, its older name (and nothing of Phantom's own).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ScheduledUpdateGroupAction {
    pub auto_scaling_group_name: String,
    pub scheduled_action_name: String,
    #[serde(rename = "ScheduledActionARN")]
    pub arn: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recurrence: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired_capacity: Option<i64>,
    pub start_time: String,
    pub time: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeScheduledActions {
    pub scheduled_update_group_actions: Vec<ScheduledUpdateGroupAction>,
    pub next_token: Option<String>,
}

/// An entry of a batch that was refused, and why, in AWS's words.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FailedScheduledAction {
    pub scheduled_action_name: String,
    pub error_code: &'static str,
    pub error_message: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchPutScheduledUpdateGroupAction {
    pub failed_scheduled_update_group_actions: Vec<FailedScheduledAction>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchDeleteScheduledAction {
    pub failed_scheduled_actions: Vec<FailedScheduledAction>,
}

/// The catalogues: what Phantom supports, from the lists its checks use.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeScalingProcessTypes {
    pub processes: Vec<ProcessType>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ProcessType {
    pub process_name: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeTerminationPolicyTypes {
    pub termination_policy_types: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeMetricCollectionTypes {
    pub metrics: Vec<MetricCollectionType>,
    pub granularities: Vec<MetricGranularityType>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricCollectionType {
    pub metric: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct MetricGranularityType {
    pub granularity: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAdjustmentTypes {
    pub adjustment_types: Vec<AdjustmentType>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AdjustmentType {
    pub adjustment_type: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAutoScalingNotificationTypes {
    pub auto_scaling_notification_types: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeLifecycleHookTypes {
    pub lifecycle_hook_types: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAccountLimits {
    pub max_number_of_auto_scaling_groups: i64,
    pub max_number_of_launch_configurations: i64,
    pub number_of_auto_scaling_groups: i64,
    pub number_of_launch_configurations: i64,
}

/// StartInstanceRefresh, CancelInstanceRefresh and RollbackInstanceRefresh answer its id.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceRefreshId {
    pub instance_refresh_id: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeInstanceRefreshes {
    pub instance_refreshes: Vec<super::refresh::InstanceRefresh>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

/// DescribeWarmPool: the pool (none if the group has none) and its instances.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeWarmPool {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm_pool_configuration: Option<super::warm_pool::WarmPoolConfiguration>,
    pub instances: Vec<Instance>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

/// DescribeNotificationConfigurations: one row per group, topic and type.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeNotificationConfigurations {
    pub notification_configurations: Vec<NotificationConfigurationRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NotificationConfigurationRow {
    pub auto_scaling_group_name: String,
    #[serde(rename = "TopicARN")]
    pub topic_arn: String,
    pub notification_type: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeLoadBalancers {
    pub load_balancers: Vec<LoadBalancerState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LoadBalancerState {
    pub load_balancer_name: String,
    pub state: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeLoadBalancerTargetGroups {
    pub load_balancer_target_groups: Vec<LoadBalancerTargetGroupState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LoadBalancerTargetGroupState {
    #[serde(rename = "LoadBalancerTargetGroupARN")]
    pub load_balancer_target_group_arn: String,
    pub state: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeTrafficSources {
    pub traffic_sources: Vec<TrafficSourceState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TrafficSourceState {
    /// Deprecated by AWS for `Identifier`, and still filled in as AWS does.
    pub traffic_source: String,
    pub state: &'static str,
    pub identifier: String,
    pub r#type: &'static str,
}

/// How a group and its instances render into the shapes above.
impl Group {
    /// The botocore `AutoScalingGroup` DescribeAutoScalingGroups returns, with its instances and
    /// the number in its warm pool, if counted (Phantom's own members are in no AWS shape, so
    /// the response leaves them out).
    pub fn describe(self, instances: Vec<Instance>, warm: Option<i64>) -> AutoScalingGroup {
        let mut settings = self.settings;
        let known = &settings.template_names;
        settings.launch_template = settings.launch_template.map(|t| t.named(known));
        settings.mixed_instances_policy = settings.mixed_instances_policy.map(|m| m.named(known));
        // AWS shows its defaults for these two where none was given (Terraform reads them).
        settings.availability_zone_distribution.get_or_insert(
            super::group::AvailabilityZoneDistribution {
                capacity_distribution_strategy:
                    super::group::CapacityDistribution::BalancedBestEffort,
            },
        );
        let reservations = settings.capacity_reservation_specification.get_or_insert(
            super::group::CapacityReservationSpecification {
                capacity_reservation_preference: None,
                capacity_reservation_target: None,
            },
        );
        reservations
            .capacity_reservation_preference
            .get_or_insert(super::group::ReservationPreference::Default);
        AutoScalingGroup {
            warm_pool_size: warm.filter(|_| settings.warm_pool_configuration.is_some()),
            settings,
            min_size: self.min,
            max_size: self.max,
            desired_capacity: self.desired,
            status: self.status,
            instances,
        }
    }

    /// One of its instances as Describe shows it: a VM on a cloud that has been unreachable past
    /// the grace counts as lost, so it is shown Unhealthy (its record is kept as it was, to be
    /// judged again when the cloud answers).
    pub fn describe_member(&self, m: &Member, now_ms: i64) -> Instance {
        let mut d = m.describe_named(&self.settings.template_names);
        if self
            .holds
            .get(&m.cloud)
            .is_some_and(|h| h.counted_out(now_ms))
        {
            d.health_status = "Unhealthy";
        }
        d
    }
}

impl Member {
    /// `describe`, its template with the id and the name its group's cloud gave.
    pub fn describe_named(&self, known: &[super::launch_template::TemplateName]) -> Instance {
        let mut d = self.describe();
        d.launch_template = d.launch_template.map(|t| t.named(known));
        d
    }

    /// The botocore `Instance` shape (an instance in DescribeAutoScalingGroups).
    pub fn describe(&self) -> Instance {
        Instance {
            instance_id: self.id.clone(),
            auto_scaling_group_name: None,
            instance_type: self.instance_type.clone(),
            availability_zone: self.zone.clone(),
            lifecycle_state: if self.draining() {
                Lifecycle::Terminating.shown()
            } else {
                self.lifecycle.shown()
            },
            health_status: if self.healthy { "Healthy" } else { "Unhealthy" },
            // An attached instance was launched from no launch configuration of Phantom's.
            launch_configuration_name: self.launch_configuration.clone(),
            // What it launched from, where recorded.
            launch_template: self
                .launched_from
                .clone()
                .or_else(|| self.launch_template.clone()),
            protected_from_scale_in: self.protected,
            weighted_capacity: self.weight.map(|w| w.to_string()),
        }
    }

    /// The botocore `AutoScalingInstanceDetails` shape (DescribeAutoScalingInstances), where AWS
    /// writes the health in capitals.
    pub fn describe_in(&self, group: &str) -> Instance {
        Instance {
            auto_scaling_group_name: Some(group.to_string()),
            health_status: if self.healthy { "HEALTHY" } else { "UNHEALTHY" },
            ..self.describe()
        }
    }
}
