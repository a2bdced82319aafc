//! Keeping N alive at any number of users: the health check visits only the (user, cloud) pairs
//! that have groups, a dead or slow cloud holds up only its own pairs, VMs turn InService without
//! a sweep, access keys are cached for a bounded time, and each action's store calls are at the
//! floor.

use crate::{create_group, create_lc, failure, group, Given};
use aws_sdk_autoscaling::types::LifecycleState;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_seams::store::{Directory, Fleet};
use std::time::Duration;

/// (InService, Pending) instance counts of a group.
async fn states(w: &World, u: &User, name: &str) -> (usize, usize) {
    let g = group(w, u, name).await.expect("the group exists");
    let count = |s: LifecycleState| {
        g.instances()
            .iter()
            .filter(|i| i.lifecycle_state() == Some(&s))
            .count()
    };
    (
        count(LifecycleState::InService),
        count(LifecycleState::Pending),
    )
}

#[tokio::test]
async fn the_health_check_visits_only_the_users_and_clouds_with_groups() {
    let w = World::new().await;
    let mut users = Vec::new();
    for _ in 0..1000 {
        users.push(w.user("many").await);
    }
    // 50 of the 1000 users have a group of 2, on hotel or sierra.
    let mut groups = Vec::new();
    for (i, u) in users.iter().take(50).enumerate() {
        let cloud = if i % 2 == 0 { "hotel" } else { "sierra" };
        create_lc(&w, u, &format!("web@{cloud}")).await;
        create_group(&w, u, "web", &format!("web@{cloud}"), 0, 5, 2).await;
        groups.push((u, cloud));
    }
    w.settle().await;
    w.run_without_sweeps(3).await;
    for (u, _) in &groups {
        assert_eq!(states(&w, u, "web").await, (2, 0));
    }

    // One VM of every group dies; one run of the health check puts the 50 groups right.
    for (u, cloud) in &groups {
        let g = group(&w, u, "web").await.unwrap();
        let victim = g.instances()[0].instance_id().unwrap().to_string();
        w.cloud(cloud).terminate_outside(&victim);
    }
    let store_calls = w.store.calls();
    let report = w.health().sweep().await.expect("the health check runs");
    assert_eq!(
        w.store.calls() - store_calls,
        1,
        "the health check reads one list, whatever the number of users"
    );
    assert_eq!((report.pairs, report.sweeps_queued), (50, 50));
    w.settle().await;
    for (u, cloud) in &groups {
        let g = group(&w, u, "web").await.unwrap();
        let alive = w.cloud(cloud).alive();
        let ids: Vec<&str> = g
            .instances()
            .iter()
            .filter_map(|i| i.instance_id())
            .collect();
        assert_eq!(ids.len(), 2, "{}: replaced", u.name);
        assert!(ids.iter().all(|id| alive.iter().any(|a| a == id)));
    }
}

#[tokio::test]
async fn a_dead_cloud_holds_up_only_its_own_users() {
    let Given { w, u, .. } = Given::user("dead").await;
    for cloud in ["hotel", "sierra"] {
        create_lc(&w, &u, &format!("web@{cloud}")).await;
        create_group(&w, &u, cloud, &format!("web@{cloud}"), 0, 5, 2).await;
    }
    w.run_for(3).await;
    w.hotel.set_latency(Duration::from_millis(1));
    w.hotel.set_unreachable(true);
    let victim = w.sierra.alive()[0].clone();
    w.sierra.terminate_outside(&victim);
    w.sweep().await;
    let alive = w.sierra.alive();
    assert_eq!(alive.len(), 2);
    assert!(
        !alive.contains(&victim),
        "replaced on sierra while hotel is down"
    );
    assert_eq!(
        states(&w, &u, "hotel").await,
        (2, 0),
        "hotel's group left alone"
    );
}

#[tokio::test]
async fn vms_turn_in_service_without_waiting_for_a_sweep() {
    let Given { w, u, .. } = Given::user("boot").await;
    w.hotel.set_boot_time(Duration::from_secs(20));
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 0, 5, 2).await;
    w.settle().await;
    assert_eq!(states(&w, &u, "web").await, (0, 2));
    w.run_without_sweeps(15).await;
    assert_eq!(states(&w, &u, "web").await, (0, 2), "still booting");
    // The follow-ups come at 2, 5, 10, 17, 27 s after the launch: the first after the boot.
    let mut at = None;
    for s in 16..=40 {
        w.run_without_sweeps(1).await;
        if states(&w, &u, "web").await == (2, 0) {
            at = Some(s);
            break;
        }
    }
    let at = at.expect("InService within 40 s without a sweep");
    assert!(at <= 27, "InService {at} s after the launch");

    // Scaling in: the VMs leave the group once the cloud has them terminated, again without a sweep.
    w.sdk(&u).desire("web", 0).await;
    w.run_without_sweeps(5).await;
    let g = group(&w, &u, "web").await.unwrap();
    assert!(g.instances().is_empty(), "{:?}", g.instances());
    // And the chain of follow-ups ends: nothing is left on the queue.
    w.run_without_sweeps(600).await;
    assert!(w.queue.is_empty(), "{} messages left", w.queue.len());
}

#[tokio::test]
async fn a_user_with_no_group_left_comes_off_the_list() {
    let Given { w, u, .. } = Given::group("gone", 0, 5, 1).await;
    w.run_for(2).await;
    assert_eq!(w.store.watched().await.unwrap().len(), 1);
    w.sdk(&u).desire("web", 0).await;
    w.run_for(3).await;
    // A VM launched for the group but never recorded (a provisioner that died after
    // RunInstances), then the group deleted (it has no instances on record).
    let g = phantom_seams::store::Groups::group(w.store.as_ref(), &u.name, "web")
        .await
        .unwrap()
        .unwrap();
    let orphan = w.hotel.plant(&u.name, "web", &g.id);
    w.sdk(&u).delete_group("web").await;
    assert!(group(&w, &u, "web").await.is_none());
    // The pair stays listed with no group: the next sweep finds the orphan and ends it ...
    w.sweep().await;
    assert!(
        !w.hotel.alive().contains(&orphan),
        "the orphan is terminated"
    );
    assert_eq!(w.store.watched().await.unwrap().len(), 1);
    // ... and the ones after find nothing left: once for longer than a new VM may be missing
    // from DescribeInstances, the pair comes off the list.
    w.sweep().await;
    assert_eq!(w.store.watched().await.unwrap().len(), 1, "not yet");
    w.clock
        .advance_ms(phantom_rules::reconcile::MISSING_GRACE_MS);
    w.sweep().await;
    assert!(w.store.watched().await.unwrap().is_empty(), "off the list");
    let report = w.health().sweep().await.unwrap();
    assert_eq!(report.pairs, 0);
}

#[tokio::test]
async fn a_disabled_users_key_stops_working_within_the_cache_time() {
    let Given { w, u, .. } = Given::user("key").await;
    let describe = || w.sdk(&u).describe_auto_scaling_groups().send();
    describe().await.expect("the key works");
    // Disabled elsewhere (phantomctl, or another api instance): this one's cache still has it.
    let user = w.store.user(&u.name).await.unwrap().expect("the user");
    w.store
        .disable_user(&user)
        .await
        .expect("the user is disabled");
    w.clock.advance_ms(api::KEY_CACHE_MS - 1_000);
    describe().await.expect("still cached");
    w.clock.advance_ms(1_000);
    let (code, _) = failure(describe().await);
    assert_eq!(code, "InvalidClientTokenId");
}

#[tokio::test]
async fn describe_groups_reads_only_the_instances_of_its_page() {
    let Given { w, u, .. } = Given::lc("page").await;
    for (name, n) in [("a", 1), ("b", 2), ("c", 3)] {
        create_group(&w, &u, name, "web@hotel", 0, 5, n).await;
    }
    w.run_for(2).await;
    let page = |token: Option<String>| {
        w.sdk(&u)
            .describe_auto_scaling_groups()
            .max_records(1)
            .set_next_token(token)
            .send()
    };
    let mut token = None;
    for (name, n) in [("a", 1), ("b", 2), ("c", 3)] {
        let out = page(token).await.unwrap();
        let g = &out.auto_scaling_groups()[0];
        assert_eq!(
            (g.auto_scaling_group_name(), g.instances().len()),
            (Some(name), n)
        );
        token = out.next_token().map(str::to_string);
    }
    let named = w
        .sdk(&u)
        .describe_auto_scaling_groups()
        .auto_scaling_group_names("c")
        .auto_scaling_group_names("a")
        .send()
        .await
        .unwrap();
    let counts: Vec<usize> = named
        .auto_scaling_groups()
        .iter()
        .map(|g| g.instances().len())
        .collect();
    assert_eq!(counts, [1, 3]);
}

/// What each action costs in store calls and queue messages, with a warm access-key cache: the
/// table in docs/benchmarks.md. The floor for each is in the comment beside it.
#[tokio::test]
async fn each_action_makes_the_fewest_calls_it_needs() {
    let Given { w, u, .. } = Given::user("cost").await;
    create_lc(&w, &u, "web@hotel").await; // warms the key cache
    create_group(&w, &u, "web", "web@hotel", 0, 5, 2).await;
    w.run_for(2).await;
    let asg = w.sdk(&u);
    let mut rows: Vec<(&str, u64, u64)> = Vec::new();
    macro_rules! cost {
        ($name:expr, $call:expr) => {{
            let (calls, sent) = (w.store.calls(), w.queue.sent());
            $call.await.expect($name);
            rows.push(($name, w.store.calls() - calls, w.queue.sent() - sent));
        }};
    }
    cost!(
        "CreateLaunchConfiguration",
        asg.create_launch_configuration()
            .launch_configuration_name("db@hotel")
            .image_id(phantom_e2e::world::IMAGE)
            .instance_type("t2.micro")
            .send()
    );
    cost!(
        "DescribeLaunchConfigurations",
        asg.describe_launch_configurations().send()
    );
    cost!(
        "CreateAutoScalingGroup",
        asg.create_auto_scaling_group()
            .auto_scaling_group_name("db")
            .launch_configuration_name("db@hotel")
            .min_size(0)
            .max_size(2)
            .desired_capacity(0)
            .send()
    );
    cost!(
        "DescribeAutoScalingGroups",
        asg.describe_auto_scaling_groups().send()
    );
    cost!(
        "DescribeAutoScalingGroups (by name)",
        asg.describe_auto_scaling_groups()
            .auto_scaling_group_names("web")
            .send()
    );
    cost!(
        "SetDesiredCapacity",
        asg.set_desired_capacity()
            .auto_scaling_group_name("web")
            .desired_capacity(3)
            .send()
    );
    cost!(
        "DescribeAutoScalingInstances",
        asg.describe_auto_scaling_instances().send()
    );
    cost!(
        "DescribeScalingActivities",
        asg.describe_scaling_activities()
            .auto_scaling_group_name("web")
            .send()
    );
    cost!(
        "DeleteAutoScalingGroup",
        asg.delete_auto_scaling_group()
            .auto_scaling_group_name("db")
            .send()
    );
    cost!(
        "DeleteLaunchConfiguration",
        asg.delete_launch_configuration()
            .launch_configuration_name("db@hotel")
            .send()
    );
    for (name, calls, sent) in &rows {
        println!("| {name} | {calls} | {sent} |");
    }
    let got: Vec<(&str, u64, u64)> = rows.clone();
    // Every changing request takes a token of the account's shared bucket (one UpdateItem); a
    // describing one takes four at a time (the first and the fifth below).
    let want: Vec<(&str, u64, u64)> = vec![
        // the put (its cloud's registration a condition of it), the trail's event (every
        // change writes one: docs/security.md)
        ("CreateLaunchConfiguration", 3, 0),
        // one Query, the token lease
        ("DescribeLaunchConfigurations", 2, 0),
        // the launch configuration and the cloud's default zone (2 GetItem), the transaction,
        // the trail's event
        ("CreateAutoScalingGroup", 5, 1),
        // the page of groups, the instances of the page (one Query each)
        ("DescribeAutoScalingGroups", 2, 0),
        // one BatchGetItem, one Query for the named group's instances
        ("DescribeAutoScalingGroups (by name)", 2, 0),
        // read the group, the compare-and-set, the trail's event
        ("SetDesiredCapacity", 4, 1),
        // one Query
        ("DescribeAutoScalingInstances", 1, 0),
        // the group (its ARN: a deleted group's activities are not shown), one Query, the lease
        ("DescribeScalingActivities", 3, 0),
        // read the group, its instances, the transaction, the trail's event
        ("DeleteAutoScalingGroup", 5, 0),
        // one conditional delete, the trail's event
        ("DeleteLaunchConfiguration", 3, 0),
    ];
    assert_eq!(got, want);
}

#[tokio::test]
async fn the_health_check_skips_a_run_while_the_fleet_is_behind() {
    let w = World::new().await;
    for name in ["a", "b"] {
        let u = w.user(name).await;
        create_lc(&w, &u, "web@hotel").await;
        create_group(&w, &u, "web", "web@hotel", 0, 5, 1).await;
    }
    w.run_for(3).await;
    // Two messages wait (as many as there are pairs): the run adds nothing.
    for _ in 0..2 {
        phantom_seams::queue::WorkQueue::send(
            w.queue.as_ref(),
            &phantom_seams::queue::Reconcile::new("a-0", "web", "test").into(),
            0,
        )
        .await
        .unwrap();
    }
    let skipped = w.health().sweep().await.unwrap();
    assert_eq!(
        (skipped.pairs, skipped.backlog, skipped.sweeps_queued),
        (2, 2, 0)
    );
    assert_eq!(w.queue.len(), 2);
    w.settle().await;
    let run = w.health().sweep().await.unwrap();
    assert_eq!((run.backlog, run.sweeps_queued), (0, 2));
}
