//! Target tracking on the local stack's real Prometheus (localstack/up.sh starts it and registers
//! it as the metric source), scraping an exporter this test controls: a policy put and described
//! through the AWS CLI; the metric raised above the target grows the group in proportion; held
//! low, DisableScaleIn keeps it, and without DisableScaleIn it shrinks a VM at a time; with the
//! metric source unreachable nothing changes, and once it is back the group follows again. Each
//! change is an activity in AWS's words. Waits are on conditions: the group's size, or what
//! Prometheus itself says it has seen. The same Prometheus scrapes every user's group metrics
//! (EnableMetricsCollection) from the api.

use phantom_e2e::argv;
use phantom_e2e::exporter::Exporter;
use phantom_e2e::{eventually, free_port, stack, User};
use phantom_seams::prometheus::http::PrometheusHttp;
use phantom_seams::prometheus::Prometheus;
use serde_json::Value;
use std::time::{Duration, Instant};

/// One value of an instant query of the stack's Prometheus, if it has one.
fn prom(query: &str) -> Option<f64> {
    let url = &stack().env["PHANTOM_PROMETHEUS_URL"];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let answer = rt
        .block_on(PrometheusHttp::new(url, None).query(query))
        .ok()?;
    answer.one().ok().flatten()
}

fn desired(u: &User) -> i64 {
    stack().group_of(u, "web")["DesiredCapacity"]
        .as_i64()
        .expect("a desired capacity")
}

fn serving(u: &User, n: usize) -> Vec<String> {
    stack().serving(u, "web", n)
}

/// A matcher of these VMs' series.
fn of(ids: &[String]) -> String {
    format!(r#"app_load{{instance_id=~"{}"}}"#, ids.join("|"))
}

/// Waits until Prometheus has seen `cond` hold over the VMs' average for `secs` seconds since
/// `since` (the run of the health check after that has had every datapoint it needs).
fn held(ids: &[String], cond: &str, secs: u64, since: Instant) {
    let q = format!("{}_over_time(avg({})[{secs}s:1s])", cond_fn(cond), of(ids));
    eventually(
        secs + 60,
        &format!("Prometheus sees avg {cond} for {secs} s"),
        || {
            let v = prom(&q)?;
            let ok = match cond.split_once(' ') {
                Some(("<", x)) => v < x.parse::<f64>().unwrap(),
                Some((">", x)) => v > x.parse::<f64>().unwrap(),
                _ => panic!("a condition is '< x' or '> x'"),
            };
            (ok && since.elapsed() >= Duration::from_secs(secs + 2)).then_some(())
        },
    );
}

/// The bound a condition needs over the window: its largest value stays below, its smallest above.
fn cond_fn(cond: &str) -> &'static str {
    if cond.starts_with('<') {
        "max"
    } else {
        "min"
    }
}

fn put(u: &User, cfg: &str) -> Value {
    stack()
        .aws(
            u,
            &argv!("put-scaling-policy --auto-scaling-group-name web --policy-name load50 --policy-type TargetTrackingScaling --estimated-instance-warmup 10 --target-tracking-configuration", cfg),
        )
        .json()
}

fn cause_with(u: &User, words: &str) -> String {
    eventually(10, &format!("an activity saying {words}"), || {
        let out = stack()
            .aws(
                u,
                &argv!("describe-scaling-activities --auto-scaling-group-name web"),
            )
            .json();
        out["Activities"]
            .as_array()?
            .iter()
            .filter_map(|a| a["Cause"].as_str())
            .find(|c| c.contains(words))
            .map(str::to_string)
    })
}

fn config(disable_scale_in: bool) -> String {
    format!(
        r#"{{"TargetValue": 50, "DisableScaleIn": {disable_scale_in}, "CustomizedMetricSpecification": {{"Metrics": [{{"Id": "load", "Label": "app load", "Expression": "avg(app_load{{$instances}})"}}]}}}}"#
    )
}

#[test]
fn a_group_follows_its_metric_on_a_real_prometheus() {
    let s = stack();
    let u = s.new_user("track");
    s.lc_and_group(&u, "web", 1, 6, 2);
    let two = serving(&u, 2);
    let exporter = Exporter::start(&s.env["PHANTOM_PROMETHEUS_TARGETS"]);
    exporter.set(&two, 20.0);
    eventually(30, "Prometheus scrapes the exporter", || {
        (prom(&format!("count({})", of(&two)))? == 2.0).then_some(())
    });

    // Put through the AWS CLI, answered and described as AWS does.
    let put_out = put(&u, &config(false));
    let alarms = put_out["Alarms"].as_array().expect("the alarms");
    assert_eq!(alarms.len(), 2, "{put_out}");
    assert!(alarms[0]["AlarmName"]
        .as_str()
        .unwrap()
        .starts_with("TargetTracking-web-AlarmHigh-"));
    let policies = s
        .aws(
            &u,
            &["describe-policies", "--auto-scaling-group-name", "web"],
        )
        .json();
    let p = &policies["ScalingPolicies"][0];
    assert_eq!(p["PolicyType"], "TargetTrackingScaling");
    assert_eq!(
        p["TargetTrackingConfiguration"]["CustomizedMetricSpecification"]["Metrics"][0]
            ["Expression"],
        "avg(app_load{$instances})"
    );
    // A query Prometheus refuses is refused, in its words.
    let refused = s
        .aws(
            &u,
            &[
                "put-scaling-policy",
                "--auto-scaling-group-name",
                "web",
                "--policy-name",
                "bad",
                "--policy-type",
                "TargetTrackingScaling",
                "--target-tracking-configuration",
                r#"{"TargetValue": 5, "CustomizedMetricSpecification": {"Metrics": [{"Id": "x", "Expression": "avg(app_load{$instances}"}]}}"#,
            ],
        )
        .error("ValidationError");
    assert!(refused.contains("parse error"), "{refused}");

    // Above the target: 2 VMs at 80 for 50 is 3.2, so 4.
    exporter.set(&two, 80.0);
    eventually(60, "the group grown to 4", || {
        (desired(&u) == 4).then_some(())
    });
    let four = serving(&u, 4);
    exporter.set(&four, 50.0);
    let cause = cause_with(&u, "AlarmHigh");
    assert!(
        cause.contains(
            "in state ALARM triggered policy load50 changing the desired capacity from 2 to 4."
        ),
        "{cause}"
    );
    assert!(
        cause.contains("The metric app load was 80 against the target 50."),
        "{cause}"
    );

    // Held low with DisableScaleIn: it stays.
    put(&u, &config(true));
    let low = Instant::now();
    exporter.set(&four, 10.0);
    held(&four, "< 45", 20, low);
    assert_eq!(desired(&u), 4, "DisableScaleIn holds");

    // Without it: in by a tenth of the group a run, down to MinSize.
    put(&u, &config(false));
    eventually(30, "the group shrunk to 3", || {
        (desired(&u) == 3).then_some(())
    });
    // Found by its step: the next run may already have taken the group on from 3.
    let cause = cause_with(&u, "changing the desired capacity from 4 to 3.");
    assert!(cause.contains("AlarmLow"), "{cause}");
    eventually(60, "the group at its MinSize", || {
        (desired(&u) == 1).then_some(())
    });
    let one = serving(&u, 1);

    // The metric source unreachable: the metric far above, nothing changes.
    let prometheus = s.env["PHANTOM_PROMETHEUS_URL"].clone();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let point = |url: &str| {
        let out = s.phantomctl(&[
            "metric-source",
            "set",
            "--url",
            url,
            "--instance-label",
            "instance_id",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    point(&dead);
    let high = Instant::now();
    exporter.set(&one, 90.0);
    held(&one, "> 85", 10, high);
    assert_eq!(desired(&u), 1, "no data, no change");
    // Back: 1 VM at 90 for 50 is 1.8, so 2.
    point(&prometheus);
    eventually(30, "the group grown to 2", || {
        (desired(&u) == 2).then_some(())
    });
}

/// Through the AWS CLI: two metrics enabled on a group, whose metrics the local Prometheus scrapes
/// (every user's, with the administrator's credential); a scale-out shows in both series, the metrics not enabled have none, and
/// once disabled the series stop.
#[test]
fn enabled_group_metrics_reach_the_local_prometheus() {
    let s = stack();
    let u = s.new_user("metrics");
    let group = "web".to_string();
    s.lc_and_group(&u, &group, 0, 4, 1);
    let enable = s.aws(
        &u,
        &argv!(
            "enable-metrics-collection --auto-scaling-group-name",
            &group,
            "--metrics GroupDesiredCapacity GroupInServiceInstances --granularity 1Minute"
        ),
    );
    assert!(enable.ok, "{}", enable.stderr);
    let series = |metric: &str| {
        prom(&format!(
            r#"{metric}{{user="{}",auto_scaling_group_name="{group}"}}"#,
            u.name
        ))
    };
    eventually(120, "Prometheus has the group's desired capacity", || {
        (series("phantom_group_desired_capacity")? == 1.0).then_some(())
    });
    let scaled = s.aws(
        &u,
        &argv!(
            "set-desired-capacity --auto-scaling-group-name",
            &group,
            "--desired-capacity 3"
        ),
    );
    assert!(scaled.ok, "{}", scaled.stderr);
    eventually(120, "both series follow the scale-out", || {
        (series("phantom_group_desired_capacity")? == 3.0
            && series("phantom_group_in_service_instances")? == 3.0)
            .then_some(())
    });
    for other in ["phantom_group_max_size", "phantom_group_total_instances"] {
        assert_eq!(series(other), None, "{other} was not enabled");
    }

    let disable = s.aws(
        &u,
        &argv!(
            "disable-metrics-collection --auto-scaling-group-name",
            &group
        ),
    );
    assert!(disable.ok, "{}", disable.stderr);
    // Gone from the next scrape, Prometheus marks the series stale: an instant query finds none.
    eventually(60, "the series stop", || {
        (series("phantom_group_desired_capacity").is_none()
            && series("phantom_group_in_service_instances").is_none())
        .then_some(())
    });
    s.aws(
        &u,
        &argv!(
            "delete-auto-scaling-group --auto-scaling-group-name",
            &group,
            "--force-delete"
        ),
    );
}

/// The Grafana dashboard in the repository (infra/grafana/dashboards/phantom-groups.json): every
/// panel's query, with its variables set to a group whose metrics are all enabled, answers one
/// series on the local Prometheus, and the variables' own queries find the user and the group.
/// (No Grafana can be installed here: Debian does not package it.)
#[test]
fn the_grafana_dashboards_queries_answer_on_the_local_prometheus() {
    let s = stack();
    let u = s.new_user("grafana");
    s.lc_and_group(&u, "web", 0, 3, 1);
    let enable = s.aws(
        &u,
        &argv!("enable-metrics-collection --auto-scaling-group-name web --granularity 1Minute"),
    );
    assert!(enable.ok, "{}", enable.stderr);
    let path = s.root.join("infra/grafana/dashboards/phantom-groups.json");
    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the dashboard")).unwrap();
    let fill = |q: &str| {
        q.replace("$user", &u.name)
            .replace("$group", "web")
            .replace("${datasource}", "")
    };
    eventually(120, "Prometheus has the group's metrics", || {
        prom(&fill(
            r#"phantom_warm_pool_total_capacity{user="$user",auto_scaling_group_name="$group"}"#,
        ))
    });
    // Grafana's label_values(metric, label), as PromQL: the label's values among the series.
    for var in dashboard["templating"]["list"].as_array().unwrap() {
        let Some(def) = var["definition"].as_str() else {
            continue;
        };
        let inner = def
            .strip_prefix("label_values(")
            .and_then(|d| d.strip_suffix(')'))
            .expect("a label_values query");
        let (metric, label) = inner.rsplit_once(", ").expect("metric, label");
        let want = if label == "user" { &u.name } else { "web" };
        let matcher = format!(r#"{label}="{want}""#);
        let selector = match metric.strip_suffix('}') {
            Some(open) => format!("{open},{matcher}}}"),
            None => format!("{metric}{{{matcher}}}"),
        };
        let q = fill(&format!("count({selector})"));
        assert_eq!(
            prom(&q),
            Some(1.0),
            "variable {} finds {want}: {q}",
            var["name"]
        );
    }
    let mut asked = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        assert_eq!(panel["datasource"]["uid"], "${datasource}");
        for t in panel["targets"].as_array().unwrap() {
            let q = fill(t["expr"].as_str().unwrap());
            assert!(
                prom(&q).is_some(),
                "panel {}: no series for {q}",
                panel["title"]
            );
            asked += 1;
        }
    }
    assert_eq!(asked, 20, "each of AWS's 20 metrics is on a panel");
}

/// Phantom's own operating metrics reach the local Prometheus (phantom-local runs every function,
/// so they are the stack's): requests by action and code, launches by cloud, sweeps, the queue.
#[test]
fn operating_metrics_reach_the_local_prometheus() {
    let s = stack();
    let u = s.new_user("ops");
    s.lc_and_group(&u, "web", 0, 3, 1);
    serving(&u, 1);
    let at_least = |q: &str, min: f64| prom(q).is_some_and(|v| v >= min);
    eventually(120, "Prometheus has the stack's operating metrics", || {
        (at_least(
            r#"sum(phantom_requests_total{action="CreateAutoScalingGroup",code="OK"})"#,
            1.0,
        ) && at_least(
            r#"sum(phantom_launches_total{cloud="hotel",code="OK"})"#,
            1.0,
        ) && at_least("sum(phantom_sweep_seconds_count)", 1.0)
            && at_least("sum(phantom_schedule_seconds_count)", 1.0)
            && prom("phantom_queue_messages").is_some())
        .then_some(())
    });
    // A latency quantile from the histogram, as a dashboard would ask it.
    let p99 = prom("histogram_quantile(0.99, sum by (le) (phantom_request_seconds_bucket))")
        .expect("a quantile");
    assert!(p99 > 0.0, "{p99}");
}

/// How many series an instant query of the stack's Prometheus answers; Err if Prometheus refuses
/// the query.
fn series_count(query: &str) -> Result<usize, String> {
    let url = &stack().env["PHANTOM_PROMETHEUS_URL"];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    match rt.block_on(PrometheusHttp::new(url, None).query(query)) {
        // A series without a number (a quantile of no observations is NaN) answers nothing.
        Ok(phantom_seams::prometheus::Answer::Vector(v)) => {
            Ok(v.iter().filter(|s| s.value.is_finite()).count())
        }
        Ok(phantom_seams::prometheus::Answer::Scalar(v)) => Ok(usize::from(v.is_finite())),
        Err(e) => Err(format!("{e:?}")),
    }
}

/// The operations dashboard (infra/grafana/dashboards/phantom-operations.json): Prometheus takes
/// every panel's query, and those of figures the stack has made (requests, latency, launches,
/// sweeps, the queue, a VM killed and replaced) answer; errors and throttling may have none yet.
#[test]
fn the_operations_dashboards_queries_answer_on_the_local_prometheus() {
    let s = stack();
    let u = s.new_user("opsdash");
    s.lc_and_group(&u, "web", 0, 3, 1);
    let first = serving(&u, 1);
    s.ec2(
        "hotel",
        &["terminate-instances", "--instance-ids", &first[0]],
    );
    eventually(120, "the killed VM replaced and InService", || {
        let g = s.group_of(&u, "web");
        g["Instances"]
            .as_array()?
            .iter()
            .any(|i| i["LifecycleState"] == "InService" && i["InstanceId"] != first[0].as_str())
            .then_some(())
    });
    let path = s
        .root
        .join("infra/grafana/dashboards/phantom-operations.json");
    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the dashboard")).unwrap();
    let fill = |q: &str| q.replace("$__rate_interval", "1m");
    let may_be_empty = ["Errors", "Throttled"];
    for panel in dashboard["panels"].as_array().unwrap() {
        let title = panel["title"].as_str().unwrap();
        assert_eq!(panel["datasource"]["uid"], "${datasource}");
        for t in panel["targets"].as_array().unwrap() {
            let q = fill(t["expr"].as_str().unwrap());
            if may_be_empty.iter().any(|w| title.starts_with(w)) {
                assert!(
                    series_count(&q).is_ok(),
                    "panel {title}: Prometheus refused {q}"
                );
                continue;
            }
            eventually(120, &format!("panel {title} answers {q}"), || {
                (series_count(&q).expect("Prometheus takes the query") > 0).then_some(())
            });
        }
    }
}
