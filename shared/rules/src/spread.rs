//! Groups that span clouds, pure: the tags that say where a group runs (`phantom:clouds`,
//! `phantom:policy`, as Nimbus Phantom took them), and how many VMs each cloud should have.
//!
//! `phantom:clouds = hotel:4,sierra:10` lists clouds in rank order, each with its maximum;
//! `phantom:policy` is `overflow` (the default: fill the best-ranked cloud that works up to its
//! maximum, then the next) or `fixed` (exactly the listed count on each cloud; the desired capacity
//! is their sum). The launch configuration on each cloud is the group's own name with that cloud:
//! `web@hotel`, `web@sierra`.

use phantom_model::group::Group;
pub use phantom_model::hold::{Hold, Holds, UNREACHABLE_GRACE_MS};
use phantom_model::{Checked, Refusal};

pub const TAG_CLOUDS: &str = "phantom:clouds";
pub const TAG_POLICY: &str = "phantom:policy";

/// A ValidationError about tag `phantom:clouds`.
pub fn bad_clouds(problem: impl std::fmt::Display) -> Refusal {
    bad(TAG_CLOUDS, problem)
}

/// The group as it will be stored (checked whenever a group is created or changed, by a user or
/// by a scheduled action): its tags readable, its own cloud listed, and a `fixed`
/// group's desired capacity the sum of its clouds' counts (set so when the tags change; refused
/// when only the capacity does).
pub fn settled(old: Option<&Group>, mut next: Group) -> Checked<Group> {
    // The other tags of Phantom's own a group carries: its status checks' confirmation period
    // (`phantom_rules::health`), its probe (`phantom_rules::probe`) and its fallback
    // (`phantom_rules::distribution`).
    crate::health::confirm_ms(&next)?;
    crate::probe::of_group(&next)?;
    crate::distribution::fallback_of(
        next.settings
            .tags
            .iter()
            .map(|t| (t.key.as_str(), t.value.as_str())),
    )?;
    let Some(spread) = Spread::of_group(&next)? else {
        // On one cloud: its load balancers are there.
        if let Some(a) = next
            .settings
            .traffic
            .iter()
            .find(|a| crate::traffic::placed(&a.source, &next.cloud).0 != next.cloud)
        {
            return Err(bad_clouds(format!(
                "load balancer {} is on another cloud than the group's own, {}: detach it, and let it go, first.",
                a.source.identifier, next.cloud
            )));
        }
        return Ok(next);
    };
    let own = match (next.launch_configuration(), crate::launching::of(&next).source().launch_template) {
        (Some(lc), _) => lc.to_string(),
        (None, Some(t)) => match &t.launch_template_name {
            Some(name) => name.clone(),
            None => return Err(bad_clouds(
                "a group across clouds launches from the launch template of one name on each cloud (<name>@<cloud>): give LaunchTemplateName, not an id, which differs from cloud to cloud.",
            )),
        },
        (None, None) => {
            return Err(bad_clouds(
                "a group across clouds launches from a launch configuration or a launch template on each cloud (<name>@<cloud>).",
            ))
        }
    };
    // So does each override's own template.
    let by_id = crate::launching::of(&next)
        .mixed_instances_policy
        .and_then(|m| m.launch_template.as_ref())
        .into_iter()
        .flat_map(|l| &l.overrides)
        .filter_map(|o| o.launch_template_specification.as_ref())
        .any(|t| t.launch_template_name.is_none());
    if by_id {
        return Err(bad_clouds(
            "a group across clouds launches from the launch template of one name on each cloud (<name>@<cloud>): give each override's LaunchTemplateName, not an id, which differs from cloud to cloud.",
        ));
    }
    // A load balancer lives on one cloud: each source's must stay one of the group's.
    for a in &next.settings.traffic {
        let (cloud, _) = crate::traffic::placed(&a.source, &next.cloud);
        if !spread.sites.iter().any(|s| s.cloud == cloud) {
            return Err(bad_clouds(format!(
                "load balancer {} is on cloud {cloud}, which the group would no longer list: detach it, and let it go, first.",
                a.source.identifier
            )));
        }
    }
    if spread.policy == Policy::Fixed && next.settings.warm_pool_configuration.is_some() {
        return Err(bad_clouds(
            "a fixed group never scales out, so it keeps no warm pool: delete the group's warm pool (DeleteWarmPool) first.",
        ));
    }
    if !spread.sites.iter().any(|s| s.cloud == next.cloud) {
        return Err(bad_clouds(format!(
            "the group's own cloud {} (of its launch configuration or template {}) must be listed.",
            next.cloud, own
        )));
    }
    if spread.policy == Policy::Overflow && next.desired > spread.total() {
        return Err(bad_clouds(format!(
            "its clouds hold at most {} VMs, fewer than the desired capacity {}.",
            spread.total(),
            next.desired
        )));
    }
    if spread.policy == Policy::Fixed {
        let total = spread.total();
        let tags_changed =
            old.is_none_or(|o| Spread::of_group(o).ok().flatten().as_ref() != Some(&spread));
        if tags_changed {
            next.desired = total;
        } else if next.desired != total {
            return Err(Refusal::invalid(format!(
                "A fixed group's desired capacity is the sum of its clouds' counts ({total}): change tag {TAG_CLOUDS} to change it."
            )));
        }
        if total < next.min || total > next.max {
            return Err(bad_clouds(format!(
                "a fixed group keeps {total} VMs, outside its MinSize {} and MaxSize {}.",
                next.min, next.max
            )));
        }
    }
    Ok(next)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Overflow,
    Fixed,
}

/// One cloud of a group, with the most VMs it may hold there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub cloud: String,
    pub max: i64,
}

/// Where a group runs, in rank order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spread {
    pub policy: Policy,
    pub sites: Vec<Site>,
}

fn bad(tag: &str, problem: impl std::fmt::Display) -> Refusal {
    Refusal::invalid(format!("Tag {tag}: {problem}"))
}

impl Spread {
    /// The clouds a group spans (its `phantom:clouds` and `phantom:policy` tags), if it spans any.
    pub fn of_group(g: &Group) -> Checked<Option<Self>> {
        Self::of_tags(
            g.settings
                .tags
                .iter()
                .map(|t| (t.key.as_str(), t.value.as_str())),
        )
    }

    /// From a group's tags (key, value): `None` without `phantom:clouds`. A value that cannot be
    /// read is a ValidationError naming the tag and the problem.
    pub fn of_tags<'a>(
        tags: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Checked<Option<Self>> {
        let (mut clouds, mut policy) = (None, None);
        for (k, v) in tags {
            match k {
                TAG_CLOUDS => clouds = Some(v),
                TAG_POLICY => policy = Some(v),
                _ => {}
            }
        }
        let policy = match policy.map(str::trim) {
            None | Some("overflow") => Policy::Overflow,
            Some("fixed") => Policy::Fixed,
            Some(other) => {
                return Err(bad(
                    TAG_POLICY,
                    format!("'{other}' is not a policy: use overflow or fixed."),
                ))
            }
        };
        let Some(clouds) = clouds else {
            return match policy {
                Policy::Fixed => Err(bad(
                    TAG_POLICY,
                    format!("a policy needs the clouds it applies to: add tag {TAG_CLOUDS}."),
                )),
                Policy::Overflow => Ok(None),
            };
        };
        let mut sites: Vec<Site> = Vec::new();
        for part in clouds.split(',') {
            let part = part.trim();
            let Some((cloud, max)) = part.split_once(':') else {
                return Err(bad(
                    TAG_CLOUDS,
                    format!("'{part}' is not <cloud>:<maximum> (e.g. hotel:4,sierra:10)."),
                ));
            };
            let cloud = cloud.trim();
            if cloud.is_empty() {
                return Err(bad(TAG_CLOUDS, format!("'{part}' names no cloud.")));
            }
            let max: i64 = max.trim().parse().map_err(|_| {
                bad(
                    TAG_CLOUDS,
                    format!(
                        "the maximum of cloud {cloud}, '{}', is not a number.",
                        max.trim()
                    ),
                )
            })?;
            if max < 0 {
                return Err(bad(
                    TAG_CLOUDS,
                    format!("the maximum of cloud {cloud} is negative ({max})."),
                ));
            }
            if sites.iter().any(|s| s.cloud == cloud) {
                return Err(bad(TAG_CLOUDS, format!("cloud {cloud} is listed twice.")));
            }
            sites.push(Site {
                cloud: cloud.to_string(),
                max,
            });
        }
        Ok(Some(Self { policy, sites }))
    }

    /// The sum of the clouds' maximums: what a `fixed` group keeps, the most an `overflow` group
    /// can hold.
    pub fn total(&self) -> i64 {
        self.sites.iter().map(|s| s.max).sum()
    }
}

/// One cloud of a group as the provisioner finds it this round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudView {
    /// Its maximum (`Site::max`).
    pub max: i64,
    /// The group's VMs counted there (alive or on their way).
    pub have: i64,
    /// Of those, InService and healthy.
    pub in_service: i64,
    /// Of those, protected from scale-in: they stay where they are.
    pub protected: i64,
    /// Launches may go there: reachable, and not held after failing launches.
    pub usable: bool,
    /// Units a launch there asked for and got no answer to, which it may have made (`Hold::reserved`):
    /// a cloud that is not usable keeps them in its share.
    pub reserved: i64,
    /// Units running there but not in `have`, their replacements due: at risk of interruption,
    /// or replaced launch-first (retiring, or unhealthy and kept for a maintenance policy). They
    /// fill the room a move may take (found by the simulator, seeds 7140 and 4583 of mix 13).
    pub outgoing: i64,
}

/// What each cloud should have (in the views' order, which is rank order), for a group that wants
/// `desired` VMs with at most `group_max` (AWS's MaxSize).
///
/// - overflow: the best-ranked usable clouds are filled up to their maximums; a cloud that is not
///   usable keeps what it has (up to its maximum) and gets nothing new but what an unanswered
///   launch there may have made.
/// - fixed: each cloud its maximum.
///
/// Either way a cloud with more than its share gives VMs up only as far as the group stays at
/// `desired` InService VMs: moving back to a better cloud launches there first, and the worse
/// cloud lets go once the new VMs serve. Scale-in therefore takes from the worst-ranked cloud
/// first. While moving, the group may exceed `group_max` as AWS's rebalancing does (by 10 %, at
/// least one VM), not more; with `rebalance` false (AZRebalance suspended) nothing moves: a cloud
/// gets new VMs only to make up for the group being short.
/// The share each cloud would have if moving cost nothing (rank order). A cloud keeps its VMs
/// protected from scale-in (they cannot move), and the rest of `desired` is shared out by rank:
/// otherwise a protected VM on a worse cloud and its "replacement" on a better one would both
/// stay for ever (found by the simulator, seed 4).
pub fn shares(policy: Policy, desired: i64, views: &[CloudView]) -> Vec<i64> {
    let kept: i64 = views.iter().map(|v| v.protected.max(0)).sum();
    let mut left = (desired.max(0) - kept).max(0);
    views
        .iter()
        .map(|v| {
            let floor = v.protected.max(0);
            let more = match policy {
                Policy::Fixed => v.max - floor,
                Policy::Overflow if v.usable => (v.max - floor).min(left),
                Policy::Overflow => ((v.have + v.reserved).min(v.max) - floor).min(left),
            }
            .max(0);
            left -= more.min(left);
            floor + more
        })
        .collect()
}

/// Whether a cloud of a group across clouds replaces its VMs past their lifetime this round, given
/// its `share` (`allot`), its `ideal` one (`shares`) and the units it runs (`live`). Not while it
/// holds VMs above its ideal share: they move to a better cloud instead (found by the simulator,
/// seed 6658). But a replacement already on its way there stays: a better cloud usable for one
/// round would otherwise let it go, and the next round launch it again (seeds 4109 and 6755).
pub fn replaces_expired(share: i64, ideal: i64, live: i64) -> bool {
    share <= ideal || live > share
}

/// Each cloud's part of a warm pool of `pool` VMs: where the group's next VMs would go, so that
/// `desired + pool` VMs fill the clouds as `shares` fills them, each within its maximum. A fixed
/// group never grows, so its clouds keep none.
pub fn pools(policy: Policy, desired: i64, pool: i64, views: &[CloudView]) -> Vec<i64> {
    let now = shares(policy, desired, views);
    let prepared = shares(policy, desired + pool.max(0), views);
    prepared
        .iter()
        .zip(&now)
        .map(|(p, n)| (p - n).max(0))
        .collect()
}

pub fn allot(
    policy: Policy,
    desired: i64,
    group_max: i64,
    rebalance: bool,
    views: &[CloudView],
) -> Vec<i64> {
    let ideal = shares(policy, desired, views);
    // What an unanswered launch may have made counts as had, and is no new launch (its retry
    // reuses its token): it is not launched again elsewhere (found by the simulator, seed 1003).
    let had = |v: &CloudView| v.have + v.reserved;
    let have: i64 = views.iter().map(had).sum();
    let target_total: i64 = ideal.iter().sum();
    let mut target = ideal;

    // Launches beyond what the group is short of are moves: hold them to the rebalancing room,
    // from the worst-ranked cloud's launches backwards, or to none without rebalancing.
    let short = (target_total - have).max(0);
    let launches: i64 = views
        .iter()
        .zip(&target)
        .map(|(v, t)| (t - had(v)).max(0))
        .sum();
    // VMs at risk still run: a move's room is what they leave (their own replacements are
    // `short`; found by the simulator, seed 7140: both launched, 5 VMs for 3).
    let running: i64 = have + views.iter().map(|v| v.outgoing).sum::<i64>();
    let room = if rebalance {
        (group_max + (group_max / 10).max(1) - running).max(short)
    } else {
        short
    };
    let mut excess = launches - room.max(0);
    for (i, v) in views.iter().enumerate().rev() {
        if excess <= 0 {
            break;
        }
        let extra = (target[i] - had(v)).max(0);
        let cut = extra.min(excess);
        target[i] -= cut;
        excess -= cut;
    }

    // A cloud over its share lets go only of what the group can spare: the InService VMs beyond
    // `desired`, counting those on the way to cloud shares already; the worst-ranked first.
    let in_service: i64 = views.iter().map(|v| v.in_service).sum();
    let mut spare = (in_service - target_total.min(desired.max(0))).max(0);
    // VMs that are not serving (pending, unhealthy) may go when over the share as far as the
    // group has more VMs than it wants: a pending VM is not given up for a launch elsewhere that
    // has not happened yet (a held cloud's retry would otherwise take it each time).
    let real: i64 = views.iter().map(|v| v.have).sum();
    let mut idle_spare = (real - target_total).max(0);
    for (i, v) in views.iter().enumerate().rev() {
        let surplus = (v.have - target[i]).max(0);
        if surplus == 0 {
            continue;
        }
        let idle = v.have - v.in_service;
        let free = surplus.min(idle.max(0)).min(idle_spare);
        idle_spare -= free;
        let serving = (surplus - free).min(spare);
        spare -= serving;
        target[i] = v.have - free - serving;
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tags(pairs: &[(&'static str, &'static str)]) -> Checked<Option<Spread>> {
        Spread::of_tags(pairs.iter().copied())
    }

    #[test]
    fn a_warm_pool_goes_where_the_next_vms_would() {
        let view = |max, usable| CloudView {
            max,
            have: 0,
            in_service: 0,
            protected: 0,
            usable,
            reserved: 0,
            outgoing: 0,
        };
        let views = [view(2, true), view(10, true)];
        assert_eq!(pools(Policy::Overflow, 1, 3, &views), [1, 2]);
        assert_eq!(pools(Policy::Overflow, 2, 3, &views), [0, 3]);
        assert_eq!(pools(Policy::Overflow, 12, 3, &views), [0, 0]);
        // None on a cloud launches cannot go to.
        assert_eq!(
            pools(Policy::Overflow, 1, 3, &[view(2, false), view(10, true)]),
            [0, 3]
        );
        assert_eq!(pools(Policy::Fixed, 2, 3, &views), [0, 0]);
    }

    #[test]
    fn reads_the_tags() {
        assert_eq!(tags(&[("env", "prod")]).unwrap(), None);
        let s = tags(&[(TAG_CLOUDS, "hotel:4, sierra:10")])
            .unwrap()
            .unwrap();
        assert_eq!(s.policy, Policy::Overflow);
        assert_eq!(
            s.sites,
            vec![
                Site {
                    cloud: "hotel".into(),
                    max: 4
                },
                Site {
                    cloud: "sierra".into(),
                    max: 10
                }
            ]
        );
        assert_eq!(s.total(), 14);
        let s = tags(&[(TAG_CLOUDS, "hotel:2,sierra:3"), (TAG_POLICY, "fixed")])
            .unwrap()
            .unwrap();
        assert_eq!(s.policy, Policy::Fixed);
        assert_eq!(
            crate::on_cloud::launch_configuration("web@hotel", "sierra"),
            "web@sierra"
        );
    }

    #[test]
    fn refuses_what_it_cannot_read_naming_the_tag() {
        for (pairs, says) in [
            (vec![(TAG_CLOUDS, "hotel")], "is not <cloud>:<maximum>"),
            (vec![(TAG_CLOUDS, "hotel:four")], "'four', is not a number"),
            (vec![(TAG_CLOUDS, "hotel:-1")], "negative"),
            (vec![(TAG_CLOUDS, "hotel:1,hotel:2")], "listed twice"),
            (vec![(TAG_CLOUDS, ":3")], "names no cloud"),
            (
                vec![(TAG_CLOUDS, "hotel:1"), (TAG_POLICY, "spread")],
                "is not a policy",
            ),
            (vec![(TAG_POLICY, "fixed")], "needs the clouds"),
        ] {
            let e = tags(&pairs).expect_err(says);
            assert!(matches!(e, Refusal::Invalid(_)));
            assert!(e.message().contains(says), "{}", e.message());
            assert!(e.message().starts_with("Tag phantom:"), "{}", e.message());
        }
    }

    fn view(max: i64, have: i64, in_service: i64, usable: bool) -> CloudView {
        CloudView {
            max,
            have,
            in_service,
            protected: 0,
            usable,
            reserved: 0,
            outgoing: 0,
        }
    }

    #[test]
    fn an_unanswered_launchs_units_stay_with_its_cloud() {
        // Seed 10: the first cloud's launch of 3 lost its answer (it made them), the cloud was
        // held, and the next cloud launched the 3 again: 7 VMs for a MaxSize of 4.
        let held = CloudView {
            reserved: 3,
            ..view(4, 1, 1, false)
        };
        let views = [held.clone(), view(10, 0, 0, true)];
        assert_eq!(allot(Policy::Overflow, 4, 4, true, &views), [4, 0]);
        // Seed 1003: a one-cloud group's launch of 3 lost its answer, and the group was spread
        // with another cloud first: that cloud launches a move's room (one), not the 3 again.
        let lost = CloudView {
            reserved: 3,
            ..view(10, 0, 0, true)
        };
        assert_eq!(
            allot(Policy::Overflow, 3, 3, true, &[view(3, 0, 0, true), lost]),
            [1, 0]
        );
        // Seed 7140: moving 3 VMs to the first cloud while one of them is at risk: the at-risk
        // VM's replacement is due (short one), and the move waits for room.
        let risky = CloudView {
            outgoing: 1,
            ..view(10, 2, 2, true)
        };
        assert_eq!(
            allot(Policy::Overflow, 3, 3, true, &[view(3, 0, 0, true), risky]),
            [1, 2]
        );
        // Past the grace (nothing reserved), the next cloud takes them.
        let views = [
            CloudView {
                reserved: 0,
                outgoing: 0,
                ..held
            },
            view(10, 0, 0, true),
        ];
        assert_eq!(allot(Policy::Overflow, 4, 4, true, &views), [1, 3]);
    }

    #[test]
    fn protected_vms_stay_on_their_cloud_and_count_toward_the_group() {
        // Seed 4 of the simulation: one VM, protected, on the second cloud; the first cloud is
        // not given a VM the protected one could never make room for.
        let protected = CloudView {
            protected: 1,
            ..view(10, 1, 1, true)
        };
        let views = [view(2, 0, 0, true), protected];
        assert_eq!(shares(Policy::Overflow, 1, &views), [0, 1]);
        assert_eq!(allot(Policy::Overflow, 1, 2, true, &views), [0, 1]);
        // The rest of the desired capacity goes by rank.
        assert_eq!(shares(Policy::Overflow, 3, &views), [2, 1]);
        // More protected than desired: all kept.
        let two = CloudView {
            protected: 2,
            ..view(10, 2, 2, true)
        };
        assert_eq!(
            shares(Policy::Overflow, 1, &[view(2, 0, 0, true), two]),
            [0, 2]
        );
    }

    #[test]
    fn a_cloud_is_held_after_failing_and_counted_out_after_the_grace() {
        let h = Hold::default().launched(false, 1_000);
        assert!(!h.usable(2_000));
        assert!(h.usable(3_000), "2 s after the first failure");
        let h = h.launched(false, 3_000);
        assert_eq!(h.retry_at_ms, 7_000);
        let failing = Hold {
            last_error: Some("InsufficientInstanceCapacity".into()),
            ..h
        };
        assert!(failing.launched(true, 8_000).is_clear());
        let down = Hold {
            last_error: Some("CloudUnreachable".into()),
            ..Hold::default()
        }
        .seen(false, 10_000)
        .seen(false, 20_000);
        assert_eq!(down.unreachable_since_ms, Some(10_000));
        assert!(!down.usable(20_000));
        assert!(!down.counted_out(10_000 + UNREACHABLE_GRACE_MS - 1));
        assert!(down.counted_out(10_000 + UNREACHABLE_GRACE_MS));
        assert!(down.seen(true, 50_000).is_clear());
    }

    #[test]
    fn overflow_fills_in_rank_order() {
        let empty = [view(2, 0, 0, true), view(10, 0, 0, true)];
        assert_eq!(allot(Policy::Overflow, 5, 10, true, &empty), vec![2, 3]);
        assert_eq!(allot(Policy::Overflow, 1, 10, true, &empty), vec![1, 0]);
        // More than all maximums: as many as they hold.
        assert_eq!(allot(Policy::Overflow, 20, 20, true, &empty), vec![2, 10]);
    }

    #[test]
    fn a_cloud_that_fails_keeps_what_it_has_and_the_rest_goes_on() {
        let views = [view(4, 1, 1, false), view(10, 0, 0, true)];
        assert_eq!(allot(Policy::Overflow, 5, 10, true, &views), vec![1, 4]);
    }

    #[test]
    fn moving_back_launches_first_and_lets_go_when_they_serve() {
        // hotel works again: launch 2 there, keep sierra's 5 until they serve.
        let views = [view(2, 0, 0, true), view(10, 5, 5, true)];
        assert_eq!(allot(Policy::Overflow, 5, 10, true, &views), vec![2, 5]);
        // hotel's two are pending: still keep sierra's.
        let views = [view(2, 2, 0, true), view(10, 5, 5, true)];
        assert_eq!(allot(Policy::Overflow, 5, 10, true, &views), vec![2, 5]);
        // They serve: sierra gives two up.
        let views = [view(2, 2, 2, true), view(10, 5, 5, true)];
        assert_eq!(allot(Policy::Overflow, 5, 10, true, &views), vec![2, 3]);
    }

    #[test]
    fn pending_vms_are_not_given_up_for_a_launch_that_has_not_happened() {
        // hotel failed and is tried again: sierra's four booting VMs stay until hotel has some.
        let views = [view(10, 0, 0, true), view(10, 4, 0, true)];
        assert_eq!(allot(Policy::Overflow, 4, 10, true, &views), vec![4, 4]);
        // Scale-in lets booting VMs go at once.
        assert_eq!(allot(Policy::Overflow, 2, 10, true, &views), vec![2, 2]);
        let views = [view(10, 0, 0, false), view(10, 4, 0, true)];
        assert_eq!(allot(Policy::Overflow, 2, 10, true, &views), vec![0, 2]);
    }

    #[test]
    fn moving_stays_within_the_rebalancing_room() {
        // desired = max = 5: one VM over (10 %, at least one) at a time.
        let views = [view(2, 0, 0, true), view(10, 5, 5, true)];
        assert_eq!(allot(Policy::Overflow, 5, 5, true, &views), vec![1, 5]);
        // AZRebalance suspended: nothing moves.
        assert_eq!(allot(Policy::Overflow, 5, 10, false, &views), vec![0, 5]);
    }

    #[test]
    fn scale_in_takes_from_the_worst_ranked_cloud_first() {
        let views = [view(2, 2, 2, true), view(10, 3, 3, true)];
        assert_eq!(allot(Policy::Overflow, 3, 10, true, &views), vec![2, 1]);
        assert_eq!(allot(Policy::Overflow, 1, 10, true, &views), vec![1, 0]);
    }

    #[test]
    fn fixed_keeps_each_count() {
        // One short on hotel, one over on sierra: hotel's comes first, sierra's goes when it serves.
        let views = [view(2, 1, 1, true), view(3, 4, 4, true)];
        assert_eq!(allot(Policy::Fixed, 5, 5, true, &views), vec![2, 4]);
        let views = [view(2, 2, 2, true), view(3, 4, 4, true)];
        assert_eq!(allot(Policy::Fixed, 5, 5, true, &views), vec![2, 3]);
    }

    fn views() -> impl Strategy<Value = Vec<CloudView>> {
        prop::collection::vec(
            (0i64..6, 0i64..8, 0i64..8, any::<bool>()).prop_map(|(max, have, serving, usable)| {
                view(max, have, serving.min(have), usable)
            }),
            1..4,
        )
    }

    proptest! {
        #[test]
        fn allotments_keep_their_promises(
            views in views(),
            desired in 0i64..20,
            extra in 0i64..5,
            rebalance in any::<bool>(),
            fixed in any::<bool>(),
        ) {
            let policy = if fixed { Policy::Fixed } else { Policy::Overflow };
            // A fixed group's desired capacity is the sum of its counts (the api keeps it so).
            let desired = if fixed { views.iter().map(|v| v.max).sum() } else { desired };
            let group_max = desired + extra;
            let t = allot(policy, desired, group_max, rebalance, &views);
            prop_assert_eq!(t.len(), views.len());
            let have: i64 = views.iter().map(|v| v.have).sum();
            let total: i64 = t.iter().sum();
            let serving: i64 = views.iter().map(|v| v.in_service).sum();
            for (v, t) in views.iter().zip(&t) {
                prop_assert!(*t >= 0);
                // Nothing launched on a cloud over its maximum, nor on one that cannot take it
                // (overflow), nor on one already over its share.
                if *t > v.have {
                    prop_assert!(*t <= v.max, "{:?} -> {}", v, t);
                    prop_assert!(v.usable || policy == Policy::Fixed);
                }
            }
            // Launches stay within the group's MaxSize and the rebalancing room.
            if total > have {
                prop_assert!(total <= group_max + (group_max / 10).max(1) || total <= desired);
            }
            // Never below desired InService by choice: what is let go of serving VMs is spare.
            let kept_serving: i64 = views
                .iter()
                .zip(&t)
                .map(|(v, t)| v.in_service.min(*t))
                .sum();
            let ideal_total: i64 = shares(policy, desired, &views).iter().sum();
            prop_assert!(kept_serving >= serving.min(desired.min(ideal_total).max(0)),
                "{:?} desired {} -> {:?}", views, desired, t);
        }
    }
}
