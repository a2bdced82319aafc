//! Warm pools through aws-sdk-autoscaling, with the provisioner's rounds doing the work: a pool
//! filled with stopped VMs, scale-out started from it, ReuseOnScaleIn, a running pool, deletion
//! (drained, forced), AWS's errors, and a provisioner killed at every step of a pool round.

use crate::provisioning::{activities, converges};
use crate::{create_group, create_lc, failure, group, invalid, Given};
use aws_sdk_autoscaling::types::{InstanceReusePolicy, LifecycleState, WarmPoolState};
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_rules::reconcile::CloudState;
use phantom_seams::queue::Reconcile;
use std::collections::BTreeSet;

/// The pool's VMs as (id, lifecycle state), by id.
async fn pool(w: &World, u: &User, name: &str) -> Vec<(String, LifecycleState)> {
    w.sdk(u)
        .warm_pool(name)
        .await
        .instances()
        .iter()
        .map(|i| {
            (
                i.instance_id().unwrap().to_string(),
                i.lifecycle_state().unwrap().clone(),
            )
        })
        .collect()
}

/// Waits until the pool holds `n` VMs, all in `state`; returns their ids.
async fn pool_at(w: &World, u: &User, n: usize, state: LifecycleState) -> Vec<String> {
    w.until(60, &format!("{n} VMs {state:?} in the pool"), async || {
        let p = pool(w, u, "web").await;
        (p.len() == n && p.iter().all(|(_, s)| *s == state))
            .then(|| p.into_iter().map(|(id, _)| id).collect())
    })
    .await
}

async fn put_pool(w: &World, u: &User, state: WarmPoolState, reuse: bool) {
    w.sdk(u)
        .put_warm_pool()
        .auto_scaling_group_name("web")
        .pool_state(state)
        .instance_reuse_policy(
            InstanceReusePolicy::builder()
                .reuse_on_scale_in(reuse)
                .build(),
        )
        .send()
        .await
        .expect("put-warm-pool");
}

/// A group `web` of `desired` InService VMs (MaxSize `max`) from `web@hotel`, then a pool put
/// in `state`; returns the pool's VMs once they are ready (MaxSize less desired of them).
async fn pooled(
    w: &World,
    u: &User,
    max: i32,
    desired: i32,
    state: WarmPoolState,
    reuse: bool,
) -> Vec<String> {
    create_lc(w, u, "web@hotel").await;
    create_group(w, u, "web", "web@hotel", 0, max, desired).await;
    converges(w, u, "hotel", "web", desired as usize).await;
    put_pool(w, u, state.clone(), reuse).await;
    let ready = match state {
        WarmPoolState::Running => LifecycleState::WarmedRunning,
        WarmPoolState::Hibernated => LifecycleState::WarmedHibernated,
        _ => LifecycleState::WarmedStopped,
    };
    pool_at(w, u, (max - desired) as usize, ready).await
}

async fn set_desired(w: &World, u: &User, n: i32) {
    w.sdk(u).desire("web", n).await;
}

fn stopped_on_cloud(w: &World) -> BTreeSet<String> {
    w.hotel
        .vms()
        .into_iter()
        .filter(|v| v.state == CloudState::Stopped)
        .map(|v| v.id)
        .collect()
}

fn descriptions(a: &[aws_sdk_autoscaling::types::Activity], prefix: &str) -> usize {
    a.iter()
        .filter(|a| a.description().unwrap_or_default().starts_with(prefix))
        .count()
}

#[tokio::test]
async fn a_warm_pool_keeps_stopped_vms_that_scale_out_starts() {
    let Given { w, u, .. } = Given::user("warm").await;
    // MaxSize 5, desired 1: four VMs wait, stopped, beside the group.
    let warm = pooled(&w, &u, 5, 1, WarmPoolState::Stopped, false).await;
    assert_eq!(stopped_on_cloud(&w), warm.iter().cloned().collect());
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.warm_pool_size(), Some(4));
    assert_eq!(g.instances().len(), 1, "the pool's VMs are not the group's");
    let c = g
        .warm_pool_configuration()
        .expect("the pool's configuration");
    assert_eq!(c.pool_state(), Some(&WarmPoolState::Stopped));
    assert_eq!(c.min_size(), Some(0));
    assert_eq!(c.max_group_prepared_capacity(), None);
    assert_eq!(w.hotel.launched_total(), 5);

    // Scale-out starts two of them: nothing new is launched.
    set_desired(&w, &u, 3).await;
    let now = converges(&w, &u, "hotel", "web", 3).await;
    let joined: Vec<&String> = now.iter().filter(|id| warm.contains(id)).collect();
    assert_eq!(joined.len(), 2, "two VMs came from the pool");
    assert_eq!(w.hotel.launched_total(), 5);
    pool_at(&w, &u, 2, LifecycleState::WarmedStopped).await;
    let a = activities(&w, &u, "web").await;
    assert_eq!(
        descriptions(&a, "Launching a new EC2 instance from warm pool: "),
        2
    );
    assert_eq!(
        descriptions(&a, "Launching a new EC2 instance into warm pool: "),
        4
    );

    // Scale-in without reuse terminates; the pool grows back to four with new VMs.
    set_desired(&w, &u, 1).await;
    converges(&w, &u, "hotel", "web", 1).await;
    pool_at(&w, &u, 4, LifecycleState::WarmedStopped).await;
    assert_eq!(w.hotel.launched_total(), 7);
}

#[tokio::test]
async fn reuse_on_scale_in_returns_vms_to_the_pool() {
    let Given { w, u, .. } = Given::user("warm-reuse").await;
    pooled(&w, &u, 4, 3, WarmPoolState::Stopped, true).await;
    let serving = converges(&w, &u, "hotel", "web", 3).await;
    set_desired(&w, &u, 1).await;
    let left = converges(&w, &u, "hotel", "web", 1).await;
    let warm = pool_at(&w, &u, 3, LifecycleState::WarmedStopped).await;
    let returned: Vec<&String> = serving.iter().filter(|id| !left.contains(id)).collect();
    assert!(
        returned.iter().all(|id| warm.contains(id)),
        "{returned:?} back in {warm:?}"
    );
    assert_eq!(
        w.hotel.launched_total(),
        4,
        "nothing terminated, nothing new"
    );
    let a = activities(&w, &u, "web").await;
    assert_eq!(descriptions(&a, "Moving EC2 instance to warm pool: "), 2);
}

#[tokio::test]
async fn a_running_pool_keeps_its_vms_running_and_a_changed_state_is_acted_on() {
    let Given { w, u, .. } = Given::user("warm-running").await;
    let warm = pooled(&w, &u, 3, 1, WarmPoolState::Running, false).await;
    assert!(stopped_on_cloud(&w).is_empty());
    // Stopped now: the same VMs are stopped, not replaced.
    put_pool(&w, &u, WarmPoolState::Stopped, false).await;
    assert_eq!(
        pool_at(&w, &u, 2, LifecycleState::WarmedStopped).await,
        warm
    );
    assert_eq!(stopped_on_cloud(&w), warm.iter().cloned().collect());
    // Hibernated: shown so (the cloud is asked to hibernate them on the next stop).
    put_pool(&w, &u, WarmPoolState::Hibernated, false).await;
    assert_eq!(
        pool_at(&w, &u, 2, LifecycleState::WarmedHibernated).await,
        warm
    );
}

#[tokio::test]
async fn a_deleted_pool_drains_then_goes_and_a_forced_delete_goes_at_once() {
    let Given { w, u, .. } = Given::user("warm-delete").await;
    pooled(&w, &u, 3, 1, WarmPoolState::Stopped, false).await;
    let c = w.sdk(&u);
    c.delete_warm_pool()
        .auto_scaling_group_name("web")
        .send()
        .await
        .expect("delete-warm-pool");
    let d = c.warm_pool("web").await;
    assert_eq!(
        d.warm_pool_configuration()
            .and_then(|c| c.status())
            .map(|s| s.as_str()),
        Some("PendingDelete")
    );
    w.until(60, "the pool gone", async || {
        let g = group(&w, &u, "web").await.unwrap();
        g.warm_pool_configuration().is_none().then_some(())
    })
    .await;
    assert!(pool(&w, &u, "web").await.is_empty());
    assert!(stopped_on_cloud(&w).is_empty(), "its VMs terminated");
    assert_eq!(w.hotel.alive().len(), 1, "the group's VM stays");
    let message = invalid(
        c.delete_warm_pool()
            .auto_scaling_group_name("web")
            .send()
            .await,
    );
    assert!(message.contains("No warm pool found"), "{message}");

    // Forced: the configuration goes at once, its VMs with the next rounds.
    put_pool(&w, &u, WarmPoolState::Stopped, false).await;
    pool_at(&w, &u, 2, LifecycleState::WarmedStopped).await;
    c.delete_warm_pool()
        .auto_scaling_group_name("web")
        .force_delete(true)
        .send()
        .await
        .unwrap();
    assert!(group(&w, &u, "web")
        .await
        .unwrap()
        .warm_pool_configuration()
        .is_none());
    w.until(60, "the pool's VMs gone", async || {
        (pool(&w, &u, "web").await.is_empty() && stopped_on_cloud(&w).is_empty()).then_some(())
    })
    .await;
}

#[tokio::test]
async fn warm_pool_mistakes_get_aws_errors() {
    let Given { w, u, .. } = Given::group("warm-errors", 0, 3, 1).await;
    let c = w.sdk(&u);
    let message = invalid(
        c.put_warm_pool()
            .auto_scaling_group_name("nope")
            .send()
            .await,
    );
    assert!(message.contains("not found"), "{message}");
    for (max, min) in [(-2, 0), (1, 2)] {
        let (code, _) = failure(
            c.put_warm_pool()
                .auto_scaling_group_name("web")
                .max_group_prepared_capacity(max)
                .min_size(min)
                .send()
                .await,
        );
        assert_eq!(code, "ValidationError", "max {max} min {min}");
    }
    // A group without a pool describes none.
    let d = c.warm_pool("web").await;
    assert!(d.warm_pool_configuration().is_none() && d.instances().is_empty());
    // The pool's VMs are not the group's to move one by one.
    converges(&w, &u, "hotel", "web", 1).await;
    put_pool(&w, &u, WarmPoolState::Stopped, false).await;
    let warm = pool_at(&w, &u, 2, LifecycleState::WarmedStopped).await;
    let (code, message) = failure(
        c.terminate_instance_in_auto_scaling_group()
            .instance_id(&warm[0])
            .should_decrement_desired_capacity(false)
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    assert!(message.contains("warm pool"), "{message}");
    invalid(
        c.enter_standby()
            .auto_scaling_group_name("web")
            .instance_ids(&warm[0])
            .should_decrement_desired_capacity(false)
            .send()
            .await,
    );
}

#[tokio::test]
async fn a_warm_vm_that_dies_is_replaced_in_the_pool() {
    let Given { w, u, .. } = Given::user("warm-dies").await;
    let warm = pooled(&w, &u, 3, 1, WarmPoolState::Stopped, false).await;
    w.hotel.terminate_outside(&warm[0]);
    w.until(60, "a new VM in its place", async || {
        let now = pool(&w, &u, "web").await;
        (now.len() == 2
            && !now.iter().any(|(id, _)| *id == warm[0])
            && now.iter().all(|(_, s)| *s == LifecycleState::WarmedStopped))
        .then_some(())
    })
    .await;
    assert_eq!(w.hotel.launched_total(), 4);
}

#[tokio::test]
async fn a_crash_at_any_step_of_a_warm_pool_round_converges() {
    for k in 1.. {
        let Given { w, u, .. } = Given::user("warm-crash").await;
        pooled(&w, &u, 4, 1, WarmPoolState::Stopped, false).await;
        // One round that takes two from the pool and launches one more (desired 3 of max 4,
        // with the pool's MinSize 2), crashed at step k.
        w.sdk(&u)
            .put_warm_pool()
            .auto_scaling_group_name("web")
            .min_size(2)
            .send()
            .await
            .unwrap();
        set_desired(&w, &u, 3).await;
        w.queue.purge();
        let crashed = w
            .reconcile_crashing_at(&Reconcile::new(&u.name, "web", "crash test"), k)
            .await;
        w.clock.advance_ms(provisioner::LEASE_MS + 1_000);
        converges(&w, &u, "hotel", "web", 3).await;
        pool_at(&w, &u, 2, LifecycleState::WarmedStopped).await;
        // One VM for the group, three for the pool, then one more for it: none twice.
        assert_eq!(w.hotel.launched_total(), 5, "crash at step {k}");
        if !crashed {
            assert!(k > 3, "the pool round took only {k} steps");
            return;
        }
    }
}

/// The VMs of `cloud` in `state`.
fn on_cloud(w: &World, cloud: &str, state: CloudState) -> usize {
    w.cloud(cloud)
        .vms()
        .iter()
        .filter(|v| v.state == state)
        .count()
}

#[tokio::test]
async fn across_clouds_the_pool_waits_where_the_next_vms_go() {
    let Given { w, u, .. } = Given::user("warm-across").await;
    // hotel holds 2, sierra 10; MaxSize 4, desired 1: the group's VM on hotel, a pool of 3.
    crate::refresh::across(&w, &u, "hotel:2,sierra:10", 4, 1).await;
    converges(&w, &u, "hotel", "web", 1).await;
    put_pool(&w, &u, WarmPoolState::Stopped, false).await;
    pool_at(&w, &u, 3, LifecycleState::WarmedStopped).await;
    // Where VMs 2 to 4 would go: one more on hotel (its maximum), two on sierra.
    assert_eq!(on_cloud(&w, "hotel", CloudState::Stopped), 1);
    assert_eq!(on_cloud(&w, "sierra", CloudState::Stopped), 2);
    set_desired(&w, &u, 3).await;
    w.until(60, "3 InService, 2 on hotel", async || {
        let g = group(&w, &u, "web").await.unwrap();
        let serving = g
            .instances()
            .iter()
            .filter(|i| i.lifecycle_state() == Some(&LifecycleState::InService))
            .count();
        (serving == 3 && on_cloud(&w, "hotel", CloudState::Running) == 2).then_some(())
    })
    .await;
    pool_at(&w, &u, 1, LifecycleState::WarmedStopped).await;
    assert_eq!(on_cloud(&w, "sierra", CloudState::Stopped), 1);
    assert_eq!(
        w.hotel.launched_total() + w.sierra.launched_total(),
        4,
        "the two new VMs came from the pool"
    );

    // A refresh to web2@<cloud> replaces the pool's VM too.
    w.sdk(&u)
        .update("web", |g| g.launch_configuration_name("web2@hotel"))
        .await;
    w.sdk(&u)
        .start_instance_refresh()
        .auto_scaling_group_name("web")
        .preferences(
            aws_sdk_autoscaling::types::RefreshPreferences::builder()
                .min_healthy_percentage(50)
                .instance_warmup(0)
                .build(),
        )
        .send()
        .await
        .expect("start-instance-refresh");
    w.until(120, "the pool's VM from web2@sierra", async || {
        let p = w.sdk(&u).warm_pool("web").await;
        let is = p.instances();
        (is.len() == 1
            && is[0].lifecycle_state() == Some(&LifecycleState::WarmedStopped)
            && is[0].launch_configuration_name() == Some("web2@sierra"))
        .then_some(())
    })
    .await;

    // Deleted: drained on both clouds, then gone.
    w.sdk(&u)
        .delete_warm_pool()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    w.until(60, "the pool gone from both clouds", async || {
        let g = group(&w, &u, "web").await.unwrap();
        (g.warm_pool_configuration().is_none()
            && on_cloud(&w, "hotel", CloudState::Stopped) == 0
            && on_cloud(&w, "sierra", CloudState::Stopped) == 0)
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_fixed_group_across_clouds_keeps_no_pool() {
    let Given { w, u, .. } = Given::user("warm-fixed").await;
    crate::refresh::across(&w, &u, "hotel:1,sierra:1", 4, 2).await;
    w.sdk(&u)
        .create_or_update_tags()
        .tags(
            aws_sdk_autoscaling::types::Tag::builder()
                .resource_id("web")
                .resource_type("auto-scaling-group")
                .key("phantom:policy")
                .value("fixed")
                .propagate_at_launch(false)
                .build(),
        )
        .send()
        .await
        .expect("create-or-update-tags");
    let message = invalid(
        w.sdk(&u)
            .put_warm_pool()
            .auto_scaling_group_name("web")
            .send()
            .await,
    );
    assert!(message.contains("fixed"), "{message}");
}

#[tokio::test]
async fn launch_hooks_hold_vms_entering_the_pool_and_leaving_it() {
    let (Given { w, u, .. }, _) = Given::converged("warm-hooks", 0, 2, 1).await;
    let c = w.sdk(&u);
    c.put_lifecycle_hook()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("init")
        .lifecycle_transition("autoscaling:EC2_INSTANCE_LAUNCHING")
        .heartbeat_timeout(600)
        .send()
        .await
        .expect("put-lifecycle-hook");
    put_pool(&w, &u, WarmPoolState::Stopped, false).await;
    // Held running (to initialise) until the hook is completed, then stopped.
    let held = pool_at(&w, &u, 1, LifecycleState::WarmedPendingWait).await;
    w.run_for(5).await;
    assert_eq!(
        pool(&w, &u, "web").await[0].1,
        LifecycleState::WarmedPendingWait
    );
    assert!(
        w.hotel.alive().contains(&held[0]),
        "left running while held"
    );
    let complete = async |id: &str| {
        c.complete_lifecycle_action()
            .auto_scaling_group_name("web")
            .lifecycle_hook_name("init")
            .instance_id(id)
            .lifecycle_action_result("CONTINUE")
            .send()
            .await
            .expect("complete-lifecycle-action");
    };
    complete(&held[0]).await;
    assert_eq!(
        pool_at(&w, &u, 1, LifecycleState::WarmedStopped).await,
        held
    );
    // Joining the group, it waits on the hook again (Pending:Wait), started.
    set_desired(&w, &u, 2).await;
    w.until(30, "the pool's VM in Pending:Wait", async || {
        let g = group(&w, &u, "web").await.unwrap();
        g.instances()
            .iter()
            .any(|i| {
                i.instance_id() == Some(held[0].as_str())
                    && i.lifecycle_state() == Some(&LifecycleState::PendingWait)
            })
            .then_some(())
    })
    .await;
    complete(&held[0]).await;
    converges(&w, &u, "hotel", "web", 2).await;
}

/// The group's termination hook `drain` (CONTINUE after 300 s).
pub(crate) async fn drain_hook(c: &aws_sdk_autoscaling::Client) {
    c.put_lifecycle_hook()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("drain")
        .lifecycle_transition("autoscaling:EC2_INSTANCE_TERMINATING")
        .heartbeat_timeout(300)
        .default_result("CONTINUE")
        .send()
        .await
        .expect("put-lifecycle-hook");
}

/// CompleteLifecycleAction CONTINUE of `drain` for `id`.
async fn release(c: &aws_sdk_autoscaling::Client, id: &str) {
    c.complete_lifecycle_action()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("drain")
        .instance_id(id)
        .lifecycle_action_result("CONTINUE")
        .send()
        .await
        .expect("complete-lifecycle-action");
}

/// The group's termination lifecycle hooks hold a VM leaving its warm pool too
/// (`Warmed:Terminating:Wait`), until CompleteLifecycleAction releases it; the pool is refilled
/// meanwhile, and a forced deletion of the pool skips them.
#[tokio::test]
async fn termination_hooks_hold_vms_leaving_the_warm_pool() {
    let Given { w, u, c } = Given::user("warm-hook").await;
    pooled(&w, &u, 3, 1, WarmPoolState::Stopped, false).await;
    drain_hook(&c).await;
    // The pool shrinks to one (MaxGroupPreparedCapacity 2 with one in the group): one VM leaves.
    c.put_warm_pool()
        .auto_scaling_group_name("web")
        .pool_state(WarmPoolState::Stopped)
        .max_group_prepared_capacity(2)
        .send()
        .await
        .expect("put-warm-pool");
    let waiting = async || -> Vec<String> {
        pool(&w, &u, "web")
            .await
            .into_iter()
            .filter(|(_, s)| *s == LifecycleState::WarmedTerminatingWait)
            .map(|(id, _)| id)
            .collect()
    };
    let held = w
        .until(60, "one VM leaving the pool, held", async || {
            Some(waiting().await).filter(|h| h.len() == 1)
        })
        .await;
    w.run_for(20).await;
    let kept = w
        .hotel
        .vms()
        .iter()
        .any(|v| v.id == held[0] && v.state != CloudState::Terminated);
    assert!(kept, "held, not terminated");
    assert_eq!(waiting().await, held);
    release(&c, &held[0]).await;
    w.until(
        20,
        "released: terminated and gone from the pool",
        async || {
            let gone = pool(&w, &u, "web")
                .await
                .iter()
                .all(|(id, _)| *id != held[0]);
            let ended = w
                .hotel
                .vms()
                .iter()
                .any(|v| v.id == held[0] && v.state == CloudState::Terminated);
            (gone && ended).then_some(())
        },
    )
    .await;
    pool_at(&w, &u, 1, LifecycleState::WarmedStopped).await;
    // A forced delete of the pool skips the hooks.
    c.delete_warm_pool()
        .auto_scaling_group_name("web")
        .force_delete(true)
        .send()
        .await
        .unwrap();
    w.until(30, "the pool's VMs gone at once", async || {
        (pool(&w, &u, "web").await.is_empty() && stopped_on_cloud(&w).is_empty()).then_some(())
    })
    .await;
}

/// With ReuseOnScaleIn, a VM scaled in to the pool waits on the group's termination hooks first
/// (`Warmed:Pending:Wait`, running), as AWS holds it, and goes to the pool's state once released.
#[tokio::test]
async fn termination_hooks_hold_vms_scaled_in_to_the_warm_pool() {
    let Given { w, u, c } = Given::user("warm-reuse-hook").await;
    pooled(&w, &u, 3, 2, WarmPoolState::Stopped, true).await;
    drain_hook(&c).await;
    set_desired(&w, &u, 1).await;
    let held = w
        .until(30, "a VM scaled in to the pool, held", async || {
            let p = pool(&w, &u, "web").await;
            let waiting: Vec<String> = p
                .into_iter()
                .filter(|(_, s)| *s == LifecycleState::WarmedPendingWait)
                .map(|(id, _)| id)
                .collect();
            (waiting.len() == 1).then_some(waiting)
        })
        .await;
    w.run_for(20).await;
    let running = w
        .hotel
        .vms()
        .iter()
        .any(|v| v.id == held[0] && v.state == CloudState::Running);
    assert!(running, "held running, not stopped");
    release(&c, &held[0]).await;
    let warm = pool_at(&w, &u, 2, LifecycleState::WarmedStopped).await;
    assert!(warm.contains(&held[0]), "released into the pool");
    assert_eq!(
        w.hotel.launched_total(),
        3,
        "nothing terminated, nothing new"
    );
}
