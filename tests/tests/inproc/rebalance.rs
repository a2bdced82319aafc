//! CapacityRebalance: a spot VM its cloud says is at risk (EC2's rebalance recommendation, or the
//! interruption warning) is replaced launch-first, on its cloud or, across clouds, on the next
//! that has spot; it leaves through the group's termination hooks only once its replacement
//! serves. Without CapacityRebalance the signal changes nothing.

use crate::hooks::in_state;
use crate::provisioning::{activities, converges, in_service};
use crate::spot::{fleet_across, of, split, split_of};
use crate::Given;
use aws_sdk_autoscaling::types::LifecycleState;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::{mixed_policy, World, IMAGE};
use phantom_e2e::User;
use phantom_model::instance::Market;
use std::time::Duration;

/// Group `fleet` on sierra, all spot, at its maximum of `desired`.
async fn all_spot(w: &World, u: &User, desired: i32, capacity_rebalance: bool) {
    w.sierra.add_template("fleet", IMAGE, "t2.micro");
    w.sdk(u)
        .create_auto_scaling_group()
        .auto_scaling_group_name("fleet")
        .mixed_instances_policy(mixed_policy(
            "fleet@sierra",
            None,
            &["t2.micro", "t2.small"],
            split(0, 0, "capacity-optimized"),
        ))
        .min_size(0)
        .max_size(desired)
        .desired_capacity(desired)
        .capacity_rebalance(capacity_rebalance)
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn an_at_risk_vm_is_replaced_launch_first_and_leaves_through_its_termination_hook() {
    let Given { w, u, .. } = Given::user("rebalance").await;
    all_spot(&w, &u, 3, true).await;
    let before = converges(&w, &u, "sierra", "fleet", 3).await;
    let c = w.sdk(&u);
    let g = crate::group(&w, &u, "fleet").await.unwrap();
    assert_eq!(g.capacity_rebalance(), Some(true));
    c.put_lifecycle_hook()
        .auto_scaling_group_name("fleet")
        .lifecycle_hook_name("drain")
        .lifecycle_transition("autoscaling:EC2_INSTANCE_TERMINATING")
        .heartbeat_timeout(300)
        .send()
        .await
        .unwrap();
    w.sierra.set_boot_time(Duration::from_secs(20));

    let risky = before[0].clone();
    w.sierra.recommend_rebalance(&risky);
    // The interruption warning that follows marks nothing more.
    w.sierra.warn_interruption(&risky);
    assert_eq!(w.deliver_events(&w.sierra).await, 2);
    // A replacement launches above the maximum of 3 (its headroom is one VM); the at-risk VM
    // serves, with the other two, all the while it boots.
    let replacement = w
        .until(10, "a replacement launched", async || {
            let alive = w.sierra.alive();
            (alive.len() == 4).then(|| alive.into_iter().find(|id| !before.contains(id)))?
        })
        .await;
    w.until(60, "the replacement InService", async || {
        let serving = in_service(&w, &u, "fleet").await;
        assert!(serving.len() >= 3, "the group kept 3 serving: {serving:?}");
        serving.contains(&replacement).then_some(())
    })
    .await;
    // Then the at-risk VM leaves, through the group's termination hook.
    let waiting = w
        .until(10, "the at-risk VM in Terminating:Wait", async || {
            let ids = in_state(&w, &u, "fleet", LifecycleState::TerminatingWait).await;
            (!ids.is_empty()).then_some(ids)
        })
        .await;
    assert_eq!(waiting, vec![risky.clone()]);
    assert_eq!(in_service(&w, &u, "fleet").await.len(), 3);
    c.complete_lifecycle_action()
        .auto_scaling_group_name("fleet")
        .lifecycle_hook_name("drain")
        .instance_id(&risky)
        .lifecycle_action_result("CONTINUE")
        .send()
        .await
        .unwrap();
    let after = converges(&w, &u, "sierra", "fleet", 3).await;
    assert!(!after.contains(&risky) && after.contains(&replacement));
    assert_eq!(of(&w.sierra.vms(), Market::Spot).len(), 3);
    let acts = activities(&w, &u, "fleet").await;
    assert!(
        acts.iter().any(
            |a| a.description() == Some(&format!("Terminating EC2 instance: {risky}"))
                && a.cause().is_some_and(
                    |c| c.contains("in response to an EC2 instance rebalance recommendation")
                )
        ),
        "{acts:?}"
    );
    assert_eq!(
        w.sierra.launched_total(),
        4,
        "one replacement, launched once"
    );
}

#[tokio::test]
async fn without_capacity_rebalance_a_signal_changes_nothing_and_the_lost_vm_is_replaced() {
    let Given { w, u, .. } = Given::user("norebalance").await;
    all_spot(&w, &u, 3, false).await;
    let before = converges(&w, &u, "sierra", "fleet", 3).await;
    w.sierra.recommend_rebalance(&before[0]);
    assert_eq!(w.deliver_events(&w.sierra).await, 1);
    w.run_for(10).await;
    assert_eq!(w.sierra.launched_total(), 3, "nothing launched ahead");
    // The cloud takes it back: replaced as any dead VM is.
    w.sierra.terminate_outside(&before[0]);
    w.deliver_events(&w.sierra).await;
    let after = converges(&w, &u, "sierra", "fleet", 3).await;
    assert!(!after.contains(&before[0]));
    assert_eq!(w.sierra.launched_total(), 4);
}

#[tokio::test]
async fn an_interruption_storm_on_one_cloud_moves_the_group_to_the_next_before_it_hits() {
    let Given { w, u, .. } = Given::user("storm").await;
    fleet_across(&w, &u, 10, split(0, 0, "capacity-optimized"), 4).await;
    w.sdk(&u)
        .update("fleet", |g| g.capacity_rebalance(true))
        .await;
    let hotel = converges(&w, &u, "hotel", "fleet", 4).await;
    assert_eq!(split_of(&w), (0, 4));

    // Hotel's spot capacity goes: no spot to be had there, and a warning for each VM. Sierra's
    // VMs take 20 s to boot.
    w.sierra.set_boot_time(Duration::from_secs(20));
    w.hotel.spot_short_of("t2.micro", true);
    w.hotel.spot_short_of("t2.small", true);
    for id in &hotel {
        w.hotel.warn_interruption(id);
    }
    assert_eq!(w.deliver_events(&w.hotel).await, 4);
    // Within the two minutes of the warning: four spot VMs serve on sierra, hotel's have left,
    // and the group never served fewer than four.
    w.until(
        100,
        "4 spot VMs serving on sierra, none on hotel",
        async || {
            let serving = in_service(&w, &u, "fleet").await;
            assert!(serving.len() >= 4, "the group kept 4 serving: {serving:?}");
            (w.sierra.alive().len() == 4 && w.hotel.alive().is_empty()).then_some(())
        },
    )
    .await;
    assert_eq!(of(&w.sierra.vms(), Market::Spot).len(), 4);
    // The storm hits what is left: nothing.
    for id in &hotel {
        w.hotel.terminate_outside(id);
    }
    w.deliver_events(&w.hotel).await;
    w.run_for(5).await;
    assert_eq!(in_service(&w, &u, "fleet").await.len(), 4);
    assert_eq!(w.sierra.launched_total(), 4, "no VM launched twice");
}
