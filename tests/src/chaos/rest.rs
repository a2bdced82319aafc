//! Mix 5's requests: the rest of the 66 actions (every read, refreshes cancelled and rolled
//! back, scheduled actions in batches, traffic sources and classic load balancers, metrics
//! collection, heartbeats, launch configurations, LaunchInstances, target tracking and
//! predictive policies, MaxInstanceLifetime, balanced-only zones) and Phantom's own API (alarms on PromQL, webhooks,
//! the group's metrics and health, the caller's clouds).

use super::rng::Rng;
use super::work::{judge, Answer, Drawn, Scene};
use aws_sdk_autoscaling::types::{
    MetricType, PredefinedMetricSpecification, PredictiveScalingConfiguration,
    ScheduledUpdateGroupActionRequest, TargetTrackingConfiguration, TrafficSourceIdentifier,
};
use aws_sdk_autoscaling::Client;
use serde_json::json;
use std::time::Duration;

/// How many rolls of a request mix 5 adds (`work::request` draws them after mix 4's).
pub const ROLLS: u64 = 80;

/// The reads a user draws one of, by name (each answer judged in the model's shapes).
const READS: [&str; 20] = [
    "DescribeAccountLimits",
    "DescribeAdjustmentTypes",
    "DescribeAutoScalingNotificationTypes",
    "DescribeInstanceRefreshes",
    "DescribeLaunchConfigurations",
    "DescribeLifecycleHookTypes",
    "DescribeLifecycleHooks",
    "DescribeLoadBalancerTargetGroups",
    "DescribeLoadBalancers",
    "DescribeMetricCollectionTypes",
    "DescribeNotificationConfigurations",
    "DescribePolicies",
    "DescribeScalingProcessTypes",
    "DescribeScheduledActions",
    "DescribeTags",
    "DescribeTerminationPolicyTypes",
    "DescribeTrafficSources",
    "DescribeWarmPool",
    "GetPredictiveScalingForecast",
    "DescribeScalingActivities",
];

/// The policies a user's groups have, by name: `step` (mix 1's simple policy), `steps` (a step
/// policy, which the users' alarms run), `cpu` (target tracking) and `forecast` (predictive).
const POLICIES: [&str; 4] = ["step", "steps", "cpu", "forecast"];

/// The target of the `cpu` policies: the load the simulation sets at quiescence.
pub const CPU_TARGET: f64 = 50.0;

/// node_exporter's CPU series, which the predefined CPU metric and the users' alarms read.
pub const CPU: &str = "node_cpu_seconds_total";

/// A launch configuration a user makes and deletes as it goes, on `cloud`.
fn second_lc(cloud: &str) -> String {
    format!("lc2@{cloud}")
}

/// A step (lower bound, upper bound, adjustment) of policy `steps`.
pub type StepOf = (Option<f64>, Option<f64>, i32);

/// PutScalingPolicy of the step policy `steps` on `group`, changing the capacity by `steps`.
pub async fn put_steps(
    c: &Client,
    group: &str,
    steps: &[StepOf],
) -> Result<
    aws_sdk_autoscaling::operation::put_scaling_policy::PutScalingPolicyOutput,
    aws_sdk_autoscaling::error::SdkError<
        aws_sdk_autoscaling::operation::put_scaling_policy::PutScalingPolicyError,
        aws_smithy_runtime_api::client::orchestrator::HttpResponse,
    >,
> {
    let steps = steps.iter().map(|(lo, hi, n)| {
        aws_sdk_autoscaling::types::StepAdjustment::builder()
            .set_metric_interval_lower_bound(*lo)
            .set_metric_interval_upper_bound(*hi)
            .scaling_adjustment(*n)
            .build()
    });
    c.put_scaling_policy()
        .auto_scaling_group_name(group)
        .policy_name("steps")
        .policy_type("StepScaling")
        .adjustment_type("ChangeInCapacity")
        .set_step_adjustments(Some(steps.collect()))
        .send()
        .await
}

/// Draws and sends one of mix 5's requests (`roll` below `ROLLS`).
pub async fn request(c: &Client, rng: &mut Rng, scene: &Scene<'_>, roll: u64) -> (Drawn, Answer) {
    let group = scene.group;
    let drawn = |action, what: String| Drawn {
        action,
        what,
        vm: None,
    };
    let waiting: Vec<String> = scene
        .members
        .iter()
        .filter(|(_, l)| l.ends_with(":Wait"))
        .map(|(id, _)| id.clone())
        .collect();
    match roll {
        0..=14 => read(c, rng, group).await,
        15..=17 => {
            let r = c
                .cancel_instance_refresh()
                .auto_scaling_group_name(group)
                .send()
                .await;
            (drawn("CancelInstanceRefresh", group.to_string()), judge(r))
        }
        18..=19 => {
            let r = c
                .rollback_instance_refresh()
                .auto_scaling_group_name(group)
                .send()
                .await;
            (
                drawn("RollbackInstanceRefresh", group.to_string()),
                judge(r),
            )
        }
        20..=21 => {
            let policy = *rng.pick(&POLICIES).expect("four");
            let r = c
                .delete_policy()
                .auto_scaling_group_name(group)
                .policy_name(policy)
                .send()
                .await;
            (drawn("DeletePolicy", format!("{group} {policy}")), judge(r))
        }
        22..=24 => {
            // Two actions in one batch, the second at times past the group's bounds.
            let actions: Vec<ScheduledUpdateGroupActionRequest> = ["soon", "later"]
                .iter()
                .map(|name| {
                    let secs = rng.between(5, 180);
                    ScheduledUpdateGroupActionRequest::builder()
                        .scheduled_action_name(*name)
                        .start_time(aws_smithy_types::DateTime::from_millis(
                            scene.now_ms + secs * 1000,
                        ))
                        .desired_capacity(rng.between(0, 8) as i32)
                        .build()
                })
                .collect();
            let r = c
                .batch_put_scheduled_update_group_action()
                .auto_scaling_group_name(group)
                .set_scheduled_update_group_actions(Some(actions))
                .send()
                .await;
            // A batch answers 200 with the actions it could not put: judged as AWS's shape.
            let what = format!("{group} soon, later");
            (drawn("BatchPutScheduledUpdateGroupAction", what), judge(r))
        }
        25 => {
            let r = c
                .delete_scheduled_action()
                .auto_scaling_group_name(group)
                .scheduled_action_name("soon")
                .send()
                .await;
            (
                drawn("DeleteScheduledAction", format!("{group} soon")),
                judge(r),
            )
        }
        26 => {
            let r = c
                .batch_delete_scheduled_action()
                .auto_scaling_group_name(group)
                .scheduled_action_names("soon")
                .scheduled_action_names("later")
                .send()
                .await;
            let what = format!("{group} soon, later");
            (drawn("BatchDeleteScheduledAction", what), judge(r))
        }
        27..=28 => {
            let source = TrafficSourceIdentifier::builder()
                .identifier(scene.target_group)
                .r#type("elbv2")
                .build();
            let r = c
                .attach_traffic_sources()
                .auto_scaling_group_name(group)
                .traffic_sources(source)
                .send()
                .await;
            (drawn("AttachTrafficSources", group.to_string()), judge(r))
        }
        29 => {
            let source = TrafficSourceIdentifier::builder()
                .identifier(scene.target_group)
                .build();
            let r = c
                .detach_traffic_sources()
                .auto_scaling_group_name(group)
                .traffic_sources(source)
                .send()
                .await;
            (drawn("DetachTrafficSources", group.to_string()), judge(r))
        }
        30..=31 => {
            let r = c
                .attach_load_balancers()
                .auto_scaling_group_name(group)
                .load_balancer_names(scene.classic)
                .send()
                .await;
            let what = format!("{group} {}", scene.classic);
            (drawn("AttachLoadBalancers", what), judge(r))
        }
        32 => {
            let r = c
                .detach_load_balancers()
                .auto_scaling_group_name(group)
                .load_balancer_names(scene.classic)
                .send()
                .await;
            let what = format!("{group} {}", scene.classic);
            (drawn("DetachLoadBalancers", what), judge(r))
        }
        33..=34 => {
            let r = c
                .enable_metrics_collection()
                .auto_scaling_group_name(group)
                .granularity("1Minute")
                .send()
                .await;
            (
                drawn("EnableMetricsCollection", group.to_string()),
                judge(r),
            )
        }
        35 => {
            let r = c
                .disable_metrics_collection()
                .auto_scaling_group_name(group)
                .send()
                .await;
            (
                drawn("DisableMetricsCollection", group.to_string()),
                judge(r),
            )
        }
        36..=38 => {
            let Some(id) = rng.pick(&waiting).cloned() else {
                return read(c, rng, group).await;
            };
            let hook = *rng.pick(&["in", "out"]).expect("two");
            let r = c
                .record_lifecycle_action_heartbeat()
                .auto_scaling_group_name(group)
                .lifecycle_hook_name(hook)
                .instance_id(&id)
                .send()
                .await;
            let what = format!("{group} {hook} {id}");
            (drawn("RecordLifecycleActionHeartbeat", what), judge(r))
        }
        39..=40 => {
            let cloud = *rng.pick(&["hotel", "sierra"]).expect("two");
            let lc = second_lc(cloud);
            let r = c
                .create_launch_configuration()
                .launch_configuration_name(&lc)
                .image_id(crate::world::IMAGE)
                .instance_type(*rng.pick(&["t2.micro", "t2.small"]).expect("two"))
                .send()
                .await;
            (drawn("CreateLaunchConfiguration", lc), judge(r))
        }
        41..=42 => {
            let lc = second_lc(rng.pick(&["hotel", "sierra"]).expect("two"));
            let r = c
                .update_auto_scaling_group()
                .auto_scaling_group_name(group)
                .launch_configuration_name(&lc)
                .send()
                .await;
            (
                drawn("UpdateAutoScalingGroup", format!("{group} {lc}")),
                judge(r),
            )
        }
        43 => {
            let lc = second_lc(rng.pick(&["hotel", "sierra"]).expect("two"));
            let r = c
                .delete_launch_configuration()
                .launch_configuration_name(&lc)
                .send()
                .await;
            (drawn("DeleteLaunchConfiguration", lc), judge(r))
        }
        44 => launch_instances(c, rng, scene).await,
        45..=49 => {
            let disable_scale_in = rng.chance(0.3);
            let cfg = TargetTrackingConfiguration::builder()
                .predefined_metric_specification(
                    PredefinedMetricSpecification::builder()
                        .predefined_metric_type(MetricType::AsgAverageCpuUtilization)
                        .build(),
                )
                .target_value(CPU_TARGET)
                .disable_scale_in(disable_scale_in)
                .build();
            let r = c
                .put_scaling_policy()
                .auto_scaling_group_name(group)
                .policy_name("cpu")
                .policy_type("TargetTrackingScaling")
                .estimated_instance_warmup(rng.between(0, 30) as i32)
                .target_tracking_configuration(cfg)
                .send()
                .await;
            let what = format!("{group} cpu {CPU_TARGET} disable_scale_in={disable_scale_in}");
            (drawn("PutScalingPolicy", what), judge(r))
        }
        50..=51 => {
            let mode = *rng
                .pick(&["ForecastOnly", "ForecastAndScale"])
                .expect("two");
            let cfg = PredictiveScalingConfiguration::builder()
                .metric_specifications(crate::steps::cpu_forecast(CPU_TARGET))
                .mode(mode.into())
                .build();
            let r = c
                .put_scaling_policy()
                .auto_scaling_group_name(group)
                .policy_name("forecast")
                .policy_type("PredictiveScaling")
                .predictive_scaling_configuration(cfg)
                .send()
                .await;
            (
                drawn("PutScalingPolicy", format!("{group} forecast {mode}")),
                judge(r),
            )
        }
        52..=54 => {
            // A day or two, as AWS allows (at least 86,400 s), or off (0).
            let secs = *rng.pick(&[0, 86_400, 129_600, 172_800]).expect("four");
            let r = c
                .update_auto_scaling_group()
                .auto_scaling_group_name(group)
                .max_instance_lifetime(secs)
                .send()
                .await;
            let what = format!("{group} MaxInstanceLifetime {secs}");
            (drawn("UpdateAutoScalingGroup", what), judge(r))
        }
        55..=57 => {
            // +1 a little above the alarm's threshold, +2 well above (or below, for a
            // LessThanThreshold alarm: AWS's bounds are relative to the threshold either way).
            let steps = [(Some(0.0), Some(20.0), 1), (Some(20.0), None, 2)];
            let r = put_steps(c, group, &steps).await;
            (
                drawn("PutScalingPolicy", format!("{group} steps +1/+2")),
                judge(r),
            )
        }
        77..=79 => {
            // AWS's default, or balanced-only: a full zone's share waits for it.
            let strategy = *rng
                .pick(&["balanced-only", "balanced-best-effort"])
                .expect("two");
            let r = c
                .update_auto_scaling_group()
                .auto_scaling_group_name(group)
                .availability_zone_distribution(
                    aws_sdk_autoscaling::types::AvailabilityZoneDistribution::builder()
                        .capacity_distribution_strategy(strategy.into())
                        .build(),
                )
                .send()
                .await;
            let what = format!("{group} AvailabilityZoneDistribution {strategy}");
            (drawn("UpdateAutoScalingGroup", what), judge(r))
        }
        _ => own(rng, scene).await,
    }
}

/// One read of the group's (or the user's, or AWS's catalogs).
async fn read(c: &Client, rng: &mut Rng, group: &str) -> (Drawn, Answer) {
    let i = rng.below(READS.len() as u64) as usize;
    let answer = match i {
        0 => judge(c.describe_account_limits().send().await),
        1 => judge(c.describe_adjustment_types().send().await),
        2 => judge(c.describe_auto_scaling_notification_types().send().await),
        3 => judge(
            c.describe_instance_refreshes()
                .auto_scaling_group_name(group)
                .send()
                .await,
        ),
        4 => judge(c.describe_launch_configurations().send().await),
        5 => judge(c.describe_lifecycle_hook_types().send().await),
        6 => judge(
            c.describe_lifecycle_hooks()
                .auto_scaling_group_name(group)
                .send()
                .await,
        ),
        7 => judge(
            c.describe_load_balancer_target_groups()
                .auto_scaling_group_name(group)
                .send()
                .await,
        ),
        8 => judge(
            c.describe_load_balancers()
                .auto_scaling_group_name(group)
                .send()
                .await,
        ),
        9 => judge(c.describe_metric_collection_types().send().await),
        10 => judge(
            c.describe_notification_configurations()
                .auto_scaling_group_names(group)
                .send()
                .await,
        ),
        11 => judge(
            c.describe_policies()
                .auto_scaling_group_name(group)
                .send()
                .await,
        ),
        12 => judge(c.describe_scaling_process_types().send().await),
        13 => judge(
            c.describe_scheduled_actions()
                .auto_scaling_group_name(group)
                .send()
                .await,
        ),
        14 => judge(c.describe_tags().send().await),
        15 => judge(c.describe_termination_policy_types().send().await),
        16 => judge(
            c.describe_traffic_sources()
                .auto_scaling_group_name(group)
                .send()
                .await,
        ),
        17 => judge(
            c.describe_warm_pool()
                .auto_scaling_group_name(group)
                .send()
                .await,
        ),
        18 => judge(
            c.get_predictive_scaling_forecast()
                .auto_scaling_group_name(group)
                .policy_name("forecast")
                .start_time(aws_smithy_types::DateTime::from_secs(START_SECS))
                .end_time(aws_smithy_types::DateTime::from_secs(START_SECS + 86_400))
                .send()
                .await,
        ),
        _ => judge(
            c.describe_scaling_activities()
                .auto_scaling_group_name(group)
                .send()
                .await,
        ),
    };
    (
        Drawn {
            action: READS[i],
            what: group.to_string(),
            vm: None,
        },
        answer,
    )
}

/// When the forecasts a user reads start (the simulation's start, `chaos::START_MS`).
const START_SECS: i64 = super::START_MS / 1000;

/// LaunchInstances of one or two VMs, with a token of its own: the api waits for the
/// provisioner to carry it out, so the queue is worked meanwhile; a client that has no answer in
/// `GIVE_UP` gives up (the request is carried out or expires all the same).
async fn launch_instances(c: &Client, rng: &mut Rng, scene: &Scene<'_>) -> (Drawn, Answer) {
    const GIVE_UP: Duration = Duration::from_millis(700);
    let n = rng.between(1, 2) as i32;
    let token = format!("t-{}", rng.draw());
    let call = c
        .launch_instances()
        .auto_scaling_group_name(scene.group)
        .requested_capacity(n)
        .client_token(&token)
        .send();
    let (answer, _) = tokio::join!(tokio::time::timeout(GIVE_UP, call), scene.world.settle());
    let answer = match answer {
        Ok(r) => judge(r),
        Err(_) => Answer::Code("(no answer yet: the client gave up)".into()),
    };
    let what = format!("{} {n} token {token}", scene.group);
    (
        Drawn {
            action: "LaunchInstances",
            what,
            vm: None,
        },
        answer,
    )
}

/// One request of Phantom's own API (JSON at /phantom/v1/), judged as its clients read it: a
/// JSON answer with a RequestId, no 5xx but 503.
async fn own(rng: &mut Rng, scene: &Scene<'_>) -> (Drawn, Answer) {
    let group = scene.group;
    let policy = *rng.pick(&POLICIES).expect("four");
    // From mix 8 on, the rest of it: the caller's own clouds, key pairs, heartbeat URL and
    // scrape credential, and the administrators' operations (refused to a user).
    let kinds = if scene.mix >= 8 { 24 } else { 13 };
    let cloud = *rng.pick(&["hotel", "sierra", "nowhere"]).expect("three");
    let (op, body) = match rng.below(kinds) {
        0..=2 => (
            "PutPolicyAlarm",
            json!({"AutoScalingGroupName": group, "PolicyName": "steps",
                "Expression": format!("avg({CPU}{{$instances}})"),
                "ComparisonOperator": *rng.pick(&["GreaterThanThreshold", "LessThanThreshold"]).expect("two"),
                "Threshold": rng.between(20, 90) as f64,
                "EvaluationPeriods": rng.between(1, 4), "DatapointsToAlarm": 1}),
        ),
        3 => (
            "DescribePolicyAlarms",
            json!({"AutoScalingGroupName": group}),
        ),
        4 => (
            "DeletePolicyAlarm",
            json!({"AutoScalingGroupName": group, "PolicyName": "steps"}),
        ),
        5 => (
            "CreatePolicyWebhook",
            json!({"AutoScalingGroupName": group, "PolicyName": policy}),
        ),
        6 => (
            "DescribePolicyWebhooks",
            json!({"AutoScalingGroupName": group}),
        ),
        7 => (
            "DeletePolicyWebhook",
            json!({"AutoScalingGroupName": group, "PolicyName": policy}),
        ),
        8 => (
            "GetPolicyMetric",
            json!({"AutoScalingGroupName": group, "PolicyName": policy, "Minutes": 10}),
        ),
        9 => (
            "GetGroupMetrics",
            json!({"AutoScalingGroupName": group, "Minutes": 10}),
        ),
        10 => (
            "DescribeInstanceHealth",
            json!({"AutoScalingGroupName": group}),
        ),
        11 => (
            "DescribeInstanceMarkets",
            json!({"AutoScalingGroupName": group}),
        ),
        12 => ("ListClouds", json!({})),
        13 => ("GetCallerIdentity", json!({})),
        14 => ("DescribeCloudImages", json!({"Cloud": cloud})),
        15 => ("DescribeCloudKeyPairs", json!({"Cloud": cloud})),
        16 => (
            "ImportKeyPair",
            json!({"KeyName": format!("key-{}", rng.below(3)),
                "PublicKeyMaterial": *rng.pick(&[crate::PUBLIC_KEY, "not a key"]).expect("two"),
                "Clouds": [cloud]}),
        ),
        17 => ("GetHeartbeatUrl", json!({"AutoScalingGroupName": group})),
        18 => ("CreateScrapeCredential", json!({})),
        19 => ("DeleteScrapeCredential", json!({})),
        _ => (
            // The administrators' operations: a user is refused each, in Phantom's JSON.
            *rng.pick(api::self_service::ADMIN_OPERATIONS).expect("some"),
            json!({"Cloud": cloud, "UserName": "u-0"}),
        ),
    };
    let (status, text) = scene.world.phantom_api(scene.user, op, &body).await;
    let answer = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) if !v["RequestId"].is_string() => {
            Answer::Broken("answers-in-shape", format!("no RequestId: {text}"))
        }
        Err(e) => Answer::Broken("answers-in-shape", format!("not JSON ({e}): {text}")),
        Ok(_) if status >= 500 && status != 503 => {
            Answer::Broken("no-5xx", format!("HTTP {status}: {text}"))
        }
        Ok(_) if status == 200 => Answer::Code("OK".into()),
        Ok(v) => Answer::Code(format!(
            "{}: {}",
            v["Error"]["Code"].as_str().unwrap_or("(no code)"),
            v["Error"]["Message"].as_str().unwrap_or_default()
        )),
    };
    let what = format!("{group} (Phantom's own API)");
    (
        Drawn {
            action: op,
            what,
            vm: None,
        },
        answer,
    )
}
