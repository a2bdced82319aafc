//! Per-user request limits, AWS's way: a token bucket per user and class of action (describing
//! or changing), refilled at a steady rate up to a burst; a request that finds its bucket empty
//! is refused with `Throttling` ("Rate exceeded"), which every AWS SDK and the AWS CLI retry with
//! backoff. Pure: the buckets are kept by the caller. An account's bucket is shared by every api
//! instance (the store keeps it as GCRA's one timestamp, `gcra`), and each instance takes a few
//! tokens at a time from it (`lease`); the per-instance `Bucket` is the fallback when the store
//! cannot be reached, and the heartbeats' own limit.

pub use phantom_model::limits::{Class, Limits, Rate};

/// The defaults (docs/request-limits.md): describing 20 a second with bursts of 100, changing 5 a
/// second with bursts of 50, the shape of EC2's published API throttling.
pub const DEFAULT: Limits = Limits {
    describe: Rate {
        per_sec: 20.0,
        burst: 100.0,
    },
    mutate: Rate {
        per_sec: 5.0,
        burst: 50.0,
    },
};

/// A bucket: the tokens it held at `at_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    pub tokens: f64,
    pub at_ms: i64,
}

impl Bucket {
    /// A full bucket (a user's first request).
    pub fn full(rate: Rate, now_ms: i64) -> Self {
        Self {
            tokens: rate.burst,
            at_ms: now_ms,
        }
    }

    /// Takes one token at `now_ms` after refilling; `Err` with the milliseconds until one is
    /// there if it is empty.
    pub fn take(&mut self, rate: Rate, now_ms: i64) -> Result<(), i64> {
        let elapsed = (now_ms - self.at_ms).max(0) as f64 / 1000.0;
        self.tokens = (self.tokens + elapsed * rate.per_sec).min(rate.burst);
        self.at_ms = self.at_ms.max(now_ms);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - self.tokens) / rate.per_sec * 1000.0).ceil() as i64)
        }
    }
}

/// Taking tokens from a shared bucket, in GCRA's terms: the time `cost_us` they stand for (one
/// token each `1/rate` seconds), and how far ahead of now the bucket's next arrival time may be
/// (`limit_us`, a full burst's time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Take {
    pub cost_us: i64,
    pub limit_us: i64,
}

/// Taking `n` tokens of a bucket of `rate`.
pub fn take_of(rate: Rate, n: u32) -> Take {
    let interval_us = 1e6 / rate.per_sec;
    Take {
        cost_us: (f64::from(n) * interval_us).round() as i64,
        limit_us: (rate.burst * interval_us).round() as i64,
    }
}

/// GCRA: the bucket's next arrival time (µs) after `take` at `now_us`, from `tat_us` (None: a
/// bucket never used, full); `Err` with the µs until it would be allowed. A bucket whose arrival
/// time is past is full; one token comes every interval; the burst is how far ahead it may run.
pub fn gcra(tat_us: Option<i64>, take: Take, now_us: i64) -> Result<i64, i64> {
    let next = tat_us.map_or(now_us, |t| t.max(now_us)) + take.cost_us;
    match next - now_us <= take.limit_us {
        true => Ok(next),
        false => Err(next - now_us - take.limit_us),
    }
}

/// Tokens an instance takes at once from its account's shared bucket: a fifth of a second's
/// worth, at least one (a store call serves that many requests).
pub fn lease(rate: Rate) -> u32 {
    ((rate.per_sec / 5.0).floor() as u32).clamp(1, (rate.burst as u32).max(1))
}

/// How long an instance keeps tokens it took before they lapse (never more than the account's
/// rate: a lapsed token is not used).
pub const LEASE_MS: i64 = 1_000;

#[cfg(test)]
mod tests {
    use super::*;

    const R: Rate = Rate {
        per_sec: 2.0,
        burst: 5.0,
    };

    #[test]
    fn a_full_bucket_gives_its_burst_then_refuses() {
        let mut b = Bucket::full(R, 0);
        for _ in 0..5 {
            assert_eq!(b.take(R, 0), Ok(()));
        }
        assert_eq!(b.take(R, 0), Err(500), "one token comes in half a second");
    }

    #[test]
    fn it_refills_at_the_rate_up_to_the_burst() {
        let mut b = Bucket::full(R, 0);
        for _ in 0..5 {
            b.take(R, 0).unwrap();
        }
        assert_eq!(b.take(R, 499), Err(2));
        assert_eq!(b.take(R, 500), Ok(()));
        // A long quiet time fills it to the burst, no more.
        let mut quiet = Bucket {
            tokens: 0.0,
            at_ms: 0,
        };
        for _ in 0..5 {
            assert_eq!(quiet.take(R, 3_600_000), Ok(()));
        }
        assert!(quiet.take(R, 3_600_000).is_err());
        // Sustained: 2 a second over 10 seconds, after the burst.
        let mut s = Bucket::full(R, 0);
        let taken = (0..10_000)
            .step_by(10)
            .filter(|t| s.take(R, *t).is_ok())
            .count();
        assert_eq!(taken, 5 + 19, "the burst, then one every 500 ms");
        // A clock that steps back takes nothing more.
        let mut back = Bucket {
            tokens: 0.0,
            at_ms: 1_000,
        };
        assert!(back.take(R, 0).is_err());
    }

    #[test]
    fn describing_and_changing_draw_from_their_own_buckets() {
        assert_eq!(Class::of("DescribeAutoScalingGroups"), Class::Describe);
        assert_eq!(Class::of("GetPredictiveScalingForecast"), Class::Describe);
        assert_eq!(Class::of("SetDesiredCapacity"), Class::Mutate);
        assert_eq!(Class::of("CreateAutoScalingGroup"), Class::Mutate);
        assert_eq!(DEFAULT.rate(Class::Describe), DEFAULT.describe);
        assert!(DEFAULT.check().is_ok());
        let bad = Limits {
            mutate: Rate {
                per_sec: 0.0,
                burst: 5.0,
            },
            ..DEFAULT
        };
        assert!(bad.check().is_err());
        let nan = Limits {
            describe: Rate {
                per_sec: 1.0,
                burst: f64::NAN,
            },
            ..DEFAULT
        };
        assert!(nan.check().is_err());
    }

    #[test]
    fn a_shared_bucket_gives_its_burst_then_its_rate() {
        let take = take_of(R, 1);
        assert_eq!(
            take,
            Take {
                cost_us: 500_000,
                limit_us: 2_500_000
            }
        );
        // Five at once from a new bucket, then one each half second.
        let mut tat = None;
        for _ in 0..5 {
            tat = Some(gcra(tat, take, 0).expect("within the burst"));
        }
        assert_eq!(gcra(tat, take, 0), Err(500_000));
        assert!(gcra(tat, take, 499_999).is_err());
        let tat = gcra(tat, take, 500_000).expect("refilled");
        assert!(gcra(Some(tat), take, 500_000).is_err());
        // A long quiet time: the burst again, no more.
        let mut quiet = Some(tat);
        for _ in 0..5 {
            quiet = Some(gcra(quiet, take, 60_000_000).expect("full again"));
        }
        assert!(gcra(quiet, take, 60_000_000).is_err());
        // Several tokens at once.
        assert!(gcra(None, take_of(R, 5), 0).is_ok());
        assert!(gcra(None, take_of(R, 6), 0).is_err());
        assert_eq!(lease(DEFAULT.describe), 4);
        assert_eq!(lease(DEFAULT.mutate), 1);
    }
}
