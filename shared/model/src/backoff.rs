//! How long a group waits to launch again after launches failed, pure (the group's own launches,
//! `reconcile`, and each cloud of a group across clouds, `spread`).

/// The wait before launch attempt `failures + 1` after `failures` failures in a row: 2 s doubling
/// to 5 minutes.
pub fn backoff_ms(failures: i64) -> i64 {
    const BASE: i64 = 2_000;
    const MAX: i64 = 300_000;
    let exp = failures.clamp(1, 20) - 1;
    (BASE << exp).min(MAX)
}
