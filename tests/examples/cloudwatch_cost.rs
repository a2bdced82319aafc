//! Benchmark (not a test): what Phantom's CloudWatch costs on AWS, from what one PutMetricData and
//! one alarm's evaluation do.
//!
//!   cargo run -p phantom-e2e --release --example cloudwatch_cost -- [REQUESTS] [ALARMS]
//!
//! In process (the api and the health check on the memory store, which counts the DynamoDB calls
//! the DynamoDB adapter makes): REQUESTS PutMetricData calls of one datum each, as a VM's agent
//! sends one a minute (default 20,000), then ALARMS alarms (default 1,000) evaluated in one run
//! of the schedule. It prints each one's calls, items written and CPU time on this machine, and
//! the bill they imply at AWS's list prices (us-east-1, arm64): per million datapoints, per
//! VM-month at one a minute, at 100,000 VMs, and per alarm-month.

use phantom_e2e::world::World;
use phantom_model::time::Clock;
use phantom_seams::store::{Directory, Watch};
use serde_json::json;
use std::time::Instant;

// AWS list prices, us-east-1, arm64, November 2026 (docs/scale.md).
const API_GATEWAY_REQUEST: f64 = 3.50 / 1e6;
const LAMBDA_REQUEST: f64 = 0.20 / 1e6;
const LAMBDA_GB_S: f64 = 0.000_013_333_4;
const DYNAMODB_WRITE: f64 = 0.625 / 1e6;
const DYNAMODB_READ: f64 = 0.125 / 1e6;
/// template.yaml's memory: the api's (Globals) and the health check's.
const API_GB: f64 = 0.25;
const HEALTH_GB: f64 = 1.0;
const MINUTES_A_MONTH: f64 = 30.0 * 24.0 * 60.0;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let requests: usize = args.next().map_or(20_000, |a| a.parse().expect("a count"));
    let alarms: usize = args.next().map_or(1_000, |a| a.parse().expect("a count"));
    println!(
        "command: cargo run -p phantom-e2e --release --example cloudwatch_cost -- {requests} {alarms}"
    );
    let w = World::new().await;
    let u = w.user("cost").await;
    // Limits of its own, so that the benchmark measures the work, not the throttle.
    let rate = phantom_model::limits::Rate {
        per_sec: 1e9,
        burst: 1e9,
    };
    let limits = phantom_model::limits::Limits {
        describe: rate,
        mutate: rate,
    };
    let record = w
        .store
        .user(&u.name)
        .await
        .expect("the store")
        .expect("the user");
    w.store
        .set_limits(&record, Some(&limits))
        .await
        .expect("limits");

    // PutMetricData: one datum a call, from as many VMs (one metric each), as agents send them.
    let calls_before = w.store.calls();
    let started = Instant::now();
    for i in 0..requests {
        // Within PutMetricData's own bucket (500 a second, for every user).
        w.clock.advance_ms(3);
        let (status, v) = w
            .cloudwatch(
                &u,
                "PutMetricData",
                json!({"Namespace": "App", "MetricData": [{"MetricName": "Load",
                    "Dimensions": [{"Name": "InstanceId", "Value": format!("i-{:05}", i % 1000)}],
                    "Value": (i % 100) as f64, "Unit": "Percent"}]}),
            )
            .await;
        assert_eq!(status, 200, "{v}");
    }
    let put_ms = started.elapsed().as_secs_f64() * 1e3 / requests as f64;
    let put_calls = (w.store.calls() - calls_before) as f64 / requests as f64;
    // Each datum is an item; its metric's listing is another, written again once an hour
    // (`LISTING_REFRESH_MS`): at a datum a minute, one in 60.
    let refresh_minutes = phantom_seams::store::listed::LISTING_REFRESH_MS as f64 / 60_000.0;
    let put_items = 1.0 + 1.0 / refresh_minutes;

    // Alarms: one a VM's metric, evaluated in one run of the schedule.
    for i in 0..alarms {
        let (status, v) = w
            .cloudwatch(
                &u,
                "PutMetricAlarm",
                json!({"AlarmName": format!("a{i:05}"), "Namespace": "App", "MetricName": "Load",
                    "Dimensions": [{"Name": "InstanceId", "Value": format!("i-{:05}", i % 1000)}],
                    "Statistic": "Average", "Period": 60, "EvaluationPeriods": 3,
                    "Threshold": 50.0, "ComparisonOperator": "GreaterThanThreshold"}),
            )
            .await;
        assert_eq!(status, 200, "{v}");
    }
    let h = w.health();
    let watcher = health_check::alarms::Watcher {
        store: h.store.as_ref(),
        queue: h.queue.as_ref(),
        publisher: h.publisher.as_ref(),
        connect: h.metrics.as_ref(),
        now_ms: w.clock.now_ms() + 180_000,
    };
    // The first run moves every alarm out of INSUFFICIENT_DATA (a write each); the second is a
    // minute as most are: read, decided, nothing written.
    watcher.run().await.expect("a run");
    let calls_before = w.store.calls();
    let started = Instant::now();
    let quiet = health_check::alarms::Watcher {
        now_ms: watcher.now_ms + 1,
        ..watcher
    };
    quiet.run().await.expect("a run");
    let eval_ms = started.elapsed().as_secs_f64() * 1e3 / alarms as f64;
    let eval_calls = (w.store.calls() - calls_before) as f64 / alarms as f64;
    let listed = w.store.metrics(&u.name, None).await.expect("metrics").len();

    println!("\n| what | value |");
    println!("|---|---|");
    println!("| PutMetricData (one datum): DynamoDB calls | {put_calls:.2} (one BatchWriteItem: the datum, and its metric's listing once an hour: {put_items:.3} items) |");
    println!(
        "| PutMetricData: api CPU on this machine (in process, memory store) | {put_ms:.3} ms |"
    );
    println!("| an alarm's evaluation, nothing changing: DynamoDB calls | {eval_calls:.2} (its share of its account's Query, and the Query of its window) |");
    println!("| an alarm's evaluation: health check CPU on this machine | {eval_ms:.3} ms |");
    println!("| metrics listed | {listed} |");

    // Per datapoint: API Gateway, a Lambda request and its time, the writes.
    let lambda_s = |ms: f64| (ms / 1e3).max(0.001);
    let per_datum = API_GATEWAY_REQUEST
        + LAMBDA_REQUEST
        + lambda_s(put_ms) * API_GB * LAMBDA_GB_S
        + put_items * DYNAMODB_WRITE;
    // Per evaluation: its share of its account's Query (an alarm is under 2 KB: half a read
    // unit), an eventually consistent Query of a few datapoints (half a unit), and the health
    // check's time.
    let per_eval = 1.0 * DYNAMODB_READ + lambda_s(eval_ms) * HEALTH_GB * LAMBDA_GB_S;
    println!("\n| bill at AWS's list prices | $ |");
    println!("|---|---|");
    println!(
        "| a million datapoints (one a request) | {:.2} |",
        per_datum * 1e6
    );
    println!(
        "| of which API Gateway | {:.2} |",
        API_GATEWAY_REQUEST * 1e6
    );
    println!(
        "| of which DynamoDB | {:.2} |",
        put_items * DYNAMODB_WRITE * 1e6
    );
    println!(
        "| a VM-month at one datapoint a minute | {:.4} |",
        per_datum * MINUTES_A_MONTH
    );
    println!(
        "| 100,000 VMs a month at one datapoint a minute each | {:.0} |",
        per_datum * MINUTES_A_MONTH * 1e5
    );
    println!(
        "| an alarm-month (evaluated each minute) | {:.4} |",
        per_eval * MINUTES_A_MONTH
    );
    println!(
        "| 100,000 alarms a month | {:.0} |",
        per_eval * MINUTES_A_MONTH * 1e5
    );
}
