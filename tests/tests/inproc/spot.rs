//! Spot and on-demand in one group (a MixedInstancesPolicy's InstancesDistribution): the split
//! AWS computes, kept through scale-in and replacement; spot types tried by price; a type the
//! cloud has no spot for passed over, and the activity saying so.

use crate::provisioning::{activities, converges};
use crate::Given;
use aws_sdk_autoscaling::types::{InstancesDistribution, MixedInstancesPolicy};
use phantom_e2e::steps::Steps;
use phantom_e2e::world::{mixed_policy, World, IMAGE};
use phantom_model::instance::Market;
use phantom_seams::cloud::memory::Vm;

pub(crate) fn split(base: i32, percent: i32, strategy: &str) -> InstancesDistribution {
    InstancesDistribution::builder()
        .on_demand_base_capacity(base)
        .on_demand_percentage_above_base_capacity(percent)
        .spot_allocation_strategy(strategy)
        .build()
}

/// Template `fleet` on sierra, t2.micro then t2.small, split as `split` says.
fn policy(split: InstancesDistribution) -> MixedInstancesPolicy {
    mixed_policy("fleet@sierra", None, &["t2.micro", "t2.small"], split)
}

/// The live VMs on the cloud of one market, by instance type.
/// How many of the VMs are on-demand, and how many spot.
fn markets(vms: &[Vm]) -> (usize, usize) {
    (of(vms, Market::OnDemand).len(), of(vms, Market::Spot).len())
}

pub(crate) fn of(vms: &[Vm], market: Market) -> Vec<String> {
    let mut types: Vec<String> = vms
        .iter()
        .filter(|v| v.state.alive() && v.market == market)
        .map(|v| v.instance_type.clone())
        .collect();
    types.sort();
    types
}

/// The group's first failed activity, once it has one (within 30 s of the world's clock).
async fn failed_launch(
    w: &World,
    u: &phantom_e2e::User,
    group: &str,
) -> aws_sdk_autoscaling::types::Activity {
    w.until(30, &format!("a failed launch of {group}"), async || {
        activities(w, u, group)
            .await
            .into_iter()
            .find(|a| a.status_code().map(|s| s.as_str()) == Some("Failed"))
    })
    .await
}

#[tokio::test]
async fn a_group_keeps_its_split_between_on_demand_and_spot() {
    let Given { w, u, c } = Given::user("spot").await;
    w.sierra.add_template("fleet", IMAGE, "t2.micro");
    // t2.small's spot is the cheaper: price strategies take it first.
    w.sierra.set_spot_price("t2.micro", 0.012);
    w.sierra.set_spot_price("t2.small", 0.006);
    c.create_auto_scaling_group()
        .auto_scaling_group_name("fleet")
        .mixed_instances_policy(policy(split(1, 50, "price-capacity-optimized")))
        .min_size(0)
        .max_size(10)
        .desired_capacity(6)
        .send()
        .await
        .unwrap();
    converges(&w, &u, "sierra", "fleet", 6).await;
    // 1 on-demand base, then half of the other 5 rounded up for on-demand: 4 and 2.
    let vms = w.sierra.vms();
    assert_eq!(of(&vms, Market::OnDemand), ["t2.micro"; 4], "prioritized");
    assert_eq!(of(&vms, Market::Spot), ["t2.small"; 2], "the cheaper spot");
    // Phantom's own API says which VM is which (the console's instances table).
    let (status, out) = crate::self_service::call(
        &w,
        &u,
        "DescribeInstanceMarkets",
        serde_json::json!({"AutoScalingGroupName": "fleet"}),
    )
    .await;
    assert_eq!(status, 200, "{out}");
    let shown = out["Instances"].as_array().unwrap();
    assert_eq!(shown.len(), 6);
    for i in shown {
        let vm = vms.iter().find(|v| v.id == i["InstanceId"]).unwrap();
        let want = if vm.market == Market::Spot {
            "spot"
        } else {
            "on-demand"
        };
        assert_eq!(i["Market"], want, "{i}");
    }
    let (status, out) = crate::self_service::call(
        &w,
        &u,
        "DescribeInstanceMarkets",
        serde_json::json!({"AutoScalingGroupName": "nothing"}),
    )
    .await;
    assert_eq!(
        (status, &out["Error"]["Code"]),
        (400, &serde_json::json!("ValidationError"))
    );

    // Scale-in keeps the split: at 3, 1 + 1 on-demand and 1 spot.
    c.desire("fleet", 3).await;
    converges(&w, &u, "sierra", "fleet", 3).await;
    assert_eq!(markets(&w.sierra.vms()), (2, 1));

    // No spot for t2.small now: the next type, and the activity says why.
    w.sierra.spot_short_of("t2.small", true);
    c.desire("fleet", 5).await;
    converges(&w, &u, "sierra", "fleet", 5).await;
    let vms = w.sierra.vms();
    assert_eq!(of(&vms, Market::OnDemand).len(), 3);
    assert_eq!(of(&vms, Market::Spot), ["t2.micro", "t2.small"]);
    let acts = activities(&w, &u, "fleet").await;
    assert!(
        acts.iter().any(|a| a.status_message()
            == Some("t2.small spot: InsufficientInstanceCapacity; launched t2.micro spot.")),
        "{acts:?}"
    );

    // No spot at all: a lost spot VM's replacement is spot again, and waits for it.
    w.sierra.spot_short_of("t2.micro", true);
    let spot_vm = vms
        .iter()
        .find(|v| v.state.alive() && v.market == Market::Spot)
        .unwrap()
        .id
        .clone();
    w.sierra.terminate_outside(&spot_vm);
    let failed = failed_launch(&w, &u, "fleet").await;
    let message = failed.status_message().unwrap();
    assert!(
        message.contains("tried t2.small spot: InsufficientInstanceCapacity; t2.micro spot:"),
        "{message}"
    );
    assert_eq!(
        of(&w.sierra.vms(), Market::OnDemand).len(),
        3,
        "no on-demand in its place"
    );
    // Spot is back: the group is whole again, its split as before.
    w.sierra.spot_short_of("t2.micro", false);
    w.sierra.spot_short_of("t2.small", false);
    converges(&w, &u, "sierra", "fleet", 5).await;
    assert_eq!(markets(&w.sierra.vms()), (3, 2));
}

#[tokio::test]
async fn a_spot_max_price_below_the_price_moves_to_a_type_within_it() {
    let Given { w, u, c } = Given::user("price").await;
    w.sierra.add_template("fleet", IMAGE, "t2.micro");
    w.sierra.set_spot_price("t2.micro", 0.02);
    w.sierra.set_spot_price("t2.small", 0.04);
    let p = policy(
        InstancesDistribution::builder()
            .on_demand_percentage_above_base_capacity(0)
            .spot_allocation_strategy("capacity-optimized-prioritized")
            .spot_max_price("0.03")
            .build(),
    );
    // The overrides in their order: t2.micro first, within the maximum.
    c.create_auto_scaling_group()
        .auto_scaling_group_name("cheap")
        .mixed_instances_policy(p)
        .min_size(0)
        .max_size(4)
        .desired_capacity(2)
        .send()
        .await
        .unwrap();
    converges(&w, &u, "sierra", "cheap", 2).await;
    assert_eq!(of(&w.sierra.vms(), Market::Spot), ["t2.micro"; 2]);
    // t2.micro's spot is gone and t2.small's costs more than the group pays: nothing launches,
    // and the activity says both.
    w.sierra.spot_short_of("t2.micro", true);
    c.desire("cheap", 3).await;
    let failed = failed_launch(&w, &u, "cheap").await;
    let message = failed.status_message().unwrap();
    assert!(
        message.contains("t2.micro spot: InsufficientInstanceCapacity")
            && message.contains("t2.small spot: SpotMaxPriceTooLow"),
        "{message}"
    );
    assert_eq!(w.sierra.alive().len(), 2);
}

/// Template `fleet` on both clouds; a group from `fleet@hotel` across hotel and sierra (up to
/// `hotel_max` on hotel), split as `split` says.
pub(crate) async fn fleet_across(
    w: &World,
    u: &phantom_e2e::User,
    hotel_max: i32,
    split: InstancesDistribution,
    desired: i32,
) {
    w.hotel.add_template("fleet", IMAGE, "t2.micro");
    w.sierra.add_template("fleet", IMAGE, "t2.micro");
    let policy = mixed_policy(
        "fleet@hotel",
        Some("$Latest"),
        &["t2.micro", "t2.small"],
        split,
    );
    w.sdk(u)
        .create_auto_scaling_group()
        .auto_scaling_group_name("fleet")
        .mixed_instances_policy(policy)
        .min_size(0)
        .max_size(20)
        .desired_capacity(desired)
        .tags(
            aws_sdk_autoscaling::types::Tag::builder()
                .resource_id("fleet")
                .resource_type("auto-scaling-group")
                .key("phantom:clouds")
                .value(format!("hotel:{hotel_max},sierra:10"))
                .propagate_at_launch(false)
                .build(),
        )
        .send()
        .await
        .unwrap();
}

/// The live VMs of both clouds: (on-demand, spot).
pub(crate) fn split_of(w: &World) -> (usize, usize) {
    let all: Vec<Vm> = w.hotel.vms().into_iter().chain(w.sierra.vms()).collect();
    (
        of(&all, Market::OnDemand).len(),
        of(&all, Market::Spot).len(),
    )
}

#[tokio::test]
async fn a_group_across_clouds_keeps_one_split_and_finds_spot_on_the_next_cloud() {
    let Given { w, u, .. } = Given::user("across").await;
    // 2 on hotel (its maximum), 4 on sierra; 1 + half of 5 on-demand over both: 4 and 2.
    fleet_across(&w, &u, 2, split(1, 50, "capacity-optimized"), 6).await;
    w.until(60, "6 InService across both clouds", async || {
        let n = crate::provisioning::in_service(&w, &u, "fleet").await.len();
        (n == 6 && w.hotel.alive().len() == 2 && w.sierra.alive().len() == 4).then_some(())
    })
    .await;
    assert_eq!(split_of(&w), (4, 2), "one split for the whole group");
    // Each VM records the template of its own cloud.
    let g = crate::group(&w, &u, "fleet").await.unwrap();
    let mut templates: Vec<String> = g
        .instances()
        .iter()
        .filter_map(|i| {
            i.launch_template()?
                .launch_template_name()
                .map(str::to_string)
        })
        .collect();
    templates.sort();
    templates.dedup();
    assert_eq!(templates, ["fleet@hotel", "fleet@sierra"]);
}

#[tokio::test]
async fn spot_gone_from_the_best_cloud_moves_to_the_next() {
    let Given { w, u, .. } = Given::user("moves").await;
    fleet_across(&w, &u, 10, split(0, 0, "capacity-optimized"), 2).await;
    converges(&w, &u, "hotel", "fleet", 2).await;
    assert_eq!(split_of(&w), (0, 2));
    // No spot on hotel at all: the next VMs are spot on sierra, and their activity says why.
    w.hotel.spot_short_of("t2.micro", true);
    w.hotel.spot_short_of("t2.small", true);
    w.sdk(&u).desire("fleet", 4).await;
    w.until(60, "2 spot VMs on sierra", async || {
        let n = crate::provisioning::in_service(&w, &u, "fleet").await.len();
        (n == 4 && w.sierra.alive().len() == 2).then_some(())
    })
    .await;
    assert_eq!(of(&w.sierra.vms(), Market::Spot).len(), 2);
    assert_eq!(w.hotel.alive().len(), 2);
    let acts = activities(&w, &u, "fleet").await;
    assert!(
        acts.iter()
            .any(|a| a.cause().is_some_and(|c| c.contains("hotel"))
                || a.status_message().is_some_and(|m| m.contains("hotel"))),
        "{acts:?}"
    );
}

/// Terraform's `mixed_instances_policy` as its provider sends it (every distribution member it
/// has, `spot_max_price` empty, `spot_instance_pools` left out when 0, weights), with
/// `capacity_rebalance`, then read back: what it
/// reads is what it sent, so the next plan shows no change; then an update to another strategy.
#[tokio::test]
async fn terraforms_mixed_instances_policy_reads_back_as_sent() {
    let Given { w, u, c } = Given::user("tf").await;
    let id = format!(
        "{}@sierra",
        w.sierra.add_template("fleet", IMAGE, "t2.micro")
    );
    // `override` blocks with `weighted_capacity`, as its provider sends them: strings.
    let sent = |strategy: &str, pools: Option<i32>| {
        phantom_e2e::world::weighted_policy(
            "fleet@sierra",
            Some("$Latest"),
            &[("t2.micro", Some("1")), ("t2.small", Some("2"))],
            InstancesDistribution::builder()
                .on_demand_allocation_strategy("prioritized")
                .on_demand_base_capacity(0)
                .on_demand_percentage_above_base_capacity(25)
                .spot_allocation_strategy(strategy)
                .set_spot_instance_pools(pools)
                .spot_max_price("")
                .build(),
        )
    };
    let first = sent("lowest-price", Some(2));
    c.create_auto_scaling_group()
        .auto_scaling_group_name("tf")
        .mixed_instances_policy(first.clone())
        .capacity_rebalance(true)
        .min_size(0)
        .max_size(4)
        .desired_capacity(4)
        .send()
        .await
        .unwrap();
    let read = || async {
        crate::group(&w, &u, "tf")
            .await
            .unwrap()
            .mixed_instances_policy()
            .cloned()
            .unwrap()
    };
    as_sent(&read().await, &first, &id);
    let g = crate::group(&w, &u, "tf").await.unwrap();
    assert_eq!(g.capacity_rebalance(), Some(true));
    // 4 units: 25 % of them on-demand, 1; the spot ones over the two cheapest pools, a
    // t2.small among them counting 2.
    let units = |market: Market| -> usize {
        of(&w.sierra.vms(), market)
            .iter()
            .map(|t| if t == "t2.small" { 2 } else { 1 })
            .sum()
    };
    w.until(60, "tf at 4 units", async || {
        let serving = crate::provisioning::in_service(&w, &u, "tf").await;
        (units(Market::OnDemand) + units(Market::Spot) == 4
            && serving.len() == w.sierra.alive().len())
        .then_some(())
    })
    .await;
    assert_eq!((units(Market::OnDemand), units(Market::Spot)), (1, 3));
    // Another strategy with the pools its state still holds: AWS's refusal, word for word.
    let (code, message) = crate::failure(
        c.update_auto_scaling_group()
            .auto_scaling_group_name("tf")
            .mixed_instances_policy(sent("price-capacity-optimized", Some(2)))
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    assert_eq!(
        message,
        "SpotInstancePools option is only available with the lowest-price allocation strategy."
    );
    let second = sent("price-capacity-optimized", None);
    c.update("tf", |g| g.mixed_instances_policy(second.clone()))
        .await;
    as_sent(&read().await, &second, &id);
}

/// A policy read back as it was sent, its template shown with its id too (`id`), as AWS shows
/// it: Terraform's `launch_template_id` is computed, so the plan sees no change.
fn as_sent(
    read: &aws_sdk_autoscaling::types::MixedInstancesPolicy,
    sent: &aws_sdk_autoscaling::types::MixedInstancesPolicy,
    id: &str,
) {
    let (read, ids) = crate::without_template_ids(read);
    assert_eq!(&read, sent);
    assert_eq!(ids, [id]);
}

/// Beyond AWS, opted in with tag `phantom:spot-fallback`: where no type has spot the group runs
/// on-demand rather than short, and moves back to spot a VM at a time once spot returns, never
/// below its desired capacity InService and never more than one VM above it.
#[tokio::test]
async fn with_the_fallback_tag_no_spot_means_on_demand_until_spot_returns() {
    use std::cell::Cell;
    let Given { w, u, c } = Given::user("fallback").await;
    w.sierra.add_template("fleet", IMAGE, "t2.micro");
    w.sierra.spot_short_of("t2.micro", true);
    w.sierra.spot_short_of("t2.small", true);
    let tag = |value: &str| {
        aws_sdk_autoscaling::types::Tag::builder()
            .resource_id("fleet")
            .resource_type("auto-scaling-group")
            .key("phantom:spot-fallback")
            .value(value)
            .propagate_at_launch(false)
            .build()
    };
    let (code, message) = crate::failure(
        c.create_auto_scaling_group()
            .auto_scaling_group_name("fleet")
            .mixed_instances_policy(policy(split(0, 0, "capacity-optimized")))
            .min_size(0)
            .max_size(5)
            .tags(tag("maybe"))
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    assert!(message.contains("phantom:spot-fallback"), "{message}");
    c.create_auto_scaling_group()
        .auto_scaling_group_name("fleet")
        .mixed_instances_policy(policy(split(0, 0, "capacity-optimized")))
        .min_size(0)
        .max_size(5)
        .desired_capacity(3)
        .tags(tag("on-demand"))
        .send()
        .await
        .unwrap();
    converges(&w, &u, "sierra", "fleet", 3).await;
    assert_eq!(of(&w.sierra.vms(), Market::OnDemand).len(), 3);
    let acts = activities(&w, &u, "fleet").await;
    assert!(
        acts.iter()
            .any(|a| a.status_message().is_some_and(|m| m.contains(
                "launched t2.micro on-demand (no spot for any type; phantom:spot-fallback)"
            ))),
        "{acts:?}"
    );

    // Spot is back: one at a time, the group is all spot again.
    w.sierra.spot_short_of("t2.micro", false);
    w.sierra.spot_short_of("t2.small", false);
    let (most, fewest) = (Cell::new(0), Cell::new(usize::MAX));
    w.until(300, "all 3 spot", async || {
        let serving = crate::provisioning::in_service(&w, &u, "fleet").await.len();
        let alive = w.sierra.alive().len();
        most.set(most.get().max(alive));
        fewest.set(fewest.get().min(serving));
        let vms = w.sierra.vms();
        (serving == 3 && alive == 3 && of(&vms, Market::Spot).len() == 3).then_some(())
    })
    .await;
    assert_eq!(
        (most.get(), fewest.get()),
        (4, 3),
        "one VM above desired at most, never below it serving"
    );
}

/// The fallback across clouds: no spot on either cloud, the group runs on-demand; spot back on
/// hotel alone, the group ends all spot.
#[tokio::test]
async fn across_clouds_the_fallback_runs_on_demand_until_a_cloud_has_spot() {
    let Given { w, u, .. } = Given::user("fallacross").await;
    for cloud in [&w.hotel, &w.sierra] {
        cloud.spot_short_of("t2.micro", true);
        cloud.spot_short_of("t2.small", true);
    }
    fleet_across(&w, &u, 10, split(0, 0, "capacity-optimized"), 2).await;
    w.sdk(&u)
        .create_or_update_tags()
        .tags(
            aws_sdk_autoscaling::types::Tag::builder()
                .resource_id("fleet")
                .resource_type("auto-scaling-group")
                .key("phantom:spot-fallback")
                .value("on-demand")
                .propagate_at_launch(false)
                .build(),
        )
        .send()
        .await
        .unwrap();
    w.until(300, "2 on-demand VMs InService", async || {
        let n = crate::provisioning::in_service(&w, &u, "fleet").await.len();
        (n == 2 && split_of(&w) == (2, 0)).then_some(())
    })
    .await;
    w.hotel.spot_short_of("t2.micro", false);
    w.until(900, "2 spot VMs InService, no on-demand left", async || {
        let n = crate::provisioning::in_service(&w, &u, "fleet").await.len();
        (n == 2 && split_of(&w) == (0, 2)).then_some(())
    })
    .await;
}

/// An override with a launch template of its own (another image for its type): VMs of that type
/// launch from it; one not on the group's cloud, or on another cloud, is refused with nothing
/// written.
#[tokio::test]
async fn an_override_launches_from_its_own_template() {
    use aws_sdk_autoscaling::types::{LaunchTemplateOverrides, LaunchTemplateSpecification};
    let Given { w, u, c } = Given::user("by-type").await;
    w.sierra.add_template("fleet", IMAGE, "t2.micro");
    w.sierra
        .add_template("fleet-arm", phantom_e2e::world::IMAGE_ARM, "t4g.micro");
    let policy = |arm: &str| {
        let mut p = mixed_policy(
            "fleet@sierra",
            None,
            &["t2.micro"],
            split(0, 100, "capacity-optimized"),
        );
        let lt = p.launch_template.as_mut().unwrap();
        lt.overrides.get_or_insert_with(Vec::new).push(
            LaunchTemplateOverrides::builder()
                .instance_type("t4g.micro")
                .launch_template_specification(
                    LaunchTemplateSpecification::builder()
                        .launch_template_name(arm)
                        .build(),
                )
                .build(),
        );
        p
    };
    for (arm, words) in [
        ("nothing@sierra", "does not exist on cloud 'sierra'"),
        (
            "fleet-arm@hotel",
            "must be on the cloud of the group's launch template",
        ),
    ] {
        let (code, message) = crate::failure(
            c.create_auto_scaling_group()
                .auto_scaling_group_name("fleet")
                .mixed_instances_policy(policy(arm))
                .min_size(0)
                .max_size(4)
                .send()
                .await,
        );
        assert_eq!(code, "ValidationError");
        assert!(message.contains(words), "{message}");
    }
    assert!(crate::group(&w, &u, "fleet").await.is_none());

    // No room for t2.micro: t4g.micro, from its own template's image.
    w.sierra.short_of("t2.micro");
    c.create_auto_scaling_group()
        .auto_scaling_group_name("fleet")
        .mixed_instances_policy(policy("fleet-arm@sierra"))
        .min_size(0)
        .max_size(4)
        .desired_capacity(2)
        .send()
        .await
        .unwrap();
    converges(&w, &u, "sierra", "fleet", 2).await;
    let vms: Vec<(String, Option<String>)> = w
        .sierra
        .vms()
        .into_iter()
        .map(|v| (v.instance_type, v.image))
        .collect();
    assert_eq!(
        vms,
        vec![
            (
                "t4g.micro".to_string(),
                Some(phantom_e2e::world::IMAGE_ARM.to_string())
            );
            2
        ]
    );
    // Read back as sent, each template with its id too.
    let g = crate::group(&w, &u, "fleet").await.unwrap();
    let (read, ids) = crate::without_template_ids(g.mixed_instances_policy().unwrap());
    assert_eq!(read, policy("fleet-arm@sierra"));
    assert_eq!(ids.len(), 2, "{ids:?}");
}
