//! Instance weights (a MixedInstancesPolicy override's WeightedCapacity): desired, minimum and
//! maximum capacity count units; a launch covers what the group is short of, past it if it
//! must; a scale-in never goes below desired; each VM shows its weight; the group metrics count
//! capacity in units.

use crate::spot::split;
use crate::Given;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::{weighted_policy, World, IMAGE};
use phantom_e2e::User;
use phantom_model::instance::Market;

/// The group's instances: (type, market, WeightedCapacity), InService ones, sorted.
async fn serving(w: &World, u: &User) -> Vec<(String, Market, String)> {
    let Some(g) = crate::group(w, u, "fleet").await else {
        return Vec::new();
    };
    let vms = w.sierra.vms();
    let mut out: Vec<(String, Market, String)> = g
        .instances()
        .iter()
        .filter(|i| i.lifecycle_state().map(|s| s.as_str()) == Some("InService"))
        .map(|i| {
            let id = i.instance_id().unwrap();
            let market = vms.iter().find(|v| v.id == id).unwrap().market;
            (
                i.instance_type().unwrap().to_string(),
                market,
                i.weighted_capacity().unwrap_or("none").to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Runs until the group's InService VMs are `want` and nothing else of it is alive.
async fn serves(w: &World, u: &User, want: &[(&str, Market, &str)]) {
    let want: Vec<(String, Market, String)> = want
        .iter()
        .map(|(t, m, c)| (t.to_string(), *m, c.to_string()))
        .collect();
    w.until(60, &format!("fleet serving {want:?}"), async || {
        let now = serving(w, u).await;
        (now == want && w.sierra.alive().len() == want.len()).then_some(())
    })
    .await;
}

#[tokio::test]
async fn capacity_counts_units_and_each_vm_shows_its_weight() {
    let Given { w, u, c } = Given::user("weights").await;
    w.sierra.add_template("fleet", IMAGE, "t2.micro");
    // t2.small first, weighing 2; one unit of on-demand base, half of the rest on-demand.
    c.create_auto_scaling_group()
        .auto_scaling_group_name("fleet")
        .mixed_instances_policy(weighted_policy(
            "fleet@sierra",
            None,
            &[("t2.small", Some("2")), ("t2.micro", Some("1"))],
            split(1, 50, "capacity-optimized"),
        ))
        .min_size(0)
        .max_size(10)
        .desired_capacity(6)
        .send()
        .await
        .unwrap();
    // 6 units: 4 on-demand (1 + half of 5, rounded up), 2 spot; t2.small VMs of 2 units each.
    let small = |m| ("t2.small", m, "2");
    serves(
        &w,
        &u,
        &[
            small(Market::OnDemand),
            small(Market::OnDemand),
            small(Market::Spot),
        ],
    )
    .await;
    assert_eq!(w.sierra.launched_total(), 3);

    // To 5 units: the launch covers the one unit short with a whole t2.small (AWS's overage).
    c.desire("fleet", 7).await;
    w.until(60, "8 units serving", async || {
        (serving(&w, &u).await.len() == 4).then_some(())
    })
    .await;
    w.run_for(5).await;
    assert_eq!(w.sierra.alive().len(), 4, "no more than covers 7 units");

    // Down to 3: VMs leave while the rest still covers 3 units, no further.
    c.desire("fleet", 3).await;
    w.until(60, "2 VMs serving", async || {
        (serving(&w, &u).await.len() == 2 && w.sierra.alive().len() == 2).then_some(())
    })
    .await;
    w.run_for(5).await;
    assert_eq!(w.sierra.alive().len(), 2, "4 units cover 3; 2 would not");

    // No room for t2.small: t2.micro, as many VMs as cover the units (one each).
    w.sierra.short_of("t2.small");
    c.desire("fleet", 6).await;
    w.until(60, "6 units serving", async || {
        let now = serving(&w, &u).await;
        let units: i64 = now.iter().map(|(_, _, w)| w.parse::<i64>().unwrap()).sum();
        (units == 6 && w.sierra.alive().len() == now.len()).then_some(now)
    })
    .await;
    let now = serving(&w, &u).await;
    assert_eq!(
        now.iter()
            .filter(|(t, _, w)| t == "t2.micro" && w == "1")
            .count(),
        2,
        "{now:?}"
    );

    // DescribeAutoScalingInstances shows the weights too.
    let all = c.describe_auto_scaling_instances().send().await.unwrap();
    assert!(all
        .auto_scaling_instances()
        .iter()
        .all(|i| i.weighted_capacity().is_some()));
}

#[tokio::test]
async fn weights_are_given_on_every_override_or_none() {
    let Given { w, u, .. } = Given::user("weights-bad").await;
    w.sierra.add_template("fleet", IMAGE, "t2.micro");
    for (overrides, words) in [
        (
            vec![("t2.small", Some("2")), ("t2.micro", None)],
            "you must specify a value for WeightedCapacity for all of them",
        ),
        (
            vec![("t2.small", Some("1000"))],
            "it must be a whole number from 1 to 999",
        ),
    ] {
        let e = w
            .sdk(&u)
            .create_auto_scaling_group()
            .auto_scaling_group_name("fleet")
            .mixed_instances_policy(weighted_policy(
                "fleet@sierra",
                None,
                &overrides,
                split(0, 100, "capacity-optimized"),
            ))
            .min_size(0)
            .max_size(10)
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(e.meta().code(), Some("ValidationError"));
        assert!(e.meta().message().unwrap().contains(words), "{e:?}");
    }
}

/// A MixedInstancesPolicy of template `fleet@sierra` whose one override asks for instance types
/// by their attributes.
fn by_attributes(
    requirements: serde_json::Value,
) -> aws_sdk_autoscaling::types::MixedInstancesPolicy {
    use aws_sdk_autoscaling::types::{
        InstanceRequirements, LaunchTemplate, LaunchTemplateOverrides, LaunchTemplateSpecification,
        MemoryMiBRequest, MixedInstancesPolicy, VCpuCountRequest,
    };
    let n = |k: &str, m: &str| requirements[k][m].as_i64().map(|v| v as i32);
    let words = |k: &str| {
        requirements[k].as_array().map(|a| {
            a.iter()
                .map(|w| w.as_str().unwrap().into())
                .collect::<Vec<_>>()
        })
    };
    let r = InstanceRequirements::builder()
        .v_cpu_count(
            VCpuCountRequest::builder()
                .set_min(n("VCpuCount", "Min"))
                .set_max(n("VCpuCount", "Max"))
                .build(),
        )
        .memory_mib(
            MemoryMiBRequest::builder()
                .set_min(n("MemoryMiB", "Min"))
                .set_max(n("MemoryMiB", "Max"))
                .build(),
        )
        .set_cpu_manufacturers(words("CpuManufacturers"))
        .build();
    MixedInstancesPolicy::builder()
        .launch_template(
            LaunchTemplate::builder()
                .launch_template_specification(
                    LaunchTemplateSpecification::builder()
                        .launch_template_name("fleet@sierra")
                        .build(),
                )
                .overrides(
                    LaunchTemplateOverrides::builder()
                        .instance_requirements(r)
                        .build(),
                )
                .build(),
        )
        .instances_distribution(split(0, 100, "capacity-optimized"))
        .build()
}

#[tokio::test]
async fn instance_requirements_choose_the_clouds_types_and_capacity_counts_vcpus() {
    let Given { w, u, c } = Given::user("abs").await;
    w.sierra.add_template("fleet", IMAGE, "t2.micro");
    let policy = by_attributes(serde_json::json!({
        "VCpuCount": {"Min": 2, "Max": 2}, "MemoryMiB": {"Min": 4096},
        "CpuManufacturers": ["intel"]}));
    // vcpu without attributes, and attributes beside an instance type, are refused.
    let (code, message) = crate::failure(
        c.create_auto_scaling_group()
            .auto_scaling_group_name("fleet")
            .mixed_instances_policy(weighted_policy(
                "fleet@sierra",
                None,
                &[("t2.micro", None)],
                split(0, 100, "capacity-optimized"),
            ))
            .desired_capacity_type("vcpu")
            .min_size(0)
            .max_size(16)
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    assert!(message.contains("attribute-based"), "{message}");

    c.create_auto_scaling_group()
        .auto_scaling_group_name("fleet")
        .mixed_instances_policy(policy.clone())
        .desired_capacity_type("vcpu")
        .min_size(0)
        .max_size(16)
        .desired_capacity(8)
        .send()
        .await
        .unwrap();
    // 8 vCPUs: Intel, 2 vCPUs, 4 GiB or more, not burstable (AWS's default), smallest first:
    // four c5.large, each counting its 2 vCPUs.
    serves(&w, &u, &[("c5.large", Market::OnDemand, "2"); 4]).await;
    let g = crate::group(&w, &u, "fleet").await.unwrap();
    let (read, ids) = crate::without_template_ids(g.mixed_instances_policy().unwrap());
    assert_eq!(ids.len(), 1, "the template shown with its id");
    assert_eq!(read, policy, "read back as sent");
    assert_eq!(g.desired_capacity_type(), Some("vcpu"));

    // No room for c5.large: the next type that matches, m5.large.
    w.sierra.short_of("c5.large");
    c.desire("fleet", 12).await;
    w.until(60, "12 vCPUs serving", async || {
        let now = serving(&w, &u).await;
        let units: i64 = now.iter().map(|(_, _, w)| w.parse::<i64>().unwrap()).sum();
        (units == 12).then_some(())
    })
    .await;
    let now = serving(&w, &u).await;
    assert_eq!(
        now.iter().filter(|(t, _, _)| t == "m5.large").count(),
        2,
        "{now:?}"
    );
}

/// AWS's spot price protection for types chosen by their attributes: a type whose spot price is
/// more than 100 % above the lowest of those that match is passed over.
#[tokio::test]
async fn spot_types_chosen_by_attributes_keep_to_the_price_protection() {
    use aws_sdk_autoscaling::types::InstancesDistribution;
    let Given { w, u, .. } = Given::user("abs-spot").await;
    w.sierra.add_template("fleet", IMAGE, "t2.micro");
    // c5.large comes first by size, but its spot price is 5 times m5.large's.
    w.sierra.set_spot_price("c5.large", 0.5);
    w.sierra.set_spot_price("m5.large", 0.1);
    w.sierra.set_spot_price("m5a.large", 0.12);
    let mut policy = by_attributes(serde_json::json!({
        "VCpuCount": {"Min": 2, "Max": 2}, "MemoryMiB": {"Min": 4096},
        "CpuManufacturers": ["intel", "amd"]}));
    policy.instances_distribution = Some(
        InstancesDistribution::builder()
            .on_demand_percentage_above_base_capacity(0)
            .spot_allocation_strategy("capacity-optimized")
            .build(),
    );
    w.sdk(&u)
        .create_auto_scaling_group()
        .auto_scaling_group_name("fleet")
        .mixed_instances_policy(policy)
        .min_size(0)
        .max_size(4)
        .desired_capacity(2)
        .send()
        .await
        .unwrap();
    serves(&w, &u, &[("m5.large", Market::Spot, "none"); 2]).await;
}

/// Found by the simulator (`no-flap`): spot t2.micro is short, so each spot unit falls back to a
/// two-unit t2.small. A round fulfils its units once in all (the heavier batch first, its overage
/// off the others) and keeps a launch's overage, as AWS does: no VM is launched to be let go.
#[tokio::test]
async fn a_fallback_to_a_heavier_type_launches_the_units_once_and_keeps_its_overage() {
    // (on-demand base, percentage above it): the units each market gets of 3.
    for (base, above) in [(0, 50), (1, 0), (0, 0)] {
        let Given { w, u: _, c } = Given::user("heavier").await;
        w.sierra.add_template("fleet", IMAGE, "t2.micro");
        w.sierra.set_spot_price("t2.micro", 0.012);
        w.sierra.set_spot_price("t2.small", 0.006);
        w.sierra.spot_short_of("t2.micro", true);
        c.create_auto_scaling_group()
            .auto_scaling_group_name("fleet")
            .mixed_instances_policy(weighted_policy(
                "fleet@sierra",
                None,
                &[("t2.micro", Some("1")), ("t2.small", Some("2"))],
                split(base, above, "lowest-price"),
            ))
            .availability_zones("us-east-1a")
            .availability_zones("us-east-1b")
            .min_size(1)
            .max_size(5)
            .desired_capacity(3)
            .send()
            .await
            .unwrap();
        w.run_for(20).await;
        let acts = c
            .describe_scaling_activities()
            .auto_scaling_group_name("fleet")
            .send()
            .await
            .unwrap();
        let causes: Vec<&str> = acts.activities().iter().filter_map(|a| a.cause()).collect();
        assert!(
            causes.iter().all(|c| !c.contains("shrinking")),
            "{base}/{above}: a VM launched to be let go: {causes:#?}"
        );
        let units: i64 = w
            .sierra
            .alive()
            .iter()
            .map(|id| {
                let v = w.sierra.vms().into_iter().find(|v| &v.id == id).unwrap();
                if v.instance_type == "t2.small" {
                    2
                } else {
                    1
                }
            })
            .sum();
        assert!(
            (3..=4).contains(&units),
            "{base}/{above}: {units} units for 3 (at most a VM's overage)"
        );
    }
}
