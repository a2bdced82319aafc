//! The pulse: sub-minute health checks without a sub-minute scheduler, and the rules of what each
//! beat looks at. Pure: no I/O, no AWS types.
//!
//! The chain: one `Tick` message at a time travels a FIFO queue whose delay is the period; the
//! health-check function receives it, moves the lease (`Lease`, one item, written only if its
//! sequence is the one the tick expects), sends the next tick and does the beat's work. A tick is
//! deleted only when its run succeeded, so a run that crashed is delivered again after the queue's
//! visibility timeout and carries on; the FIFO queue drops a second send of one sequence number
//! (deduplication by `Tick::seq`), so a tick sent twice never makes two chains. A tick whose
//! sequence the lease has left behind is stale and dropped. The minute schedule restarts a chain
//! whose lease ran out (a lost message), conditionally, so two starters make one chain.
//!
//! A beat looks at each (user, cloud) pair it is due for: one DescribeInstances of the user's VMs
//! there, whose fingerprint is compared with the one the pair's last full sweep saw. Only a
//! difference (a VM died, stopped, appeared), a pair the last sweep left busy, or the pair's
//! turn for a full sweep sends a sweep message to the provisioner.

use phantom_model::instance::CloudState;
pub use phantom_model::pulse::{Lease, PairView};
use phantom_model::status::InstanceStatus;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A beat of the chain, as it travels on the pulse queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tick {
    pub seq: u64,
}

impl Tick {
    pub fn parse(body: &str) -> Result<Self, String> {
        serde_json::from_str(body).map_err(|e| format!("not a tick: {e}"))
    }

    pub fn body(&self) -> String {
        serde_json::to_string(self).expect("a tick serializes")
    }
}

/// How long past a beat the chain counts as alive without the next one: the period plus room for
/// the queue's and the function's own delays.
pub const LEASE_SLACK_MS: i64 = 20_000;

/// What a received tick does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnTick {
    /// It is the next beat: take the lease (conditionally on `expect`), send the next, run.
    Advance { expect: u64, lease: Lease },
    /// It already took the lease (a delivery again after a crash): send the next again (the
    /// queue drops it if the first send got through) and run.
    Again,
    /// The chain has moved past it, or another chain holds the lease: dropped.
    Stale,
}

/// The rule for tick `seq` arriving at `now_ms` while the lease is `lease`.
pub fn on_tick(lease: Option<&Lease>, seq: u64, now_ms: i64, period_ms: i64) -> OnTick {
    let held = lease.map_or(0, |l| l.seq);
    if seq == held + 1 {
        OnTick::Advance {
            expect: held,
            lease: Lease {
                seq,
                until_ms: now_ms + period_ms + LEASE_SLACK_MS,
            },
        }
    } else if seq == held && seq > 0 {
        OnTick::Again
    } else {
        OnTick::Stale
    }
}

/// A new chain when none is alive: the lease ran out (or was never taken). Its first tick is
/// `lease.seq + 1`; the lease moves one on, so a late tick of the lost chain finds itself stale
/// or, if it was the one the lease names, resends the tick the new chain already sent (dropped by
/// the queue).
pub fn restart(lease: Option<&Lease>, now_ms: i64, period_ms: i64) -> Option<(u64, Lease)> {
    match lease {
        Some(l) if l.until_ms >= now_ms => None,
        _ => {
            let held = lease.map_or(0, |l| l.seq);
            Some((
                held,
                Lease {
                    seq: held + 1,
                    until_ms: now_ms + period_ms + LEASE_SLACK_MS,
                },
            ))
        }
    }
}

/// How long a writer's ask for a round (the store's `Ask`) waits for its message's round before
/// the pulse takes the message for lost and queues the round itself. A message's round takes
/// the group's lease within a second or so; a round asked for twice costs one more reconcile.
pub const ASK_GRACE_MS: i64 = 10_000;

/// The asks a beat at `now_ms` queues rounds for: those made at or before this time.
pub fn unanswered_since(now_ms: i64) -> i64 {
    now_ms - ASK_GRACE_MS
}

/// The fingerprint of a pair whose cloud did not answer its sweep: no look ever matches it.
pub const UNKNOWN: &str = "unknown";

/// The beat's intervals, in beats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cadence {
    /// A pair is looked at (one DescribeInstances) every `look` beats.
    pub look: u64,
    /// ... every `look_events` beats on a cloud that tells of state changes itself.
    pub look_events: u64,
    /// A pair whose last sweep was busy is swept every `busy` beats.
    pub busy: u64,
    /// Every pair is swept every `sweep` beats, whatever its looks found.
    pub sweep: u64,
}

impl Cadence {
    /// From seconds: each a whole number of periods, at least one.
    pub fn of_secs(
        period: u64,
        look: u64,
        look_events: u64,
        busy: u64,
        sweep: u64,
    ) -> Result<Self, String> {
        let beats = |what: &str, secs: u64| {
            if period == 0 || secs == 0 || !secs.is_multiple_of(period) {
                Err(format!(
                    "{what} of {secs} s is not a whole number of pulse periods of {period} s"
                ))
            } else {
                Ok(secs / period)
            }
        };
        Ok(Self {
            look: beats("the look interval", look)?,
            look_events: beats("the look interval of clouds with events", look_events)?,
            busy: beats("the busy sweep interval", busy)?,
            sweep: beats("the sweep interval", sweep)?,
        })
    }
}

impl Cadence {
    /// The cadence of a pair on a cloud that tells of its VMs' state changes (or not).
    pub fn on(self, events: bool) -> Self {
        if events {
            Self {
                look: self.look_events,
                ..self
            }
        } else {
            self
        }
    }
}

/// What a beat does for one pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beat {
    /// Nothing this beat.
    Rest,
    /// One DescribeInstances; a sweep if it differs from the last sweep's view.
    Look,
    /// A full sweep without a look: the pair's turn, or busy, or never swept.
    Sweep,
}

/// The pair's beat: spread over the interval by the pair's hash, so that each beat carries an
/// even share of the pairs.
pub fn beat(seq: u64, pair: &str, view: Option<&PairView>, c: Cadence) -> Beat {
    let h = fnv1a(pair.as_bytes());
    let turn = |every: u64| seq.wrapping_add(h).is_multiple_of(every);
    match view {
        None => Beat::Sweep,
        Some(_) if turn(c.sweep) => Beat::Sweep,
        Some(v) if v.busy && turn(c.busy) => Beat::Sweep,
        Some(_) if turn(c.look) => Beat::Look,
        Some(_) => Beat::Rest,
    }
}

/// Whether this beat is the pair's busy turn (a pair whose look failed is swept then).
pub fn busy_turn(seq: u64, pair: &str, c: Cadence) -> bool {
    seq.wrapping_add(fnv1a(pair.as_bytes()))
        .is_multiple_of(c.busy)
}

/// A pair's key for `beat`.
pub fn pair_key(user: &str, cloud: &str) -> String {
    format!("{cloud}#{user}")
}

/// The fingerprint of what a cloud shows of a user's VMs: each VM's id and state, terminated
/// ones left out (EC2 shows them for an hour), in any order.
pub fn fingerprint<'a>(vms: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut seen: Vec<(&str, &str)> = vms
        .into_iter()
        .filter(|(_, state)| *state != "terminated")
        .collect();
    seen.sort_unstable();
    let mut text = Vec::new();
    for (id, state) in &seen {
        text.extend_from_slice(id.as_bytes());
        text.push(b'=');
        text.extend_from_slice(state.as_bytes());
        text.push(b'\n');
    }
    format!("{}:{:016x}", seen.len(), fnv1a(&text))
}

/// The fingerprint of a user's VMs with what their status checks say (`InstanceStatus::summary`):
/// a VM turning impaired, or given a scheduled event, changes it as a change of state does.
pub fn fingerprint_with(vms: &[(String, CloudState)], statuses: &[InstanceStatus]) -> String {
    let said: BTreeMap<&str, String> = statuses
        .iter()
        .map(|s| (s.id.as_str(), s.summary()))
        .filter(|(_, said)| !said.is_empty())
        .collect();
    let states: Vec<(&str, String)> = vms
        .iter()
        .map(|(id, state)| match said.get(id.as_str()) {
            Some(said) => (id.as_str(), format!("{}/{said}", state.name())),
            None => (id.as_str(), state.name().to_string()),
        })
        .collect();
    fingerprint(states.iter().map(|(id, s)| (*id, s.as_str())))
}

/// FNV-1a, 64 bits: stable across processes and releases, unlike the standard library's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: i64 = 5_000;

    #[test]
    fn the_next_tick_advances_and_a_repeat_resends() {
        let lease = Lease {
            seq: 7,
            until_ms: 1_000,
        };
        assert_eq!(
            on_tick(Some(&lease), 8, 500, P),
            OnTick::Advance {
                expect: 7,
                lease: Lease {
                    seq: 8,
                    until_ms: 500 + P + LEASE_SLACK_MS
                }
            }
        );
        assert_eq!(on_tick(Some(&lease), 7, 500, P), OnTick::Again);
        assert_eq!(on_tick(Some(&lease), 6, 500, P), OnTick::Stale);
        assert_eq!(on_tick(Some(&lease), 9, 500, P), OnTick::Stale);
        // No lease: only the first tick starts a chain.
        assert!(matches!(
            on_tick(None, 1, 0, P),
            OnTick::Advance { expect: 0, .. }
        ));
        assert_eq!(on_tick(None, 0, 0, P), OnTick::Stale);
        assert_eq!(on_tick(None, 5, 0, P), OnTick::Stale);
    }

    #[test]
    fn a_chain_restarts_only_once_its_lease_ran_out() {
        let lease = Lease {
            seq: 3,
            until_ms: 10_000,
        };
        assert_eq!(restart(Some(&lease), 10_000, P), None);
        let (expect, new) = restart(Some(&lease), 10_001, P).expect("lapsed");
        assert_eq!((expect, new.seq), (3, 4));
        // The lost chain's tick 4 (if it was only late) now finds the lease at 4: it resends
        // tick 5, which the queue drops as the restarted chain's own; its tick 3 is stale.
        assert_eq!(on_tick(Some(&new), 4, 10_002, P), OnTick::Again);
        assert_eq!(on_tick(Some(&new), 3, 10_002, P), OnTick::Stale);
        assert_eq!(restart(None, 0, P).map(|(e, l)| (e, l.seq)), Some((0, 1)));
    }

    #[test]
    fn each_beat_carries_an_even_share_and_every_pair_has_its_turns() {
        let c = Cadence::of_secs(5, 10, 60, 60, 900).expect("whole periods");
        assert_eq!((c.look, c.look_events, c.busy, c.sweep), (2, 12, 12, 180));
        assert_eq!(c.on(true).look, 12);
        assert_eq!(c.on(false).look, 2);
        let quiet = PairView {
            fingerprint: "f".into(),
            busy: false,
            empty_since_ms: None,
        };
        let pairs: Vec<String> = (0..1000).map(|i| pair_key(&format!("u{i}"), "c")).collect();
        let mut looks = 0;
        let mut sweeps = 0;
        for seq in 0..180 {
            for p in &pairs {
                match beat(seq, p, Some(&quiet), c) {
                    Beat::Look => looks += 1,
                    Beat::Sweep => sweeps += 1,
                    Beat::Rest => {}
                }
            }
        }
        // Over one sweep interval: every pair swept once, looked at on the other look turns.
        assert_eq!(sweeps, 1000);
        assert_eq!(looks, 1000 * 90 - 1000);
        // One beat carries about its share.
        let one = pairs
            .iter()
            .filter(|p| beat(1, p, Some(&quiet), c) != Beat::Rest)
            .count();
        assert!((400..600).contains(&one), "{one}");
        // Never swept: swept at once; busy: every busy turn.
        assert_eq!(beat(3, &pairs[0], None, c), Beat::Sweep);
        let busy = PairView {
            busy: true,
            ..quiet
        };
        let swept = (0..12)
            .filter(|s| beat(*s, &pairs[0], Some(&busy), c) == Beat::Sweep)
            .count();
        assert_eq!(swept, 1);
    }

    #[test]
    fn cadences_are_whole_periods() {
        assert!(Cadence::of_secs(5, 7, 60, 60, 900).is_err());
        assert!(Cadence::of_secs(0, 10, 60, 60, 900).is_err());
        assert!(Cadence::of_secs(5, 0, 60, 60, 900).is_err());
        assert!(Cadence::of_secs(5, 10, 61, 60, 900).is_err());
    }

    #[test]
    fn a_fingerprint_changes_with_any_vm_but_not_with_order_or_the_terminated() {
        let a = fingerprint([("i-1", "running"), ("i-2", "running")]);
        assert_eq!(a, fingerprint([("i-2", "running"), ("i-1", "running")]));
        assert_eq!(
            a,
            fingerprint([
                ("i-2", "running"),
                ("i-9", "terminated"),
                ("i-1", "running")
            ])
        );
        assert_ne!(
            a,
            fingerprint([("i-1", "running"), ("i-2", "shutting-down")])
        );
        assert_ne!(a, fingerprint([("i-1", "running")]));
        assert_ne!(
            a,
            fingerprint([("i-1", "running"), ("i-2", "running"), ("i-3", "pending")])
        );
        assert!(a.starts_with("2:"));
    }

    #[test]
    fn a_vm_turning_impaired_or_given_an_event_changes_the_fingerprint() {
        use phantom_model::status::{Check, CheckStatus, EventCode, ScheduledEvent};
        let vms = vec![("i-1".to_string(), CloudState::Running)];
        let plain = fingerprint_with(&vms, &[]);
        assert_eq!(plain, fingerprint_with(&vms, &[InstanceStatus::ok("i-1")]));
        assert_eq!(plain, fingerprint([("i-1", "running")]));
        let mut sick = InstanceStatus::ok("i-1");
        sick.system = Check {
            status: CheckStatus::Impaired,
            impaired_since_ms: Some(1),
        };
        let impaired = fingerprint_with(&vms, std::slice::from_ref(&sick));
        assert_ne!(plain, impaired);
        sick.events.push(ScheduledEvent {
            code: EventCode::SystemReboot,
            not_before_ms: 2,
            description: String::new(),
        });
        assert_ne!(impaired, fingerprint_with(&vms, &[sick]));
    }
}
