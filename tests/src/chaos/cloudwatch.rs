//! Mix 10's requests: CloudWatch at Phantom's endpoint, as an application and its tools use it
//! for scaling: a metric published for each group (`App`/`Load`, valid or not), alarms on it
//! whose actions run the group's policies, target tracking on it, and the reads. Mix 11: alarms
//! tell the user's SNS topic too (`told-once` holds them to one message a transition), and the
//! alarms' tags. Mix 12: alarms, reads and target tracking on `AWS/EC2 CPUUtilization` of the
//! group too, which Phantom reads from the metric source (the `load` fault moves it). Mix 13:
//! GetMetricData with metric math over the group's metric (valid or not), and DescribeAlarms of
//! the target tracking policies' alarms.

use super::rng::Rng;
use super::work::{Answer, Drawn, Scene};
use aws_sdk_autoscaling::Client;
use serde_json::{json, Value};

/// How many rolls of a request mix `mix` (10 or later) adds (`work::request` draws them after
/// mix 5's).
pub fn rolls(mix: u32) -> u64 {
    match mix {
        ..=10 => 14,
        11 | 12 => 17,
        _ => 18,
    }
}

/// The metric every user's groups publish, one a group.
pub const NAMESPACE: &str = "App";
pub const METRIC: &str = "Load";

/// The alarm a user keeps on a group's metric.
pub fn alarm_name(group: &str) -> String {
    format!("{group}-load")
}

fn dimensions(group: &str) -> Value {
    json!([{"Name": "AutoScalingGroupName", "Value": group}])
}

/// The metric a request of mix 12 or later names now and then: the group's `AWS/EC2`
/// `CPUUtilization` (from the metric source), else its published `App`/`Load`.
fn metric(rng: &mut Rng, scene: &Scene<'_>, share: f64) -> (&'static str, &'static str) {
    if scene.mix >= 12 && rng.chance(share) {
        ("AWS/EC2", "CPUUtilization")
    } else {
        (NAMESPACE, METRIC)
    }
}

/// How a trace names a metric other than the published one.
fn on(namespace: &str, name: &str) -> String {
    match namespace == NAMESPACE {
        true => String::new(),
        false => format!(" on {namespace} {name}"),
    }
}

/// Draws and sends one of mix 10's requests (`roll` below `rolls(mix)`).
pub async fn request(c: &Client, rng: &mut Rng, scene: &Scene<'_>, roll: u64) -> (Drawn, Answer) {
    let group = scene.group;
    let alarm = alarm_name(group);
    let (op, body, what) = match roll {
        0..=3 => {
            let value = rng.between(0, 100) as f64;
            // Now and then AWS's own namespace, which CloudWatch keeps for itself.
            let namespace = if rng.chance(0.1) {
                "AWS/EC2"
            } else {
                NAMESPACE
            };
            (
                "PutMetricData",
                json!({"Namespace": namespace, "MetricData": [{"MetricName": METRIC,
                    "Dimensions": dimensions(group), "Value": value, "Unit": "Percent"}]}),
                format!("{group} {namespace} {value}"),
            )
        }
        4..=5 => {
            // On the group's step or simple policy, if it has one (its ARN as DescribePolicies
            // gives it), else an alarm with no action.
            let arn = policy_arn(c, group, rng).await;
            let period = *rng.pick(&[10, 60]).expect("two");
            let threshold = rng.between(20, 80) as f64;
            let op = *rng
                .pick(&["GreaterThanThreshold", "LessThanThreshold"])
                .expect("two");
            let treat = *rng
                .pick(&["missing", "ignore", "breaching", "notBreaching"])
                .expect("four");
            let n = rng.between(1, 3);
            let (namespace, name) = metric(rng, scene, 0.4);
            let mut body = json!({"AlarmName": alarm, "Namespace": namespace,
                "MetricName": name, "Dimensions": dimensions(group), "Statistic": "Average",
                "Period": period, "EvaluationPeriods": n, "DatapointsToAlarm": rng.between(1, n),
                "Threshold": threshold, "ComparisonOperator": op, "TreatMissingData": treat,
                "ActionsEnabled": rng.chance(0.8), "AlarmActions": arn.iter().collect::<Vec<_>>()});
            let mut told = "";
            // Mix 11: the user's topic hears of it too, on ALARM, or on OK as well.
            if scene.mix >= 11 && rng.chance(0.6) {
                body["AlarmActions"]
                    .as_array_mut()
                    .expect("a list")
                    .push(json!(scene.topic));
                told = ", told";
                if rng.chance(0.5) {
                    body["OKActions"] = json!([scene.topic]);
                    told = ", told both ways";
                }
            }
            (
                "PutMetricAlarm",
                body,
                format!(
                    "{alarm}{} {op} {threshold} every {period} s{told}",
                    on(namespace, name)
                ),
            )
        }
        6 => ("DescribeAlarms", json!({}), String::new()),
        7 => (
            "DeleteAlarms",
            json!({"AlarmNames": [alarm]}),
            alarm.clone(),
        ),
        8 => {
            let state = *rng
                .pick(&["OK", "ALARM", "INSUFFICIENT_DATA"])
                .expect("three");
            (
                "SetAlarmState",
                json!({"AlarmName": alarm, "StateValue": state, "StateReason": "chaos"}),
                format!("{alarm} {state}"),
            )
        }
        9 => (
            "DescribeAlarmHistory",
            json!({"AlarmName": alarm}),
            alarm.clone(),
        ),
        10 => (
            *rng.pick(&["EnableAlarmActions", "DisableAlarmActions"])
                .expect("two"),
            json!({"AlarmNames": [alarm]}),
            alarm.clone(),
        ),
        11 => {
            let (namespace, name) = metric(rng, scene, 0.5);
            (
                "GetMetricStatistics",
                json!({"Namespace": namespace, "MetricName": name, "Dimensions": dimensions(group),
                    "StartTime": (scene.now_ms - 600_000) as f64 / 1000.0,
                    "EndTime": scene.now_ms as f64 / 1000.0, "Period": 60,
                    "Statistics": ["Average", "Maximum"]}),
                format!("{group}{}", on(namespace, name)),
            )
        }
        12 => (
            "ListMetrics",
            json!({"Namespace": NAMESPACE}),
            String::new(),
        ),
        14..=16 => {
            // The alarm's ARN as DescribeAlarms gives it; one of another name if there is none.
            let (_, found) = scene
                .world
                .cloudwatch(scene.user, "DescribeAlarms", json!({"AlarmNames": [alarm]}))
                .await;
            let arn = found["MetricAlarms"][0]["AlarmArn"].as_str().map_or_else(
                || format!("arn:aws:cloudwatch:us-east-1:000000000000:alarm:{alarm}"),
                str::to_string,
            );
            let key = *rng.pick(&["team", "tier"]).expect("two");
            match roll {
                14 => (
                    "TagResource",
                    json!({"ResourceARN": arn, "Tags": [{"Key": key, "Value": "chaos"}]}),
                    format!("{alarm} {key}"),
                ),
                15 => (
                    "UntagResource",
                    json!({"ResourceARN": arn, "TagKeys": [key]}),
                    format!("{alarm} {key}"),
                ),
                _ => (
                    "ListTagsForResource",
                    json!({"ResourceARN": arn}),
                    alarm.clone(),
                ),
            }
        }
        17 => {
            // Metric math over the group's metric, now and then what it does not offer.
            let expression = *rng
                .pick(&[
                    "m1 * 2",
                    "FILL(m1, 0)",
                    "FILL(m1, REPEAT)",
                    "RATE(m1)",
                    "SUM(METRICS())",
                    "AVG(m1) - MIN([m1])",
                    "SEARCH('{App} Load', 'Average', 60)",
                    "m1 +",
                ])
                .expect("eight");
            if rng.chance(0.3) {
                (
                    "DescribeAlarms",
                    json!({"AlarmNamePrefix": format!("TargetTracking-{group}-")}),
                    format!("TargetTracking-{group}-"),
                )
            } else {
                (
                    "GetMetricData",
                    json!({"StartTime": (scene.now_ms - 600_000) as f64 / 1000.0,
                        "EndTime": scene.now_ms as f64 / 1000.0,
                        "MetricDataQueries": [
                            {"Id": "m1", "ReturnData": false, "MetricStat": {"Metric": {
                                "Namespace": NAMESPACE, "MetricName": METRIC,
                                "Dimensions": dimensions(group)}, "Period": 60, "Stat": "Average"}},
                            {"Id": "e1", "Expression": expression}]}),
                    format!("{group} {expression}"),
                )
            }
        }
        _ => {
            // Target tracking on the published metric (mix 12: or on AWS/EC2's CPU).
            let target = rng.between(30, 70) as f64;
            let (namespace, name) = metric(rng, scene, 0.3);
            let cfg = aws_sdk_autoscaling::types::TargetTrackingConfiguration::builder()
                .customized_metric_specification(
                    aws_sdk_autoscaling::types::CustomizedMetricSpecification::builder()
                        .metric_name(name)
                        .namespace(namespace)
                        .dimensions(
                            aws_sdk_autoscaling::types::MetricDimension::builder()
                                .name("AutoScalingGroupName")
                                .value(group)
                                .build(),
                        )
                        .statistic(aws_sdk_autoscaling::types::MetricStatistic::Average)
                        .build(),
                )
                .target_value(target)
                .disable_scale_in(rng.chance(0.5))
                .build();
            let r = c
                .put_scaling_policy()
                .auto_scaling_group_name(group)
                .policy_name("load")
                .policy_type("TargetTrackingScaling")
                .target_tracking_configuration(cfg)
                .send()
                .await;
            let drawn = Drawn {
                action: "PutScalingPolicy",
                what: format!("{group} load (CloudWatch{}) {target}", on(namespace, name)),
                vm: None,
            };
            return (drawn, super::work::judge(r));
        }
    };
    let (status, v) = scene.world.cloudwatch(scene.user, op, body).await;
    let answer = if v.get("__unparsed").is_some() {
        Answer::Broken("answers-in-shape", format!("HTTP {status}: {v}"))
    } else if status >= 500 && status != 503 {
        Answer::Broken("no-5xx", format!("HTTP {status}: {v}"))
    } else if status == 200 {
        Answer::Code("OK".into())
    } else {
        Answer::Code(format!(
            "{}: {}",
            v["__type"].as_str().unwrap_or("(no code)"),
            without_account(v["message"].as_str().unwrap_or_default())
        ))
    };
    (
        Drawn {
            action: op,
            what: format!("{what} (CloudWatch)"),
            vm: None,
        },
        answer,
    )
}

/// The ARN of one of the group's step or simple policies; without one, the user puts the step
/// policy `steps` first (+1 a little above the threshold, +2 well above, -1 and -2 below: for
/// alarms either way), as the alarm's author would. None: the group is not there.
async fn policy_arn(c: &Client, group: &str, rng: &mut Rng) -> Option<String> {
    let out = c
        .describe_policies()
        .auto_scaling_group_name(group)
        .send()
        .await
        .ok()?;
    let arns: Vec<String> = out
        .scaling_policies()
        .iter()
        .filter(|p| matches!(p.policy_type(), Some("SimpleScaling" | "StepScaling")))
        .filter_map(|p| p.policy_arn().map(str::to_string))
        .collect();
    if let Some(arn) = rng.pick(&arns) {
        return Some(arn.clone());
    }
    let steps = [
        (None, Some(-20.0), -2),
        (Some(-20.0), Some(0.0), -1),
        (Some(0.0), Some(20.0), 1),
        (Some(20.0), None, 2),
    ];
    let put = super::rest::put_steps(c, group, &steps).await.ok()?;
    put.policy_arn().map(str::to_string)
}

/// `message` with the account numbers in its alarm ARNs left out: an account's number is not
/// drawn from the seed, and a trace is the same every run.
fn without_account(message: &str) -> String {
    const PREFIX: &str = "arn:aws:cloudwatch:us-east-1:";
    let mut out = String::new();
    let mut rest = message;
    while let Some(i) = rest.find(PREFIX) {
        let (before, arn) = rest.split_at(i + PREFIX.len());
        out.push_str(before);
        let digits = arn.chars().take_while(char::is_ascii_digit).count();
        out.push_str(if digits == 12 { "<account>" } else { "" });
        rest = &arn[if digits == 12 { digits } else { 0 }..];
    }
    out.push_str(rest);
    out
}
