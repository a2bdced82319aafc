//! Prometheus's text exposition format, the part both of Phantom's scrapes share.

/// A label value as the text format writes it (and PromQL's double-quoted strings read it):
/// backslash, double quote and line feed escaped.
pub fn label_value(v: &str) -> String {
    v.replace('\\', r"\\")
        .replace('"', r#"\""#)
        .replace('\n', r"\n")
}
