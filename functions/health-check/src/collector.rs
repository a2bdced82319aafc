//! Group metrics (EnableMetricsCollection), written with the scheduler on its schedule: each due
//! group with metrics enabled is read with its instances, and its enabled metrics are kept as
//! datapoints of `AWS/AutoScaling` in the CloudWatch the account sees at Phantom's endpoint
//! (alarms, GetMetricStatistics and ListMetrics read them there). Where a namespace is set (on
//! AWS) they also become one line of CloudWatch's Embedded Metric Format in the function's log,
//! which the deployment's own CloudWatch turns into metrics (`phantom_rules::group_metrics`).
//! Prometheus scrapes the api's metrics endpoint anywhere.

use phantom_rules::group_metrics;
use phantom_seams::store::{samples, Listed, Store};
use serde::Serialize;
use std::sync::Arc;

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
            phantom_metrics::emf::namespace_from_env(NAMESPACE_ENV)?.map(|namespace| Self {
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
    /// Lines written (one a group with something to publish; none without a namespace).
    pub lines: usize,
    pub bytes: usize,
    /// Datapoints kept in `AWS/AutoScaling`.
    pub datapoints: usize,
    /// Due groups not read, or whose metrics were not kept, this run (store errors; a user's all
    /// at once).
    pub errors: usize,
}

/// Keeps the metrics of each due group with metrics enabled, at `now_ms`, and writes its line
/// where there is a namespace, from the due groups as the run read them: their instances read by
/// user as the scrape of every user's groups reads them (`samples::of_due_groups`). `listed`:
/// the metrics this instance listed lately (their listing is not written again).
pub async fn collect(
    store: &dyn Store,
    emf: Option<&Emf>,
    listed: &Listed,
    due: Vec<samples::DueGroups>,
    now_ms: i64,
) -> Collected {
    let mut c = Collected::default();
    for read in samples::of_due_groups(store, due).await {
        let groups = match read.groups {
            Ok(g) => g,
            Err(e) => {
                tracing::warn!(user = read.user, error = %e, "group metrics not read this run");
                c.errors += read.due;
                continue;
            }
        };
        // A user's groups' datapoints in one write (a batch of the store's, not one a group).
        let data: Vec<_> = groups
            .iter()
            .flat_map(|g| group_metrics::aws_data(&g.group, &g.samples, now_ms))
            .collect();
        if !data.is_empty() {
            let metrics: Vec<_> = data.iter().map(|d| &d.metric).collect();
            let fresh = listed.fresh(&read.user, &metrics, now_ms);
            match store.put_data(&read.user, &data, &fresh).await {
                Ok(()) => c.datapoints += data.len(),
                Err(e) => {
                    listed.forget(&read.user, &metrics);
                    tracing::warn!(user = read.user, error = %e, "group metrics not kept this run");
                    c.errors += groups.iter().filter(|g| !g.samples.is_empty()).count();
                }
            }
        }
        for g in groups {
            c.groups += 1;
            // Nothing to publish for a group being deleted.
            let Some(emf) = emf else { continue };
            for line in
                group_metrics::emf_lines(&emf.namespace, &g.user, &g.group, &g.samples, now_ms)
            {
                c.lines += 1;
                c.bytes += line.len() + 1;
                emf.sink.write(&line);
            }
        }
    }
    c
}
