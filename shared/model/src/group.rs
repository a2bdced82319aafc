//! A group as the store keeps it: its sizes and bookkeeping beside its settings, every one a Rust
//! type. The settings are serialised in botocore's `AutoScalingGroup` shape (what Describe shows)
//! plus Phantom's own members (policies, scheduled actions, the cooldown's end), which no AWS shape
//! has and so are never rendered. Decoded once where the store reads an item: a member that is
//! missing or of the wrong type is an error there, never a default.

use super::hold::Holds;
use super::instance::Outcome;
pub use super::launch_template::{
    InstancesDistribution, LaunchTemplateSpecification, MixedInstancesPolicy, MixedLaunchTemplate,
    Override,
};
use super::tracking::{MetricAlarm, TargetTrackingConfiguration};
use serde::{Deserialize, Serialize};

/// A stored group. Sizes live beside the settings because they change (with `version`, which makes
/// every change a compare-and-set); the settings are changed whole by UpdateAutoScalingGroup, the
/// tag, process, hook, policy and metrics actions (each a compare-and-set too).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub name: String,
    /// The id in the group's ARN: tells this group from an earlier one of the same name (VMs carry
    /// it as a tag).
    pub id: String,
    pub cloud: String,
    pub min: i64,
    pub max: i64,
    pub desired: i64,
    pub version: i64,
    /// Launch requests made so far: with the id and the placement, the ClientToken of the next
    /// RunInstances. It advances only with the record of what was launched, so a retried launch
    /// reuses its token and the cloud answers with the VMs of the first try.
    pub launch_seq: i64,
    /// `Delete in progress` once a forced delete has begun.
    pub status: Option<String>,
    /// Launch failures in a row, and when launching may be tried again (Unix ms): the backoff.
    pub failures: i64,
    pub retry_at_ms: i64,
    /// When VMs found dead and not yet replaced were found so (Unix ms, oldest first): what
    /// launches that failed still owe (`phantom_rules::replacement`).
    pub unreplaced_ms: Vec<i64>,
    /// A group across clouds: what it remembers of each (`phantom_rules::spread`).
    pub holds: Holds,
    /// The asks for a round (the store's `Ask`) no round has answered yet, as the group was read:
    /// a round that read them answers them when it gives the lease back, if none came since.
    pub asks: i64,
    pub settings: Settings,
}

pub const DELETING: &str = "Delete in progress";

impl Group {
    pub fn deleting(&self) -> bool {
        self.status.as_deref() == Some(DELETING)
    }

    /// The launch configuration it launches from on its own cloud (none for a template group).
    pub fn launch_configuration(&self) -> Option<&str> {
        self.settings.launch_configuration_name.as_deref()
    }

    /// Whether it has an enabled target tracking policy or step policy alarm.
    pub fn tracked(&self) -> bool {
        self.settings.scaling_policies.iter().any(|p| p.watched())
    }

    /// The subnets it launches into.
    pub fn subnets(&self) -> Vec<String> {
        subnet_ids(self.settings.vpc_zone_identifier.as_deref())
    }

    /// What the group's capacity counts: `units` (AWS's default), `vcpu` or `memory-mib`.
    pub fn capacity_type(&self) -> &str {
        self.settings
            .desired_capacity_type
            .as_deref()
            .unwrap_or("units")
    }

    /// Seconds a new instance warms up: the group's DefaultInstanceWarmup, else its health check
    /// grace period (AWS's fallback).
    pub fn warmup_secs(&self) -> i64 {
        let s = &self.settings;
        s.default_instance_warmup
            .unwrap_or(s.health_check_grace_period)
    }

    /// The group's tags that go onto its VMs (PropagateAtLaunch).
    pub fn propagated_tags(&self) -> Vec<(String, String)> {
        self.settings
            .tags
            .iter()
            .filter(|t| t.propagate_at_launch)
            .map(|t| (t.key.clone(), t.value.clone()))
            .collect()
    }
}

/// The subnets of a VPCZoneIdentifier (comma-separated, as AWS keeps it).
pub fn subnet_ids(vpc_zone_identifier: Option<&str>) -> Vec<String> {
    vpc_zone_identifier
        .iter()
        .flat_map(|s| s.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Every setting of a group but its sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Settings {
    pub auto_scaling_group_name: String,
    #[serde(rename = "AutoScalingGroupARN")]
    pub arn: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_configuration_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template: Option<LaunchTemplateSpecification>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixed_instances_policy: Option<MixedInstancesPolicy>,
    pub default_cooldown: i64,
    pub health_check_type: String,
    pub health_check_grace_period: i64,
    pub created_time: String,
    pub availability_zones: Vec<String>,
    /// The zones' ids, where the group was given them (its cloud named them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability_zone_ids: Option<Vec<String>>,
    /// Subnets, comma-separated as AWS keeps them.
    #[serde(rename = "VPCZoneIdentifier", skip_serializing_if = "Option::is_none")]
    pub vpc_zone_identifier: Option<String>,
    pub termination_policies: Vec<String>,
    pub new_instances_protected_from_scale_in: bool,
    pub capacity_rebalance: bool,
    #[serde(rename = "ServiceLinkedRoleARN")]
    pub service_linked_role_arn: String,
    /// The classic load balancers attached (not being removed): `traffic` says more.
    pub load_balancer_names: Vec<String>,
    #[serde(rename = "TargetGroupARNs")]
    pub target_group_arns: Vec<String>,
    pub traffic_sources: Vec<TrafficSource>,
    pub suspended_processes: Vec<SuspendedProcess>,
    pub enabled_metrics: Vec<EnabledMetric>,
    pub tags: Vec<TagDescription>,
    /// Seconds: older instances are replaced (`phantom_rules::refresh::expired`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_instance_lifetime: Option<i64>,
    /// Seconds a new instance warms up: an instance refresh's default warm-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_instance_warmup: Option<i64>,
    /// Where launches go when a zone fails them (absent: `balanced-best-effort`, AWS's default,
    /// and shown so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability_zone_distribution: Option<AvailabilityZoneDistribution>,
    /// The cloud's placement group its VMs are launched into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_group: Option<String>,
    /// The healthy percentages its replacements keep within (absent: AWS's default behaviours).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_maintenance_policy: Option<InstanceMaintenancePolicy>,
    /// Which capacity reservations its on-demand VMs launch into (absent: `default`, and shown
    /// so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_reservation_specification: Option<CapacityReservationSpecification>,
    /// The zone of each capacity reservation it targets, as its cloud answered when the group
    /// was given them: each launch targets the reservations in its zone.
    #[serde(
        rename = "PhantomReservationZones",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reservation_zones: Vec<ReservationZone>,
    /// The zone of each of its subnets, as its cloud answered when VPCZoneIdentifier was given
    /// (a subnet's zone never changes): capacity-reservations-only launches into those in its
    /// reservations' zones.
    #[serde(
        rename = "PhantomSubnetZones",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub subnet_zones: Vec<SubnetZone>,
    /// What happens to an instance whose termination hooks end with ABANDON (absent: it is
    /// terminated, AWS's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_lifecycle_policy: Option<InstanceLifecyclePolicy>,
    /// Whether DeleteAutoScalingGroup may delete it (absent: `none`, AWS's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_protection: Option<DeletionProtection>,
    /// AWS reserves it for its own use cases: a label Phantom keeps and shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Only `units` (VMs) is accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired_capacity_type: Option<String>,
    /// Absent from a group that never had any; empty once the last is deleted.
    #[serde(default)]
    pub lifecycle_hooks: Vec<LifecycleHook>,
    #[serde(default)]
    pub scaling_policies: Vec<ScalingPolicy>,
    #[serde(default)]
    pub scheduled_actions: Vec<ScheduledAction>,
    /// Its instance refreshes, the newest first (`phantom_rules::refresh`).
    #[serde(
        rename = "PhantomInstanceRefreshes",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub instance_refreshes: Vec<super::refresh::InstanceRefresh>,
    /// Its warm pool, if it has one (`phantom_rules::warm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_pool_configuration: Option<super::warm_pool::WarmPoolConfiguration>,
    /// The SNS topics told of its instances' launches and terminations
    /// (PutNotificationConfiguration).
    #[serde(
        rename = "PhantomNotifications",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub notifications: Vec<super::notification::NotificationConfiguration>,
    /// Its load balancers and target groups, their states and VMs (`phantom_rules::traffic`).
    #[serde(
        rename = "PhantomTraffic",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub traffic: Vec<super::traffic::Attachment>,
    /// When the cooldown a simple policy started ends (Unix ms).
    #[serde(
        rename = "PhantomCooldownEndsMs",
        skip_serializing_if = "Option::is_none"
    )]
    pub cooldown_ends_ms: Option<i64>,
    /// What its ForecastAndScale policies last put in place (`phantom_rules::predictive`).
    #[serde(
        rename = "PhantomPredicted",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub predicted: Option<super::predictive::Predicted>,
    /// Its launch templates as their cloud names them (id and name), where the cloud was asked
    /// when they were given: Describe shows both, as AWS does.
    #[serde(
        rename = "PhantomTemplateNames",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub template_names: Vec<super::launch_template::TemplateName>,
}

/// A group's AvailabilityZoneDistribution: `balanced-only` keeps asking a zone that fails its
/// launches, `balanced-best-effort` launches in the group's other zones (or subnets) meanwhile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AvailabilityZoneDistribution {
    pub capacity_distribution_strategy: CapacityDistribution,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapacityDistribution {
    BalancedOnly,
    BalancedBestEffort,
}

/// A group's InstanceMaintenancePolicy: while instances are replaced (unhealthy ones, those past
/// their lifetime, an instance refresh's by default), at least MinHealthyPercentage of the desired
/// capacity stays InService and healthy, and at most MaxHealthyPercentage of it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceMaintenancePolicy {
    pub min_healthy_percentage: i64,
    pub max_healthy_percentage: i64,
}

/// A group's CapacityReservationSpecification (botocore's shape, as given and shown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CapacityReservationSpecification {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_reservation_preference: Option<ReservationPreference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_reservation_target: Option<CapacityReservationTarget>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReservationPreference {
    CapacityReservationsOnly,
    CapacityReservationsFirst,
    None,
    Default,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CapacityReservationTarget {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity_reservation_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity_reservation_resource_group_arns: Vec<String>,
}

/// A subnet a group launches into, and its zone (as its cloud answered DescribeSubnets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SubnetZone {
    pub subnet_id: String,
    pub availability_zone: String,
}

/// A capacity reservation a group targets, and its zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReservationZone {
    pub capacity_reservation_id: String,
    pub availability_zone: String,
}

/// A group's InstanceLifecyclePolicy (botocore's shape, as given and shown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstanceLifecyclePolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_triggers: Option<RetentionTriggers>,
}

impl InstanceLifecyclePolicy {
    /// Whether an instance whose termination hooks end with ABANDON is retained.
    pub fn retains_abandoned(&self) -> bool {
        self.retention_triggers
            .as_ref()
            .and_then(|t| t.terminate_hook_abandon)
            == Some(RetentionAction::Retain)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RetentionTriggers {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminate_hook_abandon: Option<RetentionAction>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetentionAction {
    Retain,
    Terminate,
}

/// A group's deletion protection, AWS's three levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeletionProtection {
    None,
    /// Deleted only without ForceDelete, so only once it has no instances.
    PreventForceDeletion,
    PreventAllDeletion,
}

impl DeletionProtection {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::PreventForceDeletion => "prevent-force-deletion",
            Self::PreventAllDeletion => "prevent-all-deletion",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TrafficSource {
    pub identifier: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SuspendedProcess {
    pub process_name: String,
    pub suspension_reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct EnabledMetric {
    pub metric: String,
    pub granularity: String,
}

/// A tag of a group (botocore's `TagDescription`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TagDescription {
    pub resource_id: String,
    pub resource_type: String,
    pub key: String,
    pub value: String,
    pub propagate_at_launch: bool,
}

/// A lifecycle hook (botocore's `LifecycleHook`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LifecycleHook {
    pub lifecycle_hook_name: String,
    pub auto_scaling_group_name: String,
    pub lifecycle_transition: String,
    pub heartbeat_timeout: i64,
    pub global_timeout: i64,
    pub default_result: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notification_metadata: Option<String>,
    /// The SQS queue or SNS topic told of each instance that starts waiting on the hook.
    #[serde(
        rename = "NotificationTargetARN",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub notification_target_arn: Option<String>,
    /// Kept and shown: Phantom sends with the deployment's own role, not the user's.
    #[serde(rename = "RoleARN", default, skip_serializing_if = "Option::is_none")]
    pub role_arn: Option<String>,
}

/// A scaling policy (botocore's `ScalingPolicy`) and its webhook, if it has one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ScalingPolicy {
    pub auto_scaling_group_name: String,
    pub policy_name: String,
    #[serde(rename = "PolicyARN")]
    pub arn: String,
    #[serde(flatten)]
    pub kind: PolicyKind,
    pub enabled: bool,
    /// A target tracking policy's two alarms (high, low), named as AWS names them and shown in
    /// DescribeAlarms (`phantom_rules::policy_alarms`); a step policy's PutPolicyAlarm alarm.
    /// Empty for the others, which run by request or webhook.
    pub alarms: Vec<Alarm>,
    #[serde(rename = "PhantomWebhook", skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Webhook>,
    /// A step policy's alarm on the metric source (`phantom_rules::alarm`); its name is in `alarms`.
    #[serde(
        rename = "PhantomAlarm",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub alarm: Option<MetricAlarm>,
}

impl ScalingPolicy {
    /// Whether `wanted` (a policy's name or ARN) is this policy.
    pub fn is(&self, wanted: &str) -> bool {
        self.policy_name == wanted || self.arn == wanted
    }

    pub fn policy_type(&self) -> &'static str {
        match self.kind {
            PolicyKind::Simple { .. } => "SimpleScaling",
            PolicyKind::Step { .. } => "StepScaling",
            PolicyKind::TargetTracking { .. } => "TargetTrackingScaling",
            PolicyKind::Predictive { .. } => "PredictiveScaling",
        }
    }

    /// Its alarm, if it is an enabled step policy with one.
    pub fn watched_alarm(&self) -> Option<&MetricAlarm> {
        match &self.kind {
            PolicyKind::Step { .. } if self.enabled => self.alarm.as_ref(),
            _ => None,
        }
    }

    /// Whether the scheduled run evaluates it: an enabled target tracking policy, or an enabled
    /// step policy with an alarm.
    pub fn watched(&self) -> bool {
        self.tracking().is_some() || self.watched_alarm().is_some()
    }

    /// A step policy's own warm-up (seconds), if it has one.
    pub fn step_warmup(&self) -> Option<i64> {
        match &self.kind {
            PolicyKind::Step {
                estimated_instance_warmup,
                ..
            } => *estimated_instance_warmup,
            _ => None,
        }
    }

    /// How a step policy's alarm reduces its expression's series.
    pub fn aggregation(&self) -> Option<MetricAggregation> {
        match &self.kind {
            PolicyKind::Step {
                metric_aggregation_type,
                ..
            } => Some(*metric_aggregation_type),
            _ => None,
        }
    }

    /// Its configuration, if it is a predictive scaling policy (enabled or not: a forecast is
    /// answered for either).
    pub fn predictive(&self) -> Option<&super::predictive::PredictiveScalingConfiguration> {
        match &self.kind {
            PolicyKind::Predictive {
                predictive_scaling_configuration,
            } => Some(predictive_scaling_configuration),
            _ => None,
        }
    }

    /// Its configuration, if it is an enabled predictive policy in ForecastAndScale mode.
    pub fn forecast_and_scale(&self) -> Option<&super::predictive::PredictiveScalingConfiguration> {
        self.predictive()
            .filter(|c| self.enabled && c.mode == super::predictive::Mode::ForecastAndScale)
    }

    /// Its target tracking configuration, if it is an enabled target tracking policy.
    pub fn tracking(&self) -> Option<(&TargetTrackingConfiguration, Option<i64>)> {
        match &self.kind {
            PolicyKind::TargetTracking {
                target_tracking_configuration,
                estimated_instance_warmup,
            } if self.enabled => Some((target_tracking_configuration, *estimated_instance_warmup)),
            _ => None,
        }
    }
}

/// What a policy of each type adds, tagged by `PolicyType` as AWS shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "PolicyType")]
pub enum PolicyKind {
    #[serde(rename = "SimpleScaling", rename_all = "PascalCase")]
    Simple {
        adjustment_type: AdjustmentType,
        #[serde(skip_serializing_if = "Option::is_none")]
        min_adjustment_magnitude: Option<i64>,
        scaling_adjustment: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        cooldown: Option<i64>,
    },
    #[serde(rename = "StepScaling", rename_all = "PascalCase")]
    Step {
        adjustment_type: AdjustmentType,
        #[serde(skip_serializing_if = "Option::is_none")]
        min_adjustment_magnitude: Option<i64>,
        step_adjustments: Vec<Step>,
        /// How its alarm reduces the series of its expression at each datapoint.
        metric_aggregation_type: MetricAggregation,
        /// Seconds until a new VM counts in the capacity its alarm scales from; absent: the
        /// group's DefaultInstanceWarmup, then its DefaultCooldown.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        estimated_instance_warmup: Option<i64>,
    },
    /// Followed by Phantom on the deployment's metric source (`phantom_rules::tracking`).
    #[serde(rename = "TargetTrackingScaling", rename_all = "PascalCase")]
    TargetTracking {
        target_tracking_configuration: TargetTrackingConfiguration,
        /// Seconds; absent: the group's DefaultInstanceWarmup, then its DefaultCooldown.
        #[serde(skip_serializing_if = "Option::is_none")]
        estimated_instance_warmup: Option<i64>,
    },
    /// Forecast from the deployment's Prometheus (`phantom_rules::predictive`).
    #[serde(rename = "PredictiveScaling", rename_all = "PascalCase")]
    Predictive {
        predictive_scaling_configuration: super::predictive::PredictiveScalingConfiguration,
    },
}

/// A step policy's MetricAggregationType: how the series of its alarm's expression (one a VM,
/// say) become one value at each datapoint, as CloudWatch's statistic over a group's instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum MetricAggregation {
    #[default]
    Average,
    Minimum,
    Maximum,
}

impl MetricAggregation {
    pub const ALL: [Self; 3] = [Self::Average, Self::Minimum, Self::Maximum];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Average => "Average",
            Self::Minimum => "Minimum",
            Self::Maximum => "Maximum",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// The one value of these (None when there are none).
    pub fn of(self, values: &[f64]) -> Option<f64> {
        let mut it = values.iter().copied();
        let first = it.next()?;
        Some(match self {
            Self::Average => values.iter().sum::<f64>() / values.len() as f64,
            Self::Minimum => it.fold(first, f64::min),
            Self::Maximum => it.fold(first, f64::max),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AdjustmentType {
    ChangeInCapacity,
    ExactCapacity,
    PercentChangeInCapacity,
}

impl AdjustmentType {
    pub const ALL: [Self; 3] = [
        Self::ChangeInCapacity,
        Self::ExactCapacity,
        Self::PercentChangeInCapacity,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ChangeInCapacity => "ChangeInCapacity",
            Self::ExactCapacity => "ExactCapacity",
            Self::PercentChangeInCapacity => "PercentChangeInCapacity",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// One step of a step policy (botocore's `StepAdjustment`): bounds relative to the breach
/// threshold, open where absent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Step {
    #[serde(
        rename = "MetricIntervalLowerBound",
        skip_serializing_if = "Option::is_none"
    )]
    pub lower: Option<f64>,
    #[serde(
        rename = "MetricIntervalUpperBound",
        skip_serializing_if = "Option::is_none"
    )]
    pub upper: Option<f64>,
    #[serde(rename = "ScalingAdjustment")]
    pub adjustment: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Alarm {
    pub alarm_name: String,
    #[serde(rename = "AlarmARN")]
    pub alarm_arn: String,
}

impl From<&MetricAlarm> for Alarm {
    fn from(a: &MetricAlarm) -> Self {
        Self {
            alarm_name: a.alarm_name.clone(),
            alarm_arn: a.alarm_arn.clone(),
        }
    }
}

/// A policy's alert webhook: its id, the SHA-256 of its secret (the secret is shown once), when
/// it was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Webhook {
    pub id: String,
    pub secret_sha256: String,
    pub created: String,
}

/// A scheduled action (botocore's `ScheduledUpdateGroupAction`) and when it next runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ScheduledAction {
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
    /// The StartTime given (or Time, its older name), kept and shown as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// When it next runs (Unix ms).
    #[serde(rename = "PhantomNextMs")]
    pub next_ms: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored() -> serde_json::Value {
        serde_json::json!({
            "AutoScalingGroupName": "web", "AutoScalingGroupARN": "arn:g",
            "LaunchConfigurationName": "web@hotel", "DefaultCooldown": 300,
            "HealthCheckType": "EC2", "HealthCheckGracePeriod": 0,
            "CreatedTime": "2026-01-01T00:00:00.000Z", "AvailabilityZones": ["hotel-a"],
            "TerminationPolicies": ["Default"], "NewInstancesProtectedFromScaleIn": false,
            "CapacityRebalance": false, "ServiceLinkedRoleARN": "arn:r",
            "LoadBalancerNames": [], "TargetGroupARNs": [], "TrafficSources": [],
            "SuspendedProcesses": [], "EnabledMetrics": [], "Instances": [],
            "Tags": [{"ResourceId": "web", "ResourceType": "auto-scaling-group", "Key": "k",
                "Value": "v", "PropagateAtLaunch": true}],
            "ScalingPolicies": [{"AutoScalingGroupName": "web", "PolicyName": "up",
                "PolicyARN": "arn:p", "PolicyType": "StepScaling",
                "AdjustmentType": "ChangeInCapacity", "MetricAggregationType": "Average",
                "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}],
                "Enabled": true, "Alarms": []}],
        })
    }

    #[test]
    fn a_stored_group_reads_back_as_it_was_written() {
        let s: Settings = serde_json::from_value(stored()).unwrap();
        assert_eq!(s.tags[0].key, "k");
        assert!(
            matches!(&s.scaling_policies[0].kind, PolicyKind::Step { step_adjustments, .. }
            if step_adjustments[0].lower == Some(0.0) && step_adjustments[0].upper.is_none())
        );
        let again: Settings = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(again, s);
        // Phantom's members but the webhook and cooldown are written even when empty.
        let out = serde_json::to_value(&s).unwrap();
        assert_eq!(out["ScalingPolicies"][0]["PolicyType"], "StepScaling");
        assert!(out.get("PhantomCooldownEndsMs").is_none());
    }

    #[test]
    fn a_missing_or_mistyped_member_is_an_error_not_a_default() {
        for (key, value) in [
            ("HealthCheckGracePeriod", None),
            ("AutoScalingGroupARN", None),
            ("HealthCheckGracePeriod", Some(serde_json::json!("ten"))),
            ("Tags", Some(serde_json::json!([{"Key": "k"}]))),
        ] {
            let mut doc = stored();
            match value {
                None => {
                    doc.as_object_mut().unwrap().remove(key);
                }
                Some(v) => doc[key] = v,
            }
            let err = serde_json::from_value::<Settings>(doc).unwrap_err();
            assert!(
                err.to_string()
                    .contains(if key == "Tags" { "ResourceId" } else { key })
                    || err.to_string().contains("invalid type"),
                "{key}: {err}"
            );
        }
        let mut doc = stored();
        doc["ScalingPolicies"][0]["PolicyType"] = "Sideways".into();
        assert!(serde_json::from_value::<Settings>(doc).is_err());
    }
}

/// A group's sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub min: i64,
    pub max: i64,
    pub desired: i64,
}

impl Sizes {
    pub fn of(g: &Group) -> Self {
        Self {
            min: g.min,
            max: g.max,
            desired: g.desired,
        }
    }
}

/// A lifecycle hook's transitions, in AWS's words.
pub const LAUNCHING: &str = "autoscaling:EC2_INSTANCE_LAUNCHING";
pub const TERMINATING: &str = "autoscaling:EC2_INSTANCE_TERMINATING";

/// The metrics AWS collects, in the order of its API reference (DescribeMetricCollectionTypes).
pub const GROUP_METRICS: [&str; 20] = [
    "GroupMinSize",
    "GroupMaxSize",
    "GroupDesiredCapacity",
    "GroupInServiceInstances",
    "GroupPendingInstances",
    "GroupStandbyInstances",
    "GroupTerminatingInstances",
    "GroupTotalInstances",
    "GroupInServiceCapacity",
    "GroupPendingCapacity",
    "GroupStandbyCapacity",
    "GroupTerminatingCapacity",
    "GroupTotalCapacity",
    "WarmPoolDesiredCapacity",
    "WarmPoolWarmedCapacity",
    "WarmPoolPendingCapacity",
    "WarmPoolTerminatingCapacity",
    "WarmPoolTotalCapacity",
    "GroupAndWarmPoolDesiredCapacity",
    "GroupAndWarmPoolTotalCapacity",
];

/// Phantom's group metrics beyond AWS's, enabled only by name (EnableMetricsCollection without
/// names enables AWS's, and DescribeMetricCollectionTypes lists AWS's): the group's VMs kept
/// Unhealthy, by the check that failed.
pub const PHANTOM_GROUP_METRICS: [&str; 1] = ["GroupUnhealthyInstances"];
