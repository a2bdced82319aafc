//! CloudWatch at Phantom's endpoint, as its clients call it: the unmodified AWS CLI (JSON 1.0),
//! and boto3 in each protocol CloudWatch's clients speak (JSON, RPC v2 CBOR as the Go SDK and
//! Terraform send it, Query as older SDKs do).

use phantom_e2e::exporter::Exporter;
use phantom_e2e::{argv, clients, eventually, stack};
use phantom_model::time::{format_timestamp, from_ms, now_ms};
use serde_json::{json, Value};

/// The start of the current minute, and an hour around it.
fn minute() -> (i64, String, String, String) {
    let at = now_ms() / 60_000 * 60_000;
    let t = |ms: i64| format_timestamp(from_ms(ms));
    (at, t(at), t(at - 1_800_000), t(at + 1_800_000))
}

#[test]
fn the_aws_cli_publishes_a_metric_and_reads_its_statistics() {
    let s = stack();
    let u = s.new_user("cw-cli");
    let (_, at, start, end) = minute();
    s.cloudwatch(
        &u,
        &argv!(
            "put-metric-data --namespace App --metric-name Load --dimensions Group=web,Tier=front --unit Percent --value 10 --timestamp",
            &at
        ),
    )
    .json();
    // A statistic set, the dimensions in another order: the same metric.
    s.cloudwatch(
        &u,
        &argv!(
            "put-metric-data --namespace App --metric-name Load --dimensions Tier=front,Group=web --unit Percent --statistic-values SampleCount=2,Sum=30,Minimum=10,Maximum=20 --timestamp",
            &at
        ),
    )
    .json();
    let stats = s
        .cloudwatch(
            &u,
            &argv!(
                "get-metric-statistics --namespace App --metric-name Load --dimensions Name=Group,Value=web Name=Tier,Value=front --period 60 --statistics Average Sum SampleCount Maximum --start-time",
                &start,
                "--end-time",
                &end
            ),
        )
        .json();
    assert_eq!(stats["Label"], "Load");
    let points = stats["Datapoints"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{stats}");
    let p = &points[0];
    assert_eq!(p["Sum"], 40.0);
    assert_eq!(p["SampleCount"], 3.0);
    assert_eq!(p["Maximum"], 20.0);
    assert!((p["Average"].as_f64().unwrap() - 40.0 / 3.0).abs() < 1e-9);
    assert!(p.get("Minimum").is_none(), "only what was asked: {p}");
    assert_eq!(p["Unit"], "Percent");
    // The metric is listed, for its account only.
    let listed = s
        .cloudwatch(&u, &argv!("list-metrics --namespace App"))
        .json();
    assert_eq!(
        listed["Metrics"],
        json!([{"Namespace": "App", "MetricName": "Load", "Dimensions": [
            {"Name": "Group", "Value": "web"}, {"Name": "Tier", "Value": "front"}]}])
    );
    let other = s.new_user("cw-other");
    let theirs = s.cloudwatch(&other, &argv!("list-metrics")).json();
    assert_eq!(theirs["Metrics"], json!([]));
    // AWS's namespaces are CloudWatch's own to fill.
    let refused = s
        .cloudwatch(
            &u,
            &argv!("put-metric-data --namespace AWS/EC2 --metric-name CPUUtilization --value 1"),
        )
        .error("InvalidParameterValue");
    assert!(refused.contains("AWS/"), "{refused}");
}

#[test]
fn every_protocol_of_cloudwatchs_clients_gets_the_same_answers() {
    let s = stack();
    let (at_ms, at, start, end) = minute();
    let mut answers = Vec::new();
    for protocol in [clients::JSON, clients::CBOR, clients::QUERY] {
        // A user each: the same calls, the same data.
        let u = s.new_user(&format!("cw-{}", &protocol[..4]));
        let got = clients::cloudwatch(
            &s.url,
            &u,
            protocol,
            json!([
                {"op": "put_metric_data", "params": {"Namespace": "Shop", "MetricData": [
                    {"MetricName": "Orders", "Dimensions": [{"Name": "Queue", "Value": "q1"}],
                     "Timestamp": at, "Values": [1.0, 5.0], "Counts": [3.0, 1.0], "Unit": "Count"},
                    {"MetricName": "Latency", "Timestamp": at, "Value": 0.25,
                     "Unit": "Seconds", "StorageResolution": 1}]}},
                {"op": "get_metric_statistics", "params": {"Namespace": "Shop",
                    "MetricName": "Orders", "Dimensions": [{"Name": "Queue", "Value": "q1"}],
                    "StartTime": start, "EndTime": end, "Period": 300,
                    "Statistics": ["Sum", "SampleCount", "Minimum"]}},
                {"op": "list_metrics", "params": {"Namespace": "Shop"}},
                {"op": "get_metric_data", "params": {"StartTime": start, "EndTime": end,
                    "MetricDataQueries": [{"Id": "orders", "MetricStat": {"Metric": {
                        "Namespace": "Shop", "MetricName": "Orders",
                        "Dimensions": [{"Name": "Queue", "Value": "q1"}]},
                        "Period": 60, "Stat": "Average"}}]}},
                {"op": "put_metric_data", "params": {"Namespace": "Shop", "MetricData": [
                    {"MetricName": "Orders", "Value": 1.0, "StatisticValues":
                        {"SampleCount": 1.0, "Sum": 1.0, "Minimum": 1.0, "Maximum": 1.0}}]}},
                {"op": "get_metric_statistics", "params": {"Namespace": "Shop",
                    "MetricName": "Orders", "StartTime": start, "EndTime": end, "Period": 60}},
                {"op": "get_metric_statistics", "params": {"Namespace": "Shop",
                    "MetricName": "Orders", "StartTime": start, "EndTime": end, "Period": 90,
                    "Statistics": ["Sum"]}},
                {"op": "put_metric_data", "params": {"Namespace": "Shop", "MetricData": [
                    {"MetricName": "Orders", "Value": 1.0, "Unit": "Furlongs"}]}},
                {"op": "put_dashboard", "params": {"DashboardName": "d", "DashboardBody": "{}"}}
            ]),
        );
        answers.push((protocol, got));
    }
    let (_, first) = &answers[0];
    assert_eq!(first[0], json!({"ok": {}}));
    let point = &first[1]["ok"]["Datapoints"][0];
    assert_eq!(point["Sum"], 8.0, "{first:?}");
    assert_eq!(point["SampleCount"], 4.0);
    assert_eq!(point["Minimum"], 1.0);
    assert_eq!(point["Unit"], "Count");
    let listed: Vec<&str> = first[2]["ok"]["Metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["MetricName"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["Latency", "Orders"]);
    let result = &first[3]["ok"]["MetricDataResults"][0];
    assert_eq!(result["Id"], "orders");
    assert_eq!(result["Label"], "Orders");
    assert_eq!(result["StatusCode"], "Complete");
    assert_eq!(result["Values"], json!([2.0]));
    let stamp = result["Timestamps"][0].as_str().unwrap();
    assert_eq!(
        phantom_model::time::parse_timestamp(stamp).map(|t| t.unix_timestamp() * 1000),
        Some(at_ms),
        "{stamp}"
    );
    let code = |a: &Value| a["error"]["code"].clone();
    assert_eq!(code(&first[4]), "InvalidParameterCombination");
    assert_eq!(code(&first[5]), "MissingParameter");
    assert_eq!(code(&first[6]), "InvalidParameterValue");
    assert_eq!(code(&first[7]), "ValidationError");
    assert_eq!(code(&first[8]), "InvalidAction");
    assert!(first[4..].iter().all(|a| a["error"]["status"] == 400));
    // The other protocols: the same answers, the same errors.
    for (protocol, got) in &answers[1..] {
        assert_eq!(got.len(), first.len());
        for (i, (a, b)) in first.iter().zip(got.iter()).enumerate() {
            match (a.get("ok"), b.get("ok")) {
                (Some(x), Some(y)) => assert_eq!(x, y, "{protocol}, call {i}"),
                _ => assert_eq!(code(a), code(b), "{protocol}, call {i}: {b}"),
            }
        }
    }
}

/// A user with `web@hotel` and group `name` of one VM from it (`sizes`: its other arguments).
fn user_with_group(prefix: &str, name: &str, sizes: &str) -> phantom_e2e::User {
    let s = stack();
    let u = s.new_user(prefix);
    s.aws(
        &u,
        &argv!("create-launch-configuration --launch-configuration-name web@hotel --image-id ami-1e749f67 --instance-type t2.micro"),
    )
    .json();
    let mut args = argv!(
        "create-auto-scaling-group --launch-configuration-name web@hotel --desired-capacity 1 --availability-zones us-east-1a --auto-scaling-group-name",
        name
    );
    args.extend(sizes.split_whitespace());
    s.aws(&u, &args).json();
    u
}

#[test]
fn an_alarm_put_with_the_aws_cli_scales_a_group_and_tells_its_history() {
    let s = stack();
    let u = user_with_group("cw-alarm", "busy", "--min-size 1 --max-size 4");
    let put = s
        .aws(
            &u,
            &argv!("put-scaling-policy --auto-scaling-group-name busy --policy-name out --adjustment-type ChangeInCapacity --scaling-adjustment 1"),
        )
        .json();
    let policy = put["PolicyARN"].as_str().unwrap().to_string();
    // Ten-second periods of high-resolution data: CloudWatch's shortest alarm.
    s.cloudwatch(
        &u,
        &argv!(
            "put-metric-alarm --alarm-name busy-high --namespace App --metric-name Busy --statistic Maximum --period 10 --evaluation-periods 1 --threshold 5 --comparison-operator GreaterThanThreshold --alarm-actions",
            &policy
        ),
    )
    .json();
    let alarm = |s: &phantom_e2e::Stack| {
        s.cloudwatch(&u, &argv!("describe-alarms --alarm-names busy-high"))
            .json()["MetricAlarms"][0]
            .clone()
    };
    assert_eq!(alarm(s)["StateValue"], "INSUFFICIENT_DATA");
    s.cloudwatch(
        &u,
        &argv!(
            "put-metric-data --namespace App --metric-name Busy --value 9 --storage-resolution 1"
        ),
    )
    .json();
    eventually(60, "the alarm's policy grew the group", || {
        let g = s.group(&u, "busy")?;
        (g["DesiredCapacity"] == 2).then_some(())
    });
    let a = alarm(s);
    assert_eq!(a["StateValue"], "ALARM", "{a}");
    assert_eq!(a["AlarmActions"], json!([policy]));
    let history = s
        .cloudwatch(
            &u,
            &argv!("describe-alarm-history --alarm-name busy-high --history-item-type StateUpdate"),
        )
        .json();
    assert_eq!(
        history["AlarmHistoryItems"][0]["HistorySummary"],
        "Alarm updated from INSUFFICIENT_DATA to ALARM",
        "{history}"
    );
}

/// The issue's demonstration through the AWS CLI: an alarm on `AWS/EC2 CPUUtilization` of a
/// group, a step policy's ARN its action, scales the group when the metric source (the local
/// stack's Prometheus, scraping node_exporter's idle CPU counter of the group's VM) says the VM is
/// busy; describe-alarms shows it beside a target tracking policy's two alarms; the history tells
/// the transition; get-metric-statistics reads the CPU.
#[test]
fn an_alarm_on_aws_ec2_cpu_scales_a_group_through_the_aws_cli() {
    let s = stack();
    let u = user_with_group("cw-ec2", "cpu", "--min-size 1 --max-size 4");
    let ids = s.serving(&u, "cpu", 1);
    let exporter = Exporter::start(&s.env["PHANTOM_PROMETHEUS_TARGETS"]);
    exporter.set_cpu_busy(&ids, 90.0);
    let put = s
        .aws(
            &u,
            &argv!("put-scaling-policy --auto-scaling-group-name cpu --policy-name out --adjustment-type ChangeInCapacity --scaling-adjustment 1"),
        )
        .json();
    let policy = put["PolicyARN"].as_str().unwrap().to_string();
    // A target tracking policy that does not act here (95 %, no scale-in): its alarms are shown.
    let tracking = r#"{"PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}, "TargetValue": 95, "DisableScaleIn": true}"#;
    let mut args = argv!("put-scaling-policy --auto-scaling-group-name cpu --policy-name track --policy-type TargetTrackingScaling --target-tracking-configuration");
    args.push(tracking);
    s.aws(&u, &args).json();
    s.cloudwatch(
        &u,
        &argv!(
            "put-metric-alarm --alarm-name cpu-high --namespace AWS/EC2 --metric-name CPUUtilization --dimensions Name=AutoScalingGroupName,Value=cpu --statistic Average --period 10 --evaluation-periods 1 --threshold 50 --comparison-operator GreaterThanThreshold --alarm-actions",
            &policy
        ),
    )
    .json();
    eventually(120, "the alarm's policy grew the group", || {
        let g = s.group(&u, "cpu")?;
        (g["DesiredCapacity"].as_i64()? >= 2).then_some(())
    });
    let shown = s.cloudwatch(&u, &argv!("describe-alarms")).json();
    let alarms = shown["MetricAlarms"].as_array().unwrap();
    let named = |prefix: &str| {
        alarms
            .iter()
            .filter(|a| a["AlarmName"].as_str().unwrap().starts_with(prefix))
            .count()
    };
    assert_eq!(named("cpu-high"), 1, "{shown}");
    assert_eq!(named("TargetTracking-cpu-AlarmHigh-"), 1, "{shown}");
    assert_eq!(named("TargetTracking-cpu-AlarmLow-"), 1, "{shown}");
    let history = s
        .cloudwatch(
            &u,
            &argv!("describe-alarm-history --alarm-name cpu-high --history-item-type StateUpdate"),
        )
        .json();
    assert!(
        history["AlarmHistoryItems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["HistorySummary"] == "Alarm updated from INSUFFICIENT_DATA to ALARM"),
        "{history}"
    );
    let (_, _, start, end) = minute();
    let cpu = s
        .cloudwatch(
            &u,
            &argv!(
                "get-metric-statistics --namespace AWS/EC2 --metric-name CPUUtilization --dimensions Name=AutoScalingGroupName,Value=cpu --period 60 --statistics Maximum --start-time",
                &start,
                "--end-time",
                &end
            ),
        )
        .json();
    let busiest = cpu["Datapoints"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["Maximum"].as_f64())
        .fold(0.0, f64::max);
    assert!((80.0..=100.0).contains(&busiest), "{cpu}");
    drop(exporter);
}

/// The Ansible collection's custom metric step as the AWS CLI says it: a target tracking policy
/// on `MetricName`/`Namespace`/`Dimensions`/`Statistic`, fed by `aws cloudwatch put-metric-data`,
/// grows the group.
#[test]
fn target_tracking_on_a_custom_metric_fed_by_put_metric_data_grows_a_group() {
    let s = stack();
    let u = user_with_group(
        "cw-track",
        "queue",
        "--min-size 1 --max-size 3 --default-instance-warmup 1",
    );
    let config = json!({"CustomizedMetricSpecification": {"MetricName": "metric_1",
        "Namespace": "namespace_1", "Dimensions": [{"Name": "dimension1", "Value": "value1"}],
        "Statistic": "Minimum", "Unit": "Count"}, "TargetValue": 98.0, "DisableScaleIn": true});
    s.aws(
        &u,
        &argv!(
            "put-scaling-policy --auto-scaling-group-name queue --policy-name custom --policy-type TargetTrackingScaling --target-tracking-configuration",
            &config.to_string()
        ),
    )
    .json();
    let shown = s
        .aws(
            &u,
            &argv!("describe-policies --auto-scaling-group-name queue"),
        )
        .json();
    assert_eq!(
        shown["ScalingPolicies"][0]["TargetTrackingConfiguration"], config,
        "read back as sent"
    );
    s.serving(&u, "queue", 1);
    // 300 against 98 for one VM: three VMs, the group's MaxSize.
    eventually(60, "the custom metric grew the group", || {
        s.cloudwatch(
            &u,
            &argv!("put-metric-data --namespace namespace_1 --metric-name metric_1 --dimensions dimension1=value1 --unit Count --value 300"),
        )
        .json();
        let g = s.group(&u, "queue")?;
        (g["DesiredCapacity"] == 3).then_some(())
    });
}

/// Terraform's `aws_cloudwatch_metric_alarm`, as its provider calls CloudWatch (the Go SDK's RPC v2
/// CBOR): create with its tags, read it back (DescribeAlarms by name and type, then its tags),
/// update in place, retag, delete. Plan-stable: what it reads back is what it sent.
#[test]
fn terraforms_metric_alarm_calls_read_back_what_they_sent() {
    let s = stack();
    let u = s.new_user("cw-tf");
    let alarm = json!({"AlarmName": "tf-high", "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "EvaluationPeriods": 2, "MetricName": "CPUUtilization", "Namespace": "App",
        "Period": 120, "Statistic": "Average", "Threshold": 80.0, "ActionsEnabled": true,
        "AlarmDescription": "cpu high", "Dimensions": [{"Name": "AutoScalingGroupName", "Value": "web"}],
        "TreatMissingData": "missing", "Unit": "Percent", "DatapointsToAlarm": 2,
        "Tags": [{"Key": "env", "Value": "prod"}]});
    let read = json!({"op": "describe_alarms", "params": {"AlarmNames": ["tf-high"],
        "AlarmTypes": ["MetricAlarm"]}});
    let got = clients::cloudwatch(
        &s.url,
        &u,
        clients::CBOR,
        json!([{"op": "put_metric_alarm", "params": alarm}, read]),
    );
    assert_eq!(got[0], json!({"ok": {}}), "{got:?}");
    let shown = &got[1]["ok"]["MetricAlarms"];
    assert_eq!(shown.as_array().map(Vec::len), Some(1), "{got:?}");
    let shown = &shown[0];
    for (k, v) in alarm.as_object().unwrap() {
        if k != "Tags" {
            assert_eq!(&shown[k], v, "{k}");
        }
    }
    for empty in ["OKActions", "AlarmActions", "InsufficientDataActions"] {
        assert_eq!(shown[empty], json!([]), "{empty}");
    }
    let arn = shown["AlarmArn"].as_str().unwrap().to_string();
    let mut changed = alarm.clone();
    changed["Period"] = 60.into();
    changed.as_object_mut().unwrap().remove("Tags");
    let got = clients::cloudwatch(
        &s.url,
        &u,
        clients::CBOR,
        json!([
            {"op": "list_tags_for_resource", "params": {"ResourceARN": arn}},
            {"op": "put_metric_alarm", "params": changed},
            {"op": "untag_resource", "params": {"ResourceARN": arn, "TagKeys": ["env"]}},
            {"op": "tag_resource", "params": {"ResourceARN": arn,
                "Tags": [{"Key": "team", "Value": "ops"}]}},
            read,
            {"op": "list_tags_for_resource", "params": {"ResourceARN": arn}},
            {"op": "delete_alarms", "params": {"AlarmNames": ["tf-high"]}},
            read,
        ]),
    );
    assert_eq!(
        got[0]["ok"]["Tags"],
        json!([{"Key": "env", "Value": "prod"}])
    );
    assert_eq!(got[4]["ok"]["MetricAlarms"][0]["Period"], 60);
    assert_eq!(got[4]["ok"]["MetricAlarms"][0]["AlarmArn"], arn);
    assert_eq!(
        got[5]["ok"]["Tags"],
        json!([{"Key": "team", "Value": "ops"}])
    );
    assert_eq!(got[6], json!({"ok": {}}));
    assert_eq!(got[7]["ok"]["MetricAlarms"], json!([]));
}
