//! Benchmark (not a test): what target tracking costs and how fast it reacts.
//!
//!   cargo run -p phantom-e2e --example tracking -- [GROUPS ...]
//!
//! 1. One run of the health check's schedule (scheduler, target tracking, sweeps) on the DynamoDB
//!    store (DynamoDB Local, template.yaml's table and its `due` index, KMS in moto) with GROUPS
//!    groups (default: 10 1000 10000) of which 10 have a target tracking policy and 2 InService
//!    VMs each: its DynamoDB calls and its Prometheus queries (the memory twin counts them), and
//!    the same run with no tracked group, for the difference.
//! 2. On the local stack (health check every second, a real Prometheus scraping every second an
//!    exporter this benchmark controls): a group of 2 at 20 % of its target (no warm-up), the
//!    metric raised to 80: the time until the desired capacity is 4, and until 4 VMs are
//!    InService.

use health_check::HealthCheck;
use phantom_e2e::moto::{DynamoDbLocal, Moto};
use phantom_model::instance::{Lifecycle, Member};
use phantom_model::time::SystemClock;
use phantom_rules::group::Group;
use phantom_seams::metrics;
use phantom_seams::prometheus::memory::{self as prometheus, MemoryPrometheus};
use phantom_seams::queue::MemoryQueue;
use phantom_seams::store::{MetricSource, Record, Store};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TRACKED: usize = 10;
/// Groups a user (a user may have 500).
const PER_USER: usize = 400;

fn lc() -> phantom_rules::launch_config::LaunchConfig {
    phantom_e2e::fixtures::launch_config("web@hotel")
}

fn serving(id: &str) -> Member {
    Member {
        zone: "us-east-1a".into(),
        launched_ms: 1_000,
        rev: 0,
        ..phantom_rules::fixtures::test_member(id, Lifecycle::InService)
    }
}

/// Writes `groups` groups; the first `tracked` get a CPU target tracking policy and 2 VMs.
async fn seed(store: &dyn Store, groups: usize, tracked: usize) {
    let put: phantom_model::request::PutScalingPolicy = phantom_wire::query::input(json!({
        "AutoScalingGroupName": "g", "PolicyName": "cpu50", "PolicyType": "TargetTrackingScaling",
        "TargetTrackingConfiguration": {"TargetValue": 50.0,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}}
    }))
    .expect("a PutScalingPolicy request");
    for i in 0..groups {
        let user = &format!("bench-{}", i / PER_USER);
        if i % PER_USER == 0 {
            store
                .create_launch_config(user, &lc())
                .await
                .expect("a launch configuration");
        }
        let name = format!("g{i:05}");
        let g: Group = phantom_e2e::fixtures::group(&name, "web@hotel", &format!("id-{name}"));
        store
            .create_group(user, &g, None)
            .await
            .expect("create the group");
        if i < tracked {
            let mut next = g.clone();
            next.settings.scaling_policies =
                vec![phantom_rules::policy::document(&put, &name, "arn:p").expect("a policy")];
            store
                .update_group(user, &g, &next, None)
                .await
                .expect("the policy");
            let record = Record {
                put: vec![serving(&format!("i-{i}a")), serving(&format!("i-{i}b"))],
                ..Record::default()
            };
            store.record(user, &next, &record).await.expect("its VMs");
        }
    }
}

/// One run: its DynamoDB calls, Prometheus queries and time.
async fn run(h: &HealthCheck, twin: &MemoryPrometheus) -> (u64, usize, Duration, usize) {
    let (before, queries) = (metrics::calls(), twin.queries());
    let t = Instant::now();
    let r = h.run().await.expect("the run");
    (
        (metrics::calls() - before).dynamodb,
        twin.queries() - queries,
        t.elapsed(),
        r.tracking.groups,
    )
}

async fn cost(sizes: &[usize]) {
    println!("| groups | tracked | run: DynamoDB calls | Prometheus queries | time | with none tracked: DynamoDB calls |");
    println!("|---|---|---|---|---|---|");
    for &groups in sizes {
        let mut row = Vec::new();
        for tracked in [TRACKED, 0] {
            let db = DynamoDbLocal::start();
            let moto = Moto::start();
            let (store, _) = moto.state_store("bench", Some(&db.url)).await;
            let store: Arc<dyn Store> = Arc::new(store);
            let t = Instant::now();
            seed(store.as_ref(), groups, tracked).await;
            eprintln!(
                "{groups} groups ({tracked} tracked) written in {:.1?}",
                t.elapsed()
            );
            store
                .put_metric_source(&MetricSource {
                    url: "memory://prometheus".into(),
                    instance_label: "instance_id".into(),
                    auth: None,
                })
                .await
                .expect("the metric source");
            let twin = Arc::new(MemoryPrometheus::default());
            let h = HealthCheck {
                store: store.clone(),
                queue: Arc::new(MemoryQueue::new(
                    Arc::new(SystemClock),
                    phantom_seams::fault::none(),
                )),
                clock: Arc::new(SystemClock),
                metrics: Arc::new(prometheus::Connect(twin.clone())),
                metric_period_ms: 60_000,
                pulse: None,
                emf: None,
                probing: Arc::new(health_check::prober::Probing::new(
                    Arc::new(phantom_seams::probe::NetProber::default()),
                    Arc::new(phantom_seams::cloud::memory::MemoryClouds::default()),
                )),
                publisher: Arc::new(phantom_seams::publish::memory::MemoryPublisher::default()),
                listed: Default::default(),
            };
            // The second run, once the first has warmed what a Lambda instance keeps.
            run(&h, &twin).await;
            let r = run(&h, &twin).await;
            assert_eq!(r.3, tracked, "every tracked group evaluated");
            row.push(r);
        }
        let (with, without) = (&row[0], &row[1]);
        println!(
            "| {groups} | {TRACKED} | {} | {} | {:.0?} | {} |",
            with.0, with.1, with.2, without.0
        );
    }
}

/// The local stack's reaction: from the metric raised to the new VMs serving.
fn reaction() {
    use phantom_e2e::exporter::Exporter;
    use phantom_e2e::{eventually, stack};
    let s = stack();
    let u = s.new_user("bench-track");
    let aws = |args: &[&str]| s.aws(&u, args).json();
    s.lc_and_group(&u, "web", 1, 10, 2);
    let group = || s.group_of(&u, "web");
    let in_service = |n: usize| {
        let g = group();
        let up: Vec<String> = g["Instances"]
            .as_array()?
            .iter()
            .filter(|i| i["LifecycleState"] == "InService")
            .filter_map(|i| i["InstanceId"].as_str().map(str::to_string))
            .collect();
        (up.len() == n).then_some(up)
    };
    let two = eventually(60, "2 InService", || in_service(2));
    let exporter = Exporter::start(&s.env["PHANTOM_PROMETHEUS_TARGETS"]);
    exporter.set(&two, 20.0);
    aws(&[
        "put-scaling-policy",
        "--auto-scaling-group-name",
        "web",
        "--policy-name",
        "load50",
        "--policy-type",
        "TargetTrackingScaling",
        "--estimated-instance-warmup",
        "0",
        "--target-tracking-configuration",
        r#"{"TargetValue": 50, "CustomizedMetricSpecification": {"Metrics": [{"Id": "load", "Expression": "avg(app_load{$instances})"}]}}"#,
    ]);
    // Scraped at 20 for a few datapoints, so the raise is all that changes.
    let url = s.env["PHANTOM_PROMETHEUS_URL"].clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let q = format!(
        r#"count_over_time(avg(app_load{{instance_id=~"{}"}})[5s:1s])"#,
        two.join("|")
    );
    eventually(60, "5 datapoints at 20", || {
        use phantom_seams::prometheus::Prometheus;
        let p = phantom_seams::prometheus::http::PrometheusHttp::new(&url, None);
        let n = rt.block_on(p.query(&q)).ok()?.one().ok()??;
        (n >= 5.0).then_some(())
    });
    let t = Instant::now();
    exporter.set(&two, 80.0);
    eventually(60, "desired 4", || {
        (group()["DesiredCapacity"].as_i64()? >= 4).then_some(())
    });
    let decided = t.elapsed();
    eventually(60, "4 InService", || (4..=10).find_map(in_service));
    let serving = t.elapsed();
    println!(
        "\nlocal stack (health check and scrape every second, 3 datapoints above): desired 2 -> 4 {:.1?} after the metric was raised, 4 InService after {:.1?}",
        decided, serving
    );
}

#[tokio::main]
async fn main() {
    let sizes = phantom_e2e::sizes_from_args("GROUPS", &[10, 1_000, 10_000]);
    cost(&sizes).await;
    tokio::task::spawn_blocking(reaction)
        .await
        .expect("the stack's part");
}
