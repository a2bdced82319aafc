//! Per-user request limits, AWS's way: a token bucket per user and class of action (describing
//! or changing), refilled at a steady rate up to a burst; a request that finds its bucket empty
//! is refused with `Throttling` ("Rate exceeded"), which every AWS SDK and the AWS CLI retry with
//! backoff. Pure: the buckets are kept by the caller (the api, per Lambda instance).

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
}
