//! Timestamps as the Query protocol writes them: ISO 8601, UTC, milliseconds.

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime};

pub fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

/// Now, in Unix milliseconds.
pub fn now_ms() -> i64 {
    (now().unix_timestamp_nanos() / 1_000_000) as i64
}

/// Unix milliseconds as a time (out of range: the epoch, which no clock here reaches).
pub fn from_ms(ms: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// Where the functions read the time: the system's on Lambda and locally, a hand-moved one in the
/// in-process tests (so waits are steps, not sleeps).
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> i64;
    fn now(&self) -> OffsetDateTime {
        from_ms(self.now_ms())
    }
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        now_ms()
    }
}

/// A clock that moves only when told to.
pub struct ManualClock(std::sync::atomic::AtomicI64);

impl ManualClock {
    pub fn starting_at(ms: i64) -> Self {
        Self(std::sync::atomic::AtomicI64::new(ms))
    }
    pub fn advance_ms(&self, ms: i64) {
        self.0.fetch_add(ms, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// `2026-11-22T03:46:59.123Z`
pub fn format_timestamp(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    t.format(format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    ))
    .expect("a UTC time formats")
}

/// `2026-11-22T03:46:59Z`: whole seconds, as AWS writes times inside its messages (an activity's
/// cause, a process's suspension reason).
pub fn format_seconds(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    t.format(format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second]Z"
    ))
    .expect("a UTC time formats")
}

/// ISO 8601 / RFC 3339, or seconds since the epoch.
pub fn parse_timestamp(s: &str) -> Option<OffsetDateTime> {
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return Some(t);
    }
    let secs: f64 = s.parse().ok().filter(|f: &f64| f.is_finite())?;
    OffsetDateTime::from_unix_timestamp_nanos((secs * 1e9) as i128).ok()
}

/// The SigV4 `X-Amz-Date` form: `20261122T034659Z`.
pub fn parse_amz_date(s: &str) -> Option<OffsetDateTime> {
    PrimitiveDateTime::parse(
        s,
        format_description!("[year][month][day]T[hour][minute][second]Z"),
    )
    .ok()
    .map(|t| t.assume_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_milliseconds() {
        let t = parse_timestamp("2026-11-22T03:46:59.123456Z").unwrap();
        assert_eq!(format_timestamp(t), "2026-11-22T03:46:59.123Z");
        let t = parse_amz_date("20261122T034659Z").unwrap();
        assert_eq!(format_timestamp(t), "2026-11-22T03:46:59.000Z");
        assert!(parse_amz_date("2026-11-22").is_none());
    }
}
