//! The seven actions through aws-sdk-autoscaling (the Rust SDK), typed errors included.

use aws_sdk_autoscaling::error::ProvideErrorMetadata;
use aws_sdk_autoscaling::types::{BlockDeviceMapping, Ebs, Tag};
use phantom_e2e::stack;

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
    c.delete_auto_scaling_group()
        .auto_scaling_group_name("api")
        .force_delete(true)
        .send()
        .await
        .unwrap();
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
