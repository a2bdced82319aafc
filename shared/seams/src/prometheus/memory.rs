//! A Prometheus that answers what it was told: an answer (or a refusal) per instant query, a
//! series of datapoints per range query whose text holds a given name (so tests need not spell
//! the group's instance ids), no data for anything it was told nothing of (as Prometheus answers
//! for a series it does not have), and down on demand. It counts its queries.

use super::{Answer, MetricSource, Prometheus, QueryError, Range, RangeSeries, Series};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// How long a value stands for the datapoints after it, as Prometheus's lookback does.
const LOOKBACK_MS: i64 = 5 * 60 * 1000;

#[derive(Default)]
pub struct MemoryPrometheus {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    answers: BTreeMap<String, Result<Answer, QueryError>>,
    /// For range queries: a name, and its values from the time each was set (None: no data).
    timelines: BTreeMap<String, Vec<(i64, Option<f64>)>>,
    refused: BTreeMap<String, String>,
    down: bool,
    queries: usize,
    /// Each query's text, in order.
    asked: Vec<String>,
}

impl MemoryPrometheus {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("no panic holding the state")
    }

    /// `promql` answers one series of this value from now on.
    pub fn set(&self, promql: &str, value: f64) {
        let series = Series {
            labels: BTreeMap::new(),
            value,
        };
        self.answer(promql, Ok(Answer::Vector(vec![series])));
    }

    pub fn answer(&self, promql: &str, answer: Result<Answer, QueryError>) {
        self.state().answers.insert(promql.to_string(), answer);
    }

    /// Range queries whose text holds `name` have this value from `at_ms` on (None: no data).
    pub fn record(&self, name: &str, at_ms: i64, value: Option<f64>) {
        let mut st = self.state();
        let line = st.timelines.entry(name.to_string()).or_default();
        line.push((at_ms, value));
        line.sort_by_key(|(t, _)| *t);
    }

    /// Queries (instant or range) whose text holds `name` are refused with `why`.
    pub fn refuse(&self, name: &str, why: &str) {
        self.state()
            .refused
            .insert(name.to_string(), why.to_string());
    }

    /// Unreachable (true) or back (false).
    pub fn set_down(&self, down: bool) {
        self.state().down = down;
    }

    pub fn queries(&self) -> usize {
        self.state().queries
    }

    /// The text of each query asked so far.
    pub fn asked(&self) -> Vec<String> {
        self.state().asked.clone()
    }

    /// Counts the query; the refusal it meets, if any.
    fn ask(&self, promql: &str) -> Result<std::sync::MutexGuard<'_, State>, QueryError> {
        let mut st = self.state();
        st.queries += 1;
        st.asked.push(promql.to_string());
        if st.down {
            return Err(QueryError::Unreachable(
                "connection refused (memory)".into(),
            ));
        }
        if let Some((_, why)) = st.refused.iter().find(|(n, _)| promql.contains(n.as_str())) {
            return Err(QueryError::Refused(why.clone()));
        }
        Ok(st)
    }
}

#[async_trait]
impl Prometheus for MemoryPrometheus {
    async fn query(&self, promql: &str) -> Result<Answer, QueryError> {
        let st = self.ask(promql)?;
        st.answers
            .get(promql)
            .cloned()
            .unwrap_or(Ok(Answer::Vector(Vec::new())))
    }

    async fn query_range(
        &self,
        promql: &str,
        range: Range,
    ) -> Result<Vec<RangeSeries>, QueryError> {
        let st = self.ask(promql)?;
        // One series a metric the query names (several: one a VM, say), as `metric` recorded.
        let series = st
            .timelines
            .iter()
            .filter(|(n, _)| named(promql, n))
            .filter_map(|(name, line)| {
                let points: Vec<(i64, f64)> = (0..range.points() as i64)
                    .map(|k| range.start_ms + k * range.step_ms)
                    .filter_map(|t| {
                        let (at, v) = line.iter().rev().find(|(at, _)| *at <= t)?;
                        let v = (*v)?;
                        (t - at <= LOOKBACK_MS).then_some((t, v))
                    })
                    .collect();
                (!points.is_empty()).then(|| RangeSeries {
                    labels: BTreeMap::from([("__name__".to_string(), name.clone())]),
                    points,
                })
            })
            .collect();
        Ok(series)
    }
}

/// Whether `promql` names metric `name` (as a whole word: `app_load` is not `app_load_b`).
fn named(promql: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    promql.match_indices(name).any(|(i, _)| {
        let before = promql[..i].chars().next_back();
        let after = promql[i + name.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// Connects every metric source to one twin.
pub struct Connect(pub Arc<MemoryPrometheus>);

impl super::Connect for Connect {
    fn connect(&self, _: &MetricSource) -> Arc<dyn Prometheus> {
        self.0.clone()
    }
}
