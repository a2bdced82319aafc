//! One contract, two adapters of the metric source (`phantom_seams::prometheus::Prometheus`): the HTTP
//! client against a real Prometheus this test starts, and the in-memory twin the in-process
//! suite uses, told the same answers. What target tracking relies on: a scalar, one series, no
//! data, a query Prometheus refuses (with its words), a range of datapoints, and a server that is
//! not there.

use phantom_e2e::prometheus::PrometheusServer;
use phantom_seams::prometheus::http::PrometheusHttp;
use phantom_seams::prometheus::memory::MemoryPrometheus;
use phantom_seams::prometheus::{datapoints, Answer, Prometheus, QueryError, Range, Series};
use std::collections::BTreeMap;

async fn contract(p: &dyn Prometheus) {
    assert_eq!(p.query("2.5").await, Ok(Answer::Scalar(2.5)));
    let one = p.query("vector(61.5)").await.expect("a vector");
    assert_eq!(one.one(), Ok(Some(61.5)));
    let none = p.query("phantom_no_such_metric").await.expect("no data");
    assert_eq!(none, Answer::Vector(Vec::new()));
    assert_eq!(none.one(), Ok(None));
    match p.query("sum(").await {
        Err(QueryError::Refused(why)) => assert!(why.contains("parse error"), "{why}"),
        other => panic!("a query Prometheus cannot parse: {other:?}"),
    }
    // A range: a datapoint at each step, the last now.
    let range = Range::last(4, 10_000, phantom_model::time::now_ms());
    let series = p.query_range("vector(61.5)", range).await.expect("a range");
    assert_eq!(datapoints(&series, range), Ok(vec![Some(61.5); 4]));
    let none = p
        .query_range("phantom_no_such_metric", range)
        .await
        .expect("no data");
    assert_eq!(datapoints(&none, range), Ok(vec![None; 4]));
    match p.query_range("sum(", range).await {
        Err(QueryError::Refused(why)) => assert!(why.contains("parse error"), "{why}"),
        other => panic!("a range query Prometheus cannot parse: {other:?}"),
    }
}

#[tokio::test]
async fn the_http_client_keeps_the_contract_on_a_real_prometheus() {
    let server = PrometheusServer::start();
    let p = PrometheusHttp::new(&server.url, None);
    contract(&p).await;
}

#[tokio::test]
async fn the_memory_twin_keeps_the_contract() {
    let twin = MemoryPrometheus::default();
    twin.answer("2.5", Ok(Answer::Scalar(2.5)));
    twin.answer(
        "vector(61.5)",
        Ok(Answer::Vector(vec![Series {
            labels: BTreeMap::new(),
            value: 61.5,
        }])),
    );
    twin.refuse("sum(", "1:5: parse error: unclosed left parenthesis");
    twin.record(
        "vector(61.5)",
        phantom_model::time::now_ms() - 60_000,
        Some(61.5),
    );
    contract(&twin).await;
}

#[tokio::test]
async fn a_source_that_is_not_there_is_unreachable_not_an_answer() {
    let port = phantom_e2e::free_port();
    let p = PrometheusHttp::new(&format!("http://127.0.0.1:{port}"), None);
    assert!(matches!(
        p.query("1").await,
        Err(QueryError::Unreachable(_))
    ));
    let range = Range::last(2, 1_000, 10_000);
    assert!(matches!(
        p.query_range("1", range).await,
        Err(QueryError::Unreachable(_))
    ));
    let twin = MemoryPrometheus::default();
    twin.set_down(true);
    assert!(matches!(
        twin.query("1").await,
        Err(QueryError::Unreachable(_))
    ));
}
