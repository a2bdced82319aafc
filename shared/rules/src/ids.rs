//! New ids (groups, activities, policies, refreshes, lifecycle tokens, request ids): random UUIDs
//! from the OS, or, on a thread a simulation has seeded (`seed`), from that seed, so that a
//! simulated run is the same every time. Secrets never come from here.

use std::cell::Cell;

thread_local! {
    /// The seeded generator's state on this thread; None: the OS's randomness.
    static SEEDED: Cell<Option<u64>> = const { Cell::new(None) };
}

/// From now on this thread's ids come from `seed` (None: from the OS again).
pub fn seed(seed: Option<u64>) {
    SEEDED.with(|s| s.set(seed));
}

/// A new version 4 UUID, as text.
pub fn uuid() -> String {
    let seeded = SEEDED.with(|s| {
        let mut state = s.get()?;
        let bits = (u128::from(splitmix(&mut state)) << 64) | u128::from(splitmix(&mut state));
        s.set(Some(state));
        Some(bits)
    });
    match seeded {
        Some(bits) => uuid::Builder::from_random_bytes(bits.to_be_bytes())
            .into_uuid()
            .to_string(),
        None => uuid::Uuid::new_v4().to_string(),
    }
}

/// SplitMix64: one step of a small, well-mixed generator (Steele, Lea and Flood, 2014).
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_thread_gives_the_same_ids_and_an_unseeded_one_random_ones() {
        seed(Some(7));
        let first = [uuid(), uuid()];
        seed(Some(7));
        assert_eq!([uuid(), uuid()], first);
        assert_ne!(first[0], first[1]);
        assert_eq!(first[0].as_bytes()[14], b'4', "version 4: {}", first[0]);
        seed(None);
        assert_ne!(uuid(), uuid());
    }
}
