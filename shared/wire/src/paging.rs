//! Describe* paging: MaxRecords (default 50, at most 100) and an opaque NextToken that resumes after
//! the last name returned.

use crate::error::{ApiError, ApiResult};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

pub const DEFAULT_MAX_RECORDS: usize = 50;
pub const MAX_MAX_RECORDS: usize = 100;

/// MaxRecords of the Describe* actions on launch configurations and groups.
pub fn max_records(requested: Option<i64>) -> ApiResult<usize> {
    max_records_within(requested, DEFAULT_MAX_RECORDS, MAX_MAX_RECORDS)
}

/// MaxRecords with an action's own default and ceiling (DescribeAutoScalingInstances: 50 and 50).
pub fn max_records_within(requested: Option<i64>, default: usize, max: usize) -> ApiResult<usize> {
    match requested {
        None => Ok(default),
        Some(n) if (1..=max as i64).contains(&n) => Ok(n as usize),
        Some(n) => Err(ApiError::validation(format!(
            "1 validation error detected: Value '{n}' at 'maxRecords' failed to satisfy constraint: \
             Member must have value between 1 and {max}"
        ))),
    }
}

const PREFIX: &str = "p1:";

/// The token for a page that ended at `last_name`.
pub fn token_after(last_name: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{PREFIX}{last_name}"))
}

/// The name a token resumes after.
pub fn resume_after(token: Option<&str>) -> ApiResult<Option<String>> {
    let Some(token) = token else { return Ok(None) };
    URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.strip_prefix(PREFIX).map(str::to_string))
        .map(Some)
        // AWS's words, the token masked (the Ansible collection's test of
        // DescribeInstanceRefreshes asserts them).
        .ok_or_else(|| ApiError::invalid_next_token("The token '********' is invalid."))
}

/// A page of records and the token for the next one.
#[derive(Debug)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_token: Option<String>,
}

/// Cuts `sorted` (ascending by name, already past the resume point) to `limit`, with a token when
/// more remain.
pub fn page<T>(mut sorted: Vec<T>, limit: usize, name: impl Fn(&T) -> &str) -> Page<T> {
    let more = sorted.len() > limit;
    sorted.truncate(limit);
    let next_token = if more {
        sorted.last().map(|t| token_after(name(t)))
    } else {
        None
    };
    Page {
        items: sorted,
        next_token,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_garbage_is_refused() {
        let t = token_after("web@hotel/é");
        assert_eq!(
            resume_after(Some(&t)).unwrap().as_deref(),
            Some("web@hotel/é")
        );
        for bad in ["", "!!!", "aGVsbG8", &URL_SAFE_NO_PAD.encode("x:y")] {
            let e = resume_after(Some(bad)).unwrap_err();
            assert_eq!(e.code, "InvalidNextToken", "{bad}");
            assert_eq!(e.message, "The token '********' is invalid.");
        }
    }

    #[test]
    fn max_records_bounds() {
        assert_eq!(max_records(None).unwrap(), 50);
        assert_eq!(max_records(Some(100)).unwrap(), 100);
        assert!(max_records(Some(0)).is_err());
        assert!(max_records(Some(101)).is_err());
    }

    #[test]
    fn pages_cut_with_a_token() {
        let p = page(vec!["a", "b", "c"], 2, |s| s);
        assert_eq!(p.items, ["a", "b"]);
        assert_eq!(
            resume_after(p.next_token.as_deref()).unwrap().as_deref(),
            Some("b")
        );
        assert!(page(vec!["a"], 2, |s| s).next_token.is_none());
    }
}
