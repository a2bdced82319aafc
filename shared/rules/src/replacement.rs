//! Death-to-replacement time, pure: a VM found dead (gone from the cloud, stopped, or unhealthy)
//! is owed a replacement from then. The next new VM of its group (launched, adopted or joined
//! from the warm pool) carries that time (`Member::replaces_ms`), and the round that records it
//! InService gives the time it took. Deaths a failed launch leaves owed wait on the group
//! (`Group::unreplaced_ms`), as many as the group is short.

use crate::reconcile::{Cause, Plan};
use phantom_model::instance::{Lifecycle, Member};
use phantom_model::record::Record;

/// VMs this plan finds dead, as it lets them go or holds them on the way out.
pub fn deaths(plan: &Plan) -> usize {
    plan.gone
        .iter()
        .chain(&plan.terminate)
        .chain(&plan.hold)
        .filter(|(_, cause)| matches!(cause, Cause::Unhealthy(..)))
        .count()
}

/// Counts toward the group's size.
fn counts(l: Lifecycle) -> bool {
    matches!(
        l,
        Lifecycle::Pending | Lifecycle::PendingWait | Lifecycle::InService | Lifecycle::Attaching
    )
}

/// Completes a round's record: its new VMs take the oldest deaths owed (`unreplaced`, then the
/// `deaths` found now), the deaths left over stay owed up to what the group is short after the
/// record, and replacements now InService are settled. Returns how long each of those took,
/// in seconds, for the caller to count once the record is written.
pub fn settle(
    unreplaced: &[i64],
    deaths: usize,
    desired: i64,
    members: &[Member],
    now_ms: i64,
    r: &mut Record,
) -> Vec<f64> {
    let mut owed: Vec<i64> = unreplaced.to_vec();
    owed.extend(std::iter::repeat_n(now_ms, deaths));
    owed.sort_unstable();
    let mut owed = owed.into_iter();
    let before = |id: &str| members.iter().find(|m| m.id == id);
    let mut took = Vec::new();
    for m in &mut r.put {
        let was_counted = before(&m.id).is_some_and(|b| counts(b.lifecycle));
        if counts(m.lifecycle) && !was_counted && m.replaces_ms.is_none() {
            m.replaces_ms = owed.next();
        }
        if m.lifecycle == Lifecycle::InService {
            if let Some(died) = m.replaces_ms.take() {
                took.push((now_ms - died).max(0) as f64 / 1000.0);
            }
        }
    }
    // What the group is short once this record is written.
    let mut after: Vec<&Member> = members
        .iter()
        .filter(|m| !r.forget.contains(&m.id) && !r.put.iter().any(|p| p.id == m.id))
        .collect();
    after.extend(r.put.iter());
    let counted = after.iter().filter(|m| counts(m.lifecycle)).count() as i64;
    let short = (r.desired.unwrap_or(desired) - counted).max(0) as usize;
    let left: Vec<i64> = owed.take(short).collect();
    if left != unreplaced {
        r.unreplaced = Some(left);
    }
    took
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: &str, lifecycle: Lifecycle) -> Member {
        crate::fixtures::test_member(id, lifecycle)
    }

    fn dead(id: &str) -> (String, Cause) {
        (
            id.into(),
            Cause::Unhealthy(crate::health::Failed::State, "gone".into()),
        )
    }

    #[test]
    fn only_unhealthy_causes_are_deaths() {
        let plan = Plan {
            gone: vec![dead("i-1"), ("i-2".into(), Cause::Deleting)],
            terminate: vec![
                dead("i-3"),
                ("i-4".into(), Cause::ScaleIn { from: 3, to: 2 }),
            ],
            hold: vec![dead("i-5"), ("i-6".into(), Cause::Expired)],
            ..Plan::default()
        };
        assert_eq!(deaths(&plan), 3);
    }

    #[test]
    fn a_death_replaced_at_once_is_timed_when_its_replacement_serves() {
        // Round 1 at 10 s: i-1 gone, i-2 launched in its place.
        let members = vec![member("i-1", Lifecycle::InService)];
        let mut r = Record {
            put: vec![Member {
                rev: 0,
                ..member("i-2", Lifecycle::Pending)
            }],
            forget: vec!["i-1".into()],
            ..Record::default()
        };
        assert!(settle(&[], 1, 1, &members, 10_000, &mut r).is_empty());
        assert_eq!(r.put[0].replaces_ms, Some(10_000));
        assert_eq!(r.unreplaced, None, "nothing owed, nothing written");

        // Round 2 at 55 s: i-2 InService; 45 s, and the record no longer says it replaces.
        let members = vec![r.put[0].clone()];
        let mut r = Record {
            put: vec![Member {
                lifecycle: Lifecycle::InService,
                ..members[0].clone()
            }],
            ..Record::default()
        };
        assert_eq!(settle(&[], 0, 1, &members, 55_000, &mut r), vec![45.0]);
        assert_eq!(r.put[0].replaces_ms, None);
    }

    #[test]
    fn deaths_a_failed_launch_leaves_wait_on_the_group_and_go_to_the_next_launch() {
        // Two of three die at 10 s; the launch fails: both owed.
        let members = vec![
            member("i-1", Lifecycle::InService),
            member("i-2", Lifecycle::InService),
            member("i-3", Lifecycle::InService),
        ];
        let mut r = Record {
            forget: vec!["i-1".into(), "i-2".into()],
            ..Record::default()
        };
        settle(&[], 2, 3, &members, 10_000, &mut r);
        assert_eq!(r.unreplaced, Some(vec![10_000, 10_000]));

        // At 40 s one launch succeeds: it takes the oldest; one stays owed.
        let members = vec![member("i-3", Lifecycle::InService)];
        let mut r = Record {
            put: vec![Member {
                rev: 0,
                ..member("i-4", Lifecycle::Pending)
            }],
            ..Record::default()
        };
        settle(&[10_000, 10_000], 0, 3, &members, 40_000, &mut r);
        assert_eq!(r.put[0].replaces_ms, Some(10_000));
        assert_eq!(r.unreplaced, Some(vec![10_000]));
    }

    #[test]
    fn a_scale_in_forgives_what_is_owed_beyond_the_shortfall() {
        let members = vec![member("i-3", Lifecycle::InService)];
        let mut r = Record::default();
        settle(&[10_000, 20_000], 0, 2, &members, 40_000, &mut r);
        assert_eq!(r.unreplaced, Some(vec![10_000]), "the oldest is kept");
        let mut r = Record::default();
        settle(&[10_000], 0, 1, &members, 50_000, &mut r);
        assert_eq!(r.unreplaced, Some(vec![]));
    }

    #[test]
    fn a_vm_joining_from_the_pool_replaces_as_a_launched_one_does() {
        let members = vec![
            member("i-1", Lifecycle::InService),
            member("w-1", Lifecycle::WarmedStopped),
        ];
        let mut r = Record {
            put: vec![Member {
                joined_ms: Some(5_000),
                ..member("w-1", Lifecycle::Pending)
            }],
            forget: vec!["i-1".into()],
            ..Record::default()
        };
        settle(&[], 1, 1, &members, 5_000, &mut r);
        assert_eq!(r.put[0].replaces_ms, Some(5_000));
    }

    #[test]
    fn a_scale_out_launch_owes_nothing_and_times_nothing() {
        let members = vec![member("i-1", Lifecycle::InService)];
        let mut r = Record {
            put: vec![Member {
                rev: 0,
                ..member("i-2", Lifecycle::Pending)
            }],
            ..Record::default()
        };
        assert!(settle(&[], 0, 2, &members, 5_000, &mut r).is_empty());
        assert_eq!(r.put[0].replaces_ms, None);
        assert_eq!(r.unreplaced, None);
    }
}
