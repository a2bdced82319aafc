//! Answers as AWS gives them, where tools and scripts look (docs/aws-parity.md), through
//! aws-sdk-autoscaling: exact messages, fields AWS fills in or leaves out, what a request may name.

use crate::provisioning::converges;
use crate::{create_group, create_lc, failure, group, invalid, Given};
use aws_sdk_autoscaling::types::StepAdjustment;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::ZONES;

#[tokio::test]
async fn messages_scripts_match_on_are_aws_words() {
    let Given { w, u, c } = Given::user("parity-words").await;
    // Teardown scripts take this one for "already deleted": AWS quotes the name here.
    let (code, msg) = failure(
        c.delete_auto_scaling_group()
            .auto_scaling_group_name("gone")
            .send()
            .await,
    );
    assert_eq!(
        (code.as_str(), msg.as_str()),
        (
            "ValidationError",
            "AutoScalingGroup name not found - AutoScalingGroup 'gone' not found"
        )
    );

    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 1, 1, 1).await;
    let ids = converges(&w, &u, "hotel", "web", 1).await;
    // Past MaxSize or below MinSize: "please update the AutoScalingGroup sizes appropriately".
    let outside = w.hotel.outside();
    let (code, msg) = failure(
        c.attach_instances()
            .auto_scaling_group_name("web")
            .instance_ids(&outside)
            .send()
            .await,
    );
    assert_eq!(
        (code.as_str(), msg.as_str()),
        (
            "ValidationError",
            "AutoScalingGroup web has min-size=1, max-size=1, and desired-size=1. To attach 1 instance, please update the AutoScalingGroup sizes appropriately."
        )
    );
    let (_, msg) = failure(
        c.enter_standby()
            .auto_scaling_group_name("web")
            .instance_ids(&ids[0])
            .should_decrement_desired_capacity(true)
            .send()
            .await,
    );
    assert_eq!(
        msg,
        "AutoScalingGroup web has min-size=1, max-size=1, and desired-size=1. To place into standby 1 instance, please update the AutoScalingGroup sizes appropriately."
    );
    let (_, msg) = failure(
        c.detach_instances()
            .auto_scaling_group_name("web")
            .instance_ids(&ids[0])
            .should_decrement_desired_capacity(true)
            .send()
            .await,
    );
    assert!(
        msg.ends_with(
            "To detach 1 instance, please update the AutoScalingGroup sizes appropriately."
        ),
        "{msg}"
    );

    // A scheduled action or a policy that is not there: "not found", which Terraform's destroy
    // takes for done.
    let (_, msg) = failure(
        c.delete_scheduled_action()
            .auto_scaling_group_name("web")
            .scheduled_action_name("nope")
            .send()
            .await,
    );
    assert_eq!(msg, "Scheduled action name not found");

    // Times inside messages in whole seconds, as AWS writes them.
    c.suspend_processes()
        .auto_scaling_group_name("web")
        .scaling_processes("AZRebalance")
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    let reason = g.suspended_processes()[0].suspension_reason().unwrap();
    let at = reason.strip_prefix("User suspended at ").expect(reason);
    assert!(
        at.ends_with('Z') && !at.contains('.') && at.len() == 20,
        "{reason}"
    );
    let cause = crate::causes(&w, &u, "web").await.remove(0);
    let at = &cause[3..23];
    assert!(at.ends_with('Z') && !at.contains('.'), "{cause}");
}

#[tokio::test]
async fn fields_as_aws_fills_them_in() {
    let (Given { w, u, c }, _) = Given::converged("parity-fields", 0, 2, 1).await;
    // DescribeAutoScalingInstances writes the health in capitals; the group's Instances do not.
    let out = c.describe_auto_scaling_instances().send().await.unwrap();
    assert_eq!(
        out.auto_scaling_instances()[0].health_status(),
        Some("HEALTHY")
    );
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.instances()[0].health_status(), Some("Healthy"));
    // IncludeInstances false: the group without them.
    let out = c
        .describe_auto_scaling_groups()
        .auto_scaling_group_names("web")
        .include_instances(false)
        .send()
        .await
        .unwrap();
    assert!(out.auto_scaling_groups()[0].instances().is_empty());

    // Terraform sends Cooldown 0 with a step policy; AWS takes it, and so does Phantom.
    c.put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("steps")
        .policy_type("StepScaling")
        .adjustment_type("ChangeInCapacity")
        .cooldown(0)
        .step_adjustments(
            StepAdjustment::builder()
                .metric_interval_lower_bound(0.0)
                .scaling_adjustment(1)
                .build(),
        )
        .send()
        .await
        .expect("a step policy with Cooldown 0");
    invalid(
        c.put_scaling_policy()
            .auto_scaling_group_name("web")
            .policy_name("steps")
            .policy_type("StepScaling")
            .adjustment_type("ChangeInCapacity")
            .cooldown(60)
            .step_adjustments(
                StepAdjustment::builder()
                    .metric_interval_lower_bound(0.0)
                    .scaling_adjustment(1)
                    .build(),
            )
            .send()
            .await,
    );
}

#[tokio::test]
async fn one_groups_activities_are_not_another_whose_name_begins_with_it() {
    let Given { w, u, .. } = Given::lc("parity-acts").await;
    create_group(&w, &u, "a", "web@hotel", 0, 2, 1).await;
    create_group(&w, &u, "a#1", "web@hotel", 0, 2, 2).await;
    w.until(30, "both groups in service", async || {
        let a = crate::provisioning::in_service(&w, &u, "a").await.len();
        let b = crate::provisioning::in_service(&w, &u, "a#1").await.len();
        (a == 1 && b == 2).then_some(())
    })
    .await;
    let groups = |name: &'static str| {
        let c = w.sdk(&u);
        async move {
            c.activities(name)
                .await
                .activities()
                .iter()
                .map(|a| a.auto_scaling_group_name().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(groups("a").await, ["a"]);
    assert_eq!(groups("a#1").await, ["a#1", "a#1"]);
}

#[tokio::test]
async fn new_zones_of_a_group_in_subnets_must_be_theirs() {
    let Given { w, u, c } = Given::lc("parity-zones").await;
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(0)
        .max_size(1)
        .vpc_zone_identifier(format!("subnet-{}", ZONES[0]))
        .send()
        .await
        .unwrap();
    let (code, msg) = failure(
        c.update_auto_scaling_group()
            .auto_scaling_group_name("web")
            .availability_zones(ZONES[1])
            .send()
            .await,
    );
    assert_eq!(
        (code.as_str(), msg.as_str()),
        (
            "ValidationError",
            "The availability zones of the specified subnets and the Auto Scaling group do not match"
        )
    );
    c.update("web", |g| g.availability_zones(ZONES[0])).await;
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.availability_zones(), [ZONES[0]]);
}
