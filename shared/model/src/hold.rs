//! What a group across clouds remembers of each cloud between rounds (the rules: `spread`).

use crate::backoff::backoff_ms;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a group remembers of one of its clouds between rounds: launches failing there in a row
/// (the cloud is held at what it has until `retry_at_ms`), and since when it cannot be reached.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    pub failures: i64,
    pub retry_at_ms: i64,
    pub unreachable_since_ms: Option<i64>,
    /// What the cloud said last time it failed (for the activities of the clouds below it).
    pub last_error: Option<String>,
    /// The launch sequence of a launch there that got no answer: the next launch there uses its
    /// client token again, so the cloud answers with what that launch made rather than making
    /// more (the group's sequence moves on with its other clouds' launches; found by the
    /// simulator, seed 151).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unanswered_seq: Option<i64>,
    /// The units that launch asked for and no answer told of, and when: for `UNANSWERED_GRACE_MS`
    /// they stay the cloud's, so the next cloud does not launch them a second time (found by the
    /// simulator, seed 10).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unanswered_units: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unanswered_at_ms: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// How long the units of an unanswered launch stay a cloud's: by then a VM it made shows in
/// DescribeInstances (as `reconcile::MISSING_GRACE_MS` allows a new VM), or it was not made.
pub const UNANSWERED_GRACE_MS: i64 = 15_000;

/// A group's holds, by cloud (only clouds with something to remember).
pub type Holds = BTreeMap<String, Hold>;

/// How long a cloud that cannot be reached keeps its VMs counted: after that they count as
/// unhealthy and their replacements go to the next cloud (they stay recorded, and are kept or
/// terminated when the cloud is back).
pub const UNREACHABLE_GRACE_MS: i64 = 30_000;

impl Hold {
    /// Launches may go there now.
    pub fn usable(&self, now_ms: i64) -> bool {
        self.unreachable_since_ms.is_none() && now_ms >= self.retry_at_ms
    }

    /// Its VMs no longer count: unreachable for longer than the grace.
    pub fn counted_out(&self, now_ms: i64) -> bool {
        self.unreachable_since_ms
            .is_some_and(|t| now_ms - t >= UNREACHABLE_GRACE_MS)
    }

    pub fn seen(self, reachable: bool, now_ms: i64) -> Self {
        if reachable {
            let back = self.unreachable_since_ms.is_some();
            Self {
                unreachable_since_ms: None,
                last_error: if back && self.failures == 0 {
                    None
                } else {
                    self.last_error
                },
                ..self
            }
        } else {
            Self {
                unreachable_since_ms: Some(self.unreachable_since_ms.unwrap_or(now_ms)),
                ..self
            }
        }
    }

    /// After a launch there: a success forgets the failures, a failure holds the cloud for
    /// the backoff (2 s doubling to 5 minutes).
    pub fn launched(self, ok: bool, now_ms: i64) -> Self {
        if ok {
            return Self {
                failures: 0,
                retry_at_ms: 0,
                last_error: None,
                ..self
            };
        }
        let failures = self.failures + 1;
        Self {
            failures,
            retry_at_ms: now_ms + backoff_ms(failures),
            ..self
        }
    }

    /// The units an unanswered launch there may have made, within `UNANSWERED_GRACE_MS` of it.
    pub fn reserved(&self, now_ms: i64) -> i64 {
        match self.unanswered_seq {
            Some(_) if now_ms - self.unanswered_at_ms < UNANSWERED_GRACE_MS => {
                self.unanswered_units.max(0)
            }
            _ => 0,
        }
    }

    /// The launch sequence a launch there uses: that of an unanswered launch, or the group's.
    pub fn token_seq(&self, group_seq: i64) -> i64 {
        self.unanswered_seq.unwrap_or(group_seq)
    }

    pub fn is_clear(&self) -> bool {
        *self == Self::default()
    }
}
