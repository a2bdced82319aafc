//! Actions, errors, paging, filters, isolation and authentication, in process.

use crate::{create_group, create_lc, failure, group, Given};
use aws_sdk_autoscaling::types::{Filter, Tag};
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::xml_text;

#[tokio::test]
async fn group_defaults_are_awss() {
    let Given { w, u, .. } = Given::user("def").await;
    create_lc(&w, &u, "plain").await;
    create_group(&w, &u, "g", "plain", 0, 3, 2).await;
    let g = group(&w, &u, "g").await.unwrap();
    assert_eq!(g.default_cooldown(), Some(300));
    assert_eq!(g.health_check_type(), Some("EC2"));
    assert_eq!(g.health_check_grace_period(), Some(0));
    assert_eq!(g.termination_policies(), ["Default"]);
    // Neither zones nor subnets: the default cloud's zone.
    assert_eq!(g.availability_zones(), ["us-east-1a"]);
    assert_eq!(g.new_instances_protected_from_scale_in(), Some(false));
}

#[tokio::test]
async fn set_desired_capacity_within_bounds_and_errors() {
    let Given { w, u, c } = Given::lc("sdc").await;
    create_group(&w, &u, "g", "web@hotel", 1, 5, 2).await;
    let set = |d: i32| {
        c.set_desired_capacity()
            .auto_scaling_group_name("g")
            .desired_capacity(d)
            .send()
    };
    set(5).await.unwrap();
    assert_eq!(
        group(&w, &u, "g").await.unwrap().desired_capacity(),
        Some(5)
    );
    set(1).await.unwrap();
    assert_eq!(
        failure(set(6).await),
        (
            "ValidationError".into(),
            "New SetDesiredCapacity value 6 is above max value 5 for the AutoScalingGroup.".into()
        )
    );
    assert_eq!(
        failure(set(0).await),
        (
            "ValidationError".into(),
            "New SetDesiredCapacity value 0 is below min value 1 for the AutoScalingGroup.".into()
        )
    );
    assert_eq!(
        group(&w, &u, "g").await.unwrap().desired_capacity(),
        Some(1)
    );
    let r = c
        .set_desired_capacity()
        .auto_scaling_group_name("nope")
        .desired_capacity(1)
        .send()
        .await;
    assert_eq!(
        failure(r),
        (
            "ValidationError".into(),
            "AutoScalingGroup name not found - AutoScalingGroup nope not found".into()
        )
    );
}

#[tokio::test]
async fn create_and_delete_errors() {
    let Given { w, u, c } = Given::lc("errs").await;
    let lc = |name: &str| {
        c.create_launch_configuration()
            .launch_configuration_name(name)
            .image_id("ami-1")
            .instance_type("t2.micro")
            .send()
    };
    assert_eq!(failure(lc("web@hotel").await).0, "AlreadyExists");
    // Unknown cloud: the message names the known ones.
    let (code, m) = failure(lc("web@mars").await);
    assert_eq!(code, "ValidationError");
    assert!(
        m.contains("'mars'") && m.contains("hotel") && m.contains("sierra"),
        "{m}"
    );
    // Over the model's length limit.
    let (code, m) = failure(lc(&format!("{}@hotel", "x".repeat(250))).await);
    assert_eq!(code, "ValidationError");
    assert!(
        m.contains("Member must have length less than or equal to 255"),
        "{m}"
    );

    let asg = |lc: &str, min: i32, max: i32, desired: i32| {
        c.create_auto_scaling_group()
            .auto_scaling_group_name("g")
            .launch_configuration_name(lc)
            .min_size(min)
            .max_size(max)
            .desired_capacity(desired)
            .send()
    };
    assert_eq!(
        failure(asg("web@hotel", 5, 1, 1).await).1,
        "Max bound, 1, must be greater than or equal to min bound, 5"
    );
    assert_eq!(
        failure(asg("web@hotel", 1, 3, 4).await).1,
        "Desired capacity:4 must be between the specified min size:1 and max size:3"
    );
    assert_eq!(
        failure(asg("nope@hotel", 1, 3, 1).await).1,
        "Launch configuration name not found - Launch configuration nope@hotel not found"
    );
    assert!(group(&w, &u, "g").await.is_none(), "no half-written group");
    asg("web@hotel", 1, 3, 1).await.unwrap();
    assert_eq!(failure(asg("web@hotel", 1, 3, 1).await).0, "AlreadyExists");

    // In use: cannot delete the launch configuration.
    let del_lc = || {
        c.delete_launch_configuration()
            .launch_configuration_name("web@hotel")
            .send()
    };
    let (code, m) = failure(del_lc().await);
    assert_eq!(code, "ResourceInUse");
    assert!(m.contains("attached to AutoScalingGroup g"), "{m}");

    // A group with an instance: refused without ForceDelete, ended with it.
    w.settle().await;
    let del = || c.delete_auto_scaling_group().auto_scaling_group_name("g");
    assert_eq!(failure(del().send().await).0, "ResourceInUse");
    del().force_delete(true).send().await.unwrap();
    assert_eq!(
        group(&w, &u, "g").await.unwrap().status(),
        Some("Delete in progress")
    );
    // Changed meanwhile: refused in AWS's words (kops and Terraform retry on them).
    let (code, m) = failure(
        c.update_auto_scaling_group()
            .auto_scaling_group_name("g")
            .max_size(5)
            .send()
            .await,
    );
    assert_eq!(
        (code.as_str(), m.as_str()),
        (
            "ValidationError",
            "The AutoScaling group may not be modified while it is pending delete"
        )
    );
    let (_, m) = failure(
        c.suspend_processes()
            .auto_scaling_group_name("g")
            .send()
            .await,
    );
    assert_eq!(
        m,
        "Processes may not be suspended while the AutoScaling group is pending delete"
    );
    w.until(30, "the group is gone", async || {
        group(&w, &u, "g").await.is_none().then_some(())
    })
    .await;
    assert_eq!(failure(del().send().await).0, "ValidationError");
    del_lc().await.unwrap();
    assert_eq!(
        failure(del_lc().await).1,
        "Launch configuration name not found - Launch configuration web@hotel not found"
    );
}

/// What a launch configuration was not given AWS shows empty, never leaves out: Ansible's
/// autoscaling_launch_config_find reads `lc["UserData"]`, `lc["KeyName"]`, `lc["KernelId"]` and
/// `lc["RamdiskId"]`. What it was given it shows as given.
#[tokio::test]
async fn a_launch_configuration_shows_what_it_was_not_given_as_empty() {
    let Given { c, .. } = Given::lc("empty").await;
    c.create_launch_configuration()
        .launch_configuration_name("keyed@hotel")
        .image_id(phantom_e2e::world::IMAGE)
        .instance_type("t2.micro")
        .key_name("mine")
        .user_data("IyEvYmluL3NoCg==")
        .send()
        .await
        .unwrap();
    let out = c.describe_launch_configurations().send().await.unwrap();
    let shown: Vec<_> = out
        .launch_configurations()
        .iter()
        .map(|l| (l.key_name(), l.kernel_id(), l.ramdisk_id(), l.user_data()))
        .collect();
    assert_eq!(
        shown,
        [
            (Some("mine"), Some(""), Some(""), Some("IyEvYmluL3NoCg==")),
            (Some(""), Some(""), Some(""), Some("")),
        ]
    );
}

#[tokio::test]
async fn paging_across_120_launch_configurations() {
    let Given { w, u, c } = Given::user("paging").await;
    for i in (0..120).rev() {
        create_lc(&w, &u, &format!("lc-{i:03}@hotel")).await;
        // At the rate a user's changes are allowed (5 a second).
        w.clock.advance_ms(200);
    }
    let want: Vec<String> = (0..120).map(|i| format!("lc-{i:03}@hotel")).collect();
    for page in [50, 7, 100] {
        let mut names = Vec::new();
        let mut pages = c
            .describe_launch_configurations()
            .max_records(page)
            .into_paginator()
            .send();
        let mut count = 0;
        while let Some(p) = pages.next().await {
            let p = p.unwrap();
            assert!(p.launch_configurations().len() <= page as usize);
            names.extend(
                p.launch_configurations()
                    .iter()
                    .map(|l| l.launch_configuration_name().unwrap().to_string()),
            );
            count += 1;
        }
        assert_eq!(names, want, "page size {page}");
        assert_eq!(count, 120usize.div_ceil(page as usize));
    }
    // The default page is 50; MaxRecords at most 100; a token we did not make is refused.
    let out = c.describe_launch_configurations().send().await.unwrap();
    assert_eq!(out.launch_configurations().len(), 50);
    assert!(out.next_token().is_some());
    let (code, m) = failure(
        c.describe_launch_configurations()
            .max_records(101)
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    assert!(m.contains("maxRecords"), "{m}");
    let r = c
        .describe_launch_configurations()
        .next_token("garbage")
        .send()
        .await;
    assert_eq!(failure(r).0, "InvalidNextToken");
    // AWS's words, the token masked (asserted by the Ansible collection's refresh test).
    let r = c
        .describe_instance_refreshes()
        .auto_scaling_group_name("any")
        .next_token("garbage")
        .send()
        .await;
    assert_eq!(
        failure(r),
        (
            "InvalidNextToken".to_string(),
            "The token '********' is invalid.".to_string()
        )
    );
    // By name: only those that exist, in name order.
    let out = c
        .describe_launch_configurations()
        .launch_configuration_names("lc-007@hotel")
        .launch_configuration_names("lc-003@hotel")
        .launch_configuration_names("zz")
        .send()
        .await
        .unwrap();
    let names: Vec<&str> = out
        .launch_configurations()
        .iter()
        .map(|l| l.launch_configuration_name().unwrap())
        .collect();
    assert_eq!(names, ["lc-003@hotel", "lc-007@hotel"]);
}

#[tokio::test]
async fn users_never_see_each_others_resources() {
    let w = World::new().await;
    let alice = w.user("alice").await;
    let bob = w.user("bob").await;
    for u in [&alice, &bob] {
        create_lc(&w, u, "web@hotel").await;
        create_group(&w, u, "shared-name", "web@hotel", 0, 5, 1).await;
    }
    w.sdk(&alice).desire("shared-name", 4).await;
    let a = group(&w, &alice, "shared-name").await.unwrap();
    let b = group(&w, &bob, "shared-name").await.unwrap();
    assert_eq!(
        (a.desired_capacity(), b.desired_capacity()),
        (Some(4), Some(1))
    );
    assert_ne!(a.auto_scaling_group_arn(), b.auto_scaling_group_arn());

    let carol = w.user("carol").await;
    let c = w.sdk(&carol);
    let out = c.describe_auto_scaling_groups().send().await.unwrap();
    assert!(out.auto_scaling_groups().is_empty());
    let out = c.describe_launch_configurations().send().await.unwrap();
    assert!(out.launch_configurations().is_empty());
    let r = c
        .delete_auto_scaling_group()
        .auto_scaling_group_name("shared-name")
        .force_delete(true)
        .send()
        .await;
    assert_eq!(failure(r).0, "ValidationError");
    assert!(group(&w, &alice, "shared-name").await.is_some());
    // Each user's VMs are their own, launched with their credentials.
    w.run_for(2).await;
    for (u, n) in [(&alice, 4), (&bob, 1)] {
        let out = w
            .sdk(u)
            .describe_auto_scaling_instances()
            .send()
            .await
            .unwrap();
        assert_eq!(out.auto_scaling_instances().len(), n, "{}", u.name);
    }
}

#[tokio::test]
async fn describe_filters_by_name_and_tag() {
    let Given { w: _w, c, .. } = Given::lc("filters").await;
    for (name, env) in [("a", "prod"), ("b", "dev"), ("c", "prod")] {
        c.create_auto_scaling_group()
            .auto_scaling_group_name(name)
            .launch_configuration_name("web@hotel")
            .min_size(0)
            .max_size(1)
            .tags(Tag::builder().key("env").value(env).build())
            .send()
            .await
            .unwrap();
    }
    let names = |out: aws_sdk_autoscaling::operation::describe_auto_scaling_groups::DescribeAutoScalingGroupsOutput| -> Vec<String> {
        out.auto_scaling_groups()
            .iter()
            .map(|g| g.auto_scaling_group_name().unwrap().to_string())
            .collect()
    };
    let out = c
        .describe_auto_scaling_groups()
        .auto_scaling_group_names("c")
        .auto_scaling_group_names("a")
        .auto_scaling_group_names("zz")
        .send()
        .await
        .unwrap();
    assert_eq!(names(out), ["a", "c"]);
    let filter = |name: &str, value: &str| Filter::builder().name(name).values(value).build();
    let out = c
        .describe_auto_scaling_groups()
        .filters(filter("tag:env", "prod"))
        .send()
        .await
        .unwrap();
    assert_eq!(names(out), ["a", "c"]);
    let out = c
        .describe_auto_scaling_groups()
        .filters(filter("tag-value", "dev"))
        .send()
        .await
        .unwrap();
    assert_eq!(names(out), ["b"]);
    let out = c
        .describe_auto_scaling_groups()
        .filters(filter("tag-key", "env"))
        .max_records(1)
        .send()
        .await
        .unwrap();
    assert_eq!(out.auto_scaling_groups().len(), 1);
    assert!(out.next_token().is_some());
    let r = c
        .describe_auto_scaling_groups()
        .filters(filter("color", "red"))
        .send()
        .await;
    assert_eq!(failure(r).0, "ValidationError");
}

#[tokio::test]
async fn authentication_failures_get_403_and_awss_codes() {
    let Given { w, u, .. } = Given::user("auth").await;
    let body = "Action=DescribeAutoScalingGroups&Version=2011-01-01";
    let code = |b: &str| xml_text(b, "Code").unwrap_or_default().to_string();

    let (status, out) = w
        .raw(&u.access_key_id, &u.secret, "POST", "/", body, None, |_| {})
        .await;
    assert_eq!(status, 200, "{out}");

    let r = w
        .sdk_with_keys(&u.access_key_id, "not-the-secret")
        .describe_auto_scaling_groups()
        .send()
        .await;
    let (c, m) = failure(r);
    assert_eq!(c, "SignatureDoesNotMatch");
    assert!(m.contains("signature we calculated does not match"), "{m}");
    let r = w
        .sdk_with_keys("PKIAUNKNOWNUNKNOWN00", "x")
        .describe_auto_scaling_groups()
        .send()
        .await;
    assert_eq!(failure(r).0, "InvalidClientTokenId");

    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(16 * 60);
    // (what, signed at, change after signing, the code expected)
    type Tamper = Box<dyn FnOnce(&mut phantom_e2e::RawRequest)>;
    let cases: Vec<(&str, Option<std::time::SystemTime>, Tamper, &str)> = vec![
        (
            "signed 16 minutes ago",
            Some(past),
            Box::new(|_| {}),
            "RequestExpired",
        ),
        (
            "body changed after signing",
            None,
            Box::new(|r| r.body.push_str("&MaxRecords=5")),
            "SignatureDoesNotMatch",
        ),
        (
            "no Authorization",
            None,
            Box::new(|r| r.remove_header("authorization")),
            "MissingAuthenticationToken",
        ),
        (
            "a malformed Authorization",
            None,
            Box::new(|r| r.set_header("authorization", "AWS4-HMAC-SHA256 garbage")),
            "IncompleteSignature",
        ),
        (
            "a signed header removed",
            None,
            Box::new(|r| r.remove_header("x-amz-date")),
            "IncompleteSignature",
        ),
    ];
    for (what, at, tamper, want) in cases {
        let (status, out) = w
            .raw(&u.access_key_id, &u.secret, "POST", "/", body, at, tamper)
            .await;
        assert_eq!(
            (status, code(&out)),
            (403, want.to_string()),
            "{what}: {out}"
        );
    }
}

#[tokio::test]
async fn request_errors_get_400_and_awss_codes() {
    let Given { w, u, .. } = Given::user("wire").await;
    let send =
        |body: &'static str| w.raw(&u.access_key_id, &u.secret, "POST", "/", body, None, |_| {});
    let code = |b: &str| xml_text(b, "Code").unwrap_or_default().to_string();
    for (body, want) in [
        ("Action=Frobnicate&Version=2011-01-01", "InvalidAction"),
        ("Action=DescribeAutoScalingGroups&Version=2010-01-01", "InvalidAction"),
        ("Version=2011-01-01", "InvalidAction"),
        ("Action=CreateLaunchConfiguration&Version=2011-01-01", "ValidationError"),
        ("Action=SetDesiredCapacity&Version=2011-01-01&AutoScalingGroupName=g&DesiredCapacity=x", "ValidationError"),
        ("Action=CreateLaunchConfiguration&Version=2011-01-01&LaunchConfigurationName=n@hotel&InstanceType=t2.micro&ImageId=%FF%FE", "MalformedQueryString"),
    ] {
        let (status, out) = send(body).await;
        assert_eq!((status, code(&out)), (400, want.to_string()), "{body}: {out}");
    }
    // GET with the parameters in the query string works too.
    let (status, out) = w
        .raw(
            &u.access_key_id,
            &u.secret,
            "GET",
            "/?Action=DescribeLaunchConfigurations&Version=2011-01-01",
            "",
            None,
            |_| {},
        )
        .await;
    assert_eq!(status, 200, "{out}");
    assert!(
        out.contains("<DescribeLaunchConfigurationsResult>"),
        "{out}"
    );
}

#[tokio::test]
async fn every_supported_action_is_reached() {
    // The table dispatch reads: each name answers something other than InvalidAction.
    let Given { w, u, .. } = Given::user("table").await;
    for action in api::actions::supported() {
        let body = format!("Action={action}&Version=2011-01-01");
        let (_, out) = w
            .raw(
                &u.access_key_id,
                &u.secret,
                "POST",
                "/",
                &body,
                None,
                |_| {},
            )
            .await;
        assert_ne!(
            xml_text(&out, "Code"),
            Some("InvalidAction"),
            "{action}: {out}"
        );
    }
}
