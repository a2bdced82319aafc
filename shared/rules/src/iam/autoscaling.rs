//! What an Auto Scaling action names for IAM, as AWS's Service Authorization Reference lists it:
//! the resources a policy's `Resource` is matched against (a group, the group of an instance, a
//! launch configuration, or `*` for the Describe actions) and the condition keys its input sets.

use super::Context;
use serde_json::Value;

/// The resources an action's authorization names, read from its decoded input.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Named {
    /// Groups by name.
    pub groups: Vec<String>,
    /// A VM whose group is named (SetInstanceHealth, TerminateInstanceInAutoScalingGroup).
    pub instance: Option<String>,
    pub launch_configuration: Option<String>,
}

impl Named {
    /// Named nothing: the action is authorized on `*`.
    pub fn is_any(&self) -> bool {
        self.groups.is_empty() && self.instance.is_none() && self.launch_configuration.is_none()
    }
}

fn text<'a>(input: &'a Value, member: &str) -> Option<&'a str> {
    input.get(member).and_then(Value::as_str)
}

/// The resources `action` names in `input`.
pub fn named(action: &str, input: &Value) -> Named {
    let reads = action.starts_with("Describe") || action == "GetPredictiveScalingForecast";
    if reads {
        return Named::default();
    }
    let mut out = Named::default();
    match action {
        "CreateLaunchConfiguration" | "DeleteLaunchConfiguration" => {
            out.launch_configuration = text(input, "LaunchConfigurationName").map(String::from);
        }
        "SetInstanceHealth" | "TerminateInstanceInAutoScalingGroup" => {
            out.instance = text(input, "InstanceId").map(String::from);
        }
        "CreateOrUpdateTags" | "DeleteTags" => {
            let mut groups: Vec<String> = tags(input)
                .filter(|t| text(t, "ResourceType") == Some("auto-scaling-group"))
                .filter_map(|t| text(t, "ResourceId").map(String::from))
                .collect();
            groups.sort();
            groups.dedup();
            out.groups = groups;
        }
        _ => {
            if let Some(g) = text(input, "AutoScalingGroupName") {
                out.groups.push(g.to_string());
            }
        }
    }
    out
}

fn tags(input: &Value) -> impl Iterator<Item = &Value> {
    input
        .get("Tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The condition keys Auto Scaling documents for what a request asks: the tags it sets
/// (`aws:RequestTag/<key>`, `aws:TagKeys`), the launch configuration or template it names, and
/// the sizes it sets.
pub fn request_keys(action: &str, input: &Value, ctx: &mut Context) {
    let tagging = matches!(
        action,
        "CreateAutoScalingGroup" | "CreateOrUpdateTags" | "DeleteTags"
    );
    if tagging {
        let mut keys = Vec::new();
        for t in tags(input) {
            let Some(k) = text(t, "Key") else { continue };
            keys.push(k.to_string());
            if let Some(v) = text(t, "Value") {
                ctx.set(&format!("aws:RequestTag/{k}"), vec![v.to_string()]);
            }
        }
        ctx.set("aws:TagKeys", keys);
    }
    if let Some(lc) = text(input, "LaunchConfigurationName") {
        ctx.set("autoscaling:LaunchConfigurationName", vec![lc.to_string()]);
    }
    let template = input.get("LaunchTemplate").or_else(|| {
        input.pointer("/MixedInstancesPolicy/LaunchTemplate/LaunchTemplateSpecification")
    });
    if let Some(t) = template {
        let specified = t.get("Version").is_some();
        ctx.set(
            "autoscaling:LaunchTemplateVersionSpecified",
            vec![specified.to_string()],
        );
        if let Some(name) = text(t, "LaunchTemplateName").or_else(|| text(t, "LaunchTemplateId")) {
            ctx.set("autoscaling:LaunchTemplate", vec![name.to_string()]);
        }
    }
    for (member, key) in [
        ("MinSize", "autoscaling:MinSize"),
        ("MaxSize", "autoscaling:MaxSize"),
    ] {
        if let Some(n) = input.get(member).and_then(Value::as_i64) {
            ctx.set(key, vec![n.to_string()]);
        }
    }
    if let Some(subnets) = text(input, "VPCZoneIdentifier") {
        let ids = subnets
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        ctx.set("autoscaling:VPCZoneIdentifiers", ids);
    }
}

/// A group's tags as the keys a policy reads them with (`autoscaling:ResourceTag/<key>` and
/// `aws:ResourceTag/<key>`).
pub fn resource_keys<'a>(tags: impl IntoIterator<Item = (&'a str, &'a str)>, ctx: &mut Context) {
    for (k, v) in tags {
        ctx.set(&format!("autoscaling:ResourceTag/{k}"), vec![v.to_string()]);
        ctx.set(&format!("aws:ResourceTag/{k}"), vec![v.to_string()]);
    }
}

/// A launch configuration's ARN as a policy names it (its id is not known before it exists).
pub fn launch_configuration_arn(region: &str, account: &str, name: &str) -> String {
    format!("arn:aws:autoscaling:{region}:{account}:launchConfiguration:*:launchConfigurationName/{name}")
}

/// A group that does not exist (yet) as a policy names it.
pub fn unknown_group_arn(region: &str, account: &str, name: &str) -> String {
    crate::group::arn(region, account, "*", name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn actions_name_their_resources() {
        let set = json!({"AutoScalingGroupName": "web", "DesiredCapacity": 2});
        assert_eq!(named("SetDesiredCapacity", &set).groups, ["web"]);
        // The Describe actions are authorized on `*`, whatever they name.
        assert!(named("DescribeScalingActivities", &set).is_any());
        let kill = json!({"InstanceId": "i-1", "ShouldDecrementDesiredCapacity": true});
        let n = named("TerminateInstanceInAutoScalingGroup", &kill);
        assert_eq!(n.instance.as_deref(), Some("i-1"));
        let tags = json!({"Tags": [
            {"ResourceId": "b", "ResourceType": "auto-scaling-group", "Key": "k", "Value": "v"},
            {"ResourceId": "a", "ResourceType": "auto-scaling-group", "Key": "k2"},
            {"ResourceId": "b", "ResourceType": "auto-scaling-group", "Key": "k3"},
        ]});
        assert_eq!(named("CreateOrUpdateTags", &tags).groups, ["a", "b"]);
        let mut ctx = Context::default();
        request_keys("CreateOrUpdateTags", &tags, &mut ctx);
        assert_eq!(ctx.get("aws:TagKeys").unwrap(), ["k", "k2", "k3"]);
        assert_eq!(ctx.get("aws:requesttag/k").unwrap(), ["v"]);
        let lc = json!({"LaunchConfigurationName": "lc@moto"});
        let n = named("DeleteLaunchConfiguration", &lc);
        assert_eq!(n.launch_configuration.as_deref(), Some("lc@moto"));
    }

    #[test]
    fn a_request_sets_the_keys_auto_scaling_documents() {
        let create = json!({
            "AutoScalingGroupName": "web", "MinSize": 1, "MaxSize": 4,
            "LaunchTemplate": {"LaunchTemplateName": "t"},
            "VPCZoneIdentifier": "subnet-1, subnet-2",
        });
        let mut ctx = Context::default();
        request_keys("CreateAutoScalingGroup", &create, &mut ctx);
        assert_eq!(ctx.get("autoscaling:MaxSize").unwrap(), ["4"]);
        assert_eq!(
            ctx.get("autoscaling:LaunchTemplateVersionSpecified")
                .unwrap(),
            ["false"]
        );
        assert_eq!(
            ctx.get("autoscaling:VPCZoneIdentifiers").unwrap(),
            ["subnet-1", "subnet-2"]
        );
        assert_eq!(ctx.get("aws:TagKeys").unwrap(), [] as [&str; 0]);
        resource_keys([("team", "a")], &mut ctx);
        assert_eq!(ctx.get("autoscaling:ResourceTag/team").unwrap(), ["a"]);
    }
}
