//! The provisioning loop in process: converge, replace, scale in by policy, delete, orphans,
//! backoff, duplicates; and what moto cannot give: a lost RunInstances answer, a capacity error.

use crate::{create_group, create_lc, group, Given};
use aws_sdk_autoscaling::types::LifecycleState;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_seams::cloud::memory::Fault;
use phantom_seams::queue::{Reconcile, WorkQueue};

/// The ids of the group's instances that are InService.
pub async fn in_service(w: &World, u: &User, name: &str) -> Vec<String> {
    let Some(g) = group(w, u, name).await else {
        return Vec::new();
    };
    let mut ids: Vec<String> = g
        .instances()
        .iter()
        .filter(|i| i.lifecycle_state() == Some(&LifecycleState::InService))
        .map(|i| i.instance_id().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// Runs until the group has exactly `n` InService instances, each alive on `cloud`, and nothing
/// else of it alive there.
pub async fn converges(w: &World, u: &User, cloud: &str, name: &str, n: usize) -> Vec<String> {
    w.until(
        60,
        &format!("{name} at {n} InService on {cloud}"),
        async || {
            let ids = in_service(w, u, name).await;
            let mut alive = w.cloud(cloud).alive();
            alive.sort();
            (ids.len() == n && ids == alive).then_some(ids)
        },
    )
    .await
}

pub async fn activities(
    w: &World,
    u: &User,
    name: &str,
) -> Vec<aws_sdk_autoscaling::types::Activity> {
    w.sdk(u).activities(name).await.activities().to_vec()
}

#[tokio::test]
async fn a_group_launches_on_its_cloud_and_converges_up_and_down() {
    let Given { w, u, .. } = Given::user("conv").await;
    create_lc(&w, &u, "web@sierra").await;
    create_group(&w, &u, "web", "web@sierra", 0, 10, 3).await;
    converges(&w, &u, "sierra", "web", 3).await;
    assert!(w.hotel.alive().is_empty(), "nothing on the other cloud");
    // A group that names no zone runs in its cloud's default zone.
    assert!(w.sierra.vms().iter().all(|v| v.zone == "us-east-1a"));
    let c = w.sdk(&u);
    for (d, n) in [(6, 6), (2, 2), (0, 0), (1, 1)] {
        c.desire("web", d).await;
        converges(&w, &u, "sierra", "web", n).await;
    }
    assert_eq!(w.sierra.launched_total(), 7, "no VM launched twice");
    let acts = activities(&w, &u, "web").await;
    assert!(acts.iter().any(|a| a
        .cause()
        .unwrap()
        .contains("shrinking the capacity from 6 to 2")));
}

#[tokio::test]
async fn a_vm_that_dies_is_replaced_and_a_stopped_one_too() {
    let (Given { w, u, .. }, before) = Given::converged("heal", 2, 2, 2).await;
    w.hotel.terminate_outside(&before[0]);
    w.hotel.stop_outside(&before[1]);
    let after = w
        .until(30, "both replaced", async || {
            let ids = in_service(&w, &u, "web").await;
            (ids.len() == 2 && !ids.contains(&before[0]) && !ids.contains(&before[1]))
                .then_some(ids)
        })
        .await;
    let alive = w.hotel.alive();
    assert_eq!(alive.len(), 2, "the stopped VM is terminated, not kept");
    assert!(after.iter().all(|id| alive.contains(id)));
    let acts = activities(&w, &u, "web").await;
    assert!(acts
        .iter()
        .any(|a| a.cause().unwrap().contains("EC2 health check")));
}

/// The cloud's list leaves terminated VMs out (EC2 lists them for an hour); a recorded VM missing
/// from it is asked by id, so one ended in its first seconds is seen terminated and replaced at
/// once, not taken for one the list has yet to show (15 s of grace).
#[tokio::test]
async fn a_vm_ended_in_its_first_seconds_is_replaced_at_once() {
    let (Given { w, u, .. }, before) = Given::converged("young", 1, 1, 1).await;
    w.hotel.terminate_outside(&before[0]);
    let after = w
        .until(5, "replaced within the grace", async || {
            let ids = in_service(&w, &u, "web").await;
            (ids.len() == 1 && ids[0] != before[0]).then_some(ids)
        })
        .await;
    assert_ne!(after, before);
    let acts = activities(&w, &u, "web").await;
    let why: Vec<_> = acts.iter().filter_map(|a| a.cause()).collect();
    assert!(
        why.iter().any(|c| c.contains("terminated outside Phantom")),
        "{why:?}"
    );
}

#[tokio::test]
async fn scale_in_keeps_protected_instances_and_follows_the_policy() {
    let Given { w, u, c } = Given::lc("policy").await;
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(0)
        .max_size(5)
        .desired_capacity(1)
        .termination_policies("NewestInstance")
        .send()
        .await
        .unwrap();
    let first = converges(&w, &u, "hotel", "web", 1).await;
    w.clock.advance_ms(60_000);
    c.desire("web", 3).await;
    converges(&w, &u, "hotel", "web", 3).await;
    c.desire("web", 1).await;
    let left = converges(&w, &u, "hotel", "web", 1).await;
    assert_eq!(left, first, "NewestInstance keeps the oldest");
}

#[tokio::test]
async fn deleting_a_group_terminates_its_vms_and_orphans_are_ended() {
    let (Given { w, u, .. }, _) = Given::converged("del", 0, 5, 3).await;
    let orphan = w.hotel.plant(&u.name, "ghost", "no-such-group-id");
    w.sdk(&u).force_delete("web").await;
    w.until(30, "group gone and nothing alive", async || {
        (group(&w, &u, "web").await.is_none() && w.hotel.alive().is_empty()).then_some(())
    })
    .await;
    assert!(!w.hotel.alive().contains(&orphan));
    // The launch configuration is free again.
    w.sdk(&u)
        .delete_launch_configuration()
        .launch_configuration_name("web@hotel")
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_refusing_cloud_gives_failed_activities_with_backoff() {
    let Given { w, u, .. } = Given::user("refuse").await;
    w.sdk(&u)
        .create_launch_configuration()
        .launch_configuration_name("bad@hotel")
        .image_id("ami-00000000")
        .instance_type("t2.micro")
        .send()
        .await
        .unwrap();
    create_group(&w, &u, "web", "bad@hotel", 0, 2, 1).await;
    w.run_for(60).await;
    let failed: Vec<_> = activities(&w, &u, "web")
        .await
        .into_iter()
        .filter(|a| a.status_code().map(|s| s.as_str()) == Some("Failed"))
        .collect();
    // 2 s, 4 s, 8 s, 16 s, 32 s: about 5 tries in a minute, not one a second.
    assert!((4..=7).contains(&failed.len()), "{} tries", failed.len());
    assert!(failed[0]
        .status_message()
        .unwrap()
        .starts_with("InvalidAMIID.NotFound"));
    assert_eq!(w.hotel.run_instances_calls(), failed.len());
}

#[tokio::test]
async fn a_lost_run_instances_answer_launches_nothing_twice() {
    let Given { w, u, .. } = Given::lc("lost").await;
    w.hotel.lose_next_launch_answers(1);
    create_group(&w, &u, "web", "web@hotel", 0, 5, 3).await;
    converges(&w, &u, "hotel", "web", 3).await;
    assert_eq!(
        w.hotel.launched_total(),
        3,
        "the retry got the first call's VMs"
    );
}

#[tokio::test]
async fn a_full_cloud_says_so_and_the_group_fills_when_capacity_returns() {
    let Given { w, u, .. } = Given::lc("full").await;
    w.hotel.set_capacity(2);
    create_group(&w, &u, "web", "web@hotel", 0, 5, 4).await;
    w.run_for(10).await;
    let acts = activities(&w, &u, "web").await;
    assert!(acts.iter().any(|a| a
        .status_message()
        .is_some_and(|m| m.starts_with("InsufficientInstanceCapacity"))));
    w.hotel.set_capacity(100);
    converges(&w, &u, "hotel", "web", 4).await;
}

#[tokio::test]
async fn server_errors_and_throttling_heal() {
    let Given { w, u, .. } = Given::lc("flaky").await;
    w.hotel.fail_next(3, Fault::ServerError);
    create_group(&w, &u, "web", "web@hotel", 0, 5, 2).await;
    converges(&w, &u, "hotel", "web", 2).await;
    w.hotel.fail_next(3, Fault::Throttling);
    w.sdk(&u).desire("web", 4).await;
    converges(&w, &u, "hotel", "web", 4).await;
    w.hotel.set_unreachable(true);
    w.run_for(5).await;
    w.hotel.set_unreachable(false);
    converges(&w, &u, "hotel", "web", 4).await;
    assert_eq!(w.hotel.launched_total(), 4);
}

#[tokio::test]
async fn duplicate_messages_launch_nothing_twice() {
    let Given { w, u, .. } = Given::lc("dup").await;
    w.queue.deliver_each(5);
    create_group(&w, &u, "web", "web@hotel", 0, 5, 3).await;
    for _ in 0..5 {
        let msg = Reconcile::new(&u.name, "web", "duplicate");
        WorkQueue::send(w.queue.as_ref(), &msg.into(), 0)
            .await
            .unwrap();
    }
    converges(&w, &u, "hotel", "web", 3).await;
    assert_eq!(w.hotel.launched_total(), 3);
    let launches = activities(&w, &u, "web")
        .await
        .iter()
        .filter(|a| {
            a.description()
                .unwrap()
                .starts_with("Launching a new EC2 instance:")
        })
        .count();
    assert_eq!(launches, 3, "one launch activity per VM");
}

#[tokio::test]
async fn a_group_in_a_placement_group_launches_there_and_an_unknown_one_fails_in_the_clouds_words()
{
    let Given { w, u, .. } = Given::lc("placed").await;
    w.hotel.add_placement_group("pg-1");
    w.sdk(&u)
        .create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(0)
        .max_size(3)
        .desired_capacity(2)
        .placement_group("pg-1")
        .send()
        .await
        .unwrap();
    let ids = converges(&w, &u, "hotel", "web", 2).await;
    for vm in w.hotel.vms().into_iter().filter(|v| ids.contains(&v.id)) {
        assert_eq!(vm.placement_group.as_deref(), Some("pg-1"));
    }
    assert_eq!(
        group(&w, &u, "web").await.unwrap().placement_group(),
        Some("pg-1")
    );
    // One the cloud does not have: the launch fails in its words, in an activity.
    w.sdk(&u)
        .update("web", |g| g.placement_group("nope").desired_capacity(3))
        .await;
    w.until(30, "a failed launch", async || {
        activities(&w, &u, "web").await.into_iter().find(|a| {
            a.status_code().map(|s| s.as_str()) == Some("Failed")
                && a.status_message()
                    .is_some_and(|m| m.contains("The Placement Group 'nope' is unknown."))
        })
    })
    .await;
}

/// AvailabilityZoneDistribution: under balanced-only a zone without room is asked again and the
/// group waits for it; under balanced-best-effort (AWS's default) its share goes to the group's
/// other zone meanwhile.
#[tokio::test]
async fn a_full_zone_holds_a_balanced_only_group_back_and_a_best_effort_one_launches_elsewhere() {
    use aws_sdk_autoscaling::types::{AvailabilityZoneDistribution, CapacityDistributionStrategy};
    let Given { w, u, .. } = Given::lc("zones").await;
    // The first zone in the group's order: its refusal must not hold back the other's launches.
    w.hotel.zone_full("us-east-1a", true);
    let make = |name: &'static str, strategy: Option<CapacityDistributionStrategy>| {
        w.sdk(&u)
            .create_auto_scaling_group()
            .auto_scaling_group_name(name)
            .launch_configuration_name("web@hotel")
            .availability_zones("us-east-1a")
            .availability_zones("us-east-1b")
            .min_size(0)
            .max_size(4)
            .desired_capacity(4)
            .set_availability_zone_distribution(strategy.map(|s| {
                AvailabilityZoneDistribution::builder()
                    .capacity_distribution_strategy(s)
                    .build()
            }))
            .send()
    };
    make("only", Some(CapacityDistributionStrategy::BalancedOnly))
        .await
        .unwrap();
    // AWS's default, and shown so.
    make("best", None).await.unwrap();
    assert_eq!(
        group(&w, &u, "best")
            .await
            .unwrap()
            .availability_zone_distribution()
            .and_then(|d| d.capacity_distribution_strategy()),
        Some(&CapacityDistributionStrategy::BalancedBestEffort)
    );
    w.run_for(30).await;
    let zones_of = async |name: &str| -> Vec<String> {
        let g = group(&w, &u, name).await.expect("the group");
        g.instances()
            .iter()
            .filter_map(|i| i.availability_zone().map(str::to_string))
            .collect()
    };
    assert_eq!(
        zones_of("only").await,
        ["us-east-1b"; 2],
        "b has its share; a is asked again"
    );
    assert_eq!(
        zones_of("best").await,
        ["us-east-1b"; 4],
        "a's share went to b"
    );
    let best = group(&w, &u, "best").await.unwrap();
    assert_eq!(
        best.availability_zone_distribution()
            .and_then(|d| d.capacity_distribution_strategy()),
        Some(&CapacityDistributionStrategy::BalancedBestEffort)
    );
    // Room again: the balanced-only group fills its zone.
    w.hotel.zone_full("us-east-1a", false);
    w.run_for(70).await;
    let mut zones = zones_of("only").await;
    zones.sort();
    assert_eq!(
        zones,
        ["us-east-1a", "us-east-1a", "us-east-1b", "us-east-1b"]
    );
}

/// AvailabilityZoneIds: named by the group's cloud (DescribeAvailabilityZones), the group
/// launches into those zones and shows both; an id the cloud does not have, or ids beside names,
/// are refused; AvailabilityZones given later replace them; LaunchInstances takes them too.
#[tokio::test]
async fn a_group_given_zone_ids_launches_in_the_zones_its_cloud_names() {
    let Given { w, u, c } = Given::lc("zone-ids").await;
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .availability_zone_ids("az2")
        .min_size(0)
        .max_size(4)
        .desired_capacity(2)
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.availability_zones(), ["us-east-1b"]);
    assert_eq!(g.availability_zone_ids(), ["az2"]);
    let ids = converges(&w, &u, "hotel", "web", 2).await;
    for vm in w.hotel.vms().into_iter().filter(|v| ids.contains(&v.id)) {
        assert_eq!(vm.zone, "us-east-1b");
    }
    // LaunchInstances into a zone by its id.
    let (answer, ()) = tokio::join!(
        c.launch_instances()
            .auto_scaling_group_name("web")
            .requested_capacity(1)
            .client_token("z-1")
            .availability_zone_ids("az2")
            .send(),
        w.run_for(3)
    );
    let answer = answer.unwrap();
    assert_eq!(
        answer.instances()[0].availability_zone(),
        Some("us-east-1b")
    );
    // Refused: an id the cloud does not have, ids beside names; nothing written.
    let e = crate::invalid(
        c.update_auto_scaling_group()
            .auto_scaling_group_name("web")
            .availability_zone_ids("az9")
            .send()
            .await,
    );
    assert_eq!(e, "The availability zone ID 'az9' does not exist");
    let e = crate::invalid(
        c.update_auto_scaling_group()
            .auto_scaling_group_name("web")
            .availability_zone_ids("az1")
            .availability_zones("us-east-1a")
            .send()
            .await,
    );
    assert!(
        e.contains("both AvailabilityZones and AvailabilityZoneIds"),
        "{e}"
    );
    assert_eq!(
        group(&w, &u, "web").await.unwrap().availability_zone_ids(),
        ["az2"]
    );
    // Zones by name replace the ids.
    c.update("web", |g| g.availability_zones("us-east-1a"))
        .await;
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.availability_zones(), ["us-east-1a"]);
    assert!(g.availability_zone_ids().is_empty());
}

/// CapacityReservationSpecification: capacity-reservations-only launches each on-demand VM into
/// a reservation the group targets in its zone and fails, in the cloud's words, where none has
/// room; capacity-reservations-first launches on-demand then; reservations the cloud does not
/// have, resource groups, and targets without a reservation preference are refused.
#[tokio::test]
async fn on_demand_vms_launch_into_the_capacity_reservations_the_group_targets() {
    use aws_sdk_autoscaling::types::{
        CapacityReservationPreference, CapacityReservationSpecification, CapacityReservationTarget,
    };
    let Given { w, u, c } = Given::lc("reserved").await;
    w.hotel.add_capacity_reservation("cr-a", "us-east-1a", 2);
    w.hotel.add_capacity_reservation("cr-b", "us-east-1b", 1);
    let spec = |preference: CapacityReservationPreference, ids: &[&str]| {
        let mut target = CapacityReservationTarget::builder();
        for id in ids {
            target = target.capacity_reservation_ids(*id);
        }
        CapacityReservationSpecification::builder()
            .capacity_reservation_preference(preference)
            .capacity_reservation_target(target.build())
            .build()
    };
    let only = spec(
        CapacityReservationPreference::CapacityReservationsOnly,
        &["cr-a", "cr-b"],
    );
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .availability_zones("us-east-1a")
        .availability_zones("us-east-1b")
        .min_size(0)
        .max_size(5)
        .desired_capacity(3)
        .capacity_reservation_specification(only.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(
        group(&w, &u, "web")
            .await
            .unwrap()
            .capacity_reservation_specification(),
        Some(&only),
        "shown as given"
    );
    let ids = converges(&w, &u, "hotel", "web", 3).await;
    let mut into: Vec<(String, String)> = w
        .hotel
        .vms()
        .into_iter()
        .filter(|v| ids.contains(&v.id))
        .map(|v| (v.zone, v.capacity_reservation.unwrap_or_default()))
        .collect();
    into.sort();
    assert_eq!(
        into,
        [
            ("us-east-1a".to_string(), "cr-a".to_string()),
            ("us-east-1a".to_string(), "cr-a".to_string()),
            ("us-east-1b".to_string(), "cr-b".to_string()),
        ]
    );
    // No room left: the fourth fails in the cloud's words.
    c.desire("web", 4).await;
    w.until(30, "a failed launch", async || {
        activities(&w, &u, "web").await.into_iter().find(|a| {
            a.status_code().map(|s| s.as_str()) == Some("Failed")
                && a.status_message()
                    .is_some_and(|m| m.contains("ReservationCapacityExceeded"))
        })
    })
    .await;
    assert_eq!(w.hotel.alive().len(), 3);
    // capacity-reservations-first: on-demand once the reservations are full.
    c.update("web", |g| {
        g.capacity_reservation_specification(spec(
            CapacityReservationPreference::CapacityReservationsFirst,
            &["cr-a", "cr-b"],
        ))
    })
    .await;
    let four = converges(&w, &u, "hotel", "web", 4).await;
    let outside = w
        .hotel
        .vms()
        .into_iter()
        .filter(|v| four.contains(&v.id) && v.capacity_reservation.is_none())
        .count();
    assert_eq!(outside, 1);
    // Refused, nothing written.
    for (bad, words) in [
        (
            spec(
                CapacityReservationPreference::CapacityReservationsOnly,
                &["cr-zzz"],
            ),
            "cr-zzz",
        ),
        (
            spec(CapacityReservationPreference::None, &["cr-a"]),
            "needs the CapacityReservationPreference",
        ),
        (
            CapacityReservationSpecification::builder()
                .capacity_reservation_preference(
                    CapacityReservationPreference::CapacityReservationsFirst,
                )
                .capacity_reservation_target(
                    CapacityReservationTarget::builder()
                        .capacity_reservation_resource_group_arns("arn:aws:resource-groups:x")
                        .build(),
                )
                .build(),
            "no resource groups",
        ),
    ] {
        let e = crate::invalid(
            c.update_auto_scaling_group()
                .auto_scaling_group_name("web")
                .capacity_reservation_specification(bad)
                .send()
                .await,
        );
        assert!(e.contains(words), "{e}");
    }
}

#[tokio::test]
async fn a_group_on_subnets_launches_only_into_those_in_its_reservations_zones() {
    use aws_sdk_autoscaling::types::{
        CapacityReservationPreference, CapacityReservationSpecification, CapacityReservationTarget,
    };
    let Given { w, u, c } = Given::lc("reserved-subnets").await;
    w.hotel.add_capacity_reservation("cr-a", "us-east-1a", 3);
    let only = CapacityReservationSpecification::builder()
        .capacity_reservation_preference(CapacityReservationPreference::CapacityReservationsOnly)
        .capacity_reservation_target(
            CapacityReservationTarget::builder()
                .capacity_reservation_ids("cr-a")
                .build(),
        )
        .build();
    // Only the other subnet's zone: it could launch nothing, refused, nothing written.
    let e = crate::invalid(
        c.create_auto_scaling_group()
            .auto_scaling_group_name("web")
            .launch_configuration_name("web@hotel")
            .vpc_zone_identifier("subnet-us-east-1b")
            .min_size(0)
            .max_size(3)
            .capacity_reservation_specification(only.clone())
            .send()
            .await,
    );
    assert!(e.contains("subnet-us-east-1b"), "{e}");
    assert!(group(&w, &u, "web").await.is_none());
    // Two subnets, one in the reservation's zone: both VMs go there, none tried in the other.
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .vpc_zone_identifier("subnet-us-east-1a,subnet-us-east-1b")
        .min_size(0)
        .max_size(3)
        .desired_capacity(2)
        .capacity_reservation_specification(only)
        .send()
        .await
        .unwrap();
    let ids = converges(&w, &u, "hotel", "web", 2).await;
    let into: Vec<(Option<String>, Option<String>)> = w
        .hotel
        .vms()
        .into_iter()
        .filter(|v| ids.contains(&v.id))
        .map(|v| (v.subnet, v.capacity_reservation))
        .collect();
    let there = (
        Some("subnet-us-east-1a".to_string()),
        Some("cr-a".to_string()),
    );
    assert_eq!(into, [there.clone(), there]);
    let acts = activities(&w, &u, "web").await;
    let failed: Vec<_> = acts
        .iter()
        .filter(|a| a.status_code().map(|s| s.as_str()) == Some("Failed"))
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    // Each launch's Details name its subnet and zone, as AWS's do.
    let details: Vec<_> = acts
        .iter()
        .filter(|a| a.description().is_some_and(|d| d.starts_with("Launching")))
        .map(|a| a.details().unwrap_or_default())
        .collect();
    assert_eq!(
        details,
        [r#"{"Subnet ID":"subnet-us-east-1a","Availability Zone":"us-east-1a"}"#; 2]
    );
}
