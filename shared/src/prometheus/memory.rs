//! A Prometheus that answers what it was told: an answer (or a refusal) per query, no data for a
//! query it was told nothing of (as Prometheus answers for a series it does not have), and down
//! on demand. It counts its queries.

use super::{Answer, Prometheus, QueryError, Series};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Default)]
pub struct MemoryPrometheus {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    answers: BTreeMap<String, Result<Answer, QueryError>>,
    down: bool,
    queries: usize,
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

    /// Unreachable (true) or back (false).
    pub fn set_down(&self, down: bool) {
        self.state().down = down;
    }

    pub fn queries(&self) -> usize {
        self.state().queries
    }
}

#[async_trait]
impl Prometheus for MemoryPrometheus {
    async fn query(&self, promql: &str) -> Result<Answer, QueryError> {
        let mut st = self.state();
        st.queries += 1;
        if st.down {
            return Err(QueryError::Unreachable(
                "connection refused (memory)".into(),
            ));
        }
        st.answers
            .get(promql)
            .cloned()
            .unwrap_or(Ok(Answer::Vector(Vec::new())))
    }
}
