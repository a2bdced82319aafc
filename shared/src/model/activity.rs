//! A scaling activity as stored: its group, when it began, and AWS's `Activity` document.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    pub group: String,
    /// Unix ms; activities are listed newest first.
    pub start_ms: i64,
    pub doc: Value,
}
