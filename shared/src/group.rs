//! Auto Scaling groups: the checks and defaults of CreateAutoScalingGroup and SetDesiredCapacity,
//! and DescribeAutoScalingGroups' filters. Pure: no AWS types.

use crate::error::{ApiError, ApiResult};
use crate::model::Invalid;
use crate::reconcile::Target;
use crate::shapes;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use time::OffsetDateTime;

/// A stored group. Sizes live beside the document because they change (with `version`, which makes
/// every change a compare-and-set); the document holds the rest, changed whole by
/// UpdateAutoScalingGroup, the tag, process and metrics actions (each a compare-and-set too).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub name: String,
    /// The id in the group's ARN: tells this group from an earlier one of the same name (VMs carry
    /// it as a tag).
    pub id: String,
    pub launch_configuration: String,
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
    /// A group across clouds: what it remembers of each (`phantom::spread`).
    pub holds: crate::model::hold::Holds,
    pub doc: Value,
}

pub const DELETING: &str = "Delete in progress";

impl Group {
    /// The botocore `AutoScalingGroup` document DescribeAutoScalingGroups returns.
    pub fn describe(&self) -> Value {
        let mut doc = self.doc.clone();
        if let Some(o) = doc.as_object_mut() {
            o.insert("MinSize".into(), self.min.into());
            o.insert("MaxSize".into(), self.max.into());
            o.insert("DesiredCapacity".into(), self.desired.into());
            if let Some(status) = &self.status {
                o.insert("Status".into(), status.clone().into());
            }
        }
        doc
    }

    /// When its first scheduled action is due (Unix ms), if it has one and is not being deleted:
    /// what the store keeps in its index of due groups.
    pub fn due_ms(&self) -> Option<i64> {
        if self.deleting() {
            return None;
        }
        crate::schedule::next_due(&self.doc)
    }

    pub fn deleting(&self) -> bool {
        self.status.as_deref() == Some(DELETING)
    }

    /// What the provisioner aims at for this group.
    pub fn target(&self) -> Target {
        let d = &self.doc;
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        };
        Target {
            cloud: self.cloud.clone(),
            desired: self.desired,
            deleting: self.deleting(),
            grace_ms: d["HealthCheckGracePeriod"].as_i64().unwrap_or(0) * 1000,
            termination_policies: strings(&d["TerminationPolicies"]),
            zones: strings(&d["AvailabilityZones"]),
            subnets: d["VPCZoneIdentifier"]
                .as_str()
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            launch_configuration: self.launch_configuration.clone(),
            protect_new: d["NewInstancesProtectedFromScaleIn"]
                .as_bool()
                .unwrap_or(false),
            retry_at_ms: self.retry_at_ms,
            suspended: crate::processes::suspended(d),
            hooks: crate::lifecycle::hooks(d),
        }
    }

    /// The clouds a group spans (its `phantom:clouds` and `phantom:policy` tags), if it spans any.
    pub fn spread(&self) -> ApiResult<Option<crate::spread::Spread>> {
        crate::spread::Spread::of_tags(self.doc["Tags"].as_array().into_iter().flatten().map(|t| {
            (
                t["Key"].as_str().unwrap_or_default(),
                t["Value"].as_str().unwrap_or_default(),
            )
        }))
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
        self.doc["Tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["PropagateAtLaunch"].as_bool() == Some(true))
            .map(|t| {
                (
                    t["Key"].as_str().unwrap_or_default().to_string(),
                    t["Value"].as_str().unwrap_or_default().to_string(),
                )
            })
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
pub const MAX_TAGS: usize = 50;

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
        .unwrap_or_default()
        .to_string();
    refuse_unsupported(input)?;
    let sources = [
        "LaunchConfigurationName",
        "LaunchTemplate",
        "MixedInstancesPolicy",
    ]
    .iter()
    .filter(|k| input.get(**k).is_some())
    .count();
    if sources != 1 {
        return Err(ApiError::validation(
            "Valid requests must contain exactly one of LaunchTemplate, LaunchConfigurationName or MixedInstancesPolicy parameter.",
        ));
    }
    let lc = input["LaunchConfigurationName"].as_str();
    let min = input["MinSize"].as_i64().unwrap_or_default();
    let max = input["MaxSize"].as_i64().unwrap_or_default();
    let desired = input["DesiredCapacity"].as_i64().unwrap_or(min);
    check_sizes(min, max, desired)?;
    check_settings(input)?;
    let tags = tag_descriptions(&name, &input["Tags"])?;

    let mut doc = json!({
        "AutoScalingGroupName": name,
        "AutoScalingGroupARN": arn(ctx.region, ctx.account, &ctx.id, &name),
        "DefaultCooldown": 300,
        "HealthCheckType": "EC2",
        "HealthCheckGracePeriod": 0,
        "Instances": [],
        "CreatedTime": crate::time::format_timestamp(ctx.now),
        "SuspendedProcesses": [],
        "EnabledMetrics": [],
        "LoadBalancerNames": [],
        "TargetGroupARNs": [],
        "TrafficSources": [],
        "TerminationPolicies": ["Default"],
        "NewInstancesProtectedFromScaleIn": false,
        "CapacityRebalance": false,
        "ServiceLinkedRoleARN": service_linked_role(ctx.account),
        "AvailabilityZones": [],
    });
    copy_settings(input, &mut doc);
    if let Some(hooks) =
        crate::lifecycle::from_specifications(&name, &input["LifecycleHookSpecificationList"])?
    {
        doc["LifecycleHooks"] = hooks;
    }
    let out = doc.as_object_mut().expect("an object");
    out.insert("Tags".into(), tags);
    let no_zones = out["AvailabilityZones"]
        .as_array()
        .is_none_or(|a| a.is_empty());
    if no_zones && input.get("VPCZoneIdentifier").is_none() {
        out.insert("AvailabilityZones".into(), json!([ctx.default_zone]));
    }
    Ok(Group {
        name,
        id: ctx.id,
        // A group from a launch template has no launch configuration.
        launch_configuration: lc.unwrap_or_default().to_string(),
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
        doc,
    })
}

/// The settings of a group's input that CreateAutoScalingGroup and UpdateAutoScalingGroup check
/// alike.
fn check_settings(input: &Value) -> ApiResult<()> {
    refuse_unsupported(input)?;
    for (field, value) in [
        ("DefaultCooldown", &input["DefaultCooldown"]),
        ("HealthCheckGracePeriod", &input["HealthCheckGracePeriod"]),
        ("DefaultInstanceWarmup", &input["DefaultInstanceWarmup"]),
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
    for p in input["TerminationPolicies"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let p = p.as_str().unwrap_or_default();
        if !TERMINATION_POLICIES.contains(&p) {
            return Err(ApiError::validation(format!(
                "Termination policy '{p}' is not one of {}.",
                TERMINATION_POLICIES.join(", ")
            )));
        }
    }
    Ok(())
}

fn refuse_unsupported(input: &Value) -> ApiResult<()> {
    if input.get("InstanceId").is_some() {
        return Err(ApiError::validation(
            "Phantom launches from launch configurations and launch templates: InstanceId is not supported, give LaunchConfigurationName or LaunchTemplate.",
        ));
    }
    crate::template::of(input)?;
    Ok(())
}

/// Copies every input member the output shape has into the group's document (what is stored is
/// what Describe returns), but the name, the sizes and the tags, which have their own rules.
fn copy_settings(input: &Value, doc: &mut Value) {
    let describable: Vec<&str> = shapes::members("AutoScalingGroup")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let out = doc.as_object_mut().expect("a group document is an object");
    for (k, v) in input.as_object().into_iter().flatten() {
        if describable.contains(&k.as_str())
            && ![
                "AutoScalingGroupName",
                "MinSize",
                "MaxSize",
                "DesiredCapacity",
                "Tags",
            ]
            .contains(&k.as_str())
        {
            out.insert(k.clone(), v.clone());
        }
    }
}

/// UpdateAutoScalingGroup: the group with the input's changes, checked as AWS checks them. A new
/// MinSize above the current desired capacity raises it, a new MaxSize below lowers it, when the
/// input gives no DesiredCapacity. The caller has checked that a new launch configuration exists
/// and is on the group's cloud.
pub fn update(g: &Group, input: &Value) -> ApiResult<Group> {
    check_settings(input)?;
    let min = input["MinSize"].as_i64().unwrap_or(g.min);
    let max = input["MaxSize"].as_i64().unwrap_or(g.max);
    let desired = input["DesiredCapacity"]
        .as_i64()
        .unwrap_or_else(|| g.desired.max(min).min(max));
    check_sizes(min, max, desired)?;
    let mut next = g.clone();
    copy_settings(input, &mut next.doc);
    // A new source replaces the old one, whichever kind each is.
    let doc = next
        .doc
        .as_object_mut()
        .expect("a group document is an object");
    if let Some(lc) = input["LaunchConfigurationName"].as_str() {
        if input.get("LaunchTemplate").is_some() || input.get("MixedInstancesPolicy").is_some() {
            return Err(ApiError::validation(
                "Give one of LaunchConfigurationName, LaunchTemplate or MixedInstancesPolicy.",
            ));
        }
        next.launch_configuration = lc.to_string();
        doc.remove("LaunchTemplate");
        doc.remove("MixedInstancesPolicy");
    } else if input.get("LaunchTemplate").is_some() {
        next.launch_configuration = String::new();
        doc.remove("LaunchConfigurationName");
        doc.remove("MixedInstancesPolicy");
    } else if input.get("MixedInstancesPolicy").is_some() {
        next.launch_configuration = String::new();
        doc.remove("LaunchConfigurationName");
        doc.remove("LaunchTemplate");
    }
    // Zones or subnets: the new ones replace both (a group has one or the other).
    if input.get("VPCZoneIdentifier").is_some() && input.get("AvailabilityZones").is_none() {
        let zones = next.doc["AvailabilityZones"].clone();
        if zones.as_array().is_some_and(|z| !z.is_empty()) {
            next.doc["AvailabilityZones"] = json!([]);
        }
    }
    (next.min, next.max, next.desired) = (min, max, desired);
    Ok(next)
}

/// Input `Tag`s become `TagDescription`s of this group.
fn tag_descriptions(group: &str, tags: &Value) -> ApiResult<Value> {
    let tags = tags.as_array().cloned().unwrap_or_default();
    if tags.len() > MAX_TAGS {
        return Err(ApiError::validation(format!(
            "A group may have at most {MAX_TAGS} tags, got {}.",
            tags.len()
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(tags.len());
    for t in tags {
        let key = t["Key"].as_str().unwrap_or_default().to_string();
        if key.to_ascii_lowercase().starts_with("aws:") {
            return Err(ApiError::validation(format!(
                "Tag keys starting with 'aws:' are reserved: '{key}'."
            )));
        }
        if !seen.insert(key.clone()) {
            return Err(ApiError::validation(format!("Duplicate tag key '{key}'.")));
        }
        let mut d = Map::new();
        d.insert("ResourceId".into(), group.into());
        d.insert("ResourceType".into(), "auto-scaling-group".into());
        d.insert("Key".into(), key.into());
        d.insert(
            "Value".into(),
            t.get("Value").cloned().unwrap_or_else(|| "".into()),
        );
        d.insert(
            "PropagateAtLaunch".into(),
            t.get("PropagateAtLaunch").cloned().unwrap_or(false.into()),
        );
        out.push(Value::Object(d));
    }
    Ok(Value::Array(out))
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
pub fn matches_filters(doc: &Value, filters: &[Filter]) -> bool {
    let tags: Vec<(&str, &str)> = doc["Tags"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            (
                t["Key"].as_str().unwrap_or_default(),
                t["Value"].as_str().unwrap_or_default(),
            )
        })
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
        assert_eq!(g.doc["AvailabilityZones"], json!([]));
        assert_eq!(g.doc["VPCZoneIdentifier"], "subnet-1,subnet-2");
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
    fn tag_filters() {
        let doc = json!({"Tags": [{"Key": "env", "Value": "prod"}, {"Key": "team", "Value": "a"}]});
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
