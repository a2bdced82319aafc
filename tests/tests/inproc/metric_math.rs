//! GetMetricData's metric math at Phantom's endpoint: expressions over the MetricStat queries'
//! series, what is not offered refused by name.

use phantom_e2e::world::World;
use phantom_model::time::Clock;
use serde_json::{json, Value};

#[tokio::test]
async fn get_metric_data_evaluates_metric_math() {
    let w = World::new().await;
    let u = w.user("cw-math").await;
    // Two queues' depths, published in one minute.
    let now = w.clock.now_ms() / 1000;
    let at = now - now % 60 - 120;
    for (queue, depth) in [("orders", 30.0), ("returns", 12.0)] {
        let (status, v) = w
            .cloudwatch(
                &u,
                "PutMetricData",
                json!({"Namespace": "App", "MetricData": [{"MetricName": "Depth",
                    "Dimensions": [{"Name": "Queue", "Value": queue}], "Value": depth,
                    "Timestamp": at}]}),
            )
            .await;
        assert_eq!(status, 200, "{v}");
    }
    let stat = |id: &str, queue: &str| {
        json!({"Id": id, "ReturnData": false, "MetricStat": {"Metric": {"Namespace": "App",
            "MetricName": "Depth", "Dimensions": [{"Name": "Queue", "Value": queue}]},
            "Period": 60, "Stat": "Average"}})
    };
    let ask = |expression: &str| {
        json!({"StartTime": at - 600, "EndTime": now, "MetricDataQueries": [
            stat("m1", "orders"), stat("m2", "returns"),
            {"Id": "total", "Expression": expression, "Label": "per VM"}]})
    };
    let (status, v) = w
        .cloudwatch(&u, "GetMetricData", ask("SUM([m1, m2]) / 2"))
        .await;
    assert_eq!(status, 200, "{v}");
    let results = v["MetricDataResults"].as_array().unwrap();
    assert_eq!(results.len(), 1, "ReturnData false hides m1 and m2: {v}");
    assert_eq!(results[0]["Id"], "total");
    assert_eq!(results[0]["Label"], "per VM");
    assert_eq!(results[0]["Values"], json!([21.0]));
    let (_, v) = w
        .cloudwatch(&u, "GetMetricData", ask("MAX(METRICS()) - MIN(METRICS())"))
        .await;
    assert_eq!(v["MetricDataResults"][0]["Values"], json!([18.0]), "{v}");

    // What is not offered, named; an unknown id.
    let refused = |v: &Value| v["message"].as_str().unwrap_or_default().to_string();
    let (status, v) = w
        .cloudwatch(
            &u,
            "GetMetricData",
            ask("SEARCH('{App,Queue} Depth', 'Average', 60)"),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["__type"], "InvalidParameterValueException", "{v}");
    assert!(refused(&v).contains("SEARCH is not offered"), "{v}");
    let (status, v) = w.cloudwatch(&u, "GetMetricData", ask("m1 + m3")).await;
    assert_eq!(status, 400);
    assert!(refused(&v).contains("names m3"), "{v}");
}
