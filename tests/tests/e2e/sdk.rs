//! The actions through aws-sdk-autoscaling (the Rust SDK), typed errors included, and the call
//! sequences of tools built on an AWS SDK (Terraform's provider), replayed in their order.

use aws_sdk_autoscaling::error::ProvideErrorMetadata;
use aws_sdk_autoscaling::types::{BlockDeviceMapping, Ebs, Tag};
use phantom_e2e::argv;
use phantom_e2e::stack;
use phantom_e2e::steps::Steps;

#[tokio::test]
async fn every_action_through_the_rust_sdk() {
    let s = stack();
    let u = s.new_user("sdk");
    let c = s.sdk(&u);

    c.create_launch_configuration()
        .launch_configuration_name("api@sierra")
        .image_id("ami-0abc")
        .instance_type("c5.large")
        .key_name("k")
        .security_groups("sg-1")
        .block_device_mappings(
            BlockDeviceMapping::builder()
                .device_name("/dev/xvda")
                .ebs(Ebs::builder().volume_size(16).volume_type("gp3").build())
                .build(),
        )
        .send()
        .await
        .unwrap();
    let out = c
        .describe_launch_configurations()
        .launch_configuration_names("api@sierra")
        .send()
        .await
        .unwrap();
    let lc = &out.launch_configurations()[0];
    assert_eq!(lc.image_id(), Some("ami-0abc"));
    assert_eq!(lc.security_groups(), ["sg-1"]);
    assert_eq!(
        lc.block_device_mappings()[0]
            .ebs()
            .and_then(|e| e.volume_size()),
        Some(16)
    );
    assert!(lc.created_time().is_some());

    c.create_auto_scaling_group()
        .auto_scaling_group_name("api")
        .launch_configuration_name("api@sierra")
        .min_size(0)
        .max_size(4)
        .desired_capacity(2)
        .tags(
            Tag::builder()
                .key("k")
                .value("v")
                .propagate_at_launch(true)
                .build(),
        )
        .send()
        .await
        .unwrap();
    c.set_desired_capacity()
        .auto_scaling_group_name("api")
        .desired_capacity(3)
        .honor_cooldown(true)
        .send()
        .await
        .unwrap();
    let out = c
        .describe_auto_scaling_groups()
        .auto_scaling_group_names("api")
        .send()
        .await
        .unwrap();
    let g = &out.auto_scaling_groups()[0];
    assert_eq!(g.desired_capacity(), Some(3));
    assert_eq!(g.min_size(), Some(0));
    assert_eq!(g.max_size(), Some(4));
    assert_eq!(g.tags()[0].key(), Some("k"));
    assert!(g.created_time().is_some());

    let err = c
        .set_desired_capacity()
        .auto_scaling_group_name("api")
        .desired_capacity(9)
        .send()
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("ValidationError"));

    let err = c
        .delete_launch_configuration()
        .launch_configuration_name("api@sierra")
        .send()
        .await
        .unwrap_err();
    assert!(err.into_service_error().is_resource_in_use_fault());

    let err = c
        .create_auto_scaling_group()
        .auto_scaling_group_name("api")
        .launch_configuration_name("api@sierra")
        .min_size(0)
        .max_size(1)
        .send()
        .await
        .unwrap_err();
    assert!(err.into_service_error().is_already_exists_fault());

    let err = c
        .describe_auto_scaling_groups()
        .next_token("not-a-token")
        .send()
        .await
        .unwrap_err();
    assert!(err.into_service_error().is_invalid_next_token());

    // `ami-0abc` is no image of the cloud: every launch fails, the group has no instance, and a
    // forced delete removes it at once (with VMs it would be `Delete in progress` first).
    let out = c
        .describe_auto_scaling_groups()
        .auto_scaling_group_names("api")
        .send()
        .await
        .unwrap();
    assert!(out.auto_scaling_groups()[0].instances().is_empty());
    c.force_delete("api").await;
    c.delete_launch_configuration()
        .launch_configuration_name("api@sierra")
        .send()
        .await
        .unwrap();
    let out = c.describe_auto_scaling_groups().send().await.unwrap();
    assert!(out.auto_scaling_groups().is_empty());
}

#[tokio::test]
async fn paginator_walks_120_launch_configurations() {
    let s = stack();
    let u = s.new_user("sdk-pages");
    // 120 changes in a row, faster than a user's default 5 a second.
    s.set_limits(&u, 1000.0, 1000.0);
    let c = s.sdk(&u);
    for i in 0..120 {
        c.create_launch_configuration()
            .launch_configuration_name(format!("p{i:03}"))
            .image_id("ami-1")
            .instance_type("t3.nano")
            .send()
            .await
            .unwrap();
    }
    let mut pages = c.describe_launch_configurations().into_paginator().send();
    let mut sizes = Vec::new();
    let mut names = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.unwrap();
        sizes.push(page.launch_configurations().len());
        names.extend(
            page.launch_configurations()
                .iter()
                .map(|l| l.launch_configuration_name().unwrap().to_string()),
        );
    }
    assert_eq!(sizes, [50, 50, 20]);
    let want: Vec<String> = (0..120).map(|i| format!("p{i:03}")).collect();
    assert_eq!(names, want);

    let out = c
        .describe_launch_configurations()
        .max_records(100)
        .send()
        .await
        .unwrap();
    assert_eq!(out.launch_configurations().len(), 100);
    let rest = c
        .describe_launch_configurations()
        .max_records(100)
        .next_token(out.next_token().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.launch_configurations().len(), 20);
    assert!(rest.next_token().is_none());
}

/// Launch configuration `lc` (a stock moto image) and group `name` from it, MinSize 0.
async fn lc_and_group(
    c: &aws_sdk_autoscaling::Client,
    lc: &str,
    name: &str,
    max: i32,
    desired: i32,
) {
    c.create_launch_configuration()
        .launch_configuration_name(lc)
        .image_id("ami-1e749f67")
        .instance_type("t2.micro")
        .send()
        .await
        .unwrap();
    c.create_group(name, lc, (0, max, desired)).await;
}

/// Polls `check` every 200 ms for up to `secs` seconds of real time.
async fn until<T>(secs: u64, what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not within {secs} s: {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// Terraform's `aws_autoscaling_group` with an `instance_refresh` block, replayed call by call
/// in the provider's order (internal/service/autoscaling/group.go): an apply that changes the
/// launch configuration updates the group, then starts a refresh with the preferences the
/// provider always sends; the next apply, while that refresh runs, meets
/// InstanceRefreshInProgress, cancels, waits with DescribeInstanceRefreshes for Cancelled (or
/// Failed, Successful), and starts again; destroy drains and deletes the group.
#[tokio::test]
async fn terraforms_instance_refresh_calls_in_its_order() {
    use aws_sdk_autoscaling::types::{
        InstanceRefreshStatus, RefreshPreferences, ScaleInProtectedInstances, StandbyInstances,
    };
    let s = stack();
    let u = s.new_user("tf-refresh");
    let c = s.sdk(&u);
    lc_and_group(&c, "tf1@hotel", "tf", 4, 2).await;
    for lc in ["tf2@hotel", "tf3@hotel"] {
        c.create_launch_configuration()
            .launch_configuration_name(lc)
            .image_id("ami-1e749f67")
            .instance_type("t2.micro")
            .send()
            .await
            .unwrap();
    }
    let instances = async || {
        c.describe_auto_scaling_groups()
            .auto_scaling_group_names("tf")
            .send()
            .await
            .unwrap()
            .auto_scaling_groups()
            .first()
            .map(|g| g.instances().to_vec())
            .unwrap_or_default()
    };
    let serving_from = async |lc: &str| {
        let is = instances().await;
        (is.len() == 2
            && is.iter().all(|i| {
                i.lifecycle_state().map(|l| l.as_str()) == Some("InService")
                    && i.launch_configuration_name() == Some(lc)
            }))
        .then_some(())
    };
    until(60, "2 InService from tf1", async || {
        serving_from("tf1@hotel").await
    })
    .await;

    // What the provider sends with a `preferences` block (its defaults filled in).
    let preferences = |warmup: i32| {
        RefreshPreferences::builder()
            .auto_rollback(false)
            .instance_warmup(warmup)
            .max_healthy_percentage(100)
            .min_healthy_percentage(50)
            .scale_in_protected_instances(ScaleInProtectedInstances::Ignore)
            .skip_matching(false)
            .standby_instances(StandbyInstances::Ignore)
            .build()
    };
    let start = async |warmup: i32| {
        c.start_instance_refresh()
            .auto_scaling_group_name("tf")
            .strategy("Rolling".into())
            .preferences(preferences(warmup))
            .send()
            .await
    };
    let status = async |id: &str| {
        c.describe_instance_refreshes()
            .auto_scaling_group_name("tf")
            .instance_refresh_ids(id)
            .send()
            .await
            .unwrap()
            .instance_refreshes()[0]
            .status()
            .cloned()
            .unwrap()
    };

    // First apply: tf1 -> tf2, a refresh with a long warm-up (still running at the next apply).
    c.update("tf", |g| g.launch_configuration_name("tf2@hotel"))
        .await;
    start(600).await.expect("the first refresh starts");

    // Second apply: tf2 -> tf3; the running refresh is cancelled and a new one started.
    c.update("tf", |g| g.launch_configuration_name("tf3@hotel"))
        .await;
    let e = start(0).await.unwrap_err().into_service_error();
    assert!(e.is_instance_refresh_in_progress_fault(), "{e:?}");
    let cancelled = c
        .cancel_instance_refresh()
        .auto_scaling_group_name("tf")
        .send()
        .await
        .unwrap()
        .instance_refresh_id()
        .unwrap()
        .to_string();
    until(60, "the first refresh ends", async || {
        matches!(
            status(&cancelled).await,
            InstanceRefreshStatus::Cancelled
                | InstanceRefreshStatus::Failed
                | InstanceRefreshStatus::Successful
        )
        .then_some(())
    })
    .await;
    let id = start(0)
        .await
        .expect("the second refresh starts")
        .instance_refresh_id()
        .unwrap()
        .to_string();
    until(90, "the second refresh Successful", async || {
        (status(&id).await == InstanceRefreshStatus::Successful).then_some(())
    })
    .await;
    until(60, "2 InService from tf3", async || {
        serving_from("tf3@hotel").await
    })
    .await;

    // Destroy: drained to 0, then deleted.
    c.update("tf", |g| g.min_size(0).max_size(0).desired_capacity(0))
        .await;
    until(60, "no instances", async || {
        instances().await.is_empty().then_some(())
    })
    .await;
    c.delete_group("tf").await;
}

/// Terraform's `aws_autoscaling_group` with a `warm_pool` block, replayed call by call in the
/// provider's order (internal/service/autoscaling/group.go): create puts the pool with the
/// defaults the provider fills in (MaxGroupPreparedCapacity -1, PoolState Stopped) and reads it
/// back from DescribeAutoScalingGroups (WarmPoolConfiguration, WarmPoolSize); an apply that
/// changes the block puts it again; destroy drains the pool (PutWarmPool with 0 and 0, then
/// DescribeWarmPool until it has no instances), deletes it (retrying ResourceInUse and
/// ScalingActivityInProgress, taking "No warm pool found" as done), waits until DescribeWarmPool
/// has no configuration, then drains and deletes the group.
#[tokio::test]
async fn terraforms_warm_pool_calls_in_its_order() {
    use aws_sdk_autoscaling::types::{InstanceReusePolicy, WarmPoolState};
    let s = stack();
    let u = s.new_user("tf-warm");
    let c = s.sdk(&u);
    lc_and_group(&c, "tfw@hotel", "tfw", 3, 1).await;
    let put = async |max: i32, min: i32| {
        c.put_warm_pool()
            .auto_scaling_group_name("tfw")
            .max_group_prepared_capacity(max)
            .min_size(min)
            .pool_state(WarmPoolState::Stopped)
            .instance_reuse_policy(
                InstanceReusePolicy::builder()
                    .reuse_on_scale_in(true)
                    .build(),
            )
            .send()
            .await
    };
    put(-1, 0).await.expect("put-warm-pool at create");
    let read = async || {
        c.describe_auto_scaling_groups()
            .auto_scaling_group_names("tfw")
            .send()
            .await
            .unwrap()
            .auto_scaling_groups()[0]
            .clone()
    };
    // waitGroupCapacitySatisfied: the group's own InService instances, not the pool's.
    until(60, "1 InService", async || {
        let g = read().await;
        let serving = g
            .instances()
            .iter()
            .filter(|i| i.lifecycle_state().map(|l| l.as_str()) == Some("InService"))
            .count();
        (serving == 1).then_some(())
    })
    .await;
    let warm_pool = async || c.warm_pool("tfw").await;
    until(60, "2 VMs Warmed:Stopped", async || {
        let p = warm_pool().await;
        (p.instances().len() == 2
            && p.instances()
                .iter()
                .all(|i| i.lifecycle_state().map(|l| l.as_str()) == Some("Warmed:Stopped")))
        .then_some(())
    })
    .await;
    // Read: what the provider flattens into state.
    let g = read().await;
    let w = g.warm_pool_configuration().expect("WarmPoolConfiguration");
    assert_eq!(
        w.max_group_prepared_capacity(),
        None,
        "-1 is shown as absent"
    );
    assert_eq!(w.min_size(), Some(0));
    assert_eq!(w.pool_state(), Some(&WarmPoolState::Stopped));
    assert_eq!(
        w.instance_reuse_policy()
            .and_then(|p| p.reuse_on_scale_in()),
        Some(true)
    );
    assert_eq!(g.warm_pool_size(), Some(2));
    assert_eq!(g.instances().len(), 1);

    // Update: max_group_prepared_capacity 2, min_size 1: the pool holds 1.
    put(2, 1).await.expect("put-warm-pool at update");
    until(60, "1 VM in the pool", async || {
        (warm_pool().await.instances().len() == 1).then_some(())
    })
    .await;
    let w = read().await.warm_pool_configuration().cloned().unwrap();
    assert_eq!(
        (w.max_group_prepared_capacity(), w.min_size()),
        (Some(2), Some(1))
    );

    // Destroy: drain, delete, wait until gone.
    put(0, 0).await.expect("put-warm-pool to drain");
    until(60, "the pool drained", async || {
        warm_pool().await.instances().is_empty().then_some(())
    })
    .await;
    until(60, "DeleteWarmPool taken", async || {
        match c
            .delete_warm_pool()
            .auto_scaling_group_name("tfw")
            .force_delete(false)
            .send()
            .await
        {
            Ok(_) => Some(()),
            Err(e)
                if matches!(
                    e.code(),
                    Some("ResourceInUse" | "ScalingActivityInProgress")
                ) =>
            {
                None
            }
            Err(e)
                if e.message()
                    .is_some_and(|m| m.contains("No warm pool found")) =>
            {
                Some(())
            }
            Err(e) => panic!("delete-warm-pool: {e:?}"),
        }
    })
    .await;
    until(60, "the pool gone", async || {
        warm_pool()
            .await
            .warm_pool_configuration()
            .is_none()
            .then_some(())
    })
    .await;
    assert!(read().await.warm_pool_configuration().is_none());
    c.update("tfw", |g| g.min_size(0).max_size(0).desired_capacity(0))
        .await;
    until(60, "no instances", async || {
        read().await.instances().is_empty().then_some(())
    })
    .await;
    c.delete_group("tfw").await;
}

/// An SNS topic and an SQS queue of the deployment (on the stack's emulator): their ARNs.
fn topic_and_queue(prefix: &str) -> (String, String) {
    let s = stack();
    let at = &s.env["AWS_ENDPOINT_URL"];
    let topic = s
        .aws_service(
            "sns",
            at,
            &["create-topic", "--name", &format!("{prefix}-topic")],
        )
        .json()["TopicArn"]
        .as_str()
        .unwrap()
        .to_string();
    let url = s
        .aws_service(
            "sqs",
            at,
            &["create-queue", "--queue-name", &format!("{prefix}-queue")],
        )
        .json()["QueueUrl"]
        .as_str()
        .unwrap()
        .to_string();
    let attrs = s.aws_service(
        "sqs",
        at,
        &argv!(
            "get-queue-attributes --queue-url",
            &url,
            "--attribute-names QueueArn"
        ),
    );
    let queue = attrs.json()["Attributes"]["QueueArn"]
        .as_str()
        .unwrap()
        .to_string();
    (topic, queue)
}

/// Terraform's `aws_autoscaling_notification` (internal/service/autoscaling/notification.go) and
/// `aws_autoscaling_group` with an `initial_lifecycle_hook` that has a notification target
/// (group.go), replayed call by call: the group is created with the hook in its
/// LifecycleHookSpecificationList and read back with DescribeLifecycleHooks; the notification
/// is put on each of its groups and read back with DescribeNotificationConfigurations; an update
/// of the notification types deletes it from the old groups and puts it on the new ones;
/// destroy deletes it from each group, a delete of one already gone ("doesn't exist") passing.
#[tokio::test]
async fn terraforms_notification_and_initial_lifecycle_hook_calls_in_its_order() {
    use aws_sdk_autoscaling::types::LifecycleHookSpecification;
    let s = stack();
    let u = s.new_user("tf-notify");
    let c = s.sdk(&u);
    let (topic, queue) = topic_and_queue(&u.name);
    c.create_launch_configuration()
        .launch_configuration_name("tfn@hotel")
        .image_id("ami-1e749f67")
        .instance_type("t2.micro")
        .send()
        .await
        .unwrap();
    for name in ["tfn-a", "tfn-b"] {
        let hook = LifecycleHookSpecification::builder()
            .lifecycle_hook_name("drain")
            .lifecycle_transition("autoscaling:EC2_INSTANCE_TERMINATING")
            .notification_target_arn(&queue)
            .role_arn("arn:aws:iam::123456789012:role/asg-hooks")
            .notification_metadata("{\"team\":\"web\"}")
            .heartbeat_timeout(300)
            .default_result("CONTINUE")
            .build();
        c.create_auto_scaling_group()
            .auto_scaling_group_name(name)
            .launch_configuration_name("tfn@hotel")
            .min_size(0)
            .max_size(2)
            .desired_capacity(0)
            .lifecycle_hook_specification_list(hook)
            .send()
            .await
            .expect("create with an initial lifecycle hook");
        let hooks = c.hooks(name).await;
        let h = &hooks.lifecycle_hooks()[0];
        assert_eq!(h.notification_target_arn(), Some(queue.as_str()));
        assert_eq!(
            h.role_arn(),
            Some("arn:aws:iam::123456789012:role/asg-hooks")
        );
        assert_eq!(h.notification_metadata(), Some("{\"team\":\"web\"}"));
    }

    // Create: one put per group, then the read (rows filtered by the topic).
    let put = async |group: &str, types: &[&str]| {
        c.put_notification_configuration()
            .auto_scaling_group_name(group)
            .topic_arn(&topic)
            .set_notification_types(Some(types.iter().map(|t| t.to_string()).collect()))
            .send()
            .await
    };
    let read = async || -> (Vec<String>, Vec<String>) {
        let mut groups = Vec::new();
        let mut types = Vec::new();
        let mut pages = c
            .describe_notification_configurations()
            .auto_scaling_group_names("tfn-a")
            .auto_scaling_group_names("tfn-b")
            .max_records(1)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            for row in page.unwrap().notification_configurations() {
                if row.topic_arn() == Some(topic.as_str()) {
                    groups.push(row.auto_scaling_group_name().unwrap().to_string());
                    types.push(row.notification_type().unwrap().to_string());
                }
            }
        }
        groups.sort();
        groups.dedup();
        types.sort();
        types.dedup();
        (groups, types)
    };
    let launch = "autoscaling:EC2_INSTANCE_LAUNCH";
    let terminate = "autoscaling:EC2_INSTANCE_TERMINATE";
    for g in ["tfn-a", "tfn-b"] {
        put(g, &[launch, terminate])
            .await
            .expect("put-notification-configuration");
    }
    assert_eq!(
        read().await,
        (
            vec!["tfn-a".into(), "tfn-b".into()],
            vec![launch.into(), terminate.into()]
        )
    );
    // Update (notifications changed): delete from the old groups, put on the new.
    for g in ["tfn-a", "tfn-b"] {
        c.delete_notification_configuration()
            .auto_scaling_group_name(g)
            .topic_arn(&topic)
            .send()
            .await
            .unwrap();
    }
    put("tfn-a", &["autoscaling:EC2_INSTANCE_LAUNCH_ERROR"])
        .await
        .unwrap();
    assert_eq!(
        read().await,
        (
            vec!["tfn-a".into()],
            vec!["autoscaling:EC2_INSTANCE_LAUNCH_ERROR".into()]
        )
    );
    // Destroy: a delete of a configuration already gone is a ValidationError that says so.
    c.delete_notification_configuration()
        .auto_scaling_group_name("tfn-a")
        .topic_arn(&topic)
        .send()
        .await
        .unwrap();
    let gone = c
        .delete_notification_configuration()
        .auto_scaling_group_name("tfn-b")
        .topic_arn(&topic)
        .send()
        .await
        .expect_err("nothing to delete");
    assert_eq!(gone.code(), Some("ValidationError"));
    assert!(
        gone.message().unwrap_or_default().contains("doesn't exist"),
        "{gone:?}"
    );
    assert_eq!(read().await, (vec![], vec![]));
    for g in ["tfn-a", "tfn-b"] {
        c.force_delete(g).await;
    }
}

/// Terraform's load balancer resources, replayed call by call in the provider's order: an
/// `aws_autoscaling_group` created with `target_group_arns` and `health_check_type = "ELB"`
/// (group.go: the create, waitGroupCapacitySatisfied, then DescribeLoadBalancerTargetGroups until
/// none is `Adding`); an `aws_autoscaling_attachment` of a classic load balancer (attachment.go:
/// AttachLoadBalancers, read back from the group's LoadBalancerNames; destroy: Detach, a second
/// Detach's "Trying to remove Load Balancers that are not part of the group" passing); an
/// `aws_autoscaling_traffic_source_attachment` of a second target group
/// (autoscaling_traffic_attachment.go: AttachTrafficSources, DescribeTrafficSources until `Added`
/// or `InService`; destroy: Detach, until it is not found); and the group's `target_group_arns`
/// emptied (DetachLoadBalancerTargetGroups, then until none is `Removing`).
#[tokio::test]
async fn terraforms_load_balancer_calls_in_its_order() {
    use aws_sdk_autoscaling::types::TrafficSourceIdentifier;
    let s = stack();
    let u = s.new_user("tf-lb");
    let c = s.sdk(&u);
    let hotel = s.cloud_url("hotel");
    let name = u
        .name
        .replace('_', "-")
        .chars()
        .take(28)
        .collect::<String>();
    s.aws_service(
        "elb",
        &hotel,
        &argv!("create-load-balancer --load-balancer-name", &name, "--listeners Protocol=HTTP,LoadBalancerPort=80,InstanceProtocol=HTTP,InstancePort=80 --availability-zones us-east-1a"),
    )
    .json();
    let vpc = s.ec2("hotel", &["describe-vpcs"])["Vpcs"][0]["VpcId"]
        .as_str()
        .unwrap()
        .to_string();
    let tg = |n: &str| {
        s.aws_service(
            "elbv2",
            &hotel,
            &[
                "create-target-group",
                "--name",
                &format!("{name}-{n}"),
                "--protocol",
                "HTTP",
                "--port",
                "80",
                "--vpc-id",
                &vpc,
                "--target-type",
                "instance",
            ],
        )
        .json()["TargetGroups"][0]["TargetGroupArn"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (tg1, tg2) = (tg("1"), tg("2"));
    c.create_launch_configuration()
        .launch_configuration_name("tflb@hotel")
        .image_id("ami-1e749f67")
        .instance_type("t2.micro")
        .send()
        .await
        .unwrap();
    c.create_auto_scaling_group()
        .auto_scaling_group_name("tflb")
        .launch_configuration_name("tflb@hotel")
        .min_size(0)
        .max_size(2)
        .desired_capacity(1)
        .health_check_type("ELB")
        .target_group_arns(&tg1)
        .send()
        .await
        .expect("create behind a target group");
    until(60, "1 InService", async || {
        let g = c
            .describe_auto_scaling_groups()
            .auto_scaling_group_names("tflb")
            .send()
            .await
            .unwrap();
        let serving = g.auto_scaling_groups()[0]
            .instances()
            .iter()
            .filter(|i| i.lifecycle_state().map(|l| l.as_str()) == Some("InService"))
            .count();
        (serving == 1).then_some(())
    })
    .await;
    let target_groups = async || {
        c.describe_load_balancer_target_groups()
            .auto_scaling_group_name("tflb")
            .send()
            .await
            .unwrap()
            .load_balancer_target_groups()
            .iter()
            .map(|t| t.state().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    until(30, "no target group Adding", async || {
        let states = target_groups().await;
        (!states.is_empty() && !states.iter().any(|s| s == "Adding")).then_some(())
    })
    .await;

    // aws_autoscaling_attachment (elb).
    c.attach_load_balancers()
        .auto_scaling_group_name("tflb")
        .load_balancer_names(&name)
        .send()
        .await
        .expect("AttachLoadBalancers");
    let g = c
        .describe_auto_scaling_groups()
        .auto_scaling_group_names("tflb")
        .send()
        .await
        .unwrap();
    assert!(g.auto_scaling_groups()[0]
        .load_balancer_names()
        .contains(&name));

    // aws_autoscaling_traffic_source_attachment (elbv2).
    let source = TrafficSourceIdentifier::builder()
        .identifier(&tg2)
        .r#type("elbv2")
        .build();
    c.attach_traffic_sources()
        .auto_scaling_group_name("tflb")
        .traffic_sources(source.clone())
        .send()
        .await
        .expect("AttachTrafficSources");
    let state_of = async |id: &str| {
        c.describe_traffic_sources()
            .auto_scaling_group_name("tflb")
            .traffic_source_type("elbv2")
            .send()
            .await
            .unwrap()
            .traffic_sources()
            .iter()
            .find(|t| t.identifier() == Some(id))
            .map(|t| t.state().unwrap().to_string())
    };
    until(30, "the traffic source Added or InService", async || {
        state_of(&tg2)
            .await
            .filter(|s| s == "Added" || s == "InService")
    })
    .await;

    // Destroy, in reverse.
    c.detach_traffic_sources()
        .auto_scaling_group_name("tflb")
        .traffic_sources(source)
        .send()
        .await
        .expect("DetachTrafficSources");
    until(30, "the traffic source gone", async || {
        state_of(&tg2).await.is_none().then_some(())
    })
    .await;
    c.detach_load_balancers()
        .auto_scaling_group_name("tflb")
        .load_balancer_names(&name)
        .send()
        .await
        .expect("DetachLoadBalancers");
    let again = c
        .detach_load_balancers()
        .auto_scaling_group_name("tflb")
        .load_balancer_names(&name)
        .send()
        .await
        .expect_err("already detached");
    assert!(again
        .message()
        .unwrap_or_default()
        .contains("Trying to remove Load Balancers that are not part of the group"));
    c.detach_load_balancer_target_groups()
        .auto_scaling_group_name("tflb")
        .target_group_arns(&tg1)
        .send()
        .await
        .expect("DetachLoadBalancerTargetGroups");
    until(30, "no target group Removing", async || {
        target_groups().await.is_empty().then_some(())
    })
    .await;
    c.force_delete("tflb").await;
}
