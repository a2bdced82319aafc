//! CloudWatch's Embedded Metric Format, pure: one JSON log line that CloudWatch Logs turns into
//! metrics, its `_aws` metadata naming the namespace, the dimension set and the metrics, whose
//! values (and the dimensions') are members of the top level. Used for group metrics
//! (`group_metrics`) and Phantom's operating metrics (`ops`).

use serde::Serialize;
use std::collections::BTreeMap;

/// The namespace named by the environment variable `env`: none where it is not set; an error for
/// one CloudWatch refuses (empty, over 255 characters, or AWS's own `AWS/...`).
pub fn namespace_from_env(env: &str) -> Result<Option<String>, String> {
    namespace(env, std::env::var(env).ok())
}

/// `namespace_from_env` with the variable's value given.
pub fn namespace(env: &str, value: Option<String>) -> Result<Option<String>, String> {
    match value {
        None => Ok(None),
        Some(ns) if ns.is_empty() || ns.starts_with("AWS/") || ns.len() > 255 => Err(format!(
            "{env} '{ns}' is not a namespace of one's own (1 to 255 characters, not AWS/...)"
        )),
        Some(ns) => Ok(Some(ns)),
    }
}

/// One metric of a line: its name, value and CloudWatch unit.
pub struct Metric<'a> {
    pub name: &'a str,
    pub value: f64,
    pub unit: &'a str,
}

#[derive(Serialize)]
struct Line<'a> {
    #[serde(rename = "_aws")]
    aws: Metadata<'a>,
    #[serde(flatten)]
    dimensions: BTreeMap<&'a str, &'a str>,
    #[serde(flatten)]
    values: BTreeMap<&'a str, f64>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Metadata<'a> {
    timestamp: i64,
    cloud_watch_metrics: [Directive<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Directive<'a> {
    namespace: &'a str,
    dimensions: [Vec<&'a str>; 1],
    metrics: Vec<Definition<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Definition<'a> {
    name: &'a str,
    unit: &'a str,
}

/// The line of `metrics` at `at_ms` with these (dimension, value) pairs as its one dimension set.
pub fn line(
    namespace: &str,
    at_ms: i64,
    dimensions: &[(&str, &str)],
    metrics: &[Metric],
) -> String {
    let line = Line {
        aws: Metadata {
            timestamp: at_ms,
            cloud_watch_metrics: [Directive {
                namespace,
                dimensions: [dimensions.iter().map(|(d, _)| *d).collect()],
                metrics: metrics
                    .iter()
                    .map(|m| Definition {
                        name: m.name,
                        unit: m.unit,
                    })
                    .collect(),
            }],
        },
        dimensions: dimensions.iter().copied().collect(),
        values: metrics.iter().map(|m| (m.name, m.value)).collect(),
    };
    serde_json::to_string(&line).expect("strings and numbers serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_is_ones_own_or_refused() {
        let env = "PHANTOM_OPERATIONS_NAMESPACE";
        assert_eq!(namespace(env, None), Ok(None));
        assert_eq!(
            namespace(env, Some("Phantom/Operations".into())),
            Ok(Some("Phantom/Operations".into()))
        );
        for bad in ["", "AWS/AutoScaling", &"x".repeat(256)] {
            let e = namespace(env, Some(bad.to_string())).unwrap_err();
            assert!(e.starts_with(env) && e.contains("not AWS/"), "{e}");
        }
    }
}
