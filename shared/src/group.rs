//! Auto Scaling groups: the checks and defaults of CreateAutoScalingGroup and SetDesiredCapacity,
//! and DescribeAutoScalingGroups' filters. Pure: no AWS types.

use crate::error::{ApiError, ApiResult};
use crate::model::group::TagDescription;
use crate::model::Invalid;
use crate::reconcile::Target;
use crate::tags::MAX_TAGS;
use serde_json::Value;
use std::collections::BTreeSet;
use time::OffsetDateTime;

pub use crate::model::group::{Group, Settings, DELETING};

impl Group {
    /// The botocore `AutoScalingGroup` document DescribeAutoScalingGroups returns (Phantom's own
    /// members are in no AWS shape, so the response leaves them out).
    pub fn describe(&self) -> Value {
        let mut doc = serde_json::to_value(&self.settings).expect("settings serialise");
        doc["MinSize"] = self.min.into();
        doc["MaxSize"] = self.max.into();
        doc["DesiredCapacity"] = self.desired.into();
        if let Some(status) = &self.status {
            doc["Status"] = status.clone().into();
        }
        doc
    }

    /// When its first scheduled action is due (Unix ms), if it has one and is not being deleted:
    /// what the store keeps in its index of due groups.
    pub fn due_ms(&self) -> Option<i64> {
        if self.deleting() {
            return None;
        }
        crate::schedule::next_due(&self.settings.scheduled_actions)
    }

    /// The subnets it launches into.
    pub fn subnets(&self) -> Vec<String> {
        self.settings
            .vpc_zone_identifier
            .iter()
            .flat_map(|s| s.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// What the provisioner aims at for this group.
    pub fn target(&self) -> Target {
        let s = &self.settings;
        Target {
            cloud: self.cloud.clone(),
            desired: self.desired,
            deleting: self.deleting(),
            grace_ms: s.health_check_grace_period * 1000,
            termination_policies: s.termination_policies.clone(),
            zones: s.availability_zones.clone(),
            subnets: self.subnets(),
            launch_configuration: self.launch_configuration.clone(),
            protect_new: s.new_instances_protected_from_scale_in,
            retry_at_ms: self.retry_at_ms,
            suspended: crate::processes::suspended(&s.suspended_processes),
            hooks: crate::lifecycle::hooks(&s.lifecycle_hooks),
        }
    }

    /// The clouds a group spans (its `phantom:clouds` and `phantom:policy` tags), if it spans any.
    pub fn spread(&self) -> ApiResult<Option<crate::spread::Spread>> {
        crate::spread::Spread::of_tags(
            self.settings
                .tags
                .iter()
                .map(|t| (t.key.as_str(), t.value.as_str())),
        )
    }

    /// Every launch configuration the group uses, each marked in use by the store: its own and,
    /// across clouds, the one of each listed cloud (none for a launch template group). Clouds
    /// tags that cannot be read are an error, never "its own cloud only".
    pub fn launch_configurations(&self) -> Result<BTreeSet<String>, Invalid> {
        let mut lcs = BTreeSet::new();
        if self.launch_configuration.is_empty() {
            return Ok(lcs);
        }
        lcs.insert(self.launch_configuration.clone());
        if let Some(spread) = self.spread_read()? {
            for site in &spread.sites {
                lcs.insert(crate::spread::Spread::launch_configuration_on(
                    &self.launch_configuration,
                    &site.cloud,
                ));
            }
        }
        Ok(lcs)
    }

    /// Every cloud the group runs on: its own and, across clouds, each listed one. The health
    /// check's list counts the group on each, so each is swept. Clouds tags that cannot be read
    /// are an error, never "its own cloud only".
    pub fn clouds(&self) -> Result<BTreeSet<String>, Invalid> {
        let mut clouds = BTreeSet::from([self.cloud.clone()]);
        if let Some(spread) = self.spread_read()? {
            clouds.extend(spread.sites.into_iter().map(|s| s.cloud));
        }
        Ok(clouds)
    }

    /// `spread`, its refusal as the domain's.
    fn spread_read(&self) -> Result<Option<crate::spread::Spread>, Invalid> {
        self.spread()
            .map_err(|e| Invalid(format!("group {}: {}", self.name, e.message)))
    }

    /// One of its instances as Describe shows it: a VM on a cloud that has been unreachable past
    /// the grace counts as lost, so it is shown Unhealthy (its record is kept as it was, to be
    /// judged again when the cloud answers).
    pub fn describe_member(&self, m: &crate::model::instance::Member, now_ms: i64) -> Value {
        let mut d = m.describe();
        if self
            .holds
            .get(&m.cloud)
            .is_some_and(|h| h.counted_out(now_ms))
        {
            d["HealthStatus"] = "Unhealthy".into();
        }
        d
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

pub const TERMINATION_POLICIES: [&str; 7] = [
    "Default",
    "OldestInstance",
    "NewestInstance",
    "OldestLaunchConfiguration",
    "OldestLaunchTemplate",
    "ClosestToNextInstanceHour",
    "AllocationStrategy",
];

pub fn arn(region: &str, account: &str, id: &str, name: &str) -> String {
    format!(
        "arn:aws:autoscaling:{region}:{account}:autoScalingGroup:{id}:autoScalingGroupName/{name}"
    )
}

pub fn service_linked_role(account: &str) -> String {
    format!("arn:aws:iam::{account}:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling")
}

/// MinSize <= DesiredCapacity <= MaxSize, in AWS's words.
pub fn check_sizes(min: i64, max: i64, desired: i64) -> ApiResult<()> {
    if min < 0 {
        return Err(ApiError::validation(format!(
            "MinSize must be greater than or equal to 0, got {min}"
        )));
    }
    if max < min {
        return Err(ApiError::validation(format!(
            "Max bound, {max}, must be greater than or equal to min bound, {min}"
        )));
    }
    if desired < min || desired > max {
        return Err(ApiError::validation(format!(
            "Desired capacity:{desired} must be between the specified min size:{min} and max size:{max}"
        )));
    }
    Ok(())
}

/// SetDesiredCapacity's check against the group's current bounds.
pub fn check_new_desired(group: &Group, desired: i64) -> ApiResult<()> {
    if desired > group.max {
        return Err(ApiError::validation(format!(
            "New SetDesiredCapacity value {desired} is above max value {} for the AutoScalingGroup.",
            group.max
        )));
    }
    if desired < group.min {
        return Err(ApiError::validation(format!(
            "New SetDesiredCapacity value {desired} is below min value {} for the AutoScalingGroup.",
            group.min
        )));
    }
    Ok(())
}

/// What CreateAutoScalingGroup needs besides its input.
pub struct NewGroupContext<'a> {
    /// The id for the group's ARN (a UUID).
    pub id: String,
    pub region: &'a str,
    pub account: &'a str,
    pub cloud: String,
    /// The zone used when the request names neither zones nor subnets.
    pub default_zone: &'a str,
    pub now: OffsetDateTime,
}

/// Checks a decoded CreateAutoScalingGroup input and builds the group it describes.
pub fn from_input(input: &Value, ctx: NewGroupContext<'_>) -> ApiResult<Group> {
    let name = input["AutoScalingGroupName"]
        .as_str()
        .ok_or_else(|| ApiError::validation("AutoScalingGroupName is required."))?
        .to_string();
    check_settings(input)?;
    let sources = launch_sources(input);
    if sources != 1 {
        return Err(ApiError::validation(
            "Valid requests must contain exactly one of LaunchTemplate, LaunchConfigurationName or MixedInstancesPolicy parameter.",
        ));
    }
    let size = |member: &str| {
        input[member]
            .as_i64()
            .ok_or_else(|| ApiError::validation(format!("{member} is required.")))
    };
    let (min, max) = (size("MinSize")?, size("MaxSize")?);
    let desired = input["DesiredCapacity"].as_i64().unwrap_or(min);
    check_sizes(min, max, desired)?;
    let mut settings = Settings {
        auto_scaling_group_name: name.clone(),
        arn: arn(ctx.region, ctx.account, &ctx.id, &name),
        launch_configuration_name: None,
        launch_template: None,
        mixed_instances_policy: None,
        default_cooldown: 300,
        health_check_type: "EC2".into(),
        health_check_grace_period: 0,
        created_time: crate::time::format_timestamp(ctx.now),
        availability_zones: Vec::new(),
        vpc_zone_identifier: None,
        termination_policies: vec!["Default".into()],
        new_instances_protected_from_scale_in: false,
        capacity_rebalance: false,
        service_linked_role_arn: service_linked_role(ctx.account),
        load_balancer_names: Vec::new(),
        target_group_arns: Vec::new(),
        traffic_sources: Vec::new(),
        suspended_processes: Vec::new(),
        enabled_metrics: Vec::new(),
        tags: tag_descriptions(&name, &input["Tags"])?,
        max_instance_lifetime: None,
        context: None,
        desired_capacity_type: None,
        lifecycle_hooks: crate::lifecycle::from_specifications(
            &name,
            &input["LifecycleHookSpecificationList"],
        )?,
        scaling_policies: Vec::new(),
        scheduled_actions: Vec::new(),
        cooldown_ends_ms: None,
    };
    apply_settings(input, &mut settings)?;
    if settings.availability_zones.is_empty() && settings.vpc_zone_identifier.is_none() {
        settings.availability_zones = vec![ctx.default_zone.to_string()];
    }
    Ok(Group {
        name,
        id: ctx.id,
        // A group from a launch template has no launch configuration.
        launch_configuration: settings
            .launch_configuration_name
            .clone()
            .unwrap_or_default(),
        cloud: ctx.cloud,
        min,
        max,
        desired,
        version: 1,
        launch_seq: 0,
        status: None,
        failures: 0,
        retry_at_ms: 0,
        holds: Default::default(),
        settings,
    })
}

/// The members of a group's input Phantom does not act on, and why: each is refused when given
/// with anything but its AWS default (the README lists them).
const REFUSED: [(&str, &str); 15] = [
    ("LoadBalancerNames", "Phantom has no load balancers yet"),
    ("TargetGroupARNs", "Phantom has no load balancers yet"),
    ("TrafficSources", "Phantom has no load balancers yet"),
    (
        "PlacementGroup",
        "Phantom does not place VMs in placement groups",
    ),
    (
        "CapacityRebalance",
        "Phantom's clouds have no Spot Instances to rebalance",
    ),
    (
        "DefaultInstanceWarmup",
        "Phantom has no instance warm-up yet (it comes with instance refresh and target tracking)",
    ),
    (
        "InstanceMaintenancePolicy",
        "Phantom replaces an unhealthy VM one for one, with no healthy-percentage bounds yet",
    ),
    (
        "AvailabilityZoneIds",
        "Phantom's clouds name their zones: give AvailabilityZones",
    ),
    (
        "AvailabilityZoneDistribution",
        "Phantom spreads VMs across zones one way only",
    ),
    (
        "AvailabilityZoneImpairmentPolicy",
        "Phantom's clouds have no zonal shift",
    ),
    (
        "SkipZonalShiftValidation",
        "Phantom's clouds have no zonal shift",
    ),
    (
        "CapacityReservationSpecification",
        "Phantom's clouds have no capacity reservations",
    ),
    (
        "InstanceLifecyclePolicy",
        "Phantom has no instance retention yet",
    ),
    (
        "DeletionProtection",
        "Phantom has no deletion protection yet",
    ),
    (
        "ServiceLinkedRoleARN",
        "Phantom calls each cloud with the credentials registered for it, not an IAM role",
    ),
];

/// A member given with a value other than its AWS default (which changes nothing).
fn set(input: &Value, member: &str) -> bool {
    match &input[member] {
        Value::Null | Value::Bool(false) => false,
        Value::Array(a) => !a.is_empty(),
        Value::String(s) => !(member == "DeletionProtection" && s == "none"),
        _ => true,
    }
}

/// The settings of a group's input that CreateAutoScalingGroup and UpdateAutoScalingGroup check
/// alike.
fn check_settings(input: &Value) -> ApiResult<()> {
    if input.get("InstanceId").is_some() {
        return Err(ApiError::validation(
            "Phantom launches from launch configurations and launch templates: InstanceId is not supported, give LaunchConfigurationName or LaunchTemplate.",
        ));
    }
    for (member, why) in REFUSED {
        if set(input, member) {
            return Err(ApiError::validation(format!(
                "{member} is not supported: {why}. Leave it out."
            )));
        }
    }
    if let Some(t) = input["DesiredCapacityType"].as_str() {
        if t != "units" {
            return Err(ApiError::validation(format!(
                "DesiredCapacityType '{t}' is not supported: Phantom counts capacity in units (VMs)."
            )));
        }
    }
    crate::template::of(input)?;
    for (field, value) in [
        ("DefaultCooldown", &input["DefaultCooldown"]),
        ("HealthCheckGracePeriod", &input["HealthCheckGracePeriod"]),
    ] {
        if value.as_i64().is_some_and(|v| v < 0) {
            return Err(ApiError::validation(format!(
                "{field} must be greater than or equal to 0"
            )));
        }
    }
    if let Some(life) = input["MaxInstanceLifetime"].as_i64() {
        if life != 0 && !(86_400..=31_536_000).contains(&life) {
            return Err(ApiError::validation(
                "The maximum instance lifetime must be 0 or between 86400 and 31536000 seconds.",
            ));
        }
    }
    if let Some(hc) = input["HealthCheckType"].as_str() {
        if hc != "EC2" {
            return Err(ApiError::validation(format!(
                "Phantom checks health through each cloud's EC2 API: HealthCheckType must be EC2, not '{hc}'."
            )));
        }
    }
    for p in strings(&input["TerminationPolicies"]) {
        if !TERMINATION_POLICIES.contains(&p.as_str()) {
            return Err(ApiError::validation(format!(
                "Termination policy '{p}' is not one of {}.",
                TERMINATION_POLICIES.join(", ")
            )));
        }
    }
    Ok(())
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// How many launch sources the input names (a launch configuration, a template, a mixed
/// instances policy).
fn launch_sources(input: &Value) -> usize {
    [
        "LaunchConfigurationName",
        "LaunchTemplate",
        "MixedInstancesPolicy",
    ]
    .iter()
    .filter(|k| input.get(**k).is_some())
    .count()
}

/// The input's settings, each given one replacing the group's (checked by `check_settings`):
/// what is stored is what Describe returns. The name, the sizes, the tags and the hooks have
/// their own rules.
fn apply_settings(input: &Value, s: &mut Settings) -> ApiResult<()> {
    // A new launch source replaces the old one, whichever kind each is.
    if let Some(lc) = input["LaunchConfigurationName"].as_str() {
        (
            s.launch_configuration_name,
            s.launch_template,
            s.mixed_instances_policy,
        ) = (Some(lc.to_string()), None, None);
    }
    if let Some(lt) = crate::query::member(input, "LaunchTemplate")? {
        (
            s.launch_configuration_name,
            s.launch_template,
            s.mixed_instances_policy,
        ) = (None, Some(lt), None);
    }
    if let Some(mip) = crate::query::member(input, "MixedInstancesPolicy")? {
        (
            s.launch_configuration_name,
            s.launch_template,
            s.mixed_instances_policy,
        ) = (None, None, Some(mip));
    }
    let int = |member: &str| input[member].as_i64();
    if let Some(v) = int("DefaultCooldown") {
        s.default_cooldown = v;
    }
    if let Some(v) = int("HealthCheckGracePeriod") {
        s.health_check_grace_period = v;
    }
    if let Some(v) = int("MaxInstanceLifetime") {
        s.max_instance_lifetime = Some(v);
    }
    if let Some(v) = input["HealthCheckType"].as_str() {
        s.health_check_type = v.to_string();
    }
    if let Some(v) = input["NewInstancesProtectedFromScaleIn"].as_bool() {
        s.new_instances_protected_from_scale_in = v;
    }
    if input["TerminationPolicies"].is_array() {
        s.termination_policies = strings(&input["TerminationPolicies"]);
    }
    if let Some(v) = input["Context"].as_str() {
        s.context = Some(v.to_string());
    }
    if let Some(v) = input["DesiredCapacityType"].as_str() {
        s.desired_capacity_type = Some(v.to_string());
    }
    // Zones or subnets: new subnets without zones leave the group no zones (it has one or the
    // other).
    if let Some(v) = input["VPCZoneIdentifier"].as_str() {
        s.vpc_zone_identifier = Some(v.to_string());
        if input["AvailabilityZones"].is_null() {
            s.availability_zones.clear();
        }
    }
    if input["AvailabilityZones"].is_array() {
        s.availability_zones = strings(&input["AvailabilityZones"]);
    }
    Ok(())
}

/// UpdateAutoScalingGroup: the group with the input's changes, checked as AWS checks them. A new
/// MinSize above the current desired capacity raises it, a new MaxSize below lowers it, when the
/// input gives no DesiredCapacity. The caller has checked that a new launch configuration exists
/// and is on the group's cloud.
pub fn update(g: &Group, input: &Value) -> ApiResult<Group> {
    check_settings(input)?;
    let sources = launch_sources(input);
    if sources > 1 {
        return Err(ApiError::validation(
            "Give one of LaunchConfigurationName, LaunchTemplate or MixedInstancesPolicy.",
        ));
    }
    let min = input["MinSize"].as_i64().unwrap_or(g.min);
    let max = input["MaxSize"].as_i64().unwrap_or(g.max);
    let desired = input["DesiredCapacity"]
        .as_i64()
        .unwrap_or_else(|| g.desired.max(min).min(max));
    check_sizes(min, max, desired)?;
    let mut next = g.clone();
    apply_settings(input, &mut next.settings)?;
    next.launch_configuration = next
        .settings
        .launch_configuration_name
        .clone()
        .unwrap_or_default();
    (next.min, next.max, next.desired) = (min, max, desired);
    Ok(next)
}

/// Input `Tag`s become `TagDescription`s of this group.
fn tag_descriptions(group: &str, tags: &Value) -> ApiResult<Vec<TagDescription>> {
    let tags = tags.as_array().map_or(&[][..], Vec::as_slice);
    if tags.len() > MAX_TAGS {
        return Err(ApiError::validation(format!(
            "A group may have at most {MAX_TAGS} tags, got {}.",
            tags.len()
        )));
    }
    let mut out: Vec<TagDescription> = Vec::with_capacity(tags.len());
    for t in tags {
        let key = t["Key"]
            .as_str()
            .ok_or_else(|| ApiError::validation("Each tag needs a Key."))?
            .to_string();
        if key.to_ascii_lowercase().starts_with("aws:") {
            return Err(ApiError::validation(format!(
                "Tag keys starting with 'aws:' are reserved: '{key}'."
            )));
        }
        if out.iter().any(|d| d.key == key) {
            return Err(ApiError::validation(format!("Duplicate tag key '{key}'.")));
        }
        out.push(TagDescription {
            resource_id: group.to_string(),
            resource_type: crate::tags::RESOURCE_TYPE.to_string(),
            key,
            // AWS's defaults for a tag given without them.
            value: t["Value"].as_str().unwrap_or("").to_string(),
            propagate_at_launch: t["PropagateAtLaunch"].as_bool().unwrap_or(false),
        });
    }
    Ok(out)
}

/// One of DescribeAutoScalingGroups' `Filters`: `tag-key`, `tag-value` or `tag:<key>`.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    TagKey(Vec<String>),
    TagValue(Vec<String>),
    Tag(String, Vec<String>),
}

pub fn parse_filters(filters: &Value) -> ApiResult<Vec<Filter>> {
    let mut out = Vec::new();
    for f in filters.as_array().into_iter().flatten() {
        let name = f["Name"].as_str().unwrap_or_default();
        let values: Vec<String> = f["Values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        out.push(match name {
            "tag-key" => Filter::TagKey(values),
            "tag-value" => Filter::TagValue(values),
            n if n.starts_with("tag:") => Filter::Tag(n[4..].to_string(), values),
            other => {
                return Err(ApiError::validation(format!(
                    "Filter name '{other}' is not valid: use tag-key, tag-value or tag:<key>."
                )))
            }
        });
    }
    Ok(out)
}

/// True when the group's tags satisfy every filter (each filter matches any of its values).
pub fn matches_filters(tags: &[TagDescription], filters: &[Filter]) -> bool {
    let tags: Vec<(&str, &str)> = tags
        .iter()
        .map(|t| (t.key.as_str(), t.value.as_str()))
        .collect();
    filters.iter().all(|f| match f {
        Filter::TagKey(keys) => tags.iter().any(|(k, _)| keys.iter().any(|x| x == k)),
        Filter::TagValue(vals) => tags.iter().any(|(_, v)| vals.iter().any(|x| x == v)),
        Filter::Tag(key, vals) => tags
            .iter()
            .any(|(k, v)| k == key && vals.iter().any(|x| x == v)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> NewGroupContext<'static> {
        NewGroupContext {
            id: "g-id".into(),
            region: "us-east-1",
            account: "123456789012",
            cloud: "hotel".into(),
            default_zone: "hotel-a",
            now: crate::time::parse_timestamp("2026-01-01T00:00:00Z").unwrap(),
        }
    }

    #[test]
    fn defaults_and_round_trip_fields() {
        let input = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "web@hotel",
            "MinSize": 1, "MaxSize": 5, "TerminationPolicies": ["OldestInstance"],
            "Tags": [{"Key": "team", "Value": "a", "PropagateAtLaunch": true}],
            "LifecycleHookSpecificationList": [{"LifecycleHookName": "h",
                "LifecycleTransition": "autoscaling:EC2_INSTANCE_LAUNCHING"}]});
        let g = from_input(&input, ctx()).unwrap();
        assert_eq!((g.min, g.max, g.desired, g.version), (1, 5, 1, 1));
        let d = g.describe();
        assert_eq!(d["DesiredCapacity"], 1);
        assert_eq!(d["AvailabilityZones"], json!(["hotel-a"]));
        assert_eq!(d["TerminationPolicies"], json!(["OldestInstance"]));
        assert_eq!(d["Tags"][0]["ResourceId"], "g");
        assert_eq!(d["Tags"][0]["ResourceType"], "auto-scaling-group");
        assert_eq!(d["DefaultCooldown"], 300);
        assert!(d.get("LifecycleHookSpecificationList").is_none());
        assert_eq!(
            g.target().hooks.len(),
            1,
            "the hooks given become the group's"
        );
        let bad = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "web@hotel",
            "MinSize": 0, "MaxSize": 1,
            "LifecycleHookSpecificationList": [{"LifecycleHookName": "h", "LifecycleTransition": "x"}]});
        assert!(from_input(&bad, ctx()).is_err());
    }

    #[test]
    fn subnets_mean_no_default_zone() {
        let input = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l",
            "MinSize": 0, "MaxSize": 1, "VPCZoneIdentifier": "subnet-1,subnet-2"});
        let g = from_input(&input, ctx()).unwrap();
        assert!(g.settings.availability_zones.is_empty());
        assert_eq!(
            g.settings.vpc_zone_identifier.as_deref(),
            Some("subnet-1,subnet-2")
        );
        assert_eq!(g.subnets(), ["subnet-1", "subnet-2"]);
    }

    #[test]
    fn size_errors_use_aws_wording() {
        assert_eq!(
            check_sizes(5, 1, 1).unwrap_err().message,
            "Max bound, 1, must be greater than or equal to min bound, 5"
        );
        assert_eq!(
            check_sizes(1, 5, 9).unwrap_err().message,
            "Desired capacity:9 must be between the specified min size:1 and max size:5"
        );
        let g = from_input(&json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": 1, "MaxSize": 3}), ctx()).unwrap();
        assert!(check_new_desired(&g, 4)
            .unwrap_err()
            .message
            .contains("above max value 3"));
        assert!(check_new_desired(&g, 0)
            .unwrap_err()
            .message
            .contains("below min value 1"));
        check_new_desired(&g, 3).unwrap();
    }

    #[test]
    fn refuses_bad_groups() {
        for input in [
            json!({"AutoScalingGroupName": "g", "MinSize": 0, "MaxSize": 1}),
            json!({"AutoScalingGroupName": "g", "LaunchTemplate": {"LaunchTemplateId": "lt", "Version": "x"}, "MinSize": 0, "MaxSize": 1}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "LaunchTemplate": {"LaunchTemplateId": "lt"}, "MinSize": 0, "MaxSize": 1}),
            json!({"AutoScalingGroupName": "g", "InstanceId": "i-1", "MinSize": 0, "MaxSize": 1}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": -1, "MaxSize": 1}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": 0, "MaxSize": 1, "TerminationPolicies": ["Random"]}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": 0, "MaxSize": 1, "HealthCheckType": "ELB"}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": 0, "MaxSize": 1, "Tags": [{"Key": "a"}, {"Key": "a"}]}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": 0, "MaxSize": 1, "Tags": [{"Key": "aws:x"}]}),
        ] {
            assert_eq!(
                from_input(&input, ctx()).unwrap_err().code,
                "ValidationError",
                "{input}"
            );
        }
    }

    #[test]
    fn settings_phantom_does_not_act_on_are_refused_not_stored() {
        let base = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l",
            "MinSize": 0, "MaxSize": 1});
        for (member, _) in REFUSED {
            let mut input = base.clone();
            input[member] = match member {
                "LoadBalancerNames" | "TargetGroupARNs" | "AvailabilityZoneIds" => json!(["x"]),
                "TrafficSources" => json!([{"Identifier": "arn:tg"}]),
                "PlacementGroup" | "DeletionProtection" | "ServiceLinkedRoleARN" => json!("x"),
                "CapacityRebalance" | "SkipZonalShiftValidation" => json!(true),
                "DefaultInstanceWarmup" => json!(30),
                _ => json!({"Any": "thing"}),
            };
            let e = from_input(&input, ctx()).unwrap_err();
            assert_eq!(e.code, "ValidationError", "{member}");
            assert!(
                e.message.starts_with(&format!("{member} is not supported")),
                "{}",
                e.message
            );
            let g = from_input(&base, ctx()).unwrap();
            assert_eq!(update(&g, &input).unwrap_err().message, e.message);
        }
        // Their AWS defaults change nothing, so they pass.
        let mut defaults = base.clone();
        for (member, value) in [
            ("LoadBalancerNames", json!([])),
            ("CapacityRebalance", json!(false)),
            ("DeletionProtection", json!("none")),
            ("DesiredCapacityType", json!("units")),
        ] {
            defaults[member] = value;
        }
        from_input(&defaults, ctx()).unwrap();
        defaults["DesiredCapacityType"] = json!("vcpu");
        assert!(from_input(&defaults, ctx()).is_err());
    }

    #[test]
    fn tag_filters() {
        let tag = |key: &str, value: &str| TagDescription {
            resource_id: "g".into(),
            resource_type: "auto-scaling-group".into(),
            key: key.into(),
            value: value.into(),
            propagate_at_launch: false,
        };
        let doc = [tag("env", "prod"), tag("team", "a")];
        let f = |v: Value| parse_filters(&v).unwrap();
        assert!(matches_filters(
            &doc,
            &f(json!([{"Name": "tag-key", "Values": ["env"]}]))
        ));
        assert!(matches_filters(
            &doc,
            &f(
                json!([{"Name": "tag:env", "Values": ["dev", "prod"]}, {"Name": "tag-value", "Values": ["a"]}])
            )
        ));
        assert!(!matches_filters(
            &doc,
            &f(json!([{"Name": "tag:env", "Values": ["dev"]}]))
        ));
        assert!(parse_filters(&json!([{"Name": "instance-id", "Values": ["x"]}])).is_err());
    }
}
