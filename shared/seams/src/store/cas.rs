//! The one compare-and-set loop of every group write: read the group, decide, write on the
//! condition that the group is still the one read (its id) at the version read; when another
//! writer got there first, read again and decide again.

use super::StoreError;
use std::future::Future;

/// How many tries a compare-and-set gets before the group counts as contended.
pub const ATTEMPTS: usize = 5;

/// One try of a compare-and-set: done, with what it made, or lost to another writer.
pub enum Try<T> {
    Done(T),
    Lost,
}

impl<T> Try<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Try<U> {
        match self {
            Self::Done(v) => Try::Done(f(v)),
            Self::Lost => Try::Lost,
        }
    }

    /// A conditional write's outcome: its `Conflict` is a lost try; any other error stays one.
    pub fn of(written: Result<T, StoreError>) -> Result<Self, StoreError> {
        match written {
            Ok(v) => Ok(Self::Done(v)),
            Err(StoreError::Conflict) => Ok(Self::Lost),
            Err(e) => Err(e),
        }
    }
}

/// Runs `attempt` until it is done or fails; after `ATTEMPTS` lost tries, `StoreError::Conflict`
/// (ResourceContention to a caller of the API).
pub async fn compare_and_set<T, E, F, Fut>(mut attempt: F) -> Result<T, E>
where
    E: From<StoreError>,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Try<T>, E>>,
{
    for _ in 0..ATTEMPTS {
        if let Try::Done(v) = attempt().await? {
            return Ok(v);
        }
    }
    Err(StoreError::Conflict.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[tokio::test]
    async fn a_lost_try_is_tried_again_up_to_the_limit() {
        let tries = Cell::new(0);
        let won: Result<usize, StoreError> = compare_and_set(|| async {
            tries.set(tries.get() + 1);
            Ok(if tries.get() < 3 {
                Try::Lost
            } else {
                Try::Done(tries.get())
            })
        })
        .await;
        assert_eq!(won, Ok(3));

        tries.set(0);
        let contended: Result<(), StoreError> = compare_and_set(|| async {
            tries.set(tries.get() + 1);
            Try::of(Err(StoreError::Conflict))
        })
        .await;
        assert_eq!(
            (contended, tries.get()),
            (Err(StoreError::Conflict), ATTEMPTS)
        );
    }

    #[tokio::test]
    async fn another_error_ends_at_once() {
        let tries = Cell::new(0);
        let failed: Result<(), StoreError> = compare_and_set(|| async {
            tries.set(tries.get() + 1);
            Try::of(Err(StoreError::NotFound))
        })
        .await;
        assert_eq!((failed, tries.get()), (Err(StoreError::NotFound), 1));
    }
}
