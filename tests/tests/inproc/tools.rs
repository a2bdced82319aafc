//! The actions Terraform, Ansible, cluster-autoscaler and Nomad call, each with its effect, and
//! their call sequences replayed with aws-sdk-autoscaling.

use crate::provisioning::{activities, converges, in_service};
use crate::{create_group, create_lc, failure, group, invalid, Given};
use aws_sdk_autoscaling::types::{Filter, LifecycleState, Tag};
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_model::time::Clock;
use std::collections::BTreeSet;

fn tag(group: &str, key: &str, value: &str, propagate: bool) -> Tag {
    Tag::builder()
        .resource_id(group)
        .resource_type("auto-scaling-group")
        .key(key)
        .value(value)
        .propagate_at_launch(propagate)
        .build()
}

async fn setup(w: &World, prefix: &str, desired: i32) -> User {
    let u = w.user(prefix).await;
    create_lc(w, &u, "web@hotel").await;
    create_group(w, &u, "web", "web@hotel", 0, 5, desired).await;
    converges(w, &u, "hotel", "web", desired as usize).await;
    u
}

#[tokio::test]
async fn update_auto_scaling_group_changes_sizes_settings_and_launch_configuration() {
    let w = World::new().await;
    let u = setup(&w, "update", 2).await;
    let c = w.sdk(&u);
    // A new MinSize above desired raises it; a new MaxSize below lowers it.
    c.update("web", |g| g.min_size(3)).await;
    converges(&w, &u, "hotel", "web", 3).await;
    c.update("web", |g| {
        g.min_size(0)
            .max_size(1)
            .health_check_grace_period(45)
            .termination_policies("NewestInstance")
            .new_instances_protected_from_scale_in(false)
            .default_cooldown(120)
    })
    .await;
    converges(&w, &u, "hotel", "web", 1).await;
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(
        (g.min_size(), g.max_size(), g.desired_capacity()),
        (Some(0), Some(1), Some(1))
    );
    assert_eq!(g.health_check_grace_period(), Some(45));
    assert_eq!(g.default_cooldown(), Some(120));
    assert_eq!(g.termination_policies(), ["NewestInstance"]);

    // A new launch configuration on the same cloud applies to VMs launched from now on.
    create_lc(&w, &u, "web2@hotel").await;
    c.update("web", |g| {
        g.launch_configuration_name("web2@hotel")
            .max_size(3)
            .desired_capacity(3)
    })
    .await;
    converges(&w, &u, "hotel", "web", 3).await;
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.launch_configuration_name(), Some("web2@hotel"));
    let lcs: Vec<&str> = g
        .instances()
        .iter()
        .filter_map(|i| i.launch_configuration_name())
        .collect();
    assert_eq!(lcs.iter().filter(|l| **l == "web2@hotel").count(), 2);
    // The old launch configuration is free again, the new one in use.
    c.delete_launch_configuration()
        .launch_configuration_name("web@hotel")
        .send()
        .await
        .expect("web@hotel no longer in use");
    let (code, _) = failure(
        c.delete_launch_configuration()
            .launch_configuration_name("web2@hotel")
            .send()
            .await,
    );
    assert_eq!(code, "ResourceInUse");

    // Refusals, with nothing changed.
    create_lc(&w, &u, "web@sierra").await;
    for (what, call) in [
        (
            "min above max",
            c.update_auto_scaling_group()
                .auto_scaling_group_name("web")
                .min_size(4)
                .max_size(2),
        ),
        (
            "a launch configuration of another cloud",
            c.update_auto_scaling_group()
                .auto_scaling_group_name("web")
                .launch_configuration_name("web@sierra"),
        ),
        (
            "an unknown launch configuration",
            c.update_auto_scaling_group()
                .auto_scaling_group_name("web")
                .launch_configuration_name("nope@hotel"),
        ),
        (
            "an unknown group",
            c.update_auto_scaling_group()
                .auto_scaling_group_name("nope")
                .min_size(1),
        ),
    ] {
        let (code, message) = failure(call.send().await);
        assert_eq!(code, "ValidationError", "{what}: {message}");
    }
    let after = group(&w, &u, "web").await.unwrap();
    assert_eq!(after.launch_configuration_name(), Some("web2@hotel"));
    assert_eq!((after.min_size(), after.max_size()), (Some(0), Some(3)));
}

#[tokio::test]
async fn tags_are_created_replaced_described_deleted_and_propagate_to_new_vms() {
    let w = World::new().await;
    let u = setup(&w, "tags", 1).await;
    let c = w.sdk(&u);
    create_group(&w, &u, "db", "web@hotel", 0, 5, 0).await;
    c.create_or_update_tags()
        .tags(tag("web", "env", "prod", true))
        .tags(tag("web", "team", "a", false))
        .tags(tag("db", "env", "test", false))
        .send()
        .await
        .unwrap();
    c.create_or_update_tags()
        .tags(tag("web", "team", "b", false))
        .send()
        .await
        .unwrap();
    let all = c.describe_tags().send().await.unwrap();
    let kv: Vec<(&str, &str, &str)> = all
        .tags()
        .iter()
        .map(|t| {
            (
                t.resource_id().unwrap(),
                t.key().unwrap(),
                t.value().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kv,
        [
            ("db", "env", "test"),
            ("web", "env", "prod"),
            ("web", "team", "b")
        ]
    );
    let filtered = c
        .describe_tags()
        .filters(Filter::builder().name("key").values("env").build())
        .filters(Filter::builder().name("value").values("prod").build())
        .send()
        .await
        .unwrap();
    assert_eq!(filtered.tags().len(), 1);
    // Paging, one at a time.
    let mut token = None;
    let mut seen = 0;
    loop {
        let page = c
            .describe_tags()
            .max_records(1)
            .set_next_token(token)
            .send()
            .await
            .unwrap();
        seen += page.tags().len();
        token = page.next_token().map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    assert_eq!(seen, 3);
    // DescribeAutoScalingGroups shows them, and the tag filter finds the group by them
    // (cluster-autoscaler's auto-discovery).
    let by_tag = c
        .describe_auto_scaling_groups()
        .filters(Filter::builder().name("tag:env").values("prod").build())
        .send()
        .await
        .unwrap();
    assert_eq!(by_tag.auto_scaling_groups().len(), 1);
    // A VM launched now carries the propagated tag; the others do not get it.
    c.desire("web", 2).await;
    converges(&w, &u, "hotel", "web", 2).await;
    let tagged = w
        .hotel
        .vms()
        .into_iter()
        .filter(|v| v.tags.get("env").map(String::as_str) == Some("prod"))
        .count();
    assert_eq!(tagged, 1, "only the VM launched after the tag");
    assert!(w.hotel.vms().iter().all(|v| !v.tags.contains_key("team")));

    c.delete_tags()
        .tags(
            Tag::builder()
                .resource_id("web")
                .resource_type("auto-scaling-group")
                .key("team")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let left = c.describe_tags().send().await.unwrap();
    assert_eq!(left.tags().len(), 2);
    // An unknown group changes nothing, even beside a known one.
    let (code, _) = failure(
        c.create_or_update_tags()
            .tags(tag("web", "x", "1", false))
            .tags(tag("nope", "x", "1", false))
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    assert_eq!(c.describe_tags().send().await.unwrap().tags().len(), 2);
}

#[tokio::test]
async fn terminate_instance_with_and_without_decrement_returns_its_activity() {
    let w = World::new().await;
    let u = setup(&w, "term", 3).await;
    let c = w.sdk(&u);
    let ids = in_service(&w, &u, "web").await;
    // Nomad: terminate with a decrement, then follow the activity by id until Progress 100.
    let out = c
        .terminate_instance_in_auto_scaling_group()
        .instance_id(&ids[0])
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .unwrap();
    let act = out.activity().expect("the activity");
    assert!(act
        .cause()
        .unwrap()
        .contains("shrinking the capacity from 3 to 2"));
    // InProgress (0) as AWS answers, Successful (100) once the VM has gone.
    assert_eq!(act.progress(), Some(0));
    assert_eq!(act.status_code().map(|s| s.as_str()), Some("InProgress"));
    assert!(act.end_time().is_none());
    w.until(30, "the activity at 100", async || {
        let found = c
            .describe_scaling_activities()
            .activity_ids(act.activity_id().unwrap())
            .send()
            .await
            .unwrap();
        let a = &found.activities()[0];
        (a.progress() == Some(100) && a.end_time().is_some()).then_some(())
    })
    .await;
    let left = converges(&w, &u, "hotel", "web", 2).await;
    assert!(!left.contains(&ids[0]));
    assert!(
        !w.hotel.alive().contains(&ids[0]),
        "terminated on the cloud"
    );
    assert_eq!(
        group(&w, &u, "web").await.unwrap().desired_capacity(),
        Some(2)
    );
    // Without: replaced.
    c.terminate_instance_in_auto_scaling_group()
        .instance_id(&ids[1])
        .should_decrement_desired_capacity(false)
        .send()
        .await
        .unwrap();
    let after = converges(&w, &u, "hotel", "web", 2).await;
    assert!(!after.contains(&ids[1]));
    // Below min, or an instance of no group: refused.
    c.update("web", |g| g.min_size(2)).await;
    let message = invalid(
        c.terminate_instance_in_auto_scaling_group()
            .instance_id(&after[0])
            .should_decrement_desired_capacity(true)
            .send()
            .await,
    );
    assert!(message.contains("min size"), "{message}");
    invalid(
        c.terminate_instance_in_auto_scaling_group()
            .instance_id("i-00000000000000000")
            .should_decrement_desired_capacity(false)
            .send()
            .await,
    );
    // Another user's instance is not found either.
    let other = w.user("other").await;
    invalid(
        w.sdk(&other)
            .terminate_instance_in_auto_scaling_group()
            .instance_id(&after[0])
            .should_decrement_desired_capacity(false)
            .send()
            .await,
    );
    assert_eq!(in_service(&w, &u, "web").await, after);
}

#[tokio::test]
async fn instance_health_and_protection() {
    let w = World::new().await;
    let u = setup(&w, "health", 2).await;
    let c = w.sdk(&u);
    let ids = in_service(&w, &u, "web").await;
    c.set_instance_health()
        .instance_id(&ids[0])
        .health_status("Unhealthy")
        .send()
        .await
        .unwrap();
    let after = converges(&w, &u, "hotel", "web", 2).await;
    assert!(
        !after.contains(&ids[0]),
        "the unhealthy instance is replaced"
    );
    assert!(activities(&w, &u, "web")
        .await
        .iter()
        .any(|a| a.cause().unwrap().contains("set unhealthy")));

    // Protected instances stay on scale-in.
    c.set_instance_protection()
        .auto_scaling_group_name("web")
        .instance_ids(&after[1])
        .protected_from_scale_in(true)
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    let protected: Vec<&str> = g
        .instances()
        .iter()
        .filter(|i| i.protected_from_scale_in() == Some(true))
        .filter_map(|i| i.instance_id())
        .collect();
    assert_eq!(protected, [after[1].as_str()]);
    c.desire("web", 1).await;
    assert_eq!(
        converges(&w, &u, "hotel", "web", 1).await,
        [after[1].clone()]
    );
    invalid(
        c.set_instance_protection()
            .auto_scaling_group_name("web")
            .instance_ids("i-00000000000000000")
            .protected_from_scale_in(true)
            .send()
            .await,
    );

    // Within the grace period, and asked to respect it, an Unhealthy report is ignored.
    c.update("web", |g| {
        g.health_check_grace_period(300).desired_capacity(2)
    })
    .await;
    let two = converges(&w, &u, "hotel", "web", 2).await;
    let young = two.iter().find(|id| **id != after[1]).unwrap().clone();
    c.set_instance_health()
        .instance_id(&young)
        .health_status("Unhealthy")
        .should_respect_grace_period(true)
        .send()
        .await
        .unwrap();
    w.run_for(3).await;
    assert!(in_service(&w, &u, "web").await.contains(&young));
}

#[tokio::test]
async fn suspended_processes_hold_back_what_they_name() {
    let w = World::new().await;
    let u = setup(&w, "suspend", 2).await;
    let c = w.sdk(&u);
    c.suspend_processes()
        .auto_scaling_group_name("web")
        .scaling_processes("Launch")
        .scaling_processes("ReplaceUnhealthy")
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    let names: Vec<&str> = g
        .suspended_processes()
        .iter()
        .filter_map(|p| p.process_name())
        .collect();
    assert_eq!(names, ["Launch", "ReplaceUnhealthy"]);
    // No launch while Launch is suspended.
    c.desire("web", 3).await;
    w.run_for(5).await;
    assert_eq!(w.hotel.alive().len(), 2);
    // A dead VM stays listed, Unhealthy, while ReplaceUnhealthy is suspended.
    let ids = in_service(&w, &u, "web").await;
    w.hotel.terminate_outside(&ids[0]);
    w.run_for(5).await;
    let g = group(&w, &u, "web").await.unwrap();
    let dead = g
        .instances()
        .iter()
        .find(|i| i.instance_id() == Some(ids[0].as_str()))
        .expect("still listed");
    assert_eq!(dead.health_status(), Some("Unhealthy"));
    // Resumed: replaced, and scaled out.
    c.resume_processes()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    let after = converges(&w, &u, "hotel", "web", 3).await;
    assert!(!after.contains(&ids[0]));
    assert!(group(&w, &u, "web")
        .await
        .unwrap()
        .suspended_processes()
        .is_empty());
    invalid(
        c.suspend_processes()
            .auto_scaling_group_name("web")
            .scaling_processes("Lunch")
            .send()
            .await,
    );
}

#[tokio::test]
async fn metrics_collection_lifecycle_hooks_and_catalogues() {
    let w = World::new().await;
    let u = setup(&w, "meta", 0).await;
    let c = w.sdk(&u);
    c.enable_metrics_collection()
        .auto_scaling_group_name("web")
        .granularity("1Minute")
        .metrics("GroupMinSize")
        .metrics("GroupMaxSize")
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.enabled_metrics().len(), 2);
    c.disable_metrics_collection()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    assert!(group(&w, &u, "web")
        .await
        .unwrap()
        .enabled_metrics()
        .is_empty());
    invalid(
        c.enable_metrics_collection()
            .auto_scaling_group_name("web")
            .granularity("5Minute")
            .send()
            .await,
    );

    let hooks = c.hooks("web").await;
    assert!(hooks.lifecycle_hooks().is_empty());
    invalid(
        c.describe_lifecycle_hooks()
            .auto_scaling_group_name("nope")
            .send()
            .await,
    );

    let processes = c.describe_scaling_process_types().send().await.unwrap();
    assert_eq!(processes.processes().len(), 9);
    let policies = c.describe_termination_policy_types().send().await.unwrap();
    assert!(policies
        .termination_policy_types()
        .contains(&"OldestInstance".to_string()));
    let metrics = c.describe_metric_collection_types().send().await.unwrap();
    assert_eq!(metrics.granularities().len(), 1);
    assert_eq!(metrics.metrics().len(), 20);
}

/// Terraform's aws_autoscaling_group: create, then its capacity wait (activities since the apply
/// began, none Failed; min(desired) instances Healthy and InService); update with tags; destroy
/// without force_delete: update to 0/0/0, wait for no instances, delete, wait until absent.
#[tokio::test]
async fn terraforms_create_update_and_destroy_sequence() {
    let Given { w, u, c } = Given::user("tf").await;
    create_lc(&w, &u, "tf@hotel").await;
    c.create_auto_scaling_group()
        .auto_scaling_group_name("tf")
        .launch_configuration_name("tf@hotel")
        .min_size(2)
        .max_size(4)
        .desired_capacity(2)
        .health_check_grace_period(300)
        .tags(tag("tf", "Name", "tf", true))
        .send()
        .await
        .unwrap();
    w.until(60, "Terraform's capacity wait", async || {
        let acts = c.activities("tf").await;
        assert!(acts
            .activities()
            .iter()
            .all(|a| a.status_code().map(|s| s.as_str()) != Some("Failed")));
        let g = group(&w, &u, "tf").await.unwrap();
        let ready = g
            .instances()
            .iter()
            .filter(|i| {
                i.health_status() == Some("Healthy")
                    && i.lifecycle_state() == Some(&LifecycleState::InService)
            })
            .count();
        (ready == 2).then_some(())
    })
    .await;
    // Read: every field as sent.
    let g = group(&w, &u, "tf").await.unwrap();
    assert_eq!(g.health_check_grace_period(), Some(300));
    assert_eq!(g.tags()[0].propagate_at_launch(), Some(true));
    // Update, then tags by DeleteTags + CreateOrUpdateTags.
    c.update("tf", |g| g.max_size(5).desired_capacity(3)).await;
    c.delete_tags()
        .tags(tag("tf", "Name", "tf", true))
        .send()
        .await
        .unwrap();
    c.create_or_update_tags()
        .tags(tag("tf", "Name", "tf2", true))
        .send()
        .await
        .unwrap();
    converges(&w, &u, "hotel", "tf", 3).await;
    // Destroy.
    c.update("tf", |g| g.min_size(0).max_size(0).desired_capacity(0))
        .await;
    w.until(60, "no instances", async || {
        group(&w, &u, "tf")
            .await
            .unwrap()
            .instances()
            .is_empty()
            .then_some(())
    })
    .await;
    c.delete_group("tf").await;
    assert!(group(&w, &u, "tf").await.is_none());
    assert!(w.hotel.alive().is_empty());
}

/// Terraform's aws_autoscaling_schedule (terraform-provider-aws, internal/service/autoscaling/
/// schedule.go): create and update are the same PutScheduledUpdateGroupAction with every size
/// Terraform holds; read is DescribeScheduledActions by group and the one name, paged, expecting
/// exactly one; destroy is DeleteScheduledAction, where a ValidationError saying "not found"
/// counts as already gone; a refresh after it finds nothing and drops the resource.
#[tokio::test]
async fn terraforms_schedule_sequence() {
    let w = World::new().await;
    let u = setup(&w, "tfs", 1).await;
    let c = w.sdk(&u);
    let put = |desired: i32| {
        c.put_scheduled_update_group_action()
            .auto_scaling_group_name("web")
            .scheduled_action_name("morning")
            .recurrence("0 9 * * *")
            .time_zone("Europe/Paris")
            .min_size(1)
            .max_size(5)
            .desired_capacity(desired)
            .send()
    };
    let read = || async {
        let mut found = Vec::new();
        let mut pages = c
            .describe_scheduled_actions()
            .auto_scaling_group_name("web")
            .scheduled_action_names("morning")
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            found.extend(page.unwrap().scheduled_update_group_actions().to_vec());
        }
        found
    };
    put(2).await.unwrap();
    let created = read().await;
    assert_eq!(created.len(), 1, "{created:?}");
    let a = &created[0];
    assert_eq!(a.recurrence(), Some("0 9 * * *"));
    assert_eq!(a.time_zone(), Some("Europe/Paris"));
    assert_eq!(
        (a.min_size(), a.max_size(), a.desired_capacity()),
        (Some(1), Some(5), Some(2))
    );
    // Terraform keeps start_time as the next run, in its layout 2006-01-02T15:04:05Z.
    let next = a.start_time().expect("the next run as StartTime");
    assert!(next.secs() > w.clock.now_ms() / 1000, "{next:?}");
    let arn = a.scheduled_action_arn().unwrap().to_string();

    put(3).await.unwrap();
    let updated = read().await;
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0].desired_capacity(), Some(3));
    assert_eq!(
        updated[0].scheduled_action_arn(),
        Some(arn.as_str()),
        "the same action"
    );

    let delete = || {
        c.delete_scheduled_action()
            .auto_scaling_group_name("web")
            .scheduled_action_name("morning")
            .send()
    };
    delete().await.unwrap();
    assert!(read().await.is_empty(), "refresh finds nothing");
    let message = invalid(delete().await);
    assert!(
        message.contains("not found"),
        "Terraform's test for gone: {message}"
    );
}

/// Kubernetes cluster-autoscaler's AWS provider: finds its node groups by tag filters, reads their
/// launch configurations for the instance type, scales up with SetDesiredCapacity and scales down
/// by terminating chosen nodes with a decrement, watching the activities for failures.
#[tokio::test]
async fn cluster_autoscalers_sequence() {
    let Given { w, u, c } = Given::user("ca").await;
    create_lc(&w, &u, "nodes@hotel").await;
    create_lc(&w, &u, "other@sierra").await;
    for (name, lc, tagged) in [
        ("nodes", "nodes@hotel", true),
        ("other", "other@sierra", false),
    ] {
        let mut create = c
            .create_auto_scaling_group()
            .auto_scaling_group_name(name)
            .launch_configuration_name(lc)
            .min_size(1)
            .max_size(5)
            .desired_capacity(1);
        if tagged {
            create = create
                .tags(tag(
                    name,
                    "k8s.io/cluster-autoscaler/enabled",
                    "true",
                    false,
                ))
                .tags(tag(name, "k8s.io/cluster-autoscaler/demo", "owned", false));
        }
        create.send().await.unwrap();
    }
    // Auto-discovery: both tag keys.
    let found = c
        .describe_auto_scaling_groups()
        .filters(
            Filter::builder()
                .name("tag-key")
                .values("k8s.io/cluster-autoscaler/enabled")
                .build(),
        )
        .filters(
            Filter::builder()
                .name("tag-key")
                .values("k8s.io/cluster-autoscaler/demo")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let names: Vec<&str> = found
        .auto_scaling_groups()
        .iter()
        .filter_map(|g| g.auto_scaling_group_name())
        .collect();
    assert_eq!(names, ["nodes"]);
    let lc_name = found.auto_scaling_groups()[0]
        .launch_configuration_name()
        .unwrap()
        .to_string();
    let lcs = c
        .describe_launch_configurations()
        .launch_configuration_names(&lc_name)
        .send()
        .await
        .unwrap();
    assert_eq!(
        lcs.launch_configurations()[0].instance_type(),
        Some("t2.micro")
    );

    // Scale up for pending pods.
    c.set_desired_capacity()
        .auto_scaling_group_name("nodes")
        .desired_capacity(3)
        .honor_cooldown(false)
        .send()
        .await
        .unwrap();
    let nodes = converges(&w, &u, "hotel", "nodes", 3).await;
    let acts = activities(&w, &u, "nodes").await;
    assert!(acts
        .iter()
        .all(|a| a.status_code().map(|s| s.as_str()) != Some("Failed")));

    // Scale down two empty nodes, one at a time, each with a decrement; the last one cannot go
    // below MinSize.
    for (i, node) in nodes[..2].iter().enumerate() {
        c.terminate_instance_in_auto_scaling_group()
            .instance_id(node)
            .should_decrement_desired_capacity(true)
            .send()
            .await
            .unwrap();
        let want = 2 - i;
        assert_eq!(
            group(&w, &u, "nodes").await.unwrap().desired_capacity(),
            Some(want as i32)
        );
    }
    let left = converges(&w, &u, "hotel", "nodes", 1).await;
    assert_eq!(
        left,
        [nodes[2].clone()],
        "the chosen nodes went, not others"
    );
    let message = invalid(
        c.terminate_instance_in_auto_scaling_group()
            .instance_id(&nodes[2])
            .should_decrement_desired_capacity(true)
            .send()
            .await,
    );
    assert!(message.contains("min size"), "{message}");
}

/// The Nomad Autoscaler's aws-asg target: reads the group, scales out with
/// UpdateAutoScalingGroup and waits for InService; scales in by tagging, terminating chosen
/// instances with a decrement, and polling DescribeScalingActivities by the returned ActivityIds
/// until each is at Progress 100.
#[tokio::test]
async fn nomads_sequence() {
    let Given { w, u, c } = Given::user("nomad").await;
    create_lc(&w, &u, "clients@sierra").await;
    create_group(&w, &u, "clients", "clients@sierra", 0, 6, 1).await;
    converges(&w, &u, "sierra", "clients", 1).await;
    c.update("clients", |g| g.desired_capacity(4)).await;
    let ids = converges(&w, &u, "sierra", "clients", 4).await;

    c.create_or_update_tags()
        .tags(tag(
            "clients",
            "nomad-autoscaler/scale-in",
            "in-progress",
            false,
        ))
        .send()
        .await
        .unwrap();
    let mut activity_ids = Vec::new();
    for id in &ids[..2] {
        let out = c
            .terminate_instance_in_auto_scaling_group()
            .instance_id(id)
            .should_decrement_desired_capacity(true)
            .send()
            .await
            .unwrap();
        let activity = out.activity().expect("the Activity comes back");
        activity_ids.push(activity.activity_id().unwrap().to_string());
    }
    w.until(30, "both activities at 100", async || {
        let acts = c
            .describe_scaling_activities()
            .set_activity_ids(Some(activity_ids.clone()))
            .send()
            .await
            .unwrap();
        let done = acts.activities().len() == 2
            && acts.activities().iter().all(|a| {
                a.progress() == Some(100)
                    && a.status_code().map(|s| s.as_str()) == Some("Successful")
            });
        done.then_some(())
    })
    .await;
    let left = converges(&w, &u, "sierra", "clients", 2).await;
    assert_eq!(left, ids[2..].to_vec());
    assert_eq!(
        group(&w, &u, "clients").await.unwrap().desired_capacity(),
        Some(2)
    );
}

/// AttachInstances and DetachInstances: a VM launched outside Phantom joins (tagged as the
/// group's, counted at once), one that cannot join is dropped with a failed activity and its
/// capacity given back; a detached VM keeps running without the group's tags and is not adopted
/// back.
#[tokio::test]
async fn attach_and_detach_instances() {
    let w = World::new().await;
    let u = setup(&w, "attach", 1).await;
    let c = w.sdk(&u);
    let first = in_service(&w, &u, "web").await;
    let outside = w.hotel.outside();
    let attach = |ids: &[&str]| {
        let mut call = c.attach_instances().auto_scaling_group_name("web");
        for id in ids {
            call = call.instance_ids(*id);
        }
        call.send()
    };
    attach(&[&outside]).await.unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.desired_capacity(), Some(2), "counted at once");
    w.until(10, "the attached VM InService", async || {
        in_service(&w, &u, "web")
            .await
            .contains(&outside)
            .then_some(())
    })
    .await;
    let tags = w.hotel.tags_of(&outside);
    assert_eq!(tags.get("phantom:group").map(String::as_str), Some("web"));
    w.run_for(5).await;
    assert_eq!(w.hotel.alive().len(), 2, "nothing launched for it");
    let attached = group(&w, &u, "web")
        .await
        .unwrap()
        .instances()
        .iter()
        .find(|i| i.instance_id() == Some(outside.as_str()))
        .cloned()
        .unwrap();
    assert_eq!(attached.launch_configuration_name(), None);
    assert_eq!(attached.availability_zone(), Some("us-east-1a"));

    // A stopped VM, an unknown id and another group's VM cannot join: refused at once (the cloud
    // is asked before anything is written), the group unchanged.
    let stopped = w.hotel.outside();
    w.hotel.stop_outside(&stopped);
    let theirs = w.hotel.outside();
    let tags = [("phantom:group", "db"), ("phantom:group-id", "g-other")]
        .map(|(k, v)| (k.to_string(), v.to_string()));
    phantom_seams::cloud::Cloud::tag(&*w.hotel, std::slice::from_ref(&theirs), &tags)
        .await
        .unwrap();
    for (id, why) in [
        (stopped.as_str(), "is stopped"),
        ("i-0000000000000dead", "does not exist"),
        (theirs.as_str(), "belongs to another group (db)"),
    ] {
        let message = invalid(attach(&[id]).await);
        assert!(message.contains(why), "{message}");
    }
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.desired_capacity(), Some(2));
    assert_eq!(g.instances().len(), 2);
    phantom_seams::cloud::Cloud::terminate(&*w.hotel, &[theirs])
        .await
        .unwrap();

    // A VM that stops between the api's look and the provisioner's: dropped by the provisioner
    // with a failed activity, the desired capacity given back.
    let late = w.hotel.outside();
    attach(&[&late]).await.unwrap();
    w.hotel.stop_outside(&late);
    w.run_for(3).await;
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.desired_capacity(), Some(2));
    assert!(g
        .instances()
        .iter()
        .all(|i| i.instance_id() != Some(late.as_str())));
    let failed: Vec<String> = activities(&w, &u, "web")
        .await
        .iter()
        .filter(|a| a.status_code().map(|s| s.as_str()) == Some("Failed"))
        .filter_map(|a| a.status_message().map(str::to_string))
        .collect();
    assert!(
        failed.iter().any(|m| m.contains("is stopped")),
        "{failed:?}"
    );
    assert!(w.hotel.tags_of(&late).is_empty(), "not tagged");
    assert!(w.hotel.tags_of(&stopped).is_empty(), "not tagged");

    // Refused at once: already in a group, past MaxSize (5 here), an unknown group.
    let message = invalid(attach(&[&first[0]]).await);
    assert!(
        message.contains("already part of Auto Scaling group web"),
        "{message}"
    );
    let message = invalid(attach(&["i-a", "i-b", "i-c", "i-d"]).await);
    assert!(
        message.ends_with(
            "To attach 4 instances, please update the AutoScalingGroup sizes appropriately."
        ),
        "{message}"
    );
    invalid(
        c.attach_instances()
            .auto_scaling_group_name("nope")
            .instance_ids(&outside)
            .send()
            .await,
    );

    // Detach with a decrement: the VM keeps running untagged, out of the group for good.
    let out = c
        .detach_instances()
        .auto_scaling_group_name("web")
        .instance_ids(&outside)
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .unwrap();
    assert!(out.activities()[0]
        .cause()
        .unwrap()
        .contains("shrinking the capacity from 2 to 1"));
    w.run_for(10).await;
    assert_eq!(in_service(&w, &u, "web").await, first);
    assert!(
        w.hotel.alive().contains(&outside),
        "detached, not terminated"
    );
    assert!(!w.hotel.tags_of(&outside).contains_key("phantom:group"));
    // Without a decrement: a replacement is launched.
    c.detach_instances()
        .auto_scaling_group_name("web")
        .instance_ids(&first[0])
        .should_decrement_desired_capacity(false)
        .send()
        .await
        .unwrap();
    let now = w
        .until(10, "a replacement InService", async || {
            let ids = in_service(&w, &u, "web").await;
            (ids.len() == 1 && ids != first).then_some(ids)
        })
        .await;
    assert!(w.hotel.alive().contains(&first[0]));
    assert_eq!(
        w.hotel.alive().len(),
        3,
        "two detached VMs and the replacement"
    );
    let (code, _) = failure(
        c.detach_instances()
            .auto_scaling_group_name("web")
            .instance_ids(&first[0])
            .should_decrement_desired_capacity(false)
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError", "no longer in the group");
    assert_eq!(now.len(), 1);
}

/// A detached VM runs on, out of the group, while the cloud's tag filters still match the tags it
/// had (EC2's tags are eventually consistent). CI's moto showed it so: a DescribeInstances by the
/// owner's tag matched it before DetachInstances' DeleteTags and answered with its tags gone, and
/// the health check's sweep took it for an orphan and terminated it.
#[tokio::test]
async fn a_vm_detached_while_the_tag_filters_lag_is_neither_ended_nor_taken_back() {
    let w = World::new().await;
    let u = setup(&w, "lagging", 2).await;
    let c = w.sdk(&u);
    let first = in_service(&w, &u, "web").await;
    assert_eq!(first.len(), 2);
    w.hotel.set_tag_lag(std::time::Duration::from_secs(60));
    for (id, decrement) in [(&first[0], true), (&first[1], false)] {
        c.detach_instances()
            .auto_scaling_group_name("web")
            .instance_ids(id)
            .should_decrement_desired_capacity(decrement)
            .send()
            .await
            .unwrap();
        w.run_for(20).await;
        assert!(
            w.hotel.alive().contains(id),
            "{id} detached, not terminated"
        );
        assert!(w.hotel.tags_of(id).is_empty(), "{id} untagged");
        let ids = in_service(&w, &u, "web").await;
        assert!(!ids.contains(id), "{id} not taken back: {ids:?}");
        assert_eq!(ids.len(), 1, "{ids:?}");
    }
    assert_eq!(
        w.hotel.alive().len(),
        3,
        "two detached VMs and the replacement"
    );
}

/// DescribeAccountLimits: the limits Phantom enforces, and the caller's counts; past the limit a
/// creation is refused with LimitExceeded.
#[tokio::test]
async fn account_limits_are_described_and_enforced() {
    let Given { w, u, c } = Given::group("limits", 0, 1, 0).await;
    let limits = c.describe_account_limits().send().await.unwrap();
    assert_eq!(limits.max_number_of_auto_scaling_groups(), Some(500));
    assert_eq!(limits.max_number_of_launch_configurations(), Some(200));
    assert_eq!(limits.number_of_auto_scaling_groups(), Some(1));
    assert_eq!(limits.number_of_launch_configurations(), Some(1));
    for i in 1..200 {
        create_lc(&w, &u, &format!("lc{i}@hotel")).await;
        // At the rate a user's changes are allowed (5 a second).
        w.clock.advance_ms(200);
    }
    let (code, message) = failure(
        c.create_launch_configuration()
            .launch_configuration_name("one-more@hotel")
            .image_id(phantom_e2e::world::IMAGE)
            .instance_type("t2.micro")
            .send()
            .await,
    );
    assert_eq!(code, "LimitExceeded");
    assert!(message.contains("limit of 200"), "{message}");
    let limits = c.describe_account_limits().send().await.unwrap();
    assert_eq!(limits.number_of_launch_configurations(), Some(200));
    // Another user's counts are their own.
    let other = w.user("limits-other").await;
    let theirs = w
        .sdk(&other)
        .describe_account_limits()
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.number_of_launch_configurations(), Some(0));
}

#[tokio::test]
async fn a_launch_configuration_and_a_group_from_a_running_instance() {
    let w = World::new().await;
    let u = w.user("from-vm").await;
    let c = w.sdk(&u);
    let vm = w.hotel.outside();
    // A launch configuration from it: what the instance was launched with, the request's own
    // settings winning.
    c.create_launch_configuration()
        .launch_configuration_name("copy@hotel")
        .instance_id(&vm)
        .key_name("mine")
        .send()
        .await
        .unwrap();
    let lcs = c
        .describe_launch_configurations()
        .launch_configuration_names("copy@hotel")
        .send()
        .await
        .unwrap();
    let lc = &lcs.launch_configurations()[0];
    assert_eq!(lc.image_id(), Some(phantom_e2e::world::IMAGE));
    assert_eq!(lc.instance_type(), Some("t2.micro"));
    assert_eq!(lc.key_name(), Some("mine"));

    // A group from it: a launch configuration named after the group on the instance's cloud, the
    // instance's zone, and VMs launched from it.
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .instance_id(&vm)
        .min_size(0)
        .max_size(3)
        .desired_capacity(2)
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.launch_configuration_name(), Some("web@hotel"));
    let zone = w
        .hotel
        .vms()
        .into_iter()
        .find(|v| v.id == vm)
        .map(|v| v.zone)
        .expect("the instance");
    assert_eq!(g.availability_zones(), [zone]);
    // The instance itself stays outside the group, as on AWS.
    let ids = w
        .until(60, "2 VMs InService", async || {
            let ids = in_service(&w, &u, "web").await;
            (ids.len() == 2).then_some(ids)
        })
        .await;
    assert!(!ids.contains(&vm));

    // An instance no cloud of the user's has: EC2's words, nothing written.
    let e = invalid(
        c.create_auto_scaling_group()
            .auto_scaling_group_name("none")
            .instance_id("i-0000000000000dead")
            .min_size(0)
            .max_size(1)
            .send()
            .await,
    );
    assert_eq!(e, "The instance ID 'i-0000000000000dead' does not exist");
    assert!(group(&w, &u, "none").await.is_none());
    let lcs = c.describe_launch_configurations().send().await.unwrap();
    let names: Vec<_> = lcs
        .launch_configurations()
        .iter()
        .filter_map(|l| l.launch_configuration_name())
        .collect();
    assert_eq!(names, ["copy@hotel", "web@hotel"]);
}

#[tokio::test]
async fn activities_of_a_deleted_group_show_only_when_asked_and_filters_narrow_them() {
    use aws_sdk_autoscaling::types::Filter as AsFilter;
    let w = World::new().await;
    let u = setup(&w, "acts", 1).await;
    let c = w.sdk(&u);
    let old_arn = group(&w, &u, "web")
        .await
        .unwrap()
        .auto_scaling_group_arn()
        .unwrap()
        .to_string();
    c.force_delete("web").await;
    w.until(60, "the group gone", async || {
        group(&w, &u, "web").await.is_none().then_some(())
    })
    .await;
    create_group(&w, &u, "web", "web@hotel", 0, 5, 1).await;
    converges(&w, &u, "hotel", "web", 1).await;
    let arns = |acts: &[aws_sdk_autoscaling::types::Activity]| -> BTreeSet<String> {
        acts.iter()
            .filter_map(|a| a.auto_scaling_group_arn().map(str::to_string))
            .collect()
    };
    let shown = c.activities("web").await.activities().to_vec();
    assert!(!shown.is_empty());
    assert!(
        !arns(&shown).contains(&old_arn),
        "the deleted group's hidden"
    );
    let all = c
        .describe_scaling_activities()
        .auto_scaling_group_name("web")
        .include_deleted_groups(true)
        .send()
        .await
        .unwrap();
    assert!(arns(all.activities()).contains(&old_arn));
    assert_eq!(arns(all.activities()).len(), 2);
    // Filters: by status (with a group's name only), by start time.
    let by = |f: AsFilter| {
        c.describe_scaling_activities()
            .auto_scaling_group_name("web")
            .filters(f)
            .send()
    };
    let ok = by(AsFilter::builder()
        .name("Status")
        .values("Successful")
        .build())
    .await
    .unwrap();
    assert_eq!(ok.activities().len(), shown.len());
    let failed = by(AsFilter::builder().name("Status").values("Failed").build())
        .await
        .unwrap();
    assert!(failed.activities().is_empty());
    let later = by(AsFilter::builder()
        .name("StartTimeLowerBound")
        .values("2999-01-01T00:00:00")
        .build())
    .await
    .unwrap();
    assert!(later.activities().is_empty());
    let e = invalid(
        c.describe_scaling_activities()
            .filters(AsFilter::builder().name("Status").values("Failed").build())
            .send()
            .await,
    );
    assert!(e.contains("AutoScalingGroupName"), "{e}");
}
