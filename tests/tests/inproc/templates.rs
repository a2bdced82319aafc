//! Launch templates: groups from `LaunchTemplate` and `MixedInstancesPolicy`, the template read
//! on the group's cloud when it launches (`web@sierra`), overrides tried in order, and what is
//! refused.

use crate::provisioning::{activities, converges};
use crate::Given;
use crate::{create_group, create_lc, group, invalid};
use aws_sdk_autoscaling::types::{
    InstancesDistribution, LaunchTemplate, LaunchTemplateOverrides, LaunchTemplateSpecification,
    MixedInstancesPolicy,
};
use phantom_e2e::steps::Steps;
use phantom_e2e::world::{World, IMAGE};
use phantom_seams::store::Directory;

fn spec(name: &str, version: &str) -> LaunchTemplateSpecification {
    LaunchTemplateSpecification::builder()
        .launch_template_name(name)
        .version(version)
        .build()
}

/// Within a few seconds the group has a failed activity saying `why`.
async fn failed_with(w: &World, u: &phantom_e2e::User, group: &str, why: &str) {
    w.run_for(3).await;
    let acts = activities(w, u, group).await;
    assert!(
        acts.iter()
            .any(|a| a.status_message().is_some_and(|m| m.contains(why))),
        "{acts:?}"
    );
}

#[tokio::test]
async fn a_group_launches_from_a_template_on_its_cloud() {
    let Given { w, u, c } = Given::user("lt").await;
    let id = w.hotel.add_template("web", IMAGE, "m5.large");
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_template(spec("web@hotel", "$Latest"))
        .min_size(0)
        .max_size(4)
        .desired_capacity(2)
        .send()
        .await
        .unwrap();
    converges(&w, &u, "hotel", "web", 2).await;
    assert!(w.hotel.vms().iter().all(|v| v.instance_type == "m5.large"));
    let g = group(&w, &u, "web").await.unwrap();
    // Shown with both its id and its name, as AWS shows a template (Ansible and Terraform read
    // both), the cloud's suffix as the group gave it.
    let both = (
        Some(format!("{id}@hotel")),
        Some("web@hotel".to_string()),
        Some("$Latest".to_string()),
    );
    let shown = |lt: &aws_sdk_autoscaling::types::LaunchTemplateSpecification| {
        (
            lt.launch_template_id().map(str::to_string),
            lt.launch_template_name().map(str::to_string),
            lt.version().map(str::to_string),
        )
    };
    assert_eq!(shown(g.launch_template().unwrap()), both);
    assert_eq!(g.launch_configuration_name(), None);
    assert!(g
        .instances()
        .iter()
        .all(|i| i.launch_configuration_name().is_none() && i.instance_type() == Some("m5.large")));
    // Each instance shows the number of the version it was launched from ($Latest then).
    let launched_from = (both.0.clone(), both.1.clone(), Some("1".to_string()));
    assert!(g
        .instances()
        .iter()
        .all(|i| shown(i.launch_template().unwrap()) == launched_from));
    let described = c.describe_auto_scaling_instances().send().await.unwrap();
    for i in described.auto_scaling_instances() {
        assert_eq!(shown(i.launch_template().unwrap()), launched_from);
    }

    // From a launch configuration to a template and back; the configuration is in use only
    // while the group uses it.
    create_lc(&w, &u, "old@hotel").await;
    create_group(&w, &u, "moving", "old@hotel", 0, 2, 1).await;
    c.update("moving", |g| g.launch_template(spec("web@hotel", "1")))
        .await;
    let g = group(&w, &u, "moving").await.unwrap();
    assert_eq!(g.launch_configuration_name(), None);
    assert_eq!(g.launch_template().unwrap().version(), Some("1"));
    c.delete_launch_configuration()
        .launch_configuration_name("old@hotel")
        .send()
        .await
        .expect("no longer in use");
    let message = invalid(
        c.update_auto_scaling_group()
            .auto_scaling_group_name("moving")
            .launch_template(spec("web@sierra", "$Latest"))
            .send()
            .await,
    );
    assert!(message.contains("stays on its cloud"), "{message}");

    // A template group is deleted like any other.
    c.force_delete("web").await;
    w.until(10, "the template group gone", async || {
        group(&w, &u, "web").await.is_none().then_some(())
    })
    .await;

    // A template the cloud does not have (or not at that version) is refused at once, as AWS
    // refuses it, with nothing written.
    for (template, version) in [("nope@hotel", "$Default"), ("web@hotel", "7")] {
        let message = invalid(
            c.create_auto_scaling_group()
                .auto_scaling_group_name("ghost")
                .launch_template(spec(template, version))
                .min_size(1)
                .max_size(1)
                .send()
                .await,
        );
        assert!(
            message.contains("valid fully-formed launch template") && message.contains(version),
            "{message}"
        );
        assert!(group(&w, &u, "ghost").await.is_none());
    }
    let message = invalid(
        c.update_auto_scaling_group()
            .auto_scaling_group_name("moving")
            .launch_template(spec("nope@hotel", "$Latest"))
            .send()
            .await,
    );
    assert!(message.contains("template name nope"), "{message}");
    let g = group(&w, &u, "moving").await.unwrap();
    assert_eq!(
        g.launch_template().unwrap().launch_template_name(),
        Some("web@hotel")
    );

    // A cloud that cannot be asked does not block the request: the provisioner finds the
    // template missing when it launches, a failed activity with the cloud's words.
    w.hotel.set_unreachable(true);
    c.create_auto_scaling_group()
        .auto_scaling_group_name("ghost")
        .launch_template(spec("nope@hotel", "$Default"))
        .min_size(1)
        .max_size(1)
        .send()
        .await
        .unwrap();
    w.hotel.set_unreachable(false);
    failed_with(
        &w,
        &u,
        "ghost",
        "InvalidLaunchTemplateName.NotFoundException",
    )
    .await;
}

#[tokio::test]
async fn mixed_instances_overrides_are_tried_in_order() {
    let Given { w, u, c } = Given::user("mixed").await;
    w.sierra.add_template("batch", IMAGE, "t2.micro");
    let big = w.sierra.add_template("big", IMAGE, "m5.large");
    w.sierra.short_of("c5.large");
    let policy = |strategy: &str, percent: i32| {
        MixedInstancesPolicy::builder()
            .launch_template(
                LaunchTemplate::builder()
                    .launch_template_specification(spec("batch@sierra", "$Latest"))
                    .overrides(
                        LaunchTemplateOverrides::builder()
                            .instance_type("c5.large")
                            .build(),
                    )
                    .overrides(
                        LaunchTemplateOverrides::builder()
                            .instance_type("m5.large")
                            .launch_template_specification(spec("big@sierra", "$Latest"))
                            .build(),
                    )
                    .build(),
            )
            .instances_distribution(
                InstancesDistribution::builder()
                    .on_demand_allocation_strategy(strategy)
                    .on_demand_percentage_above_base_capacity(percent)
                    .build(),
            )
            .build()
    };
    c.create_auto_scaling_group()
        .auto_scaling_group_name("batch")
        .mixed_instances_policy(policy("prioritized", 100))
        .min_size(0)
        .max_size(3)
        .desired_capacity(3)
        .send()
        .await
        .unwrap();
    converges(&w, &u, "sierra", "batch", 3).await;
    assert!(
        w.sierra.vms().iter().all(|v| v.instance_type == "m5.large"),
        "c5.large has no capacity: the next override"
    );
    let g = group(&w, &u, "batch").await.unwrap();
    let overrides = g
        .mixed_instances_policy()
        .unwrap()
        .launch_template()
        .unwrap()
        .overrides();
    assert_eq!(overrides.len(), 2, "described as given");
    // Each VM shows the template it was launched from, its override's own, as AWS shows it.
    for i in g.instances() {
        let lt = i.launch_template().unwrap();
        assert_eq!(
            (
                lt.launch_template_id(),
                lt.launch_template_name(),
                lt.version()
            ),
            (
                Some(format!("{big}@sierra").as_str()),
                Some("big@sierra"),
                Some("1")
            )
        );
    }

    for (policy, want) in [
        (policy("prioritized", 150), "between 0 and 100"),
        (policy("cheapest", 100), "OnDemandAllocationStrategy"),
    ] {
        let message = invalid(
            c.create_auto_scaling_group()
                .auto_scaling_group_name("refused")
                .mixed_instances_policy(policy)
                .min_size(0)
                .max_size(1)
                .send()
                .await,
        );
        assert!(message.contains(want), "{message}");
    }
    create_lc(&w, &u, "lc@hotel").await;
    let refusals = [
        (
            c.create_auto_scaling_group()
                .launch_configuration_name("lc@hotel")
                .launch_template(spec("batch@sierra", "$Latest")),
            "Valid requests must contain either LaunchTemplate, LaunchConfigurationName, InstanceId or MixedInstancesPolicy parameter.",
        ),
        (
            c.create_auto_scaling_group()
                .launch_template(spec("batch@sierra", "latest")),
            "Invalid launch template version",
        ),
        (
            c.create_auto_scaling_group()
                .launch_template(spec("batch@nowhere", "$Latest")),
            "not registered",
        ),
        (
            c.create_auto_scaling_group().launch_template(
                LaunchTemplateSpecification::builder()
                    .launch_template_id("lt-1@sierra")
                    .launch_template_name("batch@sierra")
                    .build(),
            ),
            "not both",
        ),
    ];
    for (call, want) in refusals {
        let message = invalid(
            call.auto_scaling_group_name("refused")
                .min_size(0)
                .max_size(1)
                .send()
                .await,
        );
        assert!(message.contains(want), "{message}");
    }
    assert!(group(&w, &u, "refused").await.is_none(), "nothing written");

    // A cloud whose EC2 API has no launch templates says so in the group's activities.
    w.hotel.without_templates();
    c.create_auto_scaling_group()
        .auto_scaling_group_name("plain")
        .launch_template(spec("any@hotel", "$Latest"))
        .min_size(1)
        .max_size(1)
        .send()
        .await
        .unwrap();
    failed_with(&w, &u, "plain", "not supported by this cloud").await;
}

/// A cloud registered without launch templates refuses template groups at once.
#[tokio::test]
async fn a_cloud_registered_without_templates_refuses_template_groups() {
    let w = World::new().await;
    w.add_cloud("plain").await;
    let mut plain = w.store.cloud("plain").await.unwrap().expect("registered");
    plain.launch_templates = false;
    w.store.put_cloud(&plain).await.unwrap();
    let u = w.user("plain").await;
    let c = w.sdk(&u);
    let message = invalid(
        c.create_auto_scaling_group()
            .auto_scaling_group_name("web")
            .launch_template(spec("web@plain", "$Latest"))
            .min_size(0)
            .max_size(1)
            .send()
            .await,
    );
    assert!(message.contains("has no launch templates"), "{message}");
    create_lc(&w, &u, "web@plain").await;
    create_group(&w, &u, "web", "web@plain", 0, 1, 0).await;
    invalid(
        c.update_auto_scaling_group()
            .auto_scaling_group_name("web")
            .launch_template(spec("web@plain", "$Latest"))
            .send()
            .await,
    );
    assert!(group(&w, &u, "web")
        .await
        .unwrap()
        .launch_template()
        .is_none());
}
