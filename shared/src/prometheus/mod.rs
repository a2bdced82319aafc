//! The metric source seam: a PromQL query and its answer, as Prometheus's HTTP API gives it
//! (`/api/v1/query`). Two adapters: `http` (any Prometheus, with a bearer token or basic auth)
//! and `memory` (feature `memory`: tests and tools only), which answers what it was told to.
//! Target tracking (`phantom::tracking`) reads one value per policy through it. No AWS types.

pub mod http;
#[cfg(any(test, feature = "memory"))]
pub mod memory;

use async_trait::async_trait;
use std::collections::BTreeMap;

/// What a query gives: a scalar, or an instant vector (one value per series).
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Scalar(f64),
    Vector(Vec<Series>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

impl Answer {
    /// The one value a metric has: a scalar, or the value of the only series. No series (or NaN)
    /// is no data, None; several series are an error saying how many, for the user to aggregate.
    pub fn one(&self) -> Result<Option<f64>, String> {
        let v = match self {
            Self::Scalar(v) => *v,
            Self::Vector(series) => match series.as_slice() {
                [] => return Ok(None),
                [only] => only.value,
                many => {
                    return Err(format!(
                        "the expression gives {} series, not one: aggregate them (avg, sum, max).",
                        many.len()
                    ))
                }
            },
        };
        Ok((!v.is_nan()).then_some(v))
    }
}

/// Why a query has no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// Prometheus refused the query (it cannot parse or run it): its words.
    Refused(String),
    /// Prometheus could not be reached, or answered with something else than its API's JSON.
    Unreachable(String),
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused(why) => write!(f, "Prometheus refused the query: {why}"),
            Self::Unreachable(why) => write!(f, "Prometheus could not be asked: {why}"),
        }
    }
}

impl std::error::Error for QueryError {}

/// A Prometheus server, as a deployment's metric source.
#[async_trait]
pub trait Prometheus: Send + Sync {
    /// An instant query, evaluated now.
    async fn query(&self, promql: &str) -> Result<Answer, QueryError>;
}

/// Reads the `data` of a successful answer of `/api/v1/query`, or the error of a failed one.
pub fn parse(body: &[u8]) -> Result<Answer, QueryError> {
    let doc: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| QueryError::Unreachable(format!("the answer is not JSON: {e}")))?;
    let unreadable = |what: &str| QueryError::Unreachable(format!("the answer has {what}"));
    match doc.get("status").and_then(|s| s.as_str()) {
        Some("success") => {}
        Some("error") => {
            let why = doc
                .get("error")
                .and_then(|e| e.as_str())
                .ok_or_else(|| unreadable("an error without words"))?;
            return Err(QueryError::Refused(why.to_string()));
        }
        _ => return Err(unreadable("no status")),
    }
    let data = doc.get("data").ok_or_else(|| unreadable("no data"))?;
    let result = data.get("result").ok_or_else(|| unreadable("no result"))?;
    // A sample is [time, "value"], the value a string ("NaN", "+Inf" included).
    let value = |sample: &serde_json::Value| -> Result<f64, QueryError> {
        sample
            .get(1)
            .and_then(|v| v.as_str())
            .and_then(|v| v.parse::<f64>().ok())
            .ok_or_else(|| unreadable("a sample without a value"))
    };
    match data.get("resultType").and_then(|t| t.as_str()) {
        Some("scalar") => Ok(Answer::Scalar(value(result)?)),
        Some("vector") => {
            let series = result
                .as_array()
                .ok_or_else(|| unreadable("a vector that is not a list"))?;
            series
                .iter()
                .map(|s| {
                    let labels = s
                        .get("metric")
                        .and_then(|m| m.as_object())
                        .ok_or_else(|| unreadable("a series without labels"))?
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                        .collect();
                    let v = value(
                        s.get("value")
                            .ok_or_else(|| unreadable("a series without a value"))?,
                    )?;
                    Ok(Series { labels, value: v })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Answer::Vector)
        }
        Some(other) => Err(QueryError::Refused(format!(
            "the expression gives a {other}, not a scalar or an instant vector"
        ))),
        None => Err(unreadable("no resultType")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_as_prometheus_writes_them() {
        let scalar =
            br#"{"status":"success","data":{"resultType":"scalar","result":[1700000000.1,"2.5"]}}"#;
        assert_eq!(parse(scalar), Ok(Answer::Scalar(2.5)));
        let vector = br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"instance":"i-1"},"value":[1700000000,"61.5"]}]}}"#;
        let a = parse(vector).unwrap();
        assert_eq!(a.one(), Ok(Some(61.5)));
        let empty = br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert_eq!(parse(empty).unwrap().one(), Ok(None));
        let nan = br#"{"status":"success","data":{"resultType":"scalar","result":[1,"NaN"]}}"#;
        assert_eq!(parse(nan).unwrap().one(), Ok(None));
        let two = br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1"]},{"metric":{"a":"b"},"value":[1,"2"]}]}}"#;
        assert!(parse(two).unwrap().one().unwrap_err().contains("2 series"));
        let refused = br#"{"status":"error","errorType":"bad_data","error":"1:5: parse error: unclosed left parenthesis"}"#;
        assert_eq!(
            parse(refused),
            Err(QueryError::Refused(
                "1:5: parse error: unclosed left parenthesis".into()
            ))
        );
        assert!(matches!(parse(b"<html>"), Err(QueryError::Unreachable(_))));
        let matrix = br#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
        assert!(matches!(parse(matrix), Err(QueryError::Refused(_))));
    }
}
