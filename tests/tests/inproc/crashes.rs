//! A provisioner killed after each step of a reconcile (every store, cloud and queue call is a
//! step; the k-th does its work and never answers), then a new one: each run ends with the group
//! at its desired size, no VM leaked and none launched twice, and within 15 s of the world's clock
//! (the dead holder's lease runs out, the health check finds the group off its size, a new
//! reconcile finishes the work).

use crate::Given;
use crate::{create_group, create_lc, group};
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_seams::queue::{Reconcile, WorkQueue};

/// How long, on the world's clock, a group may wait after its reconcile's holder died.
const WITHIN_SECS: u64 = 15;

/// Runs until the group has `want` VMs, each recorded and alive, none of them at risk, and at
/// least `launches` VMs were launched (a replacement's): at most `secs` of the world's clock.
async fn settled(w: &World, u: &User, want: usize, launches: usize, secs: u64) {
    w.until(secs, "the group back at its desired size", async || {
        let g = group(w, u, "web").await?;
        let recorded: Vec<String> = g
            .instances()
            .iter()
            .map(|i| i.instance_id().unwrap().to_string())
            .collect();
        let mut alive = w.hotel.alive();
        alive.sort();
        let mut recorded = recorded;
        recorded.sort();
        // A VM marked at risk has yet to be replaced and let go.
        let at_risk = phantom_seams::store::Fleet::instances(w.store.as_ref(), &u.name, "web")
            .await
            .expect("the store")
            .iter()
            .any(|m| m.at_risk_ms.is_some());
        let launched = w.hotel.launched_total() >= launches;
        (recorded.len() == want && recorded == alive && !at_risk && launched).then_some(())
    })
    .await;
}

/// Runs the scenario with a crash at each step in turn, until a reconcile finishes uncrashed:
/// the group ends at `want` with exactly `launches` VMs ever launched (none twice, none missing),
/// within `secs` of the world's clock after the crash.
async fn at_every_step(
    scenario: &str,
    prepare: impl AsyncFn(&World, &User),
    want: usize,
    launches: usize,
    secs: u64,
) {
    for k in 1.. {
        let Given { w, u, .. } = Given::user("crash").await;
        prepare(&w, &u).await;
        // The messages the api queued are this test's to deliver.
        w.queue.purge();
        let msg = Reconcile::new(&u.name, "web", "crash test");
        let crashed = w.reconcile_crashing_at(&msg, k).await;
        // The world's clock runs second by second: the crashed holder's lease runs out, then the
        // health check and the queue carry on.
        settled(&w, &u, want, launches, secs).await;
        let launched = w.hotel.launched_total();
        assert_eq!(
            launched, launches,
            "{scenario}, crash at step {k}: {launched} VMs launched for {launches}"
        );
        if !crashed {
            assert!(k > 3, "{scenario}: the reconcile took only {k} steps");
            return;
        }
    }
}

#[tokio::test]
async fn a_crash_at_any_step_of_a_scale_out_leaks_and_doubles_nothing() {
    at_every_step(
        "scale out 0 -> 3",
        async |w, u| {
            create_lc(w, u, "web@hotel").await;
            create_group(w, u, "web", "web@hotel", 0, 5, 3).await;
        },
        3,
        3,
        WITHIN_SECS,
    )
    .await;
}

#[tokio::test]
async fn a_crash_at_any_step_of_a_replacement_leaks_and_doubles_nothing() {
    at_every_step(
        "replace a dead VM",
        async |w, u| {
            create_lc(w, u, "web@hotel").await;
            create_group(w, u, "web", "web@hotel", 0, 5, 2).await;
            w.run_for(3).await;
            let alive = w.hotel.alive();
            assert_eq!(alive.len(), 2);
            w.hotel.terminate_outside(&alive[0]);
        },
        2,
        3,
        WITHIN_SECS,
    )
    .await;
}

#[tokio::test]
async fn a_crash_at_any_step_of_an_impaired_vms_replacement_leaks_and_doubles_nothing() {
    at_every_step(
        "replace a VM whose system status check is impaired",
        async |w, u| {
            create_lc(w, u, "web@hotel").await;
            create_group(w, u, "web", "web@hotel", 0, 5, 2).await;
            crate::tag_web(&w.sdk(u), "phantom:status-check-confirm-seconds", "0").await;
            w.run_for(3).await;
            let alive = w.hotel.alive();
            assert_eq!(alive.len(), 2);
            w.hotel
                .impair(&alive[0], phantom_seams::cloud::memory::Which::System);
        },
        2,
        3,
        WITHIN_SECS,
    )
    .await;
}

#[tokio::test]
async fn a_crash_at_any_step_of_a_spot_scale_out_leaks_and_doubles_nothing() {
    use aws_sdk_autoscaling::types::InstancesDistribution;
    // On-demand and spot in one round, and the spot VM's first type refused: each try its own
    // request and token.
    at_every_step(
        "a mixed scale out 0 -> 4, spot on the second type",
        async |w, u| {
            w.hotel
                .add_template("web", phantom_e2e::world::IMAGE, "t2.micro");
            w.hotel.spot_short_of("t2.micro", true);
            let policy = phantom_e2e::world::mixed_policy(
                "web@hotel",
                None,
                &["t2.micro", "t2.small"],
                InstancesDistribution::builder()
                    .on_demand_base_capacity(1)
                    .on_demand_percentage_above_base_capacity(50)
                    .spot_allocation_strategy("capacity-optimized-prioritized")
                    .build(),
            );
            w.sdk(u)
                .create_auto_scaling_group()
                .auto_scaling_group_name("web")
                .mixed_instances_policy(policy)
                .min_size(0)
                .max_size(5)
                .desired_capacity(4)
                .send()
                .await
                .unwrap();
        },
        4,
        4,
        WITHIN_SECS,
    )
    .await;
}

#[tokio::test]
async fn a_crash_at_any_step_of_a_rebalance_leaks_and_doubles_nothing() {
    use aws_sdk_autoscaling::types::InstancesDistribution;
    // A spot VM at risk in a group at its maximum: one replacement, launched first, then the
    // at-risk VM goes.
    at_every_step(
        "replace an at-risk spot VM launch-first",
        async |w, u| {
            w.hotel
                .add_template("web", phantom_e2e::world::IMAGE, "t2.micro");
            let policy = phantom_e2e::world::mixed_policy(
                "web@hotel",
                None,
                &["t2.micro"],
                InstancesDistribution::builder()
                    .on_demand_percentage_above_base_capacity(0)
                    .build(),
            );
            w.sdk(u)
                .create_auto_scaling_group()
                .auto_scaling_group_name("web")
                .mixed_instances_policy(policy)
                .capacity_rebalance(true)
                .min_size(0)
                .max_size(2)
                .desired_capacity(2)
                .send()
                .await
                .unwrap();
            w.run_for(3).await;
            let alive = w.hotel.alive();
            assert_eq!(alive.len(), 2);
            let marked = w
                .provisioner()
                .at_risk(&phantom_seams::queue::AtRisk {
                    instance: alive[0].clone(),
                    signal: phantom_seams::cloud::memory::REBALANCE_RECOMMENDATION.into(),
                    region: phantom_e2e::stack::REGION.into(),
                    account: "123456789012".into(),
                })
                .await
                .unwrap();
            assert_eq!(marked, 1);
        },
        2,
        3,
        WITHIN_SECS,
    )
    .await;
}

#[tokio::test]
async fn a_crash_at_any_step_of_a_forced_delete_leaves_nothing() {
    for k in 1.. {
        let Given { w, u, .. } = Given::user("crash-del").await;
        create_lc(&w, &u, "web@hotel").await;
        create_group(&w, &u, "web", "web@hotel", 0, 5, 2).await;
        w.run_for(3).await;
        w.sdk(&u).force_delete("web").await;
        w.queue.purge();
        let msg = Reconcile::new(&u.name, "web", "crash test");
        let crashed = w.reconcile_crashing_at(&msg, k).await;
        w.until(WITHIN_SECS, "the group and its VMs gone", async || {
            (group(&w, &u, "web").await.is_none() && w.hotel.alive().is_empty()).then_some(())
        })
        .await;
        assert_eq!(w.hotel.launched_total(), 2, "crash at step {k}");
        if !crashed {
            return;
        }
    }
}

/// A holder at work renews its short lease: while a slow cloud keeps its round going past
/// `LEASE_MS` of the world's clock, another reconcile of the group finds it busy, not free to
/// take (which a holder that died would leave it).
#[tokio::test]
async fn a_holder_at_work_keeps_its_lease_past_its_first_end() {
    let Given { w, u, .. } = Given::user("renew").await;
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 0, 5, 2).await;
    w.queue.purge();
    // Each cloud call takes 4 s of real time: longer than one renewal period.
    w.hotel.set_latency(std::time::Duration::from_secs(4));
    let msg = Reconcile::new(&u.name, "web", "slow round");
    let first = w.provisioner();
    let working = tokio::spawn({
        let msg = msg.clone();
        async move { first.reconcile(&msg).await }
    });
    // The round holds the lease and waits on the cloud; the world's clock passes its first end.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    w.clock.advance_ms(provisioner::LEASE_MS + 1_000);
    // One renewal later the lease runs from the new time.
    tokio::time::sleep(std::time::Duration::from_millis(
        provisioner::LEASE_MS as u64 / 3 + 500,
    ))
    .await;
    let second = w.provisioner().reconcile(&msg).await.expect("the store");
    assert_eq!(second, provisioner::Outcome::Busy);
    w.hotel.set_latency(std::time::Duration::ZERO);
    let done = working.await.expect("the round").expect("the store");
    assert!(
        matches!(done, provisioner::Outcome::Done { launched: 2, .. }),
        "{done:?}"
    );
}

/// A holder killed with the group's lease, and its message back before the lease runs out (a
/// queue whose visibility timeout ends first, as the Lambda e2e stack's 10 s against a 5 s
/// timeout and a 10 s lease): the lease is found held and not renewed, so the message is queued
/// again for when it runs out, and the provisioner alone, with no health check to find the group
/// off its size, brings it there. Dropped as busy, it waited for the next sweep, a minute on a
/// quiet cloud (CI's Lambda stack at c0bcd76).
#[tokio::test]
async fn a_message_that_meets_its_dead_holders_lease_comes_back_when_the_lease_ends() {
    let Given { w, u, .. } = Given::user("abandoned").await;
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 0, 5, 2).await;
    w.queue.purge();
    let msg = Reconcile::new(&u.name, "web", "crash test");
    assert!(
        w.reconcile_crashing_at(&msg, 1).await,
        "killed once it took the lease"
    );
    // Past a missed renewal, within the lease.
    w.clock.advance_ms(6_000);
    let outcome = w.provisioner().reconcile(&msg).await.unwrap();
    assert!(
        matches!(outcome, provisioner::Outcome::Abandoned { .. }),
        "{outcome:?}"
    );
    w.queue.send(&msg.into(), 0).await.unwrap();
    w.run_without_sweeps(1).await;
    assert!(w.hotel.alive().is_empty(), "the lease still holds");
    w.run_without_sweeps(10).await;
    assert_eq!(w.hotel.alive().len(), 2, "the group at its size");
}

/// A batch killed once its round took the group's lease, as Lambda ends an invocation that
/// times out: its message comes back when the lease runs out (the provisioner hid it for a
/// lease's length), and the provisioner alone, with no health check, brings the group to its
/// size. Lambda leaves it to the queue's visibility timeout otherwise: 6 minutes on AWS.
#[tokio::test]
async fn a_batch_killed_at_work_comes_back_when_its_lease_runs_out() {
    let Given { w, u, .. } = Given::user("killed-batch").await;
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 0, 5, 2).await;
    assert!(
        w.batch_crashing_at(1).await,
        "killed once it took the lease"
    );
    assert_eq!(w.queue.len(), 1, "the message waits, hidden");
    w.run_without_sweeps(provisioner::LEASE_MS as u64 / 1000 - 1)
        .await;
    assert!(w.hotel.alive().is_empty(), "hidden for the lease's length");
    w.run_without_sweeps(3).await;
    assert_eq!(w.hotel.alive().len(), 2, "the group at its size");
    assert!(w.queue.is_empty(), "the message done and deleted");
}

/// A message whose work failed (the store refused the round) comes back in seconds, not after
/// the queue's visibility timeout, where Lambda leaves a failed batch item.
#[tokio::test]
async fn a_message_whose_work_failed_comes_back_in_seconds() {
    let Given { w, u, .. } = Given::user("failed-batch").await;
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 0, 5, 2).await;
    w.store
        .fail_next(1, phantom_seams::store::StoreFault::Refused);
    assert_eq!(w.settle().await, 1, "the api's message, handled and failed");
    w.store.take_faults();
    assert!(w.hotel.alive().is_empty(), "the round failed");
    assert_eq!(w.queue.len(), 1, "the message waits, hidden");
    // Back once the lease the round may have taken is judged its dead holder's (past 5 s).
    w.run_without_sweeps(5).await;
    assert!(w.hotel.alive().is_empty(), "hidden 6 s");
    w.run_without_sweeps(1).await;
    assert_eq!(w.hotel.alive().len(), 2, "the group at its size");
}
