//! Scaling policies through aws-sdk-autoscaling: each kind's arithmetic, cooldowns refused or
//! skipped as AWS does, step intervals chosen by the metric, policies described, filtered, paged,
//! replaced and deleted, and each execution a scaling activity in AWS's words.

use super::{causes, create_group, create_lc, failure, group};
use crate::invalid;
use aws_sdk_autoscaling::types::StepAdjustment;
use phantom_e2e::world::World;
use phantom_e2e::User;

async fn desired(w: &World, u: &User, name: &str) -> i32 {
    group(w, u, name)
        .await
        .expect("the group")
        .desired_capacity()
        .expect("a desired capacity")
}

async fn simple(
    w: &World,
    u: &User,
    name: &str,
    kind: &str,
    n: i32,
    cooldown: Option<i32>,
) -> String {
    w.sdk(u)
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name(name)
        .adjustment_type(kind)
        .scaling_adjustment(n)
        .set_cooldown(cooldown)
        .send()
        .await
        .expect("put-scaling-policy")
        .policy_arn()
        .expect("an ARN")
        .to_string()
}

async fn execute(w: &World, u: &User, name: &str, honor: bool) -> Result<(), (String, String)> {
    let r = w
        .sdk(u)
        .execute_policy()
        .auto_scaling_group_name("web")
        .policy_name(name)
        .honor_cooldown(honor)
        .send()
        .await;
    match r {
        Ok(_) => Ok(()),
        Err(e) => Err(failure::<(), _>(Err(e))),
    }
}

async fn setup(prefix: &str) -> (World, User) {
    let w = World::new().await;
    let u = w.user(prefix).await;
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 1, 10, 2).await;
    (w, u)
}

#[tokio::test]
async fn each_adjustment_type_does_awss_arithmetic_and_records_an_activity() {
    let (w, u) = setup("arith").await;
    let arn = simple(&w, &u, "up", "ChangeInCapacity", 2, None).await;
    assert!(
        arn.starts_with("arn:aws:autoscaling:us-east-1:")
            && arn.contains(":scalingPolicy:")
            && arn.ends_with(":autoScalingGroupName/web:policyName/up"),
        "{arn}"
    );
    execute(&w, &u, "up", false).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 4);
    let cause = &causes(&w, &u, "web").await[0];
    assert!(
        cause.contains(
            "a user request executed policy up changing the desired capacity from 2 to 4"
        ),
        "{cause}"
    );

    simple(&w, &u, "half-more", "PercentChangeInCapacity", 50, None).await;
    execute(&w, &u, "half-more", false).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 6, "4 + 50 %");
    // 10 % of 6 is 0.6: rounded up to 1, then raised to the minimum magnitude of 3.
    w.sdk(&u)
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("nudge")
        .adjustment_type("PercentChangeInCapacity")
        .scaling_adjustment(10)
        .min_adjustment_magnitude(3)
        .send()
        .await
        .unwrap();
    execute(&w, &u, "nudge", false).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 9);
    // Beyond MaxSize: held at it.
    execute(&w, &u, "up", false).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 10);
    simple(&w, &u, "three", "ExactCapacity", 3, None).await;
    execute(&w, &u, "three", false).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 3);
    // And the provisioner follows.
    w.run_for(5).await;
    assert_eq!(w.hotel.alive().len(), 3);
}

#[tokio::test]
async fn the_cooldown_refuses_what_honours_it_and_lets_the_rest_through() {
    let (w, u) = setup("cool").await;
    simple(&w, &u, "up", "ChangeInCapacity", 1, Some(60)).await;
    execute(&w, &u, "up", true).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 3);
    let (code, _) = execute(&w, &u, "up", true).await.unwrap_err();
    assert_eq!(code, "ScalingActivityInProgress");
    let (code, _) = failure(
        w.sdk(&u)
            .set_desired_capacity()
            .auto_scaling_group_name("web")
            .desired_capacity(5)
            .honor_cooldown(true)
            .send()
            .await,
    );
    assert_eq!(code, "ScalingActivityInProgress");
    assert_eq!(desired(&w, &u, "web").await, 3, "nothing changed");
    // Without HonorCooldown it runs (and starts the cooldown again).
    execute(&w, &u, "up", false).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 4);
    w.clock.advance_ms(59_000);
    assert!(execute(&w, &u, "up", true).await.is_err());
    w.clock.advance_ms(1_000);
    execute(&w, &u, "up", true).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 5);
    // A policy without a cooldown of its own takes the group's DefaultCooldown (300 s).
    simple(&w, &u, "down", "ChangeInCapacity", -1, None).await;
    execute(&w, &u, "down", false).await.unwrap();
    w.clock.advance_ms(299_000);
    assert!(execute(&w, &u, "down", true).await.is_err());
    w.clock.advance_ms(1_000);
    execute(&w, &u, "down", true).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 3);
}

#[tokio::test]
async fn a_step_policy_takes_the_step_its_metric_falls_in() {
    let (w, u) = setup("steps").await;
    let step = |lower: Option<f64>, upper: Option<f64>, n: i32| {
        StepAdjustment::builder()
            .set_metric_interval_lower_bound(lower)
            .set_metric_interval_upper_bound(upper)
            .scaling_adjustment(n)
            .build()
    };
    w.sdk(&u)
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("cpu")
        .policy_type("StepScaling")
        .adjustment_type("ChangeInCapacity")
        .step_adjustments(step(Some(0.0), Some(20.0), 1))
        .step_adjustments(step(Some(20.0), None, 3))
        .step_adjustments(step(None, Some(0.0), -1))
        .send()
        .await
        .unwrap();
    let run = |metric: f64| {
        w.sdk(&u)
            .execute_policy()
            .auto_scaling_group_name("web")
            .policy_name("cpu")
            .metric_value(metric)
            .breach_threshold(50.0)
            .send()
    };
    run(65.0).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 3, "+1 for 15 over");
    run(70.0).await.unwrap();
    assert_eq!(
        desired(&w, &u, "web").await,
        6,
        "+3 at 20 over (lower bound inclusive)"
    );
    run(40.0).await.unwrap();
    assert_eq!(desired(&w, &u, "web").await, 5, "-1 below");
    let (code, message) = failure(
        w.sdk(&u)
            .execute_policy()
            .auto_scaling_group_name("web")
            .policy_name("cpu")
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    assert!(message.contains("MetricValue"), "{message}");

    // Intervals with a gap are refused, and nothing is stored.
    let message = invalid(
        w.sdk(&u)
            .put_scaling_policy()
            .auto_scaling_group_name("web")
            .policy_name("gappy")
            .policy_type("StepScaling")
            .adjustment_type("ChangeInCapacity")
            .step_adjustments(step(Some(0.0), Some(10.0), 1))
            .step_adjustments(step(Some(15.0), None, 2))
            .send()
            .await,
    );
    assert!(message.contains("gap"), "{message}");
    let all = w.sdk(&u).describe_policies().send().await.unwrap();
    assert_eq!(all.scaling_policies().len(), 1);
}

#[tokio::test]
async fn policies_are_described_filtered_paged_replaced_and_deleted() {
    let (w, u) = setup("describe").await;
    let first = simple(&w, &u, "a", "ChangeInCapacity", 1, None).await;
    for name in ["b", "c"] {
        simple(&w, &u, name, "ChangeInCapacity", 1, None).await;
    }
    // Put again: replaced in place, its ARN kept.
    assert_eq!(
        simple(&w, &u, "a", "ExactCapacity", 4, Some(10)).await,
        first
    );
    let page = w
        .sdk(&u)
        .describe_policies()
        .auto_scaling_group_name("web")
        .max_records(2)
        .send()
        .await
        .unwrap();
    let names: Vec<&str> = page
        .scaling_policies()
        .iter()
        .filter_map(|p| p.policy_name())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        page.scaling_policies()[0].adjustment_type(),
        Some("ExactCapacity")
    );
    assert_eq!(page.scaling_policies()[0].cooldown(), Some(10));
    let rest = w
        .sdk(&u)
        .describe_policies()
        .next_token(page.next_token().expect("a next page"))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.scaling_policies().len(), 1);
    assert!(rest.next_token().is_none());
    let by_arn = w
        .sdk(&u)
        .describe_policies()
        .policy_names(&first)
        .send()
        .await
        .unwrap();
    assert_eq!(by_arn.scaling_policies()[0].policy_name(), Some("a"));
    let steps = w
        .sdk(&u)
        .describe_policies()
        .policy_types("StepScaling")
        .send()
        .await
        .unwrap();
    assert!(steps.scaling_policies().is_empty());

    // By ARN alone (no group name): deleted; then unknown.
    w.sdk(&u)
        .delete_policy()
        .policy_name(&first)
        .send()
        .await
        .unwrap();
    let (code, _) = execute(&w, &u, "a", false).await.unwrap_err();
    assert_eq!(code, "ValidationError");
    let (code, message) = failure(
        w.sdk(&u)
            .delete_policy()
            .auto_scaling_group_name("web")
            .policy_name("a")
            .send()
            .await,
    );
    assert_eq!(
        (code.as_str(), message.as_str()),
        (
            "ValidationError",
            "Policy a not found for AutoScalingGroup web"
        )
    );

    // A predictive policy without its configuration is refused, and nothing is stored.
    let (code, message) = failure(
        w.sdk(&u)
            .put_scaling_policy()
            .auto_scaling_group_name("web")
            .policy_name("forecast")
            .policy_type("PredictiveScaling")
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    assert_eq!(
        message,
        "PredictiveScalingConfiguration is required for policy type PredictiveScaling."
    );
    assert_eq!(
        w.sdk(&u)
            .describe_policies()
            .send()
            .await
            .unwrap()
            .scaling_policies()
            .len(),
        2
    );
    // Another user sees none of them.
    let other = w.user("other").await;
    assert!(w
        .sdk(&other)
        .describe_policies()
        .send()
        .await
        .unwrap()
        .scaling_policies()
        .is_empty());
}
