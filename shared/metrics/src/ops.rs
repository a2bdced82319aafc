//! Phantom's own operating metrics, kept by each process: requests by action and code with their
//! latency, throttled requests, launches by cloud and outcome, the sweeps' and the scheduled
//! runs' durations. Rendered in Prometheus's text format (locally one process runs every function,
//! so the figures are the deployment's), and on Lambda written as Embedded Metric Format lines at
//! most once a minute, each instance its counts since its last line (CloudWatch sums them).
//! Never a user's name or data: the labels are actions, error codes, clouds and classes.

use crate::{emf, exposition};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The label sets a family keeps at most; past it, new ones count under `(other)` (a bound on
/// memory against names a caller makes up).
pub const SERIES_PER_FAMILY: usize = 500;
/// Histogram buckets, in seconds: for requests, sweeps, runs and queue waits.
pub const BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];
/// For a dead VM's replacement, which takes a VM's boot: under a second (an emulator's VMs run
/// at once) to many minutes.
pub const REPLACEMENT_BUCKETS: &[f64] = &[
    0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0, 180.0, 300.0, 600.0, 1800.0,
    3600.0,
];
pub const OTHER: &str = "(other)";

/// The families: (name, Prometheus help).
pub const REQUESTS: &str = "phantom_requests_total";
pub const REQUEST_SECONDS: &str = "phantom_request_seconds";
pub const THROTTLED: &str = "phantom_throttled_total";
pub const LAUNCHES: &str = "phantom_launches_total";
pub const SWEEP_SECONDS: &str = "phantom_sweep_seconds";
pub const SCHEDULE_SECONDS: &str = "phantom_schedule_seconds";
pub const QUEUE_WAIT_SECONDS: &str = "phantom_queue_wait_seconds";
pub const REPLACEMENT_SECONDS: &str = "phantom_replacement_seconds";
pub const UNHEALTHY: &str = "phantom_unhealthy_total";

fn buckets(family: &str) -> &'static [f64] {
    match family {
        REPLACEMENT_SECONDS => REPLACEMENT_BUCKETS,
        _ => BUCKETS,
    }
}

fn help(family: &str) -> &'static str {
    match family {
        REQUESTS => "Requests answered, by action and error code (OK: none).",
        REQUEST_SECONDS => "Time to answer a request, by action.",
        THROTTLED => "Requests refused with Throttling, by class (Describe, Mutate).",
        LAUNCHES => "Launch requests to a cloud, by cloud and its error code (OK: launched).",
        SWEEP_SECONDS => "Time a sweep of one user's VMs on one cloud took.",
        SCHEDULE_SECONDS => "Time a run of the health check's schedule took.",
        QUEUE_WAIT_SECONDS => {
            "Time a work queue message waited to be handled, past the delay it was sent with."
        }
        REPLACEMENT_SECONDS => "Time from a VM found dead to its replacement InService.",
        UNHEALTHY => "VMs let go as unhealthy, by the check that failed (state, status-check, scheduled-event, ebs, elb, probe, user).",
        _ => "Phantom's operating metric.",
    }
}

type Labels = Vec<(&'static str, String)>;

#[derive(Debug, Clone, Default, PartialEq)]
struct Histogram {
    /// Observations at or below each bucket's bound (not cumulative), and above the last.
    buckets: Vec<u64>,
    count: u64,
    sum: f64,
}

impl Histogram {
    fn empty(family: &str) -> Self {
        Self {
            buckets: vec![0; buckets(family).len() + 1],
            count: 0,
            sum: 0.0,
        }
    }
}

/// The figures of one process.
#[derive(Debug, Default)]
pub struct Registry {
    counters: BTreeMap<&'static str, BTreeMap<Labels, u64>>,
    histograms: BTreeMap<&'static str, BTreeMap<Labels, Histogram>>,
    /// What the last EMF lines counted, so that the next ones carry what came since.
    flushed_counters: BTreeMap<(&'static str, Labels), u64>,
    flushed_histograms: BTreeMap<(&'static str, Labels), (u64, f64)>,
    flushed_at_ms: Option<i64>,
}

/// The labels as given, or every value `(other)` once the family holds its bound.
fn bounded<T>(series: &BTreeMap<Labels, T>, labels: &[(&'static str, &str)]) -> Labels {
    let own: Labels = labels.iter().map(|(k, v)| (*k, v.to_string())).collect();
    if series.contains_key(&own) || series.len() < SERIES_PER_FAMILY {
        own
    } else {
        labels
            .iter()
            .map(|(k, _)| (*k, OTHER.to_string()))
            .collect()
    }
}

impl Registry {
    /// A registry whose histograms without labels are there from the start, at zero: Prometheus
    /// sees a rare event's first observation as an increase only if the series was there before.
    pub fn new() -> Self {
        let mut r = Self::default();
        for family in [
            SWEEP_SECONDS,
            SCHEDULE_SECONDS,
            QUEUE_WAIT_SECONDS,
            REPLACEMENT_SECONDS,
        ] {
            r.histograms
                .entry(family)
                .or_default()
                .insert(Vec::new(), Histogram::empty(family));
        }
        r
    }

    pub fn count(&mut self, family: &'static str, labels: &[(&'static str, &str)]) {
        let series = self.counters.entry(family).or_default();
        let key = bounded(series, labels);
        *series.entry(key).or_default() += 1;
    }

    pub fn observe(&mut self, family: &'static str, labels: &[(&'static str, &str)], secs: f64) {
        let series = self.histograms.entry(family).or_default();
        let key = bounded(series, labels);
        let bounds = buckets(family);
        let h = series
            .entry(key)
            .or_insert_with(|| Histogram::empty(family));
        let slot = bounds
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(bounds.len());
        h.buckets[slot] += 1;
        h.count += 1;
        h.sum += secs;
    }

    /// Prometheus's text format: counters, then histograms (cumulative buckets, `+Inf`, sum,
    /// count), each family with its HELP and TYPE.
    pub fn exposition(&self) -> String {
        let mut out = String::new();
        for (family, series) in &self.counters {
            out.push_str(&format!(
                "# HELP {family} {}\n# TYPE {family} counter\n",
                help(family)
            ));
            for (labels, v) in series {
                out.push_str(&format!("{family}{} {v}\n", render(labels, None)));
            }
        }
        for (family, series) in &self.histograms {
            out.push_str(&format!(
                "# HELP {family} {}\n# TYPE {family} histogram\n",
                help(family)
            ));
            for (labels, h) in series {
                let mut cumulative = 0;
                for (i, bound) in buckets(family).iter().enumerate() {
                    cumulative += h.buckets[i];
                    let le = bound.to_string();
                    out.push_str(&format!(
                        "{family}_bucket{} {cumulative}\n",
                        render(labels, Some(&le))
                    ));
                }
                out.push_str(&format!(
                    "{family}_bucket{} {}\n",
                    render(labels, Some("+Inf")),
                    h.count
                ));
                out.push_str(&format!("{family}_sum{} {}\n", render(labels, None), h.sum));
                out.push_str(&format!(
                    "{family}_count{} {}\n",
                    render(labels, None),
                    h.count
                ));
            }
        }
        out
    }

    /// Embedded Metric Format lines of what was counted since the last ones, if `every_ms` has
    /// passed since them (the first call only starts the clock). A counter is a metric named as
    /// its family (without `phantom_` and `_total`); a histogram gives `<name>_count` and
    /// `<name>_sum` (seconds), from which CloudWatch's metric math gives the average.
    pub fn emf_due(&mut self, namespace: &str, now_ms: i64, every_ms: i64) -> Vec<String> {
        let Some(at) = self.flushed_at_ms else {
            self.flushed_at_ms = Some(now_ms);
            return Vec::new();
        };
        if now_ms - at < every_ms {
            return Vec::new();
        }
        self.flushed_at_ms = Some(now_ms);
        let mut lines = Vec::new();
        for (family, series) in &self.counters {
            for (labels, v) in series {
                let before = self
                    .flushed_counters
                    .insert((family, labels.clone()), *v)
                    .unwrap_or(0);
                if *v > before {
                    lines.push(emf(
                        namespace,
                        now_ms,
                        labels,
                        &[(short(family), (*v - before) as f64, "Count")],
                    ));
                }
            }
        }
        for (family, series) in &self.histograms {
            for (labels, h) in series {
                let (count, sum) = self
                    .flushed_histograms
                    .insert((family, labels.clone()), (h.count, h.sum))
                    .unwrap_or((0, 0.0));
                if h.count > count {
                    let name = short(family);
                    lines.push(emf(
                        namespace,
                        now_ms,
                        labels,
                        &[
                            (format!("{name}_count"), (h.count - count) as f64, "Count"),
                            (format!("{name}_sum"), h.sum - sum, "Seconds"),
                        ],
                    ));
                }
            }
        }
        lines
    }
}

/// `phantom_requests_total` is `requests` in CloudWatch.
fn short(family: &str) -> String {
    let f = family.strip_prefix("phantom_").unwrap_or(family);
    f.strip_suffix("_total").unwrap_or(f).to_string()
}

fn render(labels: &Labels, le: Option<&str>) -> String {
    let mut parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", exposition::label_value(v)))
        .collect();
    if let Some(le) = le {
        parts.push(format!("le=\"{le}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

/// One EMF line: the labels as dimensions (capitalised), the values as metrics.
fn emf(namespace: &str, now_ms: i64, labels: &Labels, values: &[(String, f64, &str)]) -> String {
    let dims: Vec<(String, &str)> = labels
        .iter()
        .map(|(k, v)| (capitalised(k), v.as_str()))
        .collect();
    let dims: Vec<(&str, &str)> = dims.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let metrics: Vec<emf::Metric> = values
        .iter()
        .map(|(name, value, unit)| emf::Metric {
            name,
            value: *value,
            unit,
        })
        .collect();
    emf::line(namespace, now_ms, &dims, &metrics)
}

fn capitalised(k: &str) -> String {
    let mut c = k.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// What the console's operations page charts, from the deployment's Prometheus: (name, unit,
/// PromQL giving one series). `or vector(0)` where no event means zero rather than no data.
pub const CHARTS: [(&str, &str, &str); 9] = [
    (
        "Requests a second",
        "req/s",
        "sum(rate(phantom_requests_total[2m])) or vector(0)",
    ),
    (
        "Errors a second",
        "req/s",
        r#"sum(rate(phantom_requests_total{code!="OK"}[2m])) or vector(0)"#,
    ),
    (
        "Throttled a second",
        "req/s",
        "sum(rate(phantom_throttled_total[2m])) or vector(0)",
    ),
    (
        "Request latency p99",
        "s",
        "histogram_quantile(0.99, sum by (le) (rate(phantom_request_seconds_bucket[2m])))",
    ),
    (
        "Launches a minute",
        "launches",
        r#"sum(increase(phantom_launches_total{code="OK"}[1m])) or vector(0)"#,
    ),
    (
        "Failed launches a minute",
        "launches",
        r#"sum(increase(phantom_launches_total{code!="OK"}[1m])) or vector(0)"#,
    ),
    (
        "Work queue depth",
        "messages",
        "max(phantom_queue_messages)",
    ),
    (
        "Work queue wait p99",
        "s",
        "histogram_quantile(0.99, sum by (le) (rate(phantom_queue_wait_seconds_bucket[5m])))",
    ),
    (
        "Death to replacement p99",
        "s",
        "histogram_quantile(0.99, sum by (le) (rate(phantom_replacement_seconds_bucket[30m])))",
    ),
];

/// This process's figures.
static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    let mut r = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    f(r.get_or_insert_with(Registry::new))
}

pub fn count(family: &'static str, labels: &[(&'static str, &str)]) {
    with(|r| r.count(family, labels));
}

pub fn observe(family: &'static str, labels: &[(&'static str, &str)], secs: f64) {
    with(|r| r.observe(family, labels, secs));
}

/// This process's figures in Prometheus's text format.
pub fn exposition() -> String {
    with(|r| r.exposition())
}

/// The environment variable naming the namespace of the EMF lines (template.yaml sets it).
pub const NAMESPACE_ENV: &str = "PHANTOM_OPERATIONS_NAMESPACE";

/// The namespace of the EMF lines, read once when a function starts: none where
/// PHANTOM_OPERATIONS_NAMESPACE is not set, an error for one CloudWatch refuses.
pub fn namespace_from_env() -> Result<Option<String>, String> {
    emf::namespace_from_env(NAMESPACE_ENV)
}

/// A Lambda main's namespace, read once (before any work) and kept for the instance's life.
pub fn namespace_for_life() -> Result<Option<&'static str>, String> {
    Ok(namespace_from_env()?.map(|ns| &*Box::leak(ns.into_boxed_str())))
}

/// On Lambda, after an invocation: this instance's counts since its last lines, written to
/// standard output once a minute, where a namespace is set.
pub fn flush_emf(namespace: Option<&str>, now_ms: i64) {
    let Some(namespace) = namespace else {
        return;
    };
    for line in with(|r| r.emf_due(namespace, now_ms, 60_000)) {
        println!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_and_histograms_in_the_text_format() {
        let mut r = Registry::default();
        r.count(
            REQUESTS,
            &[("action", "DescribeAutoScalingGroups"), ("code", "OK")],
        );
        r.count(
            REQUESTS,
            &[("action", "DescribeAutoScalingGroups"), ("code", "OK")],
        );
        r.count(REQUESTS, &[("action", "a\"b"), ("code", "Throttling")]);
        r.observe(SWEEP_SECONDS, &[], 0.02);
        r.observe(SWEEP_SECONDS, &[], 100.0);
        let text = r.exposition();
        assert!(text.contains("# TYPE phantom_requests_total counter\n"));
        assert!(text.contains(
            "phantom_requests_total{action=\"DescribeAutoScalingGroups\",code=\"OK\"} 2\n"
        ));
        assert!(text.contains("phantom_requests_total{action=\"a\\\"b\",code=\"Throttling\"} 1\n"));
        assert!(text.contains("# TYPE phantom_sweep_seconds histogram\n"));
        assert!(text.contains("phantom_sweep_seconds_bucket{le=\"0.01\"} 0\n"));
        assert!(text.contains("phantom_sweep_seconds_bucket{le=\"0.025\"} 1\n"));
        assert!(text.contains("phantom_sweep_seconds_bucket{le=\"60\"} 1\n"));
        assert!(text.contains("phantom_sweep_seconds_bucket{le=\"+Inf\"} 2\n"));
        assert!(text.contains("phantom_sweep_seconds_sum 100.02\n"));
        assert!(text.contains("phantom_sweep_seconds_count 2\n"));
    }

    #[test]
    fn rare_events_start_at_zero_and_replacements_have_buckets_of_their_own() {
        let mut r = Registry::new();
        let text = r.exposition();
        for family in [REPLACEMENT_SECONDS, QUEUE_WAIT_SECONDS, SWEEP_SECONDS] {
            assert!(text.contains(&format!("{family}_count 0\n")), "{text}");
        }
        assert!(text.contains("phantom_replacement_seconds_bucket{le=\"3600\"} 0\n"));
        // Nothing to write to CloudWatch while nothing happened.
        r.emf_due("Phantom/Operations", 0, 60_000);
        assert!(r.emf_due("Phantom/Operations", 60_000, 60_000).is_empty());

        r.observe(REPLACEMENT_SECONDS, &[], 95.0);
        let text = r.exposition();
        assert!(text.contains("phantom_replacement_seconds_bucket{le=\"90\"} 0\n"));
        assert!(text.contains("phantom_replacement_seconds_bucket{le=\"120\"} 1\n"));
        assert!(text.contains("phantom_replacement_seconds_count 1\n"));
        let lines = r.emf_due("Phantom/Operations", 120_000, 60_000);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("\"replacement_seconds_sum\":95"),
            "{}",
            lines[0]
        );
    }

    #[test]
    fn a_family_keeps_a_bounded_number_of_label_sets() {
        let mut r = Registry::default();
        for i in 0..SERIES_PER_FAMILY + 10 {
            r.count(
                REQUESTS,
                &[
                    ("action", &format!("made-up-{i}")),
                    ("code", "InvalidAction"),
                ],
            );
        }
        let text = r.exposition();
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("phantom_requests_total{"))
                .count(),
            SERIES_PER_FAMILY + 1
        );
        assert!(text.contains("phantom_requests_total{action=\"(other)\",code=\"(other)\"} 10\n"));
        // A set it keeps still counts.
        r.count(
            REQUESTS,
            &[("action", "made-up-0"), ("code", "InvalidAction")],
        );
        assert!(r
            .exposition()
            .contains("{action=\"made-up-0\",code=\"InvalidAction\"} 2\n"));
    }

    #[test]
    fn emf_lines_carry_what_came_since_the_last_once_a_minute() {
        let mut r = Registry::default();
        assert!(
            r.emf_due("Phantom/Operations", 0, 60_000).is_empty(),
            "the first call starts the clock"
        );
        r.count(LAUNCHES, &[("cloud", "hotel"), ("code", "OK")]);
        r.count(LAUNCHES, &[("cloud", "hotel"), ("code", "OK")]);
        r.observe(REQUEST_SECONDS, &[("action", "SetDesiredCapacity")], 0.5);
        assert!(
            r.emf_due("Phantom/Operations", 59_999, 60_000).is_empty(),
            "not yet a minute"
        );
        let lines = r.emf_due("Phantom/Operations", 60_000, 60_000);
        assert_eq!(lines.len(), 2);
        let launches: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
        let d = &launches["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(d["Namespace"], "Phantom/Operations");
        assert_eq!(d["Dimensions"], serde_json::json!([["Cloud", "Code"]]));
        assert_eq!(d["Metrics"][0]["Name"], "launches");
        assert_eq!(
            (&launches["Cloud"], &launches["Code"], &launches["launches"]),
            (&"hotel".into(), &"OK".into(), &2.0.into())
        );
        let latency: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
        assert_eq!(latency["request_seconds_count"], 1.0);
        assert_eq!(latency["request_seconds_sum"], 0.5);
        assert_eq!(latency["Action"], "SetDesiredCapacity");
        // Only what came since: one more launch, nothing else.
        r.count(LAUNCHES, &[("cloud", "hotel"), ("code", "OK")]);
        let lines = r.emf_due("Phantom/Operations", 120_000, 60_000);
        assert_eq!(lines.len(), 1);
        let again: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(again["launches"], 1.0);
        assert!(
            r.emf_due("Phantom/Operations", 180_000, 60_000).is_empty(),
            "nothing new"
        );
    }
}
