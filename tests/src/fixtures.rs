//! Groups and launch configurations as the API makes them, for the suites that write to a store
//! directly.

use phantom_model::group::TagDescription;
use phantom_model::launch_config::LaunchConfiguration;
use phantom_rules::group::{from_input, Group};
use phantom_rules::launch_config::LaunchConfig;
use serde_json::json;

/// Group `name` from launch configuration `lc` on cloud `hotel`, with the id `id`: sizes 0 to 10,
/// desired 2, in zone hotel-a.
pub fn group(name: &str, lc: &str, id: &str) -> Group {
    let ctx = phantom_rules::fixtures::test_context(id, 1_795_406_400_000);
    let input = json!({"AutoScalingGroupName": name, "LaunchConfigurationName": lc,
        "MinSize": 0, "MaxSize": 10, "DesiredCapacity": 2});
    let input = phantom_wire::query::input(input).expect("a CreateAutoScalingGroup request");
    from_input(&input, ctx).expect("a valid group")
}

/// `g` with these tags (key, value) in place of its own.
pub fn with_tags(g: &Group, tags: &[(&str, &str)]) -> Group {
    let mut next = g.clone();
    next.settings.tags = tags
        .iter()
        .map(|(k, v)| TagDescription {
            resource_id: g.name.clone(),
            resource_type: "auto-scaling-group".into(),
            key: k.to_string(),
            value: v.to_string(),
            propagate_at_launch: false,
        })
        .collect();
    next
}

/// Launch configuration `name` on hotel: ami-1 on t2.micro.
pub fn launch_config(name: &str) -> LaunchConfig {
    LaunchConfig {
        name: name.into(),
        cloud: "hotel".into(),
        settings: LaunchConfiguration::new(
            name,
            "arn:lc",
            "ami-1",
            "t2.micro",
            "2026-11-22T00:00:00.000Z",
        ),
    }
}
