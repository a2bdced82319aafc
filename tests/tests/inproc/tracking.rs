//! Target tracking through aws-sdk-autoscaling, on the memory Prometheus (a datapoint a second,
//! the world's health check every second): policies put, checked against the metric source and
//! described as AWS shows them; the group scaled out in proportion after three datapoints above
//! the target, in by a tenth after fifteen below, never with DisableScaleIn, never without data;
//! the largest of several policies wins; each change an activity in AWS's words.

use super::{causes, create_group, create_lc, failure, group};
use crate::Given;
use aws_sdk_autoscaling::types::{
    CustomizedMetricSpecification, MetricType, PredefinedMetricSpecification,
    TargetTrackingConfiguration, TargetTrackingMetricDataQuery,
};
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use serde_json::Value;

/// node_exporter's CPU series, which the predefined CPU metric reads.
const CPU: &str = "node_cpu_seconds_total";

fn cpu(target: f64, disable_scale_in: bool) -> TargetTrackingConfiguration {
    TargetTrackingConfiguration::builder()
        .predefined_metric_specification(
            PredefinedMetricSpecification::builder()
                .predefined_metric_type(MetricType::AsgAverageCpuUtilization)
                .build(),
        )
        .target_value(target)
        .disable_scale_in(disable_scale_in)
        .build()
}

fn custom(expression: &str, target: f64) -> TargetTrackingConfiguration {
    let query = TargetTrackingMetricDataQuery::builder()
        .id("load")
        .expression(expression)
        .label("app load")
        .build();
    TargetTrackingConfiguration::builder()
        .customized_metric_specification(
            CustomizedMetricSpecification::builder()
                .metrics(query)
                .build(),
        )
        .target_value(target)
        .build()
}

async fn put(
    w: &World,
    u: &User,
    name: &str,
    cfg: TargetTrackingConfiguration,
) -> Result<
    aws_sdk_autoscaling::operation::put_scaling_policy::PutScalingPolicyOutput,
    (String, String),
> {
    let r = w
        .sdk(u)
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name(name)
        .policy_type("TargetTrackingScaling")
        .estimated_instance_warmup(0)
        .target_tracking_configuration(cfg)
        .send()
        .await;
    r.map_err(|e| failure::<(), _>(Err(e)))
}

async fn desired(w: &World, u: &User) -> i32 {
    group(w, u, "web")
        .await
        .expect("the group")
        .desired_capacity()
        .expect("a desired capacity")
}

/// A user with group `web` (1..=10) at `n`, its VMs InService, and the metric source set.
async fn tracked_group(prefix: &str, n: i32) -> (World, User) {
    let w = World::new().await;
    w.metric_source().await;
    let u = w.user(prefix).await;
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 1, 10, n).await;
    serving(&w, &u, n as usize).await;
    (w, u)
}

/// A tracked group of 2 VMs whose new VMs warm up for 5 s (DefaultInstanceWarmup).
async fn warming_group(prefix: &str) -> (World, User) {
    let (w, u) = tracked_group(prefix, 2).await;
    w.sdk(&u)
        .update("web", |g| g.default_instance_warmup(5))
        .await;
    (w, u)
}

/// PutScalingPolicy of step policy `steps` on group `web`, changing the capacity by its steps.
fn steps_policy(
    w: &World,
    u: &User,
) -> aws_sdk_autoscaling::operation::put_scaling_policy::builders::PutScalingPolicyFluentBuilder {
    w.sdk(u)
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("steps")
        .policy_type("StepScaling")
        .adjustment_type("ChangeInCapacity")
}

/// The policies of group `web`, as DescribePolicies shows them.
async fn web_policies(w: &World, u: &User) -> Vec<aws_sdk_autoscaling::types::ScalingPolicy> {
    w.sdk(u)
        .describe_policies()
        .auto_scaling_group_name("web")
        .send()
        .await
        .expect("the policies")
        .scaling_policies()
        .to_vec()
}

/// Runs until the group has `n` VMs InService.
async fn serving(w: &World, u: &User, n: usize) {
    w.until(60, &format!("{n} VMs InService"), async || {
        let g = group(w, u, "web").await?;
        let up = g
            .instances()
            .iter()
            .filter(|i| {
                i.lifecycle_state() == Some(&aws_sdk_autoscaling::types::LifecycleState::InService)
            })
            .count();
        (up == n && g.instances().len() == n).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_policy_needs_a_metric_source_and_a_query_prometheus_takes() {
    let Given { w, u, .. } = Given::group("tt-check", 1, 10, 1).await;
    let (code, msg) = put(&w, &u, "cpu", cpu(50.0, false)).await.unwrap_err();
    assert_eq!(code, "ValidationError");
    assert!(msg.contains("No metric source is set"), "{msg}");

    w.metric_source().await;
    w.prometheus.refuse(
        "app_lod",
        "1:9: parse error: unexpected identifier \"app_lod\"",
    );
    let (code, msg) = put(&w, &u, "load", custom("avg(app_lod{$instances})", 5.0))
        .await
        .unwrap_err();
    assert_eq!(code, "ValidationError");
    assert!(
        msg.contains("parse error: unexpected identifier"),
        "Prometheus's words: {msg}"
    );
    assert!(
        msg.contains(r#"instance_id=~"i-00000000""#),
        "the query as sent: {msg}"
    );

    // AWS's metrics Phantom does not fill (EC2's CPU of no group or VM), a load balancer's, and
    // the members of other types are refused.
    let named = TargetTrackingConfiguration::builder()
        .customized_metric_specification(
            CustomizedMetricSpecification::builder()
                .metric_name("CPUUtilization")
                .namespace("AWS/EC2")
                .statistic(aws_sdk_autoscaling::types::MetricStatistic::Average)
                .build(),
        )
        .target_value(50.0)
        .build();
    let alb = TargetTrackingConfiguration::builder()
        .predefined_metric_specification(
            PredefinedMetricSpecification::builder()
                .predefined_metric_type(MetricType::AlbRequestCountPerTarget)
                .resource_label("app/lb/1/targetgroup/tg/2")
                .build(),
        )
        .target_value(100.0)
        .build();
    for (cfg, words) in [
        (
            named,
            "AWS/EC2 CPUUtilization is not a metric Phantom's CloudWatch fills",
        ),
        (alb, "which Phantom does not read"),
        (cpu(0.0, false), "greater than 0"),
    ] {
        let (code, msg) = put(&w, &u, "bad", cfg).await.unwrap_err();
        assert_eq!(code, "ValidationError");
        assert!(msg.contains(words), "{words}: {msg}");
    }
    let with_adjustment = w
        .sdk(&u)
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("bad")
        .policy_type("TargetTrackingScaling")
        .adjustment_type("ChangeInCapacity")
        .target_tracking_configuration(cpu(50.0, false))
        .send()
        .await;
    assert_eq!(
        failure(with_adjustment).1,
        "AdjustmentType is not supported for policy type TargetTrackingScaling."
    );
    assert!(
        w.sdk(&u)
            .describe_policies()
            .auto_scaling_group_name("web")
            .send()
            .await
            .unwrap()
            .scaling_policies()
            .is_empty(),
        "nothing refused was kept"
    );
}

#[tokio::test]
async fn a_policy_is_described_as_aws_shows_it_and_is_not_executed_by_hand() {
    let (w, u) = tracked_group("tt-describe", 1).await;
    let out = put(&w, &u, "cpu50", cpu(50.0, false)).await.expect("put");
    let alarms: Vec<&str> = out.alarms().iter().filter_map(|a| a.alarm_name()).collect();
    assert_eq!(alarms.len(), 2, "{alarms:?}");
    assert!(
        alarms[0].starts_with("TargetTracking-web-AlarmHigh-"),
        "{alarms:?}"
    );
    assert!(
        alarms[1].starts_with("TargetTracking-web-AlarmLow-"),
        "{alarms:?}"
    );
    let listed = w
        .sdk(&u)
        .describe_policies()
        .auto_scaling_group_name("web")
        .policy_types("TargetTrackingScaling")
        .send()
        .await
        .expect("describe-policies");
    let p = &listed.scaling_policies()[0];
    assert_eq!(p.policy_type(), Some("TargetTrackingScaling"));
    assert_eq!(p.adjustment_type(), None);
    assert_eq!(p.estimated_instance_warmup(), Some(0));
    assert_eq!(p.alarms().len(), 2);
    let cfg = p
        .target_tracking_configuration()
        .expect("its configuration");
    assert_eq!(cfg.target_value(), Some(50.0));
    assert_eq!(cfg.disable_scale_in(), Some(false));
    assert_eq!(
        cfg.predefined_metric_specification()
            .unwrap()
            .predefined_metric_type(),
        Some(&MetricType::AsgAverageCpuUtilization)
    );
    // Put again: the same ARN and alarms (Terraform's update).
    let again = put(&w, &u, "cpu50", cpu(60.0, true))
        .await
        .expect("put again");
    assert_eq!(again.policy_arn(), out.policy_arn());
    assert_eq!(again.alarms(), out.alarms());
    let executed = w
        .sdk(&u)
        .execute_policy()
        .auto_scaling_group_name("web")
        .policy_name("cpu50")
        .send()
        .await;
    let (code, msg) = failure(executed);
    assert_eq!(code, "ValidationError");
    assert!(msg.contains("TargetTrackingScaling"), "{msg}");
}

#[tokio::test]
async fn the_group_scales_out_in_proportion_once_the_metric_stays_above_its_target() {
    let (w, u) = tracked_group("tt-out", 2).await;
    w.metric(CPU, Some(40.0));
    put(&w, &u, "cpu50", cpu(50.0, false)).await.expect("put");
    w.run_for(20).await;
    assert_eq!(desired(&w, &u).await, 2, "below the target: nothing");

    // 2 VMs at 80 % for 50 %: 3.2, so 4, after three datapoints above (the one of now is the
    // first).
    w.metric(CPU, Some(80.0));
    w.run_for(1).await;
    assert_eq!(
        desired(&w, &u).await,
        2,
        "two datapoints above are not yet three"
    );
    w.run_for(1).await;
    assert_eq!(desired(&w, &u).await, 4);
    let cause = causes(&w, &u, "web")
        .await
        .into_iter()
        .find(|c| c.contains("monitor alarm"));
    let cause = cause.expect("the policy's activity");
    assert!(
        cause.contains("a monitor alarm TargetTracking-web-AlarmHigh-"),
        "{cause}"
    );
    assert!(
        cause.contains(
            "in state ALARM triggered policy cpu50 changing the desired capacity from 2 to 4."
        ),
        "{cause}"
    );
    assert!(
        cause.contains("ASGAverageCPUUtilization was 80 against the target 50"),
        "{cause}"
    );
    // The new VMs serve; the load spread over them is at the target: it stays.
    w.metric(CPU, Some(48.0));
    serving(&w, &u, 4).await;
    w.run_for(10).await;
    assert_eq!(desired(&w, &u).await, 4);
}

#[tokio::test]
async fn the_group_scales_in_slowly_and_disable_scale_in_holds() {
    let (w, u) = tracked_group("tt-in", 10).await;
    w.metric(CPU, Some(10.0));
    put(&w, &u, "cpu50", cpu(50.0, true)).await.expect("put");
    w.run_for(30).await;
    assert_eq!(desired(&w, &u).await, 10, "DisableScaleIn");

    put(&w, &u, "cpu50", cpu(50.0, false))
        .await
        .expect("put again");
    w.run_for(1).await;
    assert_eq!(
        desired(&w, &u).await,
        9,
        "a tenth, after fifteen datapoints below"
    );
    w.run_for(1).await;
    assert_eq!(
        desired(&w, &u).await,
        8,
        "a tenth a run while it stays below"
    );
    // Near the target, no further than the proportion: 8 at 40 % of 50 would be 6.4, so 7.
    w.metric(CPU, Some(40.0));
    w.run_for(1).await;
    assert_eq!(desired(&w, &u).await, 7);
    // MinSize holds whatever the metric says.
    w.metric(CPU, Some(1.0));
    w.run_for(60).await;
    assert_eq!(desired(&w, &u).await, 1);
}

#[tokio::test]
async fn no_data_and_an_unreachable_source_change_nothing() {
    let (w, u) = tracked_group("tt-gap", 4).await;
    put(&w, &u, "cpu50", cpu(50.0, false)).await.expect("put");
    w.run_for(20).await;
    assert_eq!(desired(&w, &u).await, 4, "no data: no scale-in");
    w.metric(CPU, Some(90.0));
    w.prometheus.set_down(true);
    let run = w.health().run().await.expect("a run");
    assert_eq!((run.tracking.groups, run.tracking.no_data), (1, 1));
    w.run_for(10).await;
    assert_eq!(desired(&w, &u).await, 4, "the source is down: nothing");
    // A gap in the datapoints resets the streak: three in a row are needed again.
    w.prometheus.set_down(false);
    w.metric(CPU, None);
    w.run_for(1).await;
    w.metric(CPU, Some(90.0));
    w.run_for(1).await;
    assert_eq!(desired(&w, &u).await, 4);
    w.run_for(1).await;
    assert_eq!(desired(&w, &u).await, 8, "4 at 90 % of 50: 7.2, so 8");
}

#[tokio::test]
async fn the_largest_capacity_of_several_policies_wins_and_in_only_if_all_agree() {
    let (w, u) = tracked_group("tt-many", 4).await;
    w.metric(CPU, Some(60.0));
    w.metric("app_load", Some(10.0));
    put(&w, &u, "cpu50", cpu(50.0, false)).await.expect("put");
    put(
        &w,
        &u,
        "load5",
        custom(r#"avg(app_load{job="app",$instances})"#, 5.0),
    )
    .await
    .expect("put a customized metric");
    // cpu asks 4 * 60 / 50 = 4.8, so 5; load asks 4 * 10 / 5 = 8: the first decision (the
    // metrics stand still and the policies have no warm-up, so once the new VMs serve, a second
    // or two later, they would ask again).
    let mut secs = 0;
    while desired(&w, &u).await == 4 {
        w.run_for(1).await;
        secs += 1;
        assert!(secs <= 3, "no decision within 3 s");
    }
    assert_eq!(desired(&w, &u).await, 8);
    let cause = causes(&w, &u, "web")
        .await
        .into_iter()
        .find(|c| c.contains("monitor alarm"));
    assert!(
        cause.unwrap().contains("triggered policy load5"),
        "the largest ask names its policy"
    );
    // CPU far below, load on its target: no scale-in.
    w.metric(CPU, Some(5.0));
    w.metric("app_load", Some(5.0));
    serving(&w, &u, 8).await;
    w.run_for(30).await;
    assert_eq!(desired(&w, &u).await, 8);
}

#[tokio::test]
async fn groups_without_a_target_tracking_policy_cost_the_run_nothing() {
    let (w, u) = tracked_group("tt-cost", 1).await;
    create_group(&w, &u, "other", "web@hotel", 0, 10, 0).await;
    let run = w.health().run().await.expect("a run");
    assert_eq!(run.tracking.groups, 0);
    let before = w.prometheus.queries();
    w.metric(CPU, Some(50.0));
    put(&w, &u, "cpu50", cpu(50.0, false)).await.expect("put");
    let run = w.health().run().await.expect("a run");
    assert_eq!((run.tracking.groups, run.tracking.queries), (1, 1));
    // The put's check, then one range query for the one tracked group.
    assert_eq!(w.prometheus.queries() - before, 2);
    // Deleted, the policy is off the index.
    w.sdk(&u)
        .delete_policy()
        .auto_scaling_group_name("web")
        .policy_name("cpu50")
        .send()
        .await
        .expect("delete-policy");
    let run = w.health().run().await.expect("a run");
    assert_eq!(run.tracking.groups, 0);
}

/// Terraform's aws_autoscaling_policy with a target_tracking_configuration block, its calls in the
/// provider's order (internal/service/autoscaling/policy.go): create is PutScalingPolicy (Enabled
/// always, no AdjustmentType, Cooldown 0 when set, ReturnData always on a query) then the read,
/// DescribePolicies by group and name, which must find exactly one; an update puts it again;
/// destroy is DeletePolicy, a second one's "not found" taken as gone.
#[tokio::test]
async fn terraforms_target_tracking_policy_calls_in_its_order() {
    let (w, u) = tracked_group("tt-terraform", 1).await;
    let c = w.sdk(&u);
    let read = async || {
        c.describe_policies()
            .auto_scaling_group_name("web")
            .policy_names("tf-cpu")
            .send()
            .await
            .expect("the read")
            .scaling_policies()
            .to_vec()
    };
    let put = async |cfg: TargetTrackingConfiguration| {
        c.put_scaling_policy()
            .auto_scaling_group_name("web")
            .enabled(true)
            .policy_name("tf-cpu")
            .policy_type("TargetTrackingScaling")
            .cooldown(0)
            .estimated_instance_warmup(120)
            .target_tracking_configuration(cfg)
            .send()
            .await
            .expect("PutScalingPolicy as Terraform sends it")
    };
    let created = put(cpu(40.0, false)).await;
    let found = read().await;
    assert_eq!(found.len(), 1);
    let p = &found[0];
    assert_eq!(p.policy_arn(), created.policy_arn());
    assert_eq!(
        (p.enabled(), p.estimated_instance_warmup()),
        (Some(true), Some(120))
    );
    let cfg = p.target_tracking_configuration().unwrap();
    assert_eq!(
        (cfg.target_value(), cfg.disable_scale_in()),
        (Some(40.0), Some(false))
    );
    assert!(cfg.customized_metric_specification().is_none());

    // Updated to a customized metric, as the provider sends its metrics block.
    let query = TargetTrackingMetricDataQuery::builder()
        .id("load")
        .expression("avg(app_load{$instances})")
        .label("load")
        .return_data(true)
        .build();
    let custom = TargetTrackingConfiguration::builder()
        .customized_metric_specification(
            CustomizedMetricSpecification::builder()
                .metrics(query)
                .build(),
        )
        .target_value(5.0)
        .disable_scale_in(true)
        .build();
    let updated = put(custom).await;
    assert_eq!(updated.policy_arn(), created.policy_arn());
    let found = read().await;
    let cfg = found[0].target_tracking_configuration().unwrap();
    assert!(cfg.predefined_metric_specification().is_none());
    let metrics = cfg.customized_metric_specification().unwrap().metrics();
    assert_eq!(metrics.len(), 1);
    assert_eq!(
        (
            metrics[0].id(),
            metrics[0].expression(),
            metrics[0].return_data()
        ),
        (Some("load"), Some("avg(app_load{$instances})"), Some(true))
    );
    assert_eq!(cfg.disable_scale_in(), Some(true));

    let delete = async || {
        c.delete_policy()
            .auto_scaling_group_name("web")
            .policy_name("tf-cpu")
            .send()
            .await
    };
    delete().await.expect("destroy");
    assert!(read().await.is_empty(), "the read after destroy finds none");
    let (code, msg) = failure(delete().await);
    assert_eq!(code, "ValidationError");
    assert!(msg.contains("not found"), "Terraform's match: {msg}");
}

/// A step policy with an alarm of Phantom's own (PutPolicyAlarm): 2 of its last 3 datapoints
/// above the threshold run the policy's step, once while the new VMs warm up, again after; a
/// higher step adds the difference; removed, the alarm runs nothing.
#[tokio::test]
async fn a_step_policy_runs_on_its_promql_alarm() {
    use super::self_service::call;
    use serde_json::json;
    let (w, u) = warming_group("tt-alarm").await;
    let steps = [(0.0, Some(20.0), 1), (20.0, None, 3)].map(|(lower, upper, n)| {
        aws_sdk_autoscaling::types::StepAdjustment::builder()
            .metric_interval_lower_bound(lower)
            .set_metric_interval_upper_bound(upper)
            .scaling_adjustment(n)
            .build()
    });
    steps_policy(&w, &u)
        .set_step_adjustments(Some(steps.to_vec()))
        .send()
        .await
        .expect("a step policy");
    let alarm = json!({"AutoScalingGroupName": "web", "PolicyName": "steps",
        "Expression": "avg(app_load{$instances})", "ComparisonOperator": "GreaterThanThreshold",
        "Threshold": 60.0, "EvaluationPeriods": 3, "DatapointsToAlarm": 2});
    // Refused: a comparison CloudWatch has not, a query Prometheus refuses, a simple policy.
    let mut bad = alarm.clone();
    bad["ComparisonOperator"] = "Above".into();
    let (status, v) = call(&w, &u, "PutPolicyAlarm", bad).await;
    assert_eq!(status, 400, "{v}");
    w.prometheus
        .refuse("app_lod", "1:5: parse error: unknown thing");
    let mut bad = alarm.clone();
    bad["Expression"] = "avg(app_lod{$instances})".into();
    let (status, v) = call(&w, &u, "PutPolicyAlarm", bad).await;
    assert_eq!(status, 400);
    assert!(
        v["Error"]["Message"]
            .as_str()
            .unwrap()
            .contains("parse error"),
        "{v}"
    );

    let (status, made) = call(&w, &u, "PutPolicyAlarm", alarm.clone()).await;
    assert_eq!(status, 200, "{made}");
    let name = made["AlarmName"].as_str().unwrap().to_string();
    assert!(name.starts_with("Phantom-web-steps-"), "{made}");
    let listed = web_policies(&w, &u).await;
    let alarms = listed[0].alarms();
    assert_eq!(alarms[0].alarm_name(), Some(name.as_str()));
    let (_, described) = call(&w, &u, "DescribePolicyAlarms", json!({})).await;
    assert_eq!(described["Alarms"][0]["Threshold"], 60.0);
    assert_eq!(described["Alarms"][0]["DatapointsToAlarm"], 2);

    // The VMs warm up (5 s), then 70 for 60: +1 after 2 datapoints above.
    w.metric("app_load", Some(50.0));
    w.run_for(6).await;
    w.metric("app_load", Some(70.0));
    w.run_for(1).await;
    assert_eq!(desired(&w, &u).await, 3);
    let cause = causes(&w, &u, "web")
        .await
        .into_iter()
        .find(|c| c.contains(&name));
    let cause = cause.expect("the alarm's activity");
    assert!(
        cause.contains(
            "in state ALARM triggered policy steps changing the desired capacity from 2 to 3."
        ),
        "{cause}"
    );
    assert!(
        cause.contains("The alarm's metric was 70 against the threshold 60."),
        "{cause}"
    );
    // The same step while the new VM warms up: no more.
    w.run_for(2).await;
    assert_eq!(desired(&w, &u).await, 3);
    // A higher step meanwhile: +3 from the 2 warmed, 2 more.
    w.metric("app_load", Some(85.0));
    w.run_for(1).await;
    assert_eq!(desired(&w, &u).await, 5);
    // Removed: nothing runs it.
    let of = json!({"AutoScalingGroupName": "web", "PolicyName": "steps"});
    assert_eq!(call(&w, &u, "DeletePolicyAlarm", of.clone()).await.0, 200);
    w.run_for(20).await;
    assert_eq!(desired(&w, &u).await, 5);
    assert_eq!(call(&w, &u, "DeletePolicyAlarm", of).await.0, 400);
}

/// The console's chart reads a policy's recent datapoints: the query as sent over the group's
/// VMs, its target, a datapoint a step apart, none where the metric had none.
#[tokio::test]
async fn a_policys_metric_is_read_back_for_its_chart() {
    use super::self_service::call;
    use serde_json::json;
    let (w, u) = tracked_group("tt-chart", 2).await;
    put(&w, &u, "cpu50", cpu(50.0, false)).await.expect("put");
    w.run_for(10).await;
    w.metric(CPU, Some(42.0));
    w.run_for(5).await;
    let ask = json!({"AutoScalingGroupName": "web", "PolicyName": "cpu50", "Minutes": 1});
    let (status, m) = call(&w, &u, "GetPolicyMetric", ask).await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(m["Target"], 50.0);
    assert_eq!(m["StepSeconds"], 1);
    assert!(
        m["Query"]
            .as_str()
            .unwrap()
            .contains("node_cpu_seconds_total"),
        "{m}"
    );
    let points = m["Datapoints"].as_array().unwrap();
    assert_eq!(points.len(), 61);
    let valued: Vec<&Value> = points.iter().filter(|p| p.get("Value").is_some()).collect();
    assert_eq!(valued.len(), 6, "the last 6 seconds have the metric: {m}");
    assert_eq!(valued[5]["Value"], 42.0);
    // A simple policy follows no metric; the source down is 503.
    w.sdk(&u)
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("up")
        .adjustment_type("ChangeInCapacity")
        .scaling_adjustment(1)
        .send()
        .await
        .unwrap();
    let (status, _) = call(
        &w,
        &u,
        "GetPolicyMetric",
        json!({"AutoScalingGroupName": "web", "PolicyName": "up"}),
    )
    .await;
    assert_eq!(status, 400);
    w.prometheus.set_down(true);
    let (status, v) = call(
        &w,
        &u,
        "GetPolicyMetric",
        json!({"AutoScalingGroupName": "web", "PolicyName": "cpu50"}),
    )
    .await;
    assert_eq!(
        (status, v["Error"]["Code"].as_str()),
        (503, Some("ServiceUnavailable"))
    );
}

/// A run killed at any step of its store and queue calls leaves the group to the next run, which
/// scales it once: one change, one activity, never a second step for the same datapoints.
#[tokio::test]
async fn a_run_crashing_at_any_step_scales_the_group_once() {
    let mut k = 1;
    loop {
        let (w, u) = tracked_group(&format!("tt-crash-{k}"), 2).await;
        w.metric(CPU, Some(80.0));
        put(&w, &u, "cpu50", cpu(50.0, false)).await.expect("put");
        // Three datapoints above, none evaluated yet.
        w.clock.advance_ms(2_000);
        let crashed = w.tracker_crashing_at(k).await;
        w.health().run().await.expect("the next run");
        w.settle().await;
        let changes: Vec<String> = causes(&w, &u, "web")
            .await
            .into_iter()
            .filter(|c| c.contains("monitor alarm"))
            .collect();
        assert_eq!(changes.len(), 1, "crashed at step {k}: {changes:?}");
        assert!(changes[0].contains("from 2 to 4"), "{changes:?}");
        assert_eq!(desired(&w, &u).await, 4, "crashed at step {k}");
        // On target now: the new VMs count at once (no warm-up), and would ask again.
        w.metric(CPU, Some(50.0));
        // The provisioner was asked, by the run or by the sweep after a crash.
        serving(&w, &u, 4).await;
        if !crashed {
            break;
        }
        k += 1;
    }
    assert!(k > 2, "the run has steps to crash at");
}

/// A suspended AlarmNotification process stops the metric policies, as on AWS; resumed, they
/// act on the datapoints they find.
#[tokio::test]
async fn a_suspended_alarm_notification_process_stops_the_policies() {
    let (w, u) = tracked_group("tt-suspend", 2).await;
    w.sdk(&u)
        .suspend_processes()
        .auto_scaling_group_name("web")
        .scaling_processes("AlarmNotification")
        .send()
        .await
        .expect("suspend-processes");
    w.metric(CPU, Some(80.0));
    put(&w, &u, "cpu50", cpu(50.0, false)).await.expect("put");
    w.run_for(10).await;
    assert_eq!(desired(&w, &u).await, 2, "suspended: nothing");
    w.sdk(&u)
        .resume_processes()
        .auto_scaling_group_name("web")
        .scaling_processes("AlarmNotification")
        .send()
        .await
        .expect("resume-processes");
    w.run_for(1).await;
    assert_eq!(desired(&w, &u).await, 4);
}

/// A step policy's MetricAggregationType reduces its alarm's series (one a VM) at each
/// datapoint, and its EstimatedInstanceWarmup is how long a new VM waits before it counts.
#[tokio::test]
async fn a_step_policy_alarm_takes_the_maximum_of_its_series_and_its_own_warm_up() {
    use super::self_service::call;
    use serde_json::json;
    let (w, u) = warming_group("tt-agg").await;
    let put_step = |aggregation: Option<&'static str>, warmup: Option<i32>| {
        let step = aws_sdk_autoscaling::types::StepAdjustment::builder()
            .metric_interval_lower_bound(0.0)
            .scaling_adjustment(1)
            .build();
        steps_policy(&w, &u)
            .step_adjustments(step)
            .set_metric_aggregation_type(aggregation.map(str::to_string))
            .set_estimated_instance_warmup(warmup)
            .send()
    };
    put_step(None, None).await.expect("a step policy");
    // Two series, one a VM: 40 and 70 against 60.
    let alarm = json!({"AutoScalingGroupName": "web", "PolicyName": "steps",
        "Expression": "vm_a_load or vm_b_load", "ComparisonOperator": "GreaterThanThreshold",
        "Threshold": 60.0, "EvaluationPeriods": 1});
    let (status, made) = call(&w, &u, "PutPolicyAlarm", alarm).await;
    assert_eq!(status, 200, "{made}");
    w.metric("vm_a_load", Some(40.0));
    w.metric("vm_b_load", Some(70.0));
    // Long enough for the VMs to be past any warm-up below.
    w.run_for(35).await;
    assert_eq!(desired(&w, &u).await, 2, "their average, 55, is no breach");
    // Maximum: 70 breaches; the new VM counts only after the policy's 30 s, not the group's 5.
    put_step(Some("Maximum"), Some(30))
        .await
        .expect("put again");
    let described = web_policies(&w, &u).await;
    let p = &described[0];
    assert_eq!(p.metric_aggregation_type(), Some("Maximum"));
    assert_eq!(p.estimated_instance_warmup(), Some(30));
    assert_eq!(p.alarms().len(), 1, "the alarm stays with the policy");
    w.run_for(2).await;
    assert_eq!(desired(&w, &u).await, 3);
    w.run_for(15).await;
    assert_eq!(desired(&w, &u).await, 3, "the new VM still warms up");
    w.run_for(20).await;
    assert_eq!(desired(&w, &u).await, 4, "warmed, it counts: +1 from 3");
}

/// An instance refresh's AlarmSpecification names the group's own alarms (PutPolicyAlarm): one
/// that goes into ALARM while the refresh runs fails it; an alarm the group has not is refused.
/// Preferences of a refresh that watches `alarm`, held at its checkpoint (50 %) for an hour.
fn watching(alarm: &str) -> aws_sdk_autoscaling::types::RefreshPreferences {
    use aws_sdk_autoscaling::types::{AlarmSpecification, RefreshPreferences};
    RefreshPreferences::builder()
        .min_healthy_percentage(50)
        .instance_warmup(0)
        .checkpoint_percentages(50)
        .checkpoint_delay(3600)
        .alarm_specification(AlarmSpecification::builder().alarms(alarm).build())
        .build()
}

/// Group `web`'s refresh `id` as DescribeInstanceRefreshes shows it.
async fn refresh_of(w: &World, u: &User, id: &str) -> aws_sdk_autoscaling::types::InstanceRefresh {
    w.sdk(u)
        .describe_instance_refreshes()
        .auto_scaling_group_name("web")
        .instance_refresh_ids(id)
        .send()
        .await
        .unwrap()
        .instance_refreshes()[0]
        .clone()
}

/// Starts a refresh of group `web` watching `alarm`, and runs until it waits at its checkpoint,
/// still InProgress 5 s later: quiet, it goes on waiting. Its id.
async fn held_at_checkpoint(w: &World, u: &User, alarm: &str) -> String {
    use aws_sdk_autoscaling::types::InstanceRefreshStatus;
    let id = w
        .sdk(u)
        .start_instance_refresh()
        .auto_scaling_group_name("web")
        .preferences(watching(alarm))
        .send()
        .await
        .unwrap()
        .instance_refresh_id()
        .unwrap()
        .to_string();
    w.until(60, "the checkpoint", async || {
        refresh_of(w, u, &id)
            .await
            .status_reason()
            .filter(|s| s.contains("checkpoint"))
            .map(|_| ())
    })
    .await;
    w.run_for(5).await;
    assert_eq!(
        refresh_of(w, u, &id).await.status(),
        Some(&InstanceRefreshStatus::InProgress)
    );
    id
}

/// Runs until group `web`'s refresh `id` has failed, and says the alarm `alarm` failed it.
async fn failed_by(w: &World, u: &User, id: &str, alarm: &str) {
    use aws_sdk_autoscaling::types::InstanceRefreshStatus;
    let r = w
        .until(10, "the refresh Failed", async || {
            let r = refresh_of(w, u, id).await;
            (r.status() == Some(&InstanceRefreshStatus::Failed)).then_some(r)
        })
        .await;
    assert_eq!(
        r.status_reason(),
        Some(format!("The alarm {alarm} went into the ALARM state.").as_str())
    );
}

#[tokio::test]
async fn an_instance_refresh_fails_when_an_alarm_it_watches_goes_into_alarm() {
    use super::self_service::call;
    use serde_json::json;
    let (w, u) = warming_group("refresh-alarm").await;
    // A disabled policy: its alarm is watched by the refresh only, and scales nothing.
    steps_policy(&w, &u)
        .enabled(false)
        .step_adjustments(
            aws_sdk_autoscaling::types::StepAdjustment::builder()
                .metric_interval_lower_bound(0.0)
                .scaling_adjustment(1)
                .build(),
        )
        .send()
        .await
        .expect("a step policy");
    let alarm = json!({"AutoScalingGroupName": "web", "PolicyName": "steps",
        "Expression": "max(app_errors{$instances})", "ComparisonOperator": "GreaterThanThreshold",
        "Threshold": 5.0, "EvaluationPeriods": 1});
    let (status, made) = call(&w, &u, "PutPolicyAlarm", alarm).await;
    assert_eq!(status, 200, "{made}");
    let name = made["AlarmName"].as_str().unwrap().to_string();
    w.metric("app_errors", Some(0.0));
    let e = crate::invalid(
        w.sdk(&u)
            .start_instance_refresh()
            .auto_scaling_group_name("web")
            .preferences(watching("someone-elses-alarm"))
            .send()
            .await,
    );
    assert!(e.contains("someone-elses-alarm"), "{e}");
    let id = held_at_checkpoint(&w, &u, &name).await;
    let shown = refresh_of(&w, &u, &id).await;
    let watched = shown.preferences().unwrap().alarm_specification().unwrap();
    assert_eq!(watched.alarms(), std::slice::from_ref(&name));
    // Errors climb: the refresh fails, saying which alarm.
    w.metric("app_errors", Some(9.0));
    failed_by(&w, &u, &id, &name).await;
}

#[tokio::test]
async fn an_instance_refresh_watches_a_target_tracking_policys_alarm_high() {
    let (w, u) = warming_group("refresh-tt").await;
    // Within its band (90 to 100 of a target of 100): neither alarm.
    w.metric("app_latency", Some(95.0));
    put(
        &w,
        &u,
        "latency",
        custom("avg(app_latency{$instances})", 100.0),
    )
    .await
    .expect("put");
    let policies = web_policies(&w, &u).await;
    let high = policies[0].alarms()[0].alarm_name().unwrap().to_string();
    assert!(high.contains("-AlarmHigh-"), "{high}");
    let id = held_at_checkpoint(&w, &u, &high).await;
    // Above the target for three datapoints: AlarmHigh goes into ALARM, the refresh fails.
    w.metric("app_latency", Some(150.0));
    failed_by(&w, &u, &id, &high).await;
}
