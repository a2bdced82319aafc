//! The metric source seam: a PromQL query and its answer, as Prometheus's HTTP API gives it
//! (`/api/v1/query`, and `/api/v1/query_range` for a metric's last datapoints). Two adapters:
//! `http` (any Prometheus, with a bearer token or basic auth) and `memory` (feature `memory`:
//! tests and tools only), which answers what it was told to. Target tracking
//! (`phantom_rules::tracking`) reads each policy's datapoints through it. No AWS types.

pub mod ec2;
pub mod forecast;
pub mod http;
#[cfg(any(test, feature = "memory"))]
pub mod memory;

use async_trait::async_trait;
use phantom_model::group::MetricAggregation;
pub use phantom_model::tracking::MetricSource;
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;

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

/// The datapoints a range query asks for: `start_ms`, then every `step_ms` until `end_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub start_ms: i64,
    pub end_ms: i64,
    pub step_ms: i64,
}

impl Range {
    /// `points` datapoints `step_ms` apart, the last at `end_ms`.
    pub fn last(points: i64, step_ms: i64, end_ms: i64) -> Self {
        Self {
            start_ms: end_ms - (points - 1) * step_ms,
            end_ms,
            step_ms,
        }
    }

    pub fn points(&self) -> usize {
        ((self.end_ms - self.start_ms) / self.step_ms + 1) as usize
    }
}

/// One series of a range query: its datapoints (Unix ms, value), where it had a value.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeSeries {
    pub labels: BTreeMap<String, String>,
    pub points: Vec<(i64, f64)>,
}

/// A metric's datapoints over `range`, one slot per step (None where it had no value, or NaN),
/// from the answer of a range query: no series is no data at all; several series are an error
/// saying how many, for the user to aggregate.
pub fn datapoints(series: &[RangeSeries], range: Range) -> Result<Vec<Option<f64>>, String> {
    if series.len() > 1 {
        return Err(format!(
            "the expression gives {} series, not one: aggregate them (avg, sum, max).",
            series.len()
        ));
    }
    Ok(aggregated(series, range, MetricAggregation::Average))
}

/// As `datapoints`, several series reduced to one at each step by `by` (a step policy's
/// MetricAggregationType), over the series that have a value there.
pub fn aggregated(series: &[RangeSeries], range: Range, by: MetricAggregation) -> Vec<Option<f64>> {
    let mut slots: Vec<Vec<f64>> = vec![Vec::new(); range.points()];
    for one in series {
        for (t, v) in &one.points {
            let k = (t - range.start_ms + range.step_ms / 2).div_euclid(range.step_ms);
            if let Some(slot) = usize::try_from(k).ok().and_then(|k| slots.get_mut(k)) {
                if !v.is_nan() {
                    slot.push(*v);
                }
            }
        }
    }
    slots.iter().map(|values| by.of(values)).collect()
}

/// A Prometheus server, as a deployment's metric source.
#[async_trait]
pub trait Prometheus: Send + Sync {
    /// An instant query, evaluated now.
    async fn query(&self, promql: &str) -> Result<Answer, QueryError>;

    /// A range query: each series' values at the range's steps.
    async fn query_range(&self, promql: &str, range: Range)
        -> Result<Vec<RangeSeries>, QueryError>;
}

/// Reaches the deployment's metric source: the HTTP adapter for a real one (`http::Connect`),
/// the twin in tests.
pub trait Connect: Send + Sync {
    fn connect(&self, source: &MetricSource) -> Arc<dyn Prometheus>;
}

/// Prometheus's answer, as its HTTP API writes it: a status, and the data or the error.
#[derive(Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
enum Wire {
    Success { data: Data },
    Error { error: String },
}

/// What a query gives, by its `resultType`.
#[derive(Deserialize)]
#[serde(tag = "resultType", content = "result", rename_all = "lowercase")]
enum Data {
    Scalar(Sample),
    Vector(Vec<WireSeries>),
    Matrix(Vec<WireRange>),
    String(IgnoredAny),
}

/// A sample: [time in seconds, "value"], the value a string ("NaN", "+Inf" included).
#[derive(Deserialize)]
struct Sample(f64, String);

impl Sample {
    fn value(&self) -> Result<f64, QueryError> {
        self.1.parse().map_err(|_| {
            QueryError::Unreachable(format!("the answer has a sample value {:?}", self.1))
        })
    }
}

#[derive(Deserialize)]
struct WireSeries {
    metric: BTreeMap<String, String>,
    value: Sample,
}

#[derive(Deserialize)]
struct WireRange {
    metric: BTreeMap<String, String>,
    values: Vec<Sample>,
}

/// The data of a successful answer, or the error of a failed one.
fn data(body: &[u8]) -> Result<Data, QueryError> {
    let wire: Wire = serde_json::from_slice(body)
        .map_err(|e| QueryError::Unreachable(format!("the answer is not Prometheus's: {e}")))?;
    match wire {
        Wire::Success { data } => Ok(data),
        Wire::Error { error } => Err(QueryError::Refused(error)),
    }
}

/// Reads the `data` of a successful answer of `/api/v1/query`, or the error of a failed one.
pub fn parse(body: &[u8]) -> Result<Answer, QueryError> {
    match data(body)? {
        Data::Scalar(s) => Ok(Answer::Scalar(s.value()?)),
        Data::Vector(series) => series
            .into_iter()
            .map(|s| {
                Ok(Series {
                    value: s.value.value()?,
                    labels: s.metric,
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Answer::Vector),
        Data::Matrix(_) => Err(QueryError::Refused(
            "the expression gives a matrix, not a scalar or an instant vector".into(),
        )),
        Data::String(_) => Err(QueryError::Refused(
            "the expression gives a string, not a scalar or an instant vector".into(),
        )),
    }
}

/// Reads the answer of `/api/v1/query_range`: a matrix (a scalar expression comes as one series
/// without labels).
pub fn parse_range(body: &[u8]) -> Result<Vec<RangeSeries>, QueryError> {
    let Data::Matrix(series) = data(body)? else {
        return Err(QueryError::Unreachable(
            "the answer of a range query is not a matrix".into(),
        ));
    };
    series
        .into_iter()
        .map(|s| {
            let points = s
                .values
                .iter()
                .map(|sample| Ok(((sample.0 * 1000.0).round() as i64, sample.value()?)))
                .collect::<Result<Vec<_>, QueryError>>()?;
            Ok(RangeSeries {
                labels: s.metric,
                points,
            })
        })
        .collect()
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

    #[test]
    fn a_range_is_read_into_one_slot_per_step_and_gaps_stay_gaps() {
        let body = br#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[100,"1"],[120,"3"],[130,"NaN"]]}]}}"#;
        let series = parse_range(body).unwrap();
        assert_eq!(series[0].points[..2], [(100_000, 1.0), (120_000, 3.0)]);
        assert!(series[0].points[2].1.is_nan());
        let range = Range::last(4, 10_000, 130_000);
        assert_eq!(range.start_ms, 100_000);
        assert_eq!(
            datapoints(&series, range),
            Ok(vec![Some(1.0), None, Some(3.0), None])
        );
        assert_eq!(datapoints(&[], range), Ok(vec![None; 4]));
        let two = [series[0].clone(), series[0].clone()];
        assert!(datapoints(&two, range).unwrap_err().contains("2 series"));
        // A step policy's alarm reduces several series (one a VM) by its aggregation.
        let other = RangeSeries {
            labels: BTreeMap::new(),
            points: vec![(100_000, 5.0), (110_000, 2.0)],
        };
        let both = [series[0].clone(), other];
        let by = |a| aggregated(&both, range, a);
        assert_eq!(
            by(MetricAggregation::Maximum),
            [Some(5.0), Some(2.0), Some(3.0), None]
        );
        assert_eq!(
            by(MetricAggregation::Minimum),
            [Some(1.0), Some(2.0), Some(3.0), None]
        );
        assert_eq!(
            by(MetricAggregation::Average),
            [Some(3.0), Some(2.0), Some(3.0), None]
        );
        let vector = br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert!(parse_range(vector).is_err());
    }
}
