//! Group metrics (EnableMetricsCollection): scraped by a user's Prometheus from
//! `/phantom/v1/metrics` with the user's scrape credential, and written by the health check as
//! CloudWatch Embedded Metric Format lines, only while enabled and only the ones enabled.

use super::self_service::call;
use super::{create_group, create_lc};
use crate::Given;
use base64::Engine;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::{World, EMF_NAMESPACE};
use phantom_e2e::User;
use phantom_model::time::Clock;
use serde_json::{json, Value};

/// A GET of the metrics endpoint with `authorization` (none: no header).
async fn scrape(w: &World, authorization: Option<&str>) -> (u16, String) {
    scrape_at(w, "/phantom/v1/metrics", authorization).await
}

async fn scrape_at(w: &World, path: &str, authorization: Option<&str>) -> (u16, String) {
    let mut headers = http::HeaderMap::new();
    if let Some(a) = authorization {
        headers.insert("authorization", a.parse().unwrap());
    }
    let out = w
        .app
        .handle(api::HttpRequest {
            method: "GET",
            path_and_query: path,
            headers: &headers,
            body: b"",
            source_ip: None,
            secure: false,
        })
        .await;
    (
        out.status,
        String::from_utf8(out.body.into_owned()).expect("text"),
    )
}

fn basic(user: &str, password: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {encoded}")
}

/// The user's new scrape credential, as `Authorization: Basic`.
async fn credential(w: &World, u: &User) -> String {
    let (status, answer) = call(w, u, "CreateScrapeCredential", json!({})).await;
    assert_eq!(status, 200, "{answer}");
    let c = &answer["ScrapeCredential"];
    assert_eq!(c["UserName"], u.name.as_str());
    assert_eq!(c["Path"], "/phantom/v1/metrics");
    basic(&u.name, c["Password"].as_str().unwrap())
}

/// The value of `metric`'s series for `group` in an exposition, if there is one.
fn series(text: &str, metric: &str, group: &str) -> Option<f64> {
    let at = text.find("{user=\"")?;
    let user = &text[at + 7..][..text[at + 7..].find('"')?];
    series_of(text, metric, user, group)
}

fn series_of(text: &str, metric: &str, user: &str, group: &str) -> Option<f64> {
    let prefix = format!("{metric}{{user=\"{user}\",auto_scaling_group_name=\"{group}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.parse().unwrap())
}

async fn enable(w: &World, u: &User, group: &str, metrics: &[&str]) {
    w.sdk(u)
        .enable_metrics_collection()
        .auto_scaling_group_name(group)
        .set_metrics(Some(metrics.iter().map(|m| m.to_string()).collect()))
        .granularity("1Minute")
        .send()
        .await
        .expect("enable-metrics-collection");
}

#[tokio::test]
async fn a_scrape_shows_the_enabled_metrics_of_the_users_own_groups() {
    let w = World::new().await;
    let (alice, bob) = (w.user("alice").await, w.user("bob").await);
    create_lc(&w, &alice, "web@hotel").await;
    create_group(&w, &alice, "web", "web@hotel", 0, 5, 2).await;
    create_group(&w, &alice, "quiet", "web@hotel", 0, 5, 1).await;
    enable(
        &w,
        &alice,
        "web",
        &["GroupDesiredCapacity", "GroupInServiceInstances"],
    )
    .await;
    let auth = credential(&w, &alice).await;
    w.until(30, "two VMs InService", async || {
        let (_, text) = scrape(&w, Some(&auth)).await;
        (series(&text, "phantom_group_in_service_instances", "web") == Some(2.0)).then_some(())
    })
    .await;
    let (status, text) = scrape(&w, Some(&auth)).await;
    assert_eq!(status, 200);
    assert_eq!(
        series(&text, "phantom_group_desired_capacity", "web"),
        Some(2.0)
    );
    assert!(
        !text.contains("phantom_group_max_size"),
        "only the metrics enabled:\n{text}"
    );
    assert!(
        !text.contains("quiet"),
        "only the groups with metrics enabled:\n{text}"
    );
    assert!(text.contains("# TYPE phantom_group_desired_capacity gauge"));

    // Scaled out: the next scrape follows.
    w.sdk(&alice).desire("web", 3).await;
    w.until(30, "three VMs InService", async || {
        let (_, text) = scrape(&w, Some(&auth)).await;
        (series(&text, "phantom_group_in_service_instances", "web") == Some(3.0)).then_some(())
    })
    .await;

    // Another user's credential sees only its own (none); none, a wrong one, or a deleted one: 403.
    let theirs = credential(&w, &bob).await;
    let (status, text) = scrape(&w, Some(&theirs)).await;
    assert_eq!((status, text.as_str()), (200, ""));
    let (status, text) = scrape(&w, None).await;
    assert_eq!(status, 403);
    assert!(text.starts_with("AccessDenied: "), "{text}");
    assert_eq!(scrape(&w, Some(&basic(&alice.name, "guess"))).await.0, 403);
    assert_eq!(scrape(&w, Some(&basic("nobody", "guess"))).await.0, 403);
    assert_eq!(scrape(&w, Some("Bearer abc")).await.0, 403);
    let (status, _) = call(&w, &alice, "DeleteScrapeCredential", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(scrape(&w, Some(&auth)).await.0, 403);

    // A new credential replaces the old; disabled metrics are gone from the next scrape.
    let again = credential(&w, &alice).await;
    w.sdk(&alice)
        .disable_metrics_collection()
        .auto_scaling_group_name("web")
        .metrics("GroupDesiredCapacity")
        .send()
        .await
        .unwrap();
    let (_, text) = scrape(&w, Some(&again)).await;
    assert_eq!(series(&text, "phantom_group_desired_capacity", "web"), None);
    assert_eq!(
        series(&text, "phantom_group_in_service_instances", "web"),
        Some(3.0)
    );
    w.sdk(&alice)
        .disable_metrics_collection()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    assert_eq!(scrape(&w, Some(&again)).await.1, "");
}

#[tokio::test]
async fn the_health_check_writes_each_enabled_groups_metrics_as_emf_lines() {
    let Given { w, u, .. } = Given::group("emf", 1, 4, 2).await;
    create_group(&w, &u, "quiet", "web@hotel", 0, 4, 0).await;
    w.health().run().await.unwrap();
    assert!(w.emf.take().is_empty(), "no metrics enabled, no line");

    enable(
        &w,
        &u,
        "web",
        &[
            "GroupMinSize",
            "GroupInServiceInstances",
            "GroupTotalInstances",
        ],
    )
    .await;
    w.until(30, "two VMs InService", async || {
        let g = super::group(&w, &u, "web").await?;
        (g.instances().len() == 2
            && g.instances()
                .iter()
                .all(|i| i.lifecycle_state().map(|s| s.as_str()) == Some("InService")))
        .then_some(())
    })
    .await;
    // The world's own sweeps ran the health check meanwhile: only this run's line counts.
    w.emf.take();
    let run = w.health().run().await.unwrap();
    let lines = w.emf.take();
    assert_eq!(lines.len(), 1, "one line for the one group: {lines:?}");
    let collected = run.metrics.expect("a namespace is set");
    assert_eq!((collected.groups, collected.lines), (1, 1));
    assert_eq!(collected.bytes, lines[0].len() + 1);
    let v: Value = serde_json::from_str(&lines[0]).unwrap();
    let directive = &v["_aws"]["CloudWatchMetrics"][0];
    assert_eq!(directive["Namespace"], EMF_NAMESPACE);
    assert_eq!(
        directive["Dimensions"],
        json!([["PhantomUser", "AutoScalingGroupName"]])
    );
    let names: Vec<&str> = directive["Metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["Name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "GroupMinSize",
            "GroupInServiceInstances",
            "GroupTotalInstances"
        ]
    );
    assert_eq!(v["_aws"]["Timestamp"], w.clock.now_ms());
    assert_eq!(v["PhantomUser"], u.name.as_str());
    assert_eq!(v["AutoScalingGroupName"], "web");
    assert_eq!(
        (
            &v["GroupMinSize"],
            &v["GroupInServiceInstances"],
            &v["GroupTotalInstances"]
        ),
        (&json!(1.0), &json!(2.0), &json!(2.0))
    );
    // And in the account's own CloudWatch, as AWS/AutoScaling: by group, the same values.
    assert_eq!(collected.datapoints, 3);
    let now = w.clock.now_ms() as f64 / 1000.0;
    let (status, stats) = w
        .cloudwatch(
            &u,
            "GetMetricStatistics",
            json!({"Namespace": "AWS/AutoScaling", "MetricName": "GroupInServiceInstances",
                "Dimensions": [{"Name": "AutoScalingGroupName", "Value": "web"}],
                "StartTime": now - 300.0, "EndTime": now + 60.0, "Period": 60,
                "Statistics": ["Maximum"]}),
        )
        .await;
    assert_eq!(status, 200, "{stats}");
    let points = stats["Datapoints"].as_array().unwrap();
    assert!(
        points
            .iter()
            .any(|p| p["Maximum"] == json!(2.0) && p["Unit"] == "None"),
        "{stats}"
    );
    let (_, listed) = w
        .cloudwatch(&u, "ListMetrics", json!({"Namespace": "AWS/AutoScaling"}))
        .await;
    let mut names: Vec<&str> = listed["Metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["MetricName"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "GroupInServiceInstances",
            "GroupMinSize",
            "GroupTotalInstances"
        ],
        "{listed}"
    );

    // Disabled: the next run writes nothing.
    w.sdk(&u)
        .disable_metrics_collection()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    w.health().run().await.unwrap();
    assert!(w.emf.take().is_empty());

    // A user with many groups with metrics is read whole: a line for each, none for the others.
    let many = phantom_seams::store::samples::BY_USER;
    for i in 0..many {
        let name = format!("many-{i}");
        create_group(&w, &u, &name, "web@hotel", 0, 4, 0).await;
        enable(&w, &u, &name, &["GroupMaxSize"]).await;
    }
    w.settle().await;
    w.emf.take();
    let run = w.health().run().await.unwrap();
    let lines = w.emf.take();
    let collected = run.metrics.expect("a namespace is set");
    assert_eq!((collected.groups, collected.lines), (many, many));
    let mut groups: Vec<String> = lines
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["GroupMaxSize"], json!(4.0));
            v["AutoScalingGroupName"].as_str().unwrap().to_string()
        })
        .collect();
    groups.sort();
    let want: Vec<String> = (0..many).map(|i| format!("many-{i}")).collect();
    assert_eq!(groups, want);
}

#[tokio::test]
async fn describe_metric_collection_types_answers_awss_lists() {
    let Given { w, u, c } = Given::user("types").await;
    let types = c.describe_metric_collection_types().send().await.unwrap();
    let metrics: Vec<&str> = types.metrics().iter().filter_map(|m| m.metric()).collect();
    assert_eq!(metrics, phantom_rules::group_metrics::NAMES);
    assert_eq!(metrics.len(), 20);
    let granularities: Vec<&str> = types
        .granularities()
        .iter()
        .filter_map(|g| g.granularity())
        .collect();
    assert_eq!(granularities, ["1Minute"]);
    // Every one of them can be enabled, warm pool ones included.
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 0, 2, 0).await;
    c.enable_metrics_collection()
        .auto_scaling_group_name("web")
        .granularity("1Minute")
        .send()
        .await
        .unwrap();
    let g = super::group(&w, &u, "web").await.unwrap();
    assert_eq!(g.enabled_metrics().len(), 20);
}

/// Terraform's `enabled_metrics` (aws_autoscaling_group): on create, EnableMetricsCollection with
/// the list and `metrics_granularity`; on a change, DisableMetricsCollection of the removed ones,
/// then EnableMetricsCollection of the added ones; its read compares `EnabledMetrics` with the list.
#[tokio::test]
async fn terraforms_enabled_metrics_sequence() {
    let Given { w, u, .. } = Given::group("tf", 0, 3, 1).await;
    let c = w.sdk(&u);
    let enabled = async || -> Vec<String> {
        let g = super::group(&w, &u, "web").await.unwrap();
        let mut m: Vec<String> = g
            .enabled_metrics()
            .iter()
            .map(|e| {
                assert_eq!(e.granularity(), Some("1Minute"));
                e.metric().unwrap().to_string()
            })
            .collect();
        m.sort();
        m
    };
    enable(
        &w,
        &u,
        "web",
        &[
            "GroupDesiredCapacity",
            "GroupInServiceInstances",
            "GroupTotalInstances",
        ],
    )
    .await;
    assert_eq!(
        enabled().await,
        [
            "GroupDesiredCapacity",
            "GroupInServiceInstances",
            "GroupTotalInstances"
        ]
    );
    // The plan drops GroupTotalInstances and adds GroupMaxSize.
    c.disable_metrics_collection()
        .auto_scaling_group_name("web")
        .metrics("GroupTotalInstances")
        .send()
        .await
        .unwrap();
    enable(&w, &u, "web", &["GroupMaxSize"]).await;
    assert_eq!(
        enabled().await,
        [
            "GroupDesiredCapacity",
            "GroupInServiceInstances",
            "GroupMaxSize"
        ]
    );
    let auth = credential(&w, &u).await;
    let (_, text) = scrape(&w, Some(&auth)).await;
    assert_eq!(series(&text, "phantom_group_max_size", "web"), Some(3.0));
    assert_eq!(series(&text, "phantom_group_total_instances", "web"), None);
    // An unknown metric or granularity is refused as AWS refuses it, and nothing changes.
    let (code, _) = super::failure(
        c.enable_metrics_collection()
            .auto_scaling_group_name("web")
            .metrics("GroupCPU")
            .granularity("1Minute")
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    let (code, _) = super::failure(
        c.enable_metrics_collection()
            .auto_scaling_group_name("web")
            .granularity("5Minute")
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    assert_eq!(
        enabled().await,
        [
            "GroupDesiredCapacity",
            "GroupInServiceInstances",
            "GroupMaxSize"
        ]
    );
}

/// The deployment's Prometheus scrapes every user's groups with an administrator's credential
/// (`?users=all`), each series labelled with its user; a user's credential cannot. A user with
/// many groups due is read whole, the others group by group: both answer the same.
#[tokio::test]
async fn an_administrators_scrape_sees_every_users_groups() {
    let w = World::new().await;
    let (alice, bob, root) = (
        w.user("alice").await,
        w.user("bob").await,
        w.admin("root").await,
    );
    for u in [&alice, &bob] {
        create_lc(&w, u, "web@hotel").await;
        create_group(&w, u, "web", "web@hotel", 0, 3, 1).await;
        create_group(&w, u, "off", "web@hotel", 0, 3, 0).await;
        enable(&w, u, "web", &["GroupMaxSize"]).await;
    }
    // bob has enough groups with metrics to be read whole.
    let many = phantom_seams::store::samples::BY_USER;
    for i in 0..many {
        let name = format!("many-{i}");
        create_group(&w, &bob, &name, "web@hotel", 0, 3, 0).await;
        enable(&w, &bob, &name, &["GroupDesiredCapacity"]).await;
    }
    w.settle().await;
    let all = "/phantom/v1/metrics?users=all";
    let auth = credential(&w, &root).await;
    let (status, text) = scrape_at(&w, all, Some(&auth)).await;
    assert_eq!(status, 200, "{text}");
    for u in [&alice, &bob] {
        assert_eq!(
            series_of(&text, "phantom_group_max_size", &u.name, "web"),
            Some(3.0),
            "{text}"
        );
    }
    assert_eq!(
        series_of(&text, "phantom_group_pending_instances", &alice.name, "web"),
        None,
        "only the metrics enabled"
    );
    for i in 0..many {
        assert_eq!(
            series_of(
                &text,
                "phantom_group_desired_capacity",
                &bob.name,
                &format!("many-{i}")
            ),
            Some(0.0),
            "{text}"
        );
    }
    assert_eq!(
        series_of(&text, "phantom_group_desired_capacity", &bob.name, "web"),
        None,
        "each group's own metrics only"
    );
    assert!(
        !text.contains("\"off\""),
        "only groups with metrics enabled:\n{text}"
    );
    // The administrator's own scrape, without the parameter, is its own groups (none).
    assert_eq!(scrape(&w, Some(&auth)).await, (200, String::new()));
    let theirs = credential(&w, &alice).await;
    let (status, text) = scrape_at(&w, all, Some(&theirs)).await;
    assert_eq!(status, 403, "{text}");
}

/// GetGroupMetrics (the console's chart of a group): desired, InService and pending capacity as
/// the deployment's Prometheus scraped them, only the enabled ones queried, each for this user's
/// group alone; refused without a metric source, for a group that does not exist, or a span out
/// of bounds.
#[tokio::test]
async fn get_group_metrics_reads_the_groups_history_from_the_metric_source() {
    let Given { w, u, .. } = Given::group("chart", 0, 3, 1).await;
    enable(
        &w,
        &u,
        "web",
        &["GroupDesiredCapacity", "GroupInServiceInstances"],
    )
    .await;
    let ask = json!({"AutoScalingGroupName": "web", "Minutes": 10});
    let (status, answer) = call(&w, &u, "GetGroupMetrics", ask.clone()).await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["Error"]["Message"]
            .as_str()
            .unwrap()
            .contains("No metric source"),
        "{answer}"
    );

    w.metric_source().await;
    let now = w.clock.now_ms();
    w.prometheus
        .record("phantom_group_desired_capacity", now - 300_000, Some(1.0));
    w.prometheus
        .record("phantom_group_desired_capacity", now - 60_000, Some(3.0));
    let (status, answer) = call(&w, &u, "GetGroupMetrics", ask).await;
    assert_eq!(status, 200, "{answer}");
    let series = answer["Series"].as_array().unwrap();
    let metrics: Vec<&str> = series
        .iter()
        .map(|s| s["Metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        metrics,
        [
            "GroupDesiredCapacity",
            "GroupInServiceInstances",
            "GroupPendingInstances"
        ]
    );
    assert_eq!(
        series[0]["Query"],
        format!(
            "max(phantom_group_desired_capacity{{user=\"{}\",auto_scaling_group_name=\"web\"}})",
            u.name
        )
    );
    let values = |s: &Value| -> Vec<Option<f64>> {
        s["Datapoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["Value"].as_f64())
            .collect()
    };
    let desired = values(&series[0]);
    assert_eq!(desired.last(), Some(&Some(3.0)), "{answer}");
    assert!(
        desired.contains(&Some(1.0)),
        "the earlier value is in the span: {answer}"
    );
    assert!(
        desired.first().unwrap().is_none(),
        "nothing before the first scrape"
    );
    assert_eq!(series[2]["Enabled"], false);
    assert!(
        values(&series[2]).iter().all(Option::is_none),
        "a metric not enabled is not asked"
    );

    for (ask, word) in [
        (
            json!({"AutoScalingGroupName": "web", "Minutes": 0}),
            "Minutes",
        ),
        (json!({"AutoScalingGroupName": "nope"}), "does not exist"),
    ] {
        let (status, answer) = call(&w, &u, "GetGroupMetrics", ask).await;
        assert_eq!(status, 400, "{answer}");
        assert!(
            answer["Error"]["Message"].as_str().unwrap().contains(word),
            "{answer}"
        );
    }
}

/// Phantom's own operating metrics for administrators (`?scope=operations`): requests by action
/// and code, their latency, launches by cloud, the sweeps' and schedule's durations, the queue's
/// depth; no user's name in them. A user's credential is refused. (The registry is the test
/// process's, shared by the tests running beside this one: counts are at least, not exactly.)
#[tokio::test]
async fn an_administrators_scrape_gives_phantoms_operating_metrics() {
    let w = World::new().await;
    let (u, root) = (w.user("opsuser").await, w.admin("ops").await);
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 0, 3, 2).await;
    w.until(30, "two VMs launched", async || {
        (super::group(&w, &u, "web").await?.instances().len() == 2).then_some(())
    })
    .await;
    // A run of the schedule queues a sweep of the user's VMs; the provisioner runs it.
    w.health().run().await.unwrap();
    w.settle().await;
    let ops = "/phantom/v1/metrics?scope=operations";
    let auth = credential(&w, &root).await;
    let (status, text) = scrape_at(&w, ops, Some(&auth)).await;
    assert_eq!(status, 200, "{text}");
    let value = |prefix: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in:\n{text}"))
            .trim()
            .parse()
            .unwrap()
    };
    assert!(value(r#"phantom_requests_total{action="CreateAutoScalingGroup",code="OK"}"#) >= 1.0);
    assert!(value(r#"phantom_request_seconds_count{action="CreateAutoScalingGroup"}"#) >= 1.0);
    assert!(value(r#"phantom_launches_total{cloud="hotel",code="OK"}"#) >= 1.0);
    assert!(value("phantom_sweep_seconds_count") >= 1.0);
    assert!(value("phantom_schedule_seconds_count") >= 1.0);
    assert!(value("phantom_queue_messages") >= 0.0);
    assert!(text.contains("# TYPE phantom_request_seconds histogram"));
    assert!(
        !text.contains(&u.name),
        "no user's name in Phantom's own metrics"
    );
    let theirs = credential(&w, &u).await;
    assert_eq!(scrape_at(&w, ops, Some(&theirs)).await.0, 403);
}

/// GetOperatingMetrics (the console's operations page): each figure of `phantom_metrics::ops::CHARTS`
/// from the metric source, for administrators only; refused without a metric source.
#[tokio::test]
async fn get_operating_metrics_charts_phantoms_figures_for_administrators() {
    let w = World::new().await;
    let (u, root) = (w.user("opsview").await, w.admin("opsroot").await);
    let (status, answer) = call(&w, &root, "GetOperatingMetrics", json!({})).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer["Error"]["Message"]
        .as_str()
        .unwrap()
        .contains("No metric source"));
    w.metric_source().await;
    let now = w.clock.now_ms();
    w.prometheus
        .record("phantom_requests_total", now - 30_000, Some(4.5));
    let (status, answer) = call(&w, &root, "GetOperatingMetrics", json!({"Minutes": 5})).await;
    assert_eq!(status, 200, "{answer}");
    let series = answer["Series"].as_array().unwrap();
    let names: Vec<&str> = series.iter().map(|s| s["Name"].as_str().unwrap()).collect();
    let want: Vec<&str> = phantom_metrics::ops::CHARTS.iter().map(|c| c.0).collect();
    assert_eq!(names, want);
    let last = |s: &Value| s["Datapoints"].as_array().unwrap().last().unwrap()["Value"].as_f64();
    assert_eq!(last(&series[0]), Some(4.5), "{answer}");
    assert_eq!(series[0]["Unit"], "req/s");
    let (status, _) = call(&w, &u, "GetOperatingMetrics", json!({})).await;
    assert_eq!(status, 403, "administrators only");
    let (status, _) = call(&w, &root, "GetOperatingMetrics", json!({"Minutes": 5000})).await;
    assert_eq!(status, 400);
}

/// A histogram's observations in (`low`, `high`] seconds, from an exposition (0 without the series).
fn observed_between(text: &str, family: &str, low: &str, high: &str) -> f64 {
    let bucket = |le: &str| {
        let prefix = format!("{family}_bucket{{le=\"{le}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map_or(0.0, |v| v.parse::<f64>().unwrap())
    };
    bucket(high) - bucket(low)
}

/// Death-to-replacement: a VM killed while its cloud refuses launches stays owed on the group;
/// the launch that finally succeeds carries when it died; once that VM is InService the time is
/// counted in `phantom_replacement_seconds`, and nothing is owed any more.
#[tokio::test]
async fn a_dead_vms_replacement_is_timed_from_its_death_to_in_service() {
    use phantom_seams::store::{Fleet, Groups};
    let w = World::new().await;
    let (u, root) = (w.user("replaced").await, w.admin("replacer").await);
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 0, 2, 1).await;
    w.until(30, "one VM InService", async || {
        let g = super::group(&w, &u, "web").await?;
        g.instances()
            .iter()
            .any(|i| i.lifecycle_state().map(|s| s.as_str()) == Some("InService"))
            .then_some(())
    })
    .await;
    let ops = "/phantom/v1/metrics?scope=operations";
    let auth = credential(&w, &root).await;
    // Other tests in this process count replacements too, but none of 10 to 30 minutes.
    let family = "phantom_replacement_seconds";
    let first = scrape_at(&w, ops, Some(&auth)).await.1;
    let before = observed_between(&first, family, "600", "1800");
    let waits_before = count_of(&first, "phantom_queue_wait_seconds");

    w.hotel
        .refuse("InsufficientInstanceCapacity", "no room at the moment");
    let dead = w.hotel.alive()[0].clone();
    w.hotel.terminate_outside(&dead);
    let found = w.clock.now_ms();
    w.sweep().await;
    let owed = w.store.group(&u.name, "web").await.unwrap().unwrap();
    assert_eq!(
        owed.unreplaced_ms,
        vec![found],
        "the refused launch leaves the death owed"
    );

    // Fifteen minutes later the cloud has room again, for a VM that boots in 30 s.
    w.clock.advance_ms(900_000);
    w.hotel.clear_faults();
    w.hotel.set_boot_time(std::time::Duration::from_secs(30));
    w.until(60, "the replacement launched", async || {
        (w.hotel.alive().len() == 1).then_some(())
    })
    .await;
    let members = w.store.instances(&u.name, "web").await.unwrap();
    assert_eq!(members.len(), 1, "{members:?}");
    assert_eq!(
        members[0].replaces_ms,
        Some(found),
        "the launch carries the death"
    );
    let g = w.store.group(&u.name, "web").await.unwrap().unwrap();
    assert!(g.unreplaced_ms.is_empty(), "{:?}", g.unreplaced_ms);

    w.until(60, "the replacement InService", async || {
        let m = w.store.instances(&u.name, "web").await.ok()?;
        (m.len() == 1 && m[0].lifecycle == phantom_rules::reconcile::Lifecycle::InService)
            .then_some(())
    })
    .await;
    let members = w.store.instances(&u.name, "web").await.unwrap();
    assert_eq!(members[0].replaces_ms, None, "settled once");
    let (status, text) = scrape_at(&w, ops, Some(&auth)).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("# TYPE phantom_replacement_seconds histogram"));
    assert_eq!(
        observed_between(&text, family, "600", "1800") - before,
        1.0,
        "one replacement of about 15 minutes:\n{text}"
    );
    // The provisioner counted how long each message it handled since waited past its delay.
    assert!(
        count_of(&text, "phantom_queue_wait_seconds") > waits_before,
        "{text}"
    );
}

/// A histogram's count of observations, from an exposition.
fn count_of(text: &str, family: &str) -> f64 {
    let prefix = format!("{family}_count ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.parse().unwrap())
        .unwrap_or_else(|| panic!("no {family}_count in:\n{text}"))
}

/// Phantom's `GroupUnhealthyInstances`, enabled by name: the VMs kept Unhealthy (ReplaceUnhealthy
/// suspended), a series for each check that found them so, and none once they are replaced.
#[tokio::test]
async fn unhealthy_vms_kept_are_counted_by_the_check_that_failed() {
    use phantom_seams::cloud::memory::Which;
    let (Given { w, u, c }, ids) = Given::converged("sick", 0, 4, 2).await;
    enable(&w, &u, "web", &["GroupUnhealthyInstances"]).await;
    crate::tag_web(&c, "phantom:status-check-confirm-seconds", "0").await;
    crate::suspend_web(&c, "ReplaceUnhealthy").await;
    let auth = credential(&w, &u).await;
    let (_, text) = scrape(&w, Some(&auth)).await;
    assert!(
        !text.contains("phantom_group_unhealthy_instances"),
        "all healthy: {text}"
    );
    w.hotel.impair(&ids[0], Which::System);
    c.set_instance_health()
        .instance_id(&ids[1])
        .health_status("Unhealthy")
        .should_respect_grace_period(false)
        .send()
        .await
        .unwrap();
    let check = |text: &str, check: &str| {
        let prefix = format!(
            "phantom_group_unhealthy_instances{{user=\"{}\",auto_scaling_group_name=\"web\",check=\"{check}\"}} ",
            u.name
        );
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(|v| v.parse::<f64>().unwrap())
    };
    let text = w
        .until(20, "both counted, each under its check", async || {
            let (_, text) = scrape(&w, Some(&auth)).await;
            (check(&text, "status-check") == Some(1.0) && check(&text, "user") == Some(1.0))
                .then_some(text)
        })
        .await;
    assert!(
        text.contains("# HELP phantom_group_unhealthy_instances Phantom's"),
        "{text}"
    );
    // Replaced once replacing resumes: no series left.
    c.resume_processes()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    w.until(30, "replaced", async || {
        let (_, text) = scrape(&w, Some(&auth)).await;
        (!text.contains("phantom_group_unhealthy_instances")).then_some(())
    })
    .await;
}
