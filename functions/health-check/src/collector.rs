//! Group metrics for CloudWatch (EnableMetricsCollection), written with the scheduler on its
//! schedule: each due group with metrics enabled is read with its instances, and its enabled
//! metrics become one line of CloudWatch's Embedded Metric Format in the function's log, which
//! CloudWatch turns into metrics (`phantom::group_metrics`). No PutMetricData call is made. Only
//! where a namespace is set (on AWS); Prometheus scrapes the api's metrics endpoint anywhere.

use futures::stream::{self, StreamExt};
use phantom::group_metrics;
use phantom::store::{samples, Store, StoreError};
use serde::Serialize;
use std::sync::Arc;

/// How many groups are read at once.
const PARALLEL: usize = 16;

/// Where the lines go: the function's standard output, which Lambda sends to CloudWatch Logs.
pub trait Sink: Send + Sync {
    fn write(&self, line: &str);
}

pub struct Stdout;

impl Sink for Stdout {
    fn write(&self, line: &str) {
        // A line of its own, not a tracing event: CloudWatch reads a log line that is the EMF
        // document itself.
        println!("{line}");
    }
}

/// Keeps the lines (tests, benchmarks).
#[derive(Default)]
pub struct MemorySink(std::sync::Mutex<Vec<String>>);

impl MemorySink {
    /// The lines written so far, taken.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().expect("no writer panics"))
    }
}

impl Sink for MemorySink {
    fn write(&self, line: &str) {
        self.0
            .lock()
            .expect("no writer panics")
            .push(line.to_string());
    }
}

/// The namespace the metrics go to and where the lines are written.
pub struct Emf {
    pub namespace: String,
    pub sink: Arc<dyn Sink>,
}

/// The environment variable that names the namespace (template.yaml sets it).
pub const NAMESPACE_ENV: &str = "PHANTOM_METRICS_NAMESPACE";

impl Emf {
    /// From PHANTOM_METRICS_NAMESPACE: none where it is not set; an error for AWS's own
    /// namespaces, which CloudWatch refuses.
    pub fn from_env() -> Result<Option<Self>, String> {
        Ok(
            phantom::emf::namespace_from_env(NAMESPACE_ENV)?.map(|namespace| Self {
                namespace,
                sink: Arc::new(Stdout),
            }),
        )
    }
}

/// What one run wrote.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct Collected {
    /// Groups with metrics enabled.
    pub groups: usize,
    /// Lines written (one a group with something to publish).
    pub lines: usize,
    pub bytes: usize,
    /// Groups not read this run (store errors).
    pub errors: usize,
}

/// Writes a line for each due group with metrics enabled, at `now_ms`.
pub async fn collect(
    store: &dyn Store,
    emf: &Emf,
    due: &[(String, String)],
    now_ms: i64,
) -> Collected {
    let lines: Vec<Result<Line, StoreError>> = stream::iter(due.to_vec())
        .map(|(user, group)| async move { line(store, emf, &user, &group, now_ms).await })
        .buffer_unordered(PARALLEL)
        .collect()
        .await;
    let mut c = Collected::default();
    for l in lines {
        match l {
            Ok(Line::NotEnabled) => {}
            Ok(Line::Nothing) => c.groups += 1,
            Ok(Line::Of(line)) => {
                c.groups += 1;
                c.lines += 1;
                c.bytes += line.len() + 1;
                emf.sink.write(&line);
            }
            Err(_) => c.errors += 1,
        }
    }
    c
}

/// What a due group gives.
enum Line {
    /// No metrics enabled (it is due for another reason), or gone.
    NotEnabled,
    /// Metrics enabled, nothing to publish (it is being deleted).
    Nothing,
    Of(String),
}

async fn line(
    store: &dyn Store,
    emf: &Emf,
    user: &str,
    name: &str,
    now_ms: i64,
) -> Result<Line, StoreError> {
    let of = samples::of(store, user, name).await.inspect_err(|e| {
        tracing::warn!(user, group = name, error = %e, "group metrics not read this run");
    })?;
    let Some(of) = of else {
        return Ok(Line::NotEnabled);
    };
    Ok(
        match group_metrics::emf_line(&emf.namespace, user, name, &of.samples, now_ms) {
            Some(l) => Line::Of(l),
            None => Line::Nothing,
        },
    )
}
