//! A provisioner killed after each step of a reconcile (every store, cloud and queue call is a
//! step; the k-th does its work and never answers), then a new one: each run ends with the group
//! at its desired size, no VM leaked and none launched twice.

use crate::{create_group, create_lc, group};
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_seams::queue::Reconcile;

/// Runs until the group has `want` VMs, each recorded and alive, none of them at risk.
async fn settled(w: &World, u: &User, want: usize) {
    w.until(120, "the group back at its desired size", async || {
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
        (recorded.len() == want && recorded == alive && !at_risk).then_some(())
    })
    .await;
}

/// Runs the scenario with a crash at each step in turn, until a reconcile finishes uncrashed:
/// the group ends at `want` with exactly `launches` VMs ever launched (none twice, none missing).
async fn at_every_step(
    scenario: &str,
    prepare: impl AsyncFn(&World, &User),
    want: usize,
    launches: usize,
) {
    for k in 1.. {
        let w = World::new().await;
        let u = w.user("crash").await;
        prepare(&w, &u).await;
        // The messages the api queued are this test's to deliver.
        while !w.queue.receive(10).is_empty() {}
        let msg = Reconcile::new(&u.name, "web", "crash test");
        let crashed = w.reconcile_crashing_at(&msg, k).await;
        // A crashed holder's lease runs out; then the health check and the queue carry on.
        w.clock.advance_ms(provisioner::LEASE_MS + 1_000);
        settled(&w, &u, want).await;
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
    )
    .await;
}

#[tokio::test]
async fn a_crash_at_any_step_of_a_forced_delete_leaves_nothing() {
    for k in 1.. {
        let w = World::new().await;
        let u = w.user("crash-del").await;
        create_lc(&w, &u, "web@hotel").await;
        create_group(&w, &u, "web", "web@hotel", 0, 5, 2).await;
        w.run_for(3).await;
        w.sdk(&u)
            .delete_auto_scaling_group()
            .auto_scaling_group_name("web")
            .force_delete(true)
            .send()
            .await
            .unwrap();
        while !w.queue.receive(10).is_empty() {}
        let msg = Reconcile::new(&u.name, "web", "crash test");
        let crashed = w.reconcile_crashing_at(&msg, k).await;
        w.clock.advance_ms(provisioner::LEASE_MS + 1_000);
        w.until(120, "the group and its VMs gone", async || {
            (group(&w, &u, "web").await.is_none() && w.hotel.alive().is_empty()).then_some(())
        })
        .await;
        assert_eq!(w.hotel.launched_total(), 2, "crash at step {k}");
        if !crashed {
            return;
        }
    }
}
