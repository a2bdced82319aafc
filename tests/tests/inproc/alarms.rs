//! CloudWatch's metric alarms at Phantom's endpoint, in process: kept and shown as CloudWatch's,
//! evaluated each run of the schedule on the data PutMetricData published, their actions run on
//! the account's scaling policies, their history told.

use super::{causes, group, Given};
use aws_sdk_autoscaling::types::StepAdjustment;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_model::time::Clock;
use serde_json::{json, Value};

/// Publishes `value` to App/Load now.
async fn publish(w: &World, u: &User, value: f64) {
    let (status, v) = w
        .cloudwatch(
            u,
            "PutMetricData",
            json!({"Namespace": "App", "MetricData": [{"MetricName": "Load", "Value": value}]}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
}

/// Moves the world to the first half of a minute: datapoints published a minute apart from
/// there fall in neighbouring periods (from late in a minute, 61 s on skipped one, and a
/// `missing` minute came between; found once in CI).
async fn early_in_a_minute(w: &World) {
    while w.clock.now_ms() % 60_000 >= 30_000 {
        w.run_for(1).await;
    }
}

async fn alarm_of(w: &World, u: &User, name: &str) -> Value {
    let (status, v) = w
        .cloudwatch(u, "DescribeAlarms", json!({"AlarmNames": [name]}))
        .await;
    assert_eq!(status, 200, "{v}");
    v["MetricAlarms"][0].clone()
}

fn high(policy_arn: &str) -> Value {
    json!({"AlarmName": "load-high", "Namespace": "App", "MetricName": "Load",
        "Statistic": "Average", "Period": 60, "EvaluationPeriods": 1, "Threshold": 50.0,
        "ComparisonOperator": "GreaterThanThreshold", "AlarmActions": [policy_arn]})
}

/// A step policy `out` on group `web`: +1 above the threshold, +3 from 30 above it. The group's
/// VMs count once 5 s old (DefaultInstanceWarmup).
async fn step_out(g: &Given) -> String {
    g.w.sdk(&g.u)
        .update("web", |x| x.default_instance_warmup(5))
        .await;
    let steps = [(0.0, Some(30.0), 1), (30.0, None, 3)].map(|(lower, upper, n)| {
        StepAdjustment::builder()
            .metric_interval_lower_bound(lower)
            .set_metric_interval_upper_bound(upper)
            .scaling_adjustment(n)
            .build()
    });
    let out =
        g.c.put_scaling_policy()
            .auto_scaling_group_name("web")
            .policy_name("out")
            .policy_type("StepScaling")
            .adjustment_type("ChangeInCapacity")
            .set_step_adjustments(Some(steps.to_vec()))
            .send()
            .await
            .expect("a step policy");
    out.policy_arn().expect("its ARN").to_string()
}

#[tokio::test]
async fn an_alarm_on_a_published_metric_runs_its_step_policy() {
    let (g, _) = Given::converged("cw-alarm", 1, 10, 2).await;
    early_in_a_minute(&g.w).await;
    let (w, u) = (&g.w, &g.u);
    let arn = step_out(&g).await;
    let (status, v) = w.cloudwatch(u, "PutMetricAlarm", high(&arn)).await;
    assert_eq!(status, 200, "{v}");
    let a = alarm_of(w, u, "load-high").await;
    assert_eq!(a["StateValue"], "INSUFFICIENT_DATA");
    assert_eq!(a["ActionsEnabled"], true);
    assert_eq!(a["AlarmActions"], json!([arn]));
    assert_eq!(a["OKActions"], json!([]));
    assert!(
        a.get("DatapointsToAlarm").is_none(),
        "not sent, not shown: {a}"
    );
    assert!(a["AlarmArn"]
        .as_str()
        .unwrap()
        .ends_with(":alarm:load-high"));

    // 90 against 50: the +3 step, once the minute it fell in is whole.
    publish(w, u, 90.0).await;
    w.run_for(61).await;
    let a = alarm_of(w, u, "load-high").await;
    assert_eq!(a["StateValue"], "ALARM", "{a}");
    assert!(
        a["StateReason"]
            .as_str()
            .unwrap()
            .starts_with("Threshold Crossed: 1 out of the last 1 datapoints [90 ("),
        "{a}"
    );
    let got = group(w, u, "web").await.unwrap();
    assert_eq!(got.desired_capacity(), Some(5));
    let cause = causes(w, u, "web").await;
    assert!(
        cause
            .iter()
            .any(|c| c.contains("a CloudWatch alarm load-high in state ALARM triggered policy out")),
        "{cause:?}"
    );
    // The history: made, in ALARM, the action.
    let (_, h) = w
        .cloudwatch(u, "DescribeAlarmHistory", json!({"AlarmName": "load-high"}))
        .await;
    let kinds: Vec<&str> = h["AlarmHistoryItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["HistoryItemType"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["Action", "StateUpdate", "ConfigurationUpdate"],
        "{h}"
    );

    // Still in ALARM a minute on: the action runs again, as CloudWatch's Auto Scaling actions
    // do each minute; the new VMs are past their warm-up (5 s), so +3 from 5.
    publish(w, u, 90.0).await;
    w.run_for(60).await;
    assert_eq!(
        group(w, u, "web").await.unwrap().desired_capacity(),
        Some(8)
    );

    // 10: OK, and no more scaling.
    publish(w, u, 10.0).await;
    w.run_for(61).await;
    assert_eq!(alarm_of(w, u, "load-high").await["StateValue"], "OK");
    let (_, h) = w
        .cloudwatch(
            u,
            "DescribeAlarmHistory",
            json!({"AlarmName": "load-high", "HistoryItemType": "StateUpdate"}),
        )
        .await;
    assert_eq!(
        h["AlarmHistoryItems"][0]["HistorySummary"],
        "Alarm updated from ALARM to OK"
    );
    // A minute with no data: INSUFFICIENT_DATA (TreatMissingData `missing`), and no scaling.
    w.run_for(60).await;
    assert_eq!(
        alarm_of(w, u, "load-high").await["StateValue"],
        "INSUFFICIENT_DATA"
    );
    assert_eq!(
        group(w, u, "web").await.unwrap().desired_capacity(),
        Some(8)
    );
}

#[tokio::test]
async fn actions_disabled_or_a_suspended_process_run_nothing() {
    let (g, _) = Given::converged("cw-off", 1, 10, 2).await;
    early_in_a_minute(&g.w).await;
    let (w, u) = (&g.w, &g.u);
    let arn = step_out(&g).await;
    let mut off = high(&arn);
    off["ActionsEnabled"] = false.into();
    assert_eq!(w.cloudwatch(u, "PutMetricAlarm", off).await.0, 200);
    publish(w, u, 90.0).await;
    w.run_for(61).await;
    assert_eq!(alarm_of(w, u, "load-high").await["StateValue"], "ALARM");
    assert_eq!(
        group(w, u, "web").await.unwrap().desired_capacity(),
        Some(2)
    );
    // Enabled, with AlarmNotification suspended: still nothing.
    super::suspend_web(&g.c, "AlarmNotification").await;
    let (status, _) = w
        .cloudwatch(
            u,
            "EnableAlarmActions",
            json!({"AlarmNames": ["load-high"]}),
        )
        .await;
    assert_eq!(status, 200);
    publish(w, u, 90.0).await;
    w.run_for(61).await;
    assert_eq!(
        group(w, u, "web").await.unwrap().desired_capacity(),
        Some(2)
    );
}

#[tokio::test]
async fn alarms_are_kept_shown_and_refused_as_cloudwatchs() {
    let g = Given::user("cw-crud").await;
    let (w, u) = (&g.w, &g.u);
    let topic = "arn:aws:sns:us-east-1:000000000000:ops";
    let mut a = json!({"AlarmName": "q-deep", "Namespace": "App", "MetricName": "Depth",
        "Dimensions": [{"Name": "Queue", "Value": "orders"}], "Statistic": "Maximum",
        "Period": 300, "EvaluationPeriods": 3, "DatapointsToAlarm": 2, "Threshold": 100.0,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold", "TreatMissingData": "notBreaching",
        "Unit": "Count", "AlarmDescription": "orders pile up", "OKActions": [topic],
        "Tags": [{"Key": "team", "Value": "shop"}]});
    assert_eq!(w.cloudwatch(u, "PutMetricAlarm", a.clone()).await.0, 200);
    let shown = alarm_of(w, u, "q-deep").await;
    for k in [
        "Namespace",
        "MetricName",
        "Dimensions",
        "Statistic",
        "Period",
        "EvaluationPeriods",
        "DatapointsToAlarm",
        "Threshold",
        "ComparisonOperator",
        "TreatMissingData",
        "Unit",
        "AlarmDescription",
        "OKActions",
    ] {
        assert_eq!(shown[k], a[k], "{k}");
    }
    let arn = shown["AlarmArn"].as_str().unwrap().to_string();
    let (_, tags) = w
        .cloudwatch(u, "ListTagsForResource", json!({"ResourceARN": arn}))
        .await;
    assert_eq!(tags["Tags"], json!([{"Key": "team", "Value": "shop"}]));
    w.cloudwatch(
        u,
        "TagResource",
        json!({"ResourceARN": arn, "Tags": [{"Key": "env", "Value": "prod"}]}),
    )
    .await;
    w.cloudwatch(
        u,
        "UntagResource",
        json!({"ResourceARN": arn, "TagKeys": ["team"]}),
    )
    .await;
    let (_, tags) = w
        .cloudwatch(u, "ListTagsForResource", json!({"ResourceARN": arn}))
        .await;
    assert_eq!(tags["Tags"], json!([{"Key": "env", "Value": "prod"}]));
    // Changed: the state stays, the configuration moves.
    a["Threshold"] = 200.0.into();
    assert_eq!(w.cloudwatch(u, "PutMetricAlarm", a.clone()).await.0, 200);
    assert_eq!(alarm_of(w, u, "q-deep").await["Threshold"], 200.0);
    // Filters.
    let count = |v: &Value| v["MetricAlarms"].as_array().unwrap().len();
    let (_, v) = w
        .cloudwatch(u, "DescribeAlarms", json!({"AlarmNamePrefix": "q-"}))
        .await;
    assert_eq!(count(&v), 1);
    let (_, v) = w
        .cloudwatch(u, "DescribeAlarms", json!({"StateValue": "ALARM"}))
        .await;
    assert_eq!(count(&v), 0);
    let (_, v) = w
        .cloudwatch(
            u,
            "DescribeAlarms",
            json!({"AlarmTypes": ["CompositeAlarm"]}),
        )
        .await;
    assert_eq!((count(&v), v["CompositeAlarms"].clone()), (0, json!([])));
    let (_, v) = w
        .cloudwatch(
            u,
            "DescribeAlarmsForMetric",
            json!({"Namespace": "App", "MetricName": "Depth"}),
        )
        .await;
    assert_eq!(count(&v), 1);
    // SetAlarmState: moved, and told in the history.
    let (status, v) = w
        .cloudwatch(
            u,
            "SetAlarmState",
            json!({"AlarmName": "q-deep", "StateValue": "ALARM", "StateReason": "testing"}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(alarm_of(w, u, "q-deep").await["StateReason"], "testing");
    // Another account sees none of it.
    let other = w.user("cw-other").await;
    let (_, v) = w.cloudwatch(&other, "DescribeAlarms", json!({})).await;
    assert_eq!(count(&v), 0);
    // Refusals, in CloudWatch's codes.
    let refused = async |body: Value, op: &str| {
        let (status, v) = w.cloudwatch(u, op, body).await;
        (status, v["__type"].as_str().unwrap_or_default().to_string())
    };
    let mut band = a.clone();
    band["ComparisonOperator"] = "GreaterThanUpperThreshold".into();
    assert_eq!(
        refused(band, "PutMetricAlarm").await,
        (400, "InvalidParameterValueException".into())
    );
    let mut too_many = a.clone();
    too_many["DatapointsToAlarm"] = 4.into();
    assert_eq!(refused(too_many, "PutMetricAlarm").await.0, 400);
    let mut stop = a.clone();
    stop["AlarmActions"] = json!(["arn:aws:automate:us-east-1:ec2:stop"]);
    assert_eq!(refused(stop, "PutMetricAlarm").await.0, 400);
    assert_eq!(
        refused(
            json!({"AlarmName": "q-deep", "StateValue": "OK", "StateReason": "x", "StateReasonData": "{not json"}),
            "SetAlarmState"
        )
        .await,
        (400, "InvalidFormatFault".into())
    );
    assert_eq!(
        refused(json!({"AlarmNames": ["q-deep", "nope"]}), "DeleteAlarms").await,
        (404, "ResourceNotFound".into())
    );
    assert_eq!(
        count(&w.cloudwatch(u, "DescribeAlarms", json!({})).await.1),
        1,
        "none deleted"
    );
    assert_eq!(
        refused(
            json!({"ResourceARN": "arn:aws:cloudwatch:us-east-1:1:alarm:x"}),
            "ListTagsForResource"
        )
        .await,
        (404, "ResourceNotFoundException".into())
    );
    assert_eq!(
        w.cloudwatch(u, "DeleteAlarms", json!({"AlarmNames": ["q-deep"]}))
            .await
            .0,
        200
    );
    assert_eq!(
        count(&w.cloudwatch(u, "DescribeAlarms", json!({})).await.1),
        0
    );
}

/// A target tracking policy on a metric the application publishes (the Ansible collection's
/// custom metric, AWS's `CustomizedMetricSpecification` with `MetricName`, `Namespace`,
/// `Dimensions`, `Statistic`), read from Phantom's CloudWatch; no metric source is set.
#[tokio::test]
async fn target_tracking_follows_a_published_metric() {
    use aws_sdk_autoscaling::types::{
        CustomizedMetricSpecification, MetricDimension, MetricStatistic,
        TargetTrackingConfiguration,
    };
    let (g, _) = Given::converged("cw-track", 1, 10, 2).await;
    early_in_a_minute(&g.w).await;
    let (w, u) = (&g.w, &g.u);
    g.c.update("web", |x| x.default_instance_warmup(5)).await;
    let spec = CustomizedMetricSpecification::builder()
        .metric_name("QueueDepth")
        .namespace("App")
        .dimensions(
            MetricDimension::builder()
                .name("Queue")
                .value("orders")
                .build(),
        )
        .statistic(MetricStatistic::Average)
        .unit("Count")
        .build();
    let cfg = TargetTrackingConfiguration::builder()
        .customized_metric_specification(spec.clone())
        .target_value(10.0)
        .disable_scale_in(true)
        .build();
    g.c.put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("depth")
        .policy_type("TargetTrackingScaling")
        .target_tracking_configuration(cfg)
        .send()
        .await
        .expect("a target tracking policy on a CloudWatch metric");
    // Read back as it was sent, no member added (Ansible and Terraform compare them).
    let shown =
        g.c.describe_policies()
            .auto_scaling_group_name("web")
            .send()
            .await
            .unwrap();
    let got = shown.scaling_policies()[0]
        .target_tracking_configuration()
        .unwrap()
        .customized_metric_specification()
        .unwrap();
    assert_eq!(got, &spec);
    assert!(got.metrics().is_empty());
    // 30 a VM against 10: three times the VMs, once the VMs are past their warm-up (the world's
    // metric period is a second: published each second).
    let publish = async |v: f64| {
        let (status, a) = w
            .cloudwatch(
                u,
                "PutMetricData",
                json!({"Namespace": "App", "MetricData": [{"MetricName": "QueueDepth",
                    "Dimensions": [{"Name": "Queue", "Value": "orders"}], "Value": v,
                    "Unit": "Count"}]}),
            )
            .await;
        assert_eq!(status, 200, "{a}");
    };
    let mut desired = Some(2);
    for _ in 0..20 {
        publish(30.0).await;
        w.run_for(1).await;
        desired = group(w, u, "web").await.unwrap().desired_capacity();
        if desired != Some(2) {
            break;
        }
    }
    assert_eq!(desired, Some(6), "{:?}", causes(w, u, "web").await);
    let cause = causes(w, u, "web").await;
    assert!(
        cause
            .iter()
            .any(|c| c.contains("The metric App QueueDepth was 30 against the target 10")),
        "{cause:?}"
    );
    // Another metric's data, or another dimension's, is not this policy's.
    let (status, _) = w
        .cloudwatch(
            u,
            "PutMetricData",
            json!({"Namespace": "App", "MetricData": [{"MetricName": "QueueDepth",
                "Dimensions": [{"Name": "Queue", "Value": "returns"}], "Value": 1000.0}]}),
        )
        .await;
    assert_eq!(status, 200);
    // A CloudWatch metric's name without its namespace and statistic is refused.
    let partial = TargetTrackingConfiguration::builder()
        .customized_metric_specification(
            CustomizedMetricSpecification::builder()
                .metric_name("QueueDepth")
                .build(),
        )
        .target_value(10.0)
        .build();
    let refused =
        g.c.put_scaling_policy()
            .auto_scaling_group_name("web")
            .policy_name("half")
            .policy_type("TargetTrackingScaling")
            .target_tracking_configuration(partial)
            .send()
            .await;
    let (code, message) = super::failure(refused);
    assert_eq!(code, "ValidationError");
    assert!(message.contains("Namespace and Statistic"), "{message}");
}

/// An alarm's SNS topic is told of each transition once, in CloudWatch's alarm message; a topic
/// that is not there is told in the alarm's history as a failed action.
#[tokio::test]
async fn an_alarms_topic_is_told_each_transition_once() {
    let g = Given::user("cw-sns").await;
    early_in_a_minute(&g.w).await;
    let (w, u) = (&g.w, &g.u);
    let topic = "arn:aws:sns:us-east-1:123456789012:ops";
    w.publisher.create(topic);
    let gone = "arn:aws:sns:us-east-1:123456789012:gone";
    let alarm = json!({"AlarmName": "load-high", "Namespace": "App", "MetricName": "Load",
        "Statistic": "Average", "Period": 60, "EvaluationPeriods": 1, "Threshold": 50.0,
        "ComparisonOperator": "GreaterThanThreshold", "AlarmActions": [topic, gone],
        "OKActions": [topic], "TreatMissingData": "ignore"});
    assert_eq!(w.cloudwatch(u, "PutMetricAlarm", alarm).await.0, 200);
    // A minute with no datapoint keeps the state (`ignore`): with CloudWatch's default
    // (`missing`), the alarm went INSUFFICIENT_DATA between the two datapoints when the world's
    // clock started late in its minute, and into ALARM again (a second message, rightly).
    publish(w, u, 90.0).await;
    w.run_for(61).await;
    // Still in ALARM another minute on: told once.
    publish(w, u, 95.0).await;
    w.run_for(60).await;
    let sent = w.publisher.sent(topic);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        sent[0].subject.as_deref(),
        Some("ALARM: \"load-high\" in us-east-1")
    );
    let body: Value = serde_json::from_str(&sent[0].body).unwrap();
    assert_eq!(body["NewStateValue"], "ALARM");
    assert_eq!(body["OldStateValue"], "INSUFFICIENT_DATA");
    assert_eq!(body["Trigger"]["MetricName"], "Load");
    // Back to OK: its OK action tells the topic too.
    publish(w, u, 10.0).await;
    w.run_for(61).await;
    let sent = w.publisher.sent(topic);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(
        sent[1].body.contains("\"NewStateValue\":\"OK\""),
        "{}",
        sent[1].body
    );
    let (_, h) = w
        .cloudwatch(
            u,
            "DescribeAlarmHistory",
            json!({"AlarmName": "load-high", "HistoryItemType": "Action"}),
        )
        .await;
    let summaries: Vec<&str> = h["AlarmHistoryItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["HistorySummary"].as_str().unwrap())
        .collect();
    assert!(
        summaries.contains(&format!("Failed to execute action {gone}").as_str()),
        "{summaries:?}"
    );
    assert!(
        summaries.contains(&format!("Successfully executed action {topic}").as_str()),
        "{summaries:?}"
    );
}

/// The demonstration in process: an alarm on `AWS/EC2 CPUUtilization` of a group, with a
/// step policy as its action, scales the group when the metric source says its VMs are busy;
/// GetMetricStatistics and ListMetrics show the metric; another account's VM has no data.
#[tokio::test]
async fn an_alarm_on_aws_ec2_cpu_reads_the_metric_source_and_scales() {
    let (g, ids) = Given::converged("cw-ec2", 1, 10, 2).await;
    early_in_a_minute(&g.w).await;
    let (w, u) = (&g.w, &g.u);
    w.metric_source().await;
    let arn = step_out(&g).await;
    let alarm = json!({"AlarmName": "cpu-high", "Namespace": "AWS/EC2",
        "MetricName": "CPUUtilization",
        "Dimensions": [{"Name": "AutoScalingGroupName", "Value": "web"}],
        "Statistic": "Average", "Period": 60, "EvaluationPeriods": 1, "Threshold": 50.0,
        "ComparisonOperator": "GreaterThanThreshold", "AlarmActions": [arn]});
    let (status, v) = w.cloudwatch(u, "PutMetricAlarm", alarm).await;
    assert_eq!(status, 200, "{v}");

    // The VMs' idle CPU series say 90 % busy: ALARM, and the +3 step.
    w.metric("node_cpu_seconds_total", Some(90.0));
    w.run_for(61).await;
    let a = alarm_of(w, u, "cpu-high").await;
    assert_eq!(a["StateValue"], "ALARM", "{a}");
    assert_eq!(
        group(w, u, "web").await.unwrap().desired_capacity(),
        Some(5)
    );
    let q = w.prometheus.asked();
    assert!(
        q.iter()
            .any(|q| q.starts_with("avg(100 * (1 - avg by (instance_id)")
                && ids.iter().all(|id| q.contains(id.as_str()))),
        "the group's VMs asked for: {q:?}"
    );

    // GetMetricStatistics and ListMetrics show it, in EC2's unit.
    let now = w.clock.now_ms() / 1000;
    let ask = |dims: Value| {
        json!({"Namespace": "AWS/EC2", "MetricName": "CPUUtilization", "Dimensions": dims,
            "StartTime": now - 600, "EndTime": now, "Period": 60,
            "Statistics": ["Average", "Maximum"]})
    };
    let by_group = json!([{"Name": "AutoScalingGroupName", "Value": "web"}]);
    let (status, v) = w.cloudwatch(u, "GetMetricStatistics", ask(by_group)).await;
    assert_eq!(status, 200, "{v}");
    let points = v["Datapoints"].as_array().unwrap();
    assert!(!points.is_empty(), "{v}");
    assert!(points
        .iter()
        .all(|p| p["Average"] == 90.0 && p["Maximum"] == 90.0 && p["Unit"] == "Percent"));
    let (_, v) = w
        .cloudwatch(u, "ListMetrics", json!({"Namespace": "AWS/EC2"}))
        .await;
    let listed: Vec<String> = v["Metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{} {}", m["MetricName"], m["Dimensions"][0]["Value"]))
        .collect();
    assert!(
        listed.contains(&"\"CPUUtilization\" \"web\"".to_string()),
        "{listed:?}"
    );
    assert!(
        listed.contains(&format!("\"NetworkIn\" \"{}\"", ids[0])),
        "{listed:?}"
    );

    // Another account asking for this account's VM gets nothing.
    let other = w.user("cw-ec2-other").await;
    let by_vm = json!([{"Name": "InstanceId", "Value": ids[0]}]);
    let (status, v) = w
        .cloudwatch(&other, "GetMetricStatistics", ask(by_vm.clone()))
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["Datapoints"], json!([]), "{v}");
    let (_, v) = w.cloudwatch(u, "GetMetricStatistics", ask(by_vm)).await;
    assert!(!v["Datapoints"].as_array().unwrap().is_empty(), "{v}");
}

/// A target tracking policy on `AWS/EC2 CPUUtilization` by `AutoScalingGroupName`, written as a
/// customized metric (as Terraform modules write it): read through from the metric source.
#[tokio::test]
async fn target_tracking_follows_aws_ec2_from_the_metric_source() {
    use aws_sdk_autoscaling::types::{
        CustomizedMetricSpecification, MetricDimension, MetricStatistic,
        TargetTrackingConfiguration,
    };
    let (g, _) = Given::converged("cw-track-ec2", 1, 10, 2).await;
    let (w, u) = (&g.w, &g.u);
    w.metric_source().await;
    g.c.update("web", |x| x.default_instance_warmup(5)).await;
    let spec = CustomizedMetricSpecification::builder()
        .metric_name("CPUUtilization")
        .namespace("AWS/EC2")
        .dimensions(
            MetricDimension::builder()
                .name("AutoScalingGroupName")
                .value("web")
                .build(),
        )
        .statistic(MetricStatistic::Average)
        .build();
    let cfg = TargetTrackingConfiguration::builder()
        .customized_metric_specification(spec)
        .target_value(45.0)
        .disable_scale_in(true)
        .build();
    g.c.put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("cpu")
        .policy_type("TargetTrackingScaling")
        .target_tracking_configuration(cfg)
        .send()
        .await
        .expect("a target tracking policy on AWS/EC2");
    // 90 % against 45: twice the VMs.
    w.metric("node_cpu_seconds_total", Some(90.0));
    let mut desired = Some(2);
    for _ in 0..20 {
        w.run_for(1).await;
        desired = group(w, u, "web").await.unwrap().desired_capacity();
        if desired != Some(2) {
            break;
        }
    }
    assert_eq!(
        desired,
        Some(4),
        "{:?} {:?}",
        causes(w, u, "web").await,
        w.prometheus.asked()
    );
}

/// A target tracking policy's two alarms, and a step policy's PromQL alarm (PutPolicyAlarm), are
/// in DescribeAlarms as AWS shows a target tracking policy's: named as DescribePolicies names
/// them, on `AWS/EC2 CPUUtilization` of the group (or the PromQL as a metric math query), their
/// state evaluated when asked.
#[tokio::test]
async fn a_policys_alarms_are_in_describe_alarms() {
    use aws_sdk_autoscaling::types::{
        MetricType, PredefinedMetricSpecification, TargetTrackingConfiguration,
    };
    let (g, _) = Given::converged("cw-policy-alarms", 1, 10, 2).await;
    let (w, u) = (&g.w, &g.u);
    w.metric_source().await;
    w.metric("node_cpu_seconds_total", Some(90.0));
    let cfg = TargetTrackingConfiguration::builder()
        .predefined_metric_specification(
            PredefinedMetricSpecification::builder()
                .predefined_metric_type(MetricType::AsgAverageCpuUtilization)
                .build(),
        )
        .target_value(60.0)
        .build();
    let made =
        g.c.put_scaling_policy()
            .auto_scaling_group_name("web")
            .policy_name("cpu")
            .policy_type("TargetTrackingScaling")
            .target_tracking_configuration(cfg)
            .send()
            .await
            .expect("a target tracking policy");
    let names: Vec<&str> = made
        .alarms()
        .iter()
        .filter_map(|a| a.alarm_name())
        .collect();
    assert_eq!(names.len(), 2);
    let arn = made.policy_arn().unwrap();

    let (status, v) = w
        .cloudwatch(
            u,
            "DescribeAlarms",
            json!({"AlarmNamePrefix": "TargetTracking-web-"}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    let shown = v["MetricAlarms"].as_array().unwrap();
    let by_name = |n: &str| shown.iter().find(|a| a["AlarmName"] == n).cloned();
    let up = by_name(names[0]).expect("the high alarm");
    let down = by_name(names[1]).expect("the low alarm");
    assert!(names[0].contains("-AlarmHigh-") && names[1].contains("-AlarmLow-"));
    assert_eq!(up["Namespace"], "AWS/EC2");
    assert_eq!(up["MetricName"], "CPUUtilization");
    assert_eq!(
        up["Dimensions"],
        json!([{"Name": "AutoScalingGroupName", "Value": "web"}])
    );
    assert_eq!(up["Statistic"], "Average");
    assert_eq!(up["Period"], 60);
    assert_eq!(
        (
            &up["Threshold"],
            &up["EvaluationPeriods"],
            &up["ComparisonOperator"]
        ),
        (&json!(60.0), &json!(3), &json!("GreaterThanThreshold"))
    );
    assert_eq!(
        (
            &down["Threshold"],
            &down["EvaluationPeriods"],
            &down["ComparisonOperator"]
        ),
        (&json!(54.0), &json!(15), &json!("LessThanThreshold"))
    );
    assert_eq!(up["AlarmActions"], json!([arn]));
    assert!(up["AlarmDescription"]
        .as_str()
        .unwrap()
        .starts_with("DO NOT EDIT OR DELETE. For TargetTrackingScaling policy arn:"));

    // Three minutes at 90 % against 60: the high alarm in ALARM, the low one OK.
    w.run_for(200).await;
    let (_, v) = w
        .cloudwatch(u, "DescribeAlarms", json!({"StateValue": "ALARM"}))
        .await;
    let in_alarm: Vec<&str> = v["MetricAlarms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["AlarmName"].as_str().unwrap())
        .collect();
    assert_eq!(in_alarm, [names[0]], "{v}");
    // DescribeAlarmsForMetric lists both on the group's CPU.
    let (_, v) = w
        .cloudwatch(
            u,
            "DescribeAlarmsForMetric",
            json!({"Namespace": "AWS/EC2", "MetricName": "CPUUtilization",
                "Dimensions": [{"Name": "AutoScalingGroupName", "Value": "web"}]}),
        )
        .await;
    let mut on_cpu: Vec<&str> = v["MetricAlarms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["AlarmName"].as_str().unwrap())
        .collect();
    on_cpu.sort_unstable();
    assert_eq!(on_cpu, [names[0], names[1]], "{v}");
    // Another alarm of its name would hide it: refused.
    let mut taken = high(arn);
    taken["AlarmName"] = json!(names[0]);
    let (status, v) = w.cloudwatch(u, "PutMetricAlarm", taken).await;
    assert_eq!(status, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("is a scaling policy's"),
        "{v}"
    );
    let (_, v) = w
        .cloudwatch(u, "DescribeAlarms", json!({"AlarmNames": [names[1]]}))
        .await;
    assert_eq!(v["MetricAlarms"][0]["StateValue"], "OK", "{v}");

    // A step policy's PromQL alarm: a metric math alarm whose one query is the PromQL.
    g.c.put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("steps")
        .policy_type("StepScaling")
        .adjustment_type("ChangeInCapacity")
        .step_adjustments(
            aws_sdk_autoscaling::types::StepAdjustment::builder()
                .metric_interval_lower_bound(0.0)
                .scaling_adjustment(1)
                .build(),
        )
        .send()
        .await
        .expect("a step policy");
    let (status, made) = super::self_service::call(
        w,
        u,
        "PutPolicyAlarm",
        json!({"AutoScalingGroupName": "web", "PolicyName": "steps",
            "Expression": "avg(app_load{$instances})", "ComparisonOperator": "GreaterThanThreshold",
            "Threshold": 60.0, "EvaluationPeriods": 3, "DatapointsToAlarm": 2}),
    )
    .await;
    assert_eq!(status, 200, "{made}");
    let name = made["AlarmName"].as_str().unwrap();
    let (_, v) = w
        .cloudwatch(u, "DescribeAlarms", json!({"AlarmNames": [name]}))
        .await;
    let a = &v["MetricAlarms"][0];
    assert_eq!(
        a["Metrics"][0]["Expression"], "avg(app_load{$instances})",
        "{v}"
    );
    assert_eq!(a["Metrics"][0]["ReturnData"], true);
    assert_eq!(a["DatapointsToAlarm"], 2);
    assert!(a.get("Namespace").is_none(), "{a}");
}
