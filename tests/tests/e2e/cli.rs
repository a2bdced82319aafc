//! The unmodified AWS CLI against the local stack: botocore parses every response against the
//! service model, so a field it drops or mis-types fails here, and its own paginator follows
//! NextToken. Errors, paging rules, filters and isolation are checked in process
//! (`tests/inproc/api.rs`).

use phantom_e2e::argv;
use phantom_e2e::{eventually, stack, User};
use serde_json::{json, Value};

fn lc_input(name: &str) -> Value {
    json!({
        "LaunchConfigurationName": name,
        "ImageId": "ami-0abc1234",
        "KeyName": "my-key",
        "SecurityGroups": ["sg-0001", "sg-0002"],
        "UserData": "#!/bin/sh\necho <hello & goodbye>\r\n",
        "InstanceType": "m5.large",
        "KernelId": "aki-1234",
        "RamdiskId": "ari-1234",
        "BlockDeviceMappings": [
            {"DeviceName": "/dev/sda1", "Ebs": {"SnapshotId": "snap-1", "VolumeSize": 30, "VolumeType": "gp3",
              "DeleteOnTermination": true, "Iops": 3000, "Encrypted": true, "Throughput": 125}},
            {"DeviceName": "/dev/sdb", "VirtualName": "ephemeral0"},
            {"DeviceName": "/dev/sdc", "NoDevice": true}
        ],
        "InstanceMonitoring": {"Enabled": false},
        "SpotPrice": "0.05",
        "IamInstanceProfile": "arn:aws:iam::123456789012:instance-profile/web",
        "EbsOptimized": true,
        "AssociatePublicIpAddress": true,
        "PlacementTenancy": "dedicated",
        "MetadataOptions": {"HttpTokens": "required", "HttpPutResponseHopLimit": 2, "HttpEndpoint": "enabled"}
    })
}

fn create_lc(user: &User, name: &str) {
    stack()
        .aws(
            user,
            &argv!(
                "create-launch-configuration --launch-configuration-name",
                name,
                "--image-id ami-12345678 --instance-type t2.micro"
            ),
        )
        .json();
}

/// The default VPC's subnet in `zone` of a local cloud.
fn subnet_in(cloud: &str, zone: &str) -> String {
    let found = stack().ec2(
        cloud,
        &[
            "describe-subnets",
            "--filters",
            &format!("Name=availability-zone,Values={zone}"),
        ],
    );
    found["Subnets"][0]["SubnetId"]
        .as_str()
        .unwrap_or_else(|| panic!("no subnet in {zone} on {cloud}: {found}"))
        .to_string()
}

fn describe_group(user: &User, name: &str) -> Option<Value> {
    stack().group(user, name)
}

#[test]
fn launch_configuration_round_trips_every_setting_phantom_acts_on() {
    let s = stack();
    let u = s.new_user("lc-rt");
    let input = lc_input("web@hotel");
    s.aws(
        &u,
        &argv!(
            "create-launch-configuration --cli-input-json",
            &input.to_string()
        ),
    )
    .json();
    let out = s
        .aws(
            &u,
            &argv!("describe-launch-configurations --launch-configuration-names web@hotel"),
        )
        .json();
    let lcs = out["LaunchConfigurations"].as_array().unwrap();
    assert_eq!(lcs.len(), 1);
    let got = &lcs[0];
    for (k, v) in input.as_object().unwrap() {
        if k == "UserData" {
            // The CLI base64-encodes user data on the way in; Describe returns it encoded.
            use base64::Engine;
            let raw = base64::engine::general_purpose::STANDARD
                .decode(got[k].as_str().unwrap())
                .unwrap();
            let decoded = String::from_utf8(raw).unwrap();
            assert_eq!(decoded, v.as_str().unwrap());
            continue;
        }
        assert_eq!(&got[k], v, "field {k}");
    }
    let arn = got["LaunchConfigurationARN"].as_str().unwrap();
    assert!(
        arn.starts_with("arn:aws:autoscaling:us-east-1:")
            && arn.contains(":launchConfiguration:")
            && arn.ends_with(":launchConfigurationName/web@hotel"),
        "{arn}"
    );
    let created = got["CreatedTime"].as_str().unwrap();
    assert!(created.ends_with('Z') && created.contains('T'), "{created}");
    // ClassicLink belongs to EC2-Classic: refused, not stored and ignored.
    let mut classic = lc_input("classic@hotel");
    classic["ClassicLinkVPCId"] = json!("vpc-1234");
    let refused = s
        .aws(
            &u,
            &argv!(
                "create-launch-configuration --cli-input-json",
                &classic.to_string()
            ),
        )
        .error("ValidationError");
    assert!(refused.contains("ClassicLinkVPCId"), "{refused}");
}

#[test]
fn group_round_trips_every_setting_phantom_acts_on() {
    let s = stack();
    let u = s.new_user("asg-rt");
    create_lc(&u, "web@sierra");
    let subnets = format!(
        "{},{}",
        subnet_in("sierra", "us-east-1a"),
        subnet_in("sierra", "us-east-1b")
    );
    let input = json!({
        "AutoScalingGroupName": "web-group",
        "LaunchConfigurationName": "web@sierra",
        "MinSize": 1, "MaxSize": 10, "DesiredCapacity": 4,
        "DefaultCooldown": 120,
        "AvailabilityZones": ["us-east-1a", "us-east-1b"],
        "HealthCheckType": "EC2",
        "HealthCheckGracePeriod": 60,
        "VPCZoneIdentifier": subnets,
        "TerminationPolicies": ["OldestInstance", "Default"],
        "NewInstancesProtectedFromScaleIn": true,
        "CapacityRebalance": false,
        "Tags": [{"Key": "env", "Value": "prod", "PropagateAtLaunch": true},
                 {"Key": "team", "Value": "<a&b>", "PropagateAtLaunch": false}],
        "MaxInstanceLifetime": 86400,
        "Context": "ctx",
        "DesiredCapacityType": "units"
    });
    s.aws(
        &u,
        &argv!(
            "create-auto-scaling-group --cli-input-json",
            &input.to_string()
        ),
    )
    .json();
    let got = describe_group(&u, "web-group").expect("the group");
    for (k, v) in input.as_object().unwrap() {
        if k == "Tags" {
            continue;
        }
        assert_eq!(&got[k], v, "field {k}");
    }
    assert_eq!(
        got["Tags"],
        json!([
            {"ResourceId": "web-group", "ResourceType": "auto-scaling-group", "Key": "env", "Value": "prod", "PropagateAtLaunch": true},
            {"ResourceId": "web-group", "ResourceType": "auto-scaling-group", "Key": "team", "Value": "<a&b>", "PropagateAtLaunch": false}
        ])
    );
    assert_eq!(got["Instances"], json!([]));
    let arn = got["AutoScalingGroupARN"].as_str().unwrap();
    assert!(
        arn.starts_with("arn:aws:autoscaling:us-east-1:")
            && arn.ends_with(":autoScalingGroupName/web-group"),
        "{arn}"
    );
    // An instance maintenance policy is kept and shown; -1 in both takes it off.
    s.aws(
        &u,
        &argv!("update-auto-scaling-group --auto-scaling-group-name web-group --instance-maintenance-policy MinHealthyPercentage=90,MaxHealthyPercentage=120"),
    )
    .json();
    assert_eq!(
        describe_group(&u, "web-group").unwrap()["InstanceMaintenancePolicy"],
        json!({"MinHealthyPercentage": 90, "MaxHealthyPercentage": 120})
    );
    s.aws(
        &u,
        &argv!("update-auto-scaling-group --auto-scaling-group-name web-group --instance-maintenance-policy MinHealthyPercentage=-1,MaxHealthyPercentage=-1"),
    )
    .json();
    assert!(describe_group(&u, "web-group").unwrap()["InstanceMaintenancePolicy"].is_null());
    // Zones by id, as the cloud's EC2 names them (its subnets' zones, us-east-1a and 1b, are
    // use1-az6 and use1-az1 there); one it does not have is refused.
    s.aws(
        &u,
        &argv!("update-auto-scaling-group --auto-scaling-group-name web-group --availability-zone-ids use1-az6 use1-az1"),
    )
    .json();
    let got = describe_group(&u, "web-group").unwrap();
    assert_eq!(
        got["AvailabilityZones"],
        json!(["us-east-1a", "us-east-1b"])
    );
    assert_eq!(got["AvailabilityZoneIds"], json!(["use1-az6", "use1-az1"]));
    let err = s
        .aws(
            &u,
            &argv!("update-auto-scaling-group --auto-scaling-group-name web-group --availability-zone-ids use1-az99"),
        )
        .error("ValidationError");
    assert_eq!(err, "The availability zone ID 'use1-az99' does not exist");
    // A reservation preference without targets asks the cloud nothing until a launch.
    s.aws(
        &u,
        &argv!("update-auto-scaling-group --auto-scaling-group-name web-group --capacity-reservation-specification CapacityReservationPreference=none"),
    )
    .json();
    assert_eq!(
        describe_group(&u, "web-group").unwrap()["CapacityReservationSpecification"],
        json!({"CapacityReservationPreference": "none"})
    );
    // A setting Phantom does not act on is refused, never stored and ignored.
    let err = s
        .aws(
            &u,
            &argv!("update-auto-scaling-group --auto-scaling-group-name web-group --availability-zone-impairment-policy ZonalShiftEnabled=true,ImpairedZoneHealthCheckBehavior=IgnoreUnhealthy"),
        )
        .error("ValidationError");
    assert!(
        err.contains("AvailabilityZoneImpairmentPolicy is not supported"),
        "{err}"
    );
    assert!(describe_group(&u, "web-group").unwrap()["AvailabilityZoneImpairmentPolicy"].is_null());
}

#[test]
fn paging_across_120_launch_configurations() {
    let s = stack();
    let u = s.new_user("paging");
    // 120 changes in a row, faster than a user's default 5 a second.
    s.set_limits(&u, 1000.0, 1000.0);
    let sdk = s.sdk(&u);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        for i in 0..120 {
            sdk.create_launch_configuration()
                .launch_configuration_name(format!("lc-{i:03}@hotel"))
                .image_id("ami-1")
                .instance_type("t2.micro")
                .send()
                .await
                .unwrap();
        }
    });
    // The CLI follows NextToken itself: all 120, in name order, with small pages too.
    for page_size in ["50", "7"] {
        let out = s
            .aws(
                &u,
                &["describe-launch-configurations", "--page-size", page_size],
            )
            .json();
        let names: Vec<&str> = out["LaunchConfigurations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["LaunchConfigurationName"].as_str().unwrap())
            .collect();
        let want: Vec<String> = (0..120).map(|i| format!("lc-{i:03}@hotel")).collect();
        assert_eq!(names, want, "page size {page_size}");
    }
    let out = s
        .aws(&u, &["describe-launch-configurations", "--max-items", "10"])
        .json();
    assert_eq!(out["LaunchConfigurations"].as_array().unwrap().len(), 10);
    assert!(out["NextToken"].is_string());
    // The default page is 50, MaxRecords at most 100.
    let out = s
        .aws(&u, &["describe-launch-configurations", "--no-paginate"])
        .json();
    assert_eq!(out["LaunchConfigurations"].as_array().unwrap().len(), 50);
    assert!(out["NextToken"].is_string());
    let m = s
        .aws(
            &u,
            &argv!("describe-launch-configurations --no-paginate --max-records 101"),
        )
        .error("ValidationError");
    assert!(m.contains("maxRecords"), "{m}");
    s.aws(
        &u,
        &["describe-launch-configurations", "--next-token", "garbage"],
    )
    .error("InvalidNextToken");
}

#[test]
fn wrong_secret_and_unknown_key_are_refused() {
    let s = stack();
    let u = s.new_user("auth-cli");
    let m = s
        .aws_with_keys(
            &u.access_key_id,
            "not-the-secret",
            &["describe-auto-scaling-groups"],
        )
        .error("SignatureDoesNotMatch");
    assert!(m.contains("signature we calculated does not match"), "{m}");
    s.aws_with_keys(
        "PKIAUNKNOWNUNKNOWN00",
        "x",
        &["describe-auto-scaling-groups"],
    )
    .error("InvalidClientTokenId");
}

/// Every action the tools call, once through the AWS CLI: botocore parses each answer against the
/// model. Their effects are tested in process (`tests/inproc/tools.rs`).
#[test]
fn the_tools_actions_through_the_cli() {
    let s = stack();
    let u = s.new_user("cli-tools");
    let aws = |args: &[&str]| s.aws(&u, args).json();
    // One of moto's stock images: the cloud validates them, and this group launches a VM.
    aws(&argv!("create-launch-configuration --launch-configuration-name tools@hotel --image-id ami-1e749f67 --instance-type t2.micro"));
    aws(&argv!("create-auto-scaling-group --auto-scaling-group-name tools --launch-configuration-name tools@hotel --min-size 0 --max-size 3"));
    aws(&argv!("update-auto-scaling-group --auto-scaling-group-name tools --max-size 2 --health-check-grace-period 30"));
    aws(&argv!("create-or-update-tags --tags ResourceId=tools,ResourceType=auto-scaling-group,Key=env,Value=test,PropagateAtLaunch=true"));
    let tags = aws(&["describe-tags", "--filters", "Name=key,Values=env"]);
    assert_eq!(tags["Tags"][0]["Value"], "test");
    aws(&argv!(
        "delete-tags --tags ResourceId=tools,ResourceType=auto-scaling-group,Key=env"
    ));
    aws(&argv!(
        "suspend-processes --auto-scaling-group-name tools --scaling-processes AZRebalance"
    ));
    aws(&argv!(
        "enable-metrics-collection --auto-scaling-group-name tools --granularity 1Minute"
    ));
    let g = describe_group(&u, "tools").unwrap();
    assert_eq!(g["MaxSize"], 2);
    assert_eq!(g["HealthCheckGracePeriod"], 30);
    assert_eq!(g["Tags"], json!([]));
    assert_eq!(g["SuspendedProcesses"][0]["ProcessName"], "AZRebalance");
    assert_eq!(g["EnabledMetrics"].as_array().unwrap().len(), 20);
    aws(&["resume-processes", "--auto-scaling-group-name", "tools"]);
    aws(&argv!(
        "disable-metrics-collection --auto-scaling-group-name tools"
    ));
    let hooks = aws(&argv!(
        "describe-lifecycle-hooks --auto-scaling-group-name tools"
    ));
    assert_eq!(hooks["LifecycleHooks"], json!([]));
    assert_eq!(
        aws(&["describe-scaling-process-types"])["Processes"]
            .as_array()
            .unwrap()
            .len(),
        9
    );
    assert!(
        aws(&["describe-termination-policy-types"])["TerminationPolicyTypes"]
            .as_array()
            .unwrap()
            .contains(&json!("Default"))
    );
    assert_eq!(
        aws(&["describe-metric-collection-types"])["Granularities"][0]["Granularity"],
        "1Minute"
    );

    // The instance actions, on a VM of the group.
    aws(&argv!(
        "set-desired-capacity --auto-scaling-group-name tools --desired-capacity 1"
    ));
    let id = phantom_e2e::stack::eventually(60, "a VM InService", || {
        let g = describe_group(&u, "tools")?;
        let i = g["Instances"].as_array()?.first()?.clone();
        (i["LifecycleState"] == "InService").then(|| i["InstanceId"].as_str().unwrap().to_string())
    });
    aws(&argv!(
        "set-instance-protection --auto-scaling-group-name tools --instance-ids",
        &id,
        "--protected-from-scale-in"
    ));
    aws(&argv!(
        "set-instance-health --instance-id",
        &id,
        "--health-status Healthy"
    ));
    // Standby and back.
    let out = aws(&argv!(
        "enter-standby --auto-scaling-group-name tools --instance-ids",
        &id,
        "--should-decrement-desired-capacity"
    ));
    assert_eq!(
        out["Activities"][0]["Description"],
        format!("Moving EC2 instance to Standby: {id}")
    );
    assert_eq!(
        (
            &out["Activities"][0]["StatusCode"],
            &out["Activities"][0]["Progress"]
        ),
        (&json!("InProgress"), &json!(50))
    );
    let g = describe_group(&u, "tools").unwrap();
    assert_eq!(g["DesiredCapacity"], 0);
    assert_eq!(g["Instances"][0]["LifecycleState"], "Standby");
    let out = aws(&argv!(
        "exit-standby --auto-scaling-group-name tools --instance-ids",
        &id
    ));
    assert_eq!(out["Activities"][0]["StatusCode"], "PreInService");
    phantom_e2e::stack::eventually(60, "back InService", || {
        let g = describe_group(&u, "tools")?;
        (g["Instances"][0]["LifecycleState"] == "InService").then_some(())
    });

    // A termination hook holds the VM in Terminating:Wait until the action is completed.
    aws(&argv!("put-lifecycle-hook --auto-scaling-group-name tools --lifecycle-hook-name drain --lifecycle-transition autoscaling:EC2_INSTANCE_TERMINATING --heartbeat-timeout 300 --default-result CONTINUE"));
    let hooks = aws(&argv!(
        "describe-lifecycle-hooks --auto-scaling-group-name tools"
    ));
    assert_eq!(hooks["LifecycleHooks"][0]["GlobalTimeout"], 30000);
    let out = aws(&argv!(
        "terminate-instance-in-auto-scaling-group --instance-id",
        &id,
        "--should-decrement-desired-capacity"
    ));
    // InProgress until the instance has gone, as AWS answers.
    assert_eq!(out["Activity"]["Progress"], 0);
    assert_eq!(out["Activity"]["StatusCode"], "InProgress");
    assert!(out["Activity"]["EndTime"].is_null());
    assert_eq!(describe_group(&u, "tools").unwrap()["DesiredCapacity"], 0);
    let held = aws(&["describe-auto-scaling-instances", "--instance-ids", &id]);
    assert_eq!(
        held["AutoScalingInstances"][0]["LifecycleState"],
        "Terminating:Wait"
    );
    let action = [
        "--auto-scaling-group-name",
        "tools",
        "--lifecycle-hook-name",
        "drain",
        "--instance-id",
        &id,
    ];
    aws(&[&["record-lifecycle-action-heartbeat"], &action[..]].concat());
    aws(&[
        &["complete-lifecycle-action"],
        &action[..],
        &["--lifecycle-action-result", "CONTINUE"],
    ]
    .concat());
    phantom_e2e::stack::eventually(60, "the VM gone from the group", || {
        let g = describe_group(&u, "tools")?;
        g["Instances"].as_array()?.is_empty().then_some(())
    });
    aws(&argv!(
        "delete-lifecycle-hook --auto-scaling-group-name tools --lifecycle-hook-name drain"
    ));
    // A VM launched outside Phantom joins (tagged as the group's on the cloud) and leaves again
    // (untagged, still running).
    let run_outside = || {
        s.ec2(
            "hotel",
            &argv!("run-instances --image-id ami-1e749f67 --instance-type t2.micro --count 1"),
        )["Instances"][0]["InstanceId"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let outside = run_outside();
    aws(&argv!(
        "attach-instances --auto-scaling-group-name tools --instance-ids",
        &outside
    ));
    phantom_e2e::stack::eventually(60, "the attached VM InService", || {
        let g = describe_group(&u, "tools")?;
        (g["Instances"][0]["InstanceId"] == outside.as_str()
            && g["Instances"][0]["LifecycleState"] == "InService")
            .then_some(())
    });
    let tagged = s.vms("hotel", &u.name, "tools");
    assert_eq!(tagged.len(), 1);
    assert_eq!(tagged[0]["InstanceId"], outside.as_str());
    // The api asks the cloud first (its own EC2 client, against moto here): a stopped VM and an
    // unknown id are refused at once, the group unchanged.
    let stopped = run_outside();
    s.ec2("hotel", &["stop-instances", "--instance-ids", &stopped]);
    for (id, why) in [
        (stopped.as_str(), "is stopped"),
        ("i-0123456789abcdef0", "does not exist"),
    ] {
        let message = s
            .aws(
                &u,
                &argv!(
                    "attach-instances --auto-scaling-group-name tools --instance-ids",
                    id
                ),
            )
            .error("ValidationError");
        assert!(message.contains(why), "{message}");
    }
    assert_eq!(describe_group(&u, "tools").unwrap()["DesiredCapacity"], 1);
    let out = aws(&argv!(
        "detach-instances --auto-scaling-group-name tools --instance-ids",
        &outside,
        "--should-decrement-desired-capacity"
    ));
    assert_eq!(
        out["Activities"][0]["Description"],
        format!("Detaching EC2 instance: {outside}")
    );
    phantom_e2e::stack::eventually(60, "the VM detached and untagged", || {
        let g = describe_group(&u, "tools")?;
        (g["Instances"].as_array()?.is_empty() && s.vms("hotel", &u.name, "tools").is_empty())
            .then_some(())
    });
    let still = s.ec2("hotel", &["describe-instances", "--instance-ids", &outside]);
    assert_eq!(
        still["Reservations"][0]["Instances"][0]["State"]["Name"],
        "running"
    );
    assert_eq!(
        aws(&["describe-lifecycle-hook-types"])["LifecycleHookTypes"],
        json!([
            "autoscaling:EC2_INSTANCE_LAUNCHING",
            "autoscaling:EC2_INSTANCE_TERMINATING"
        ])
    );
    assert_eq!(
        aws(&["describe-adjustment-types"])["AdjustmentTypes"][0]["AdjustmentType"],
        "ChangeInCapacity"
    );
    assert_eq!(
        aws(&["describe-auto-scaling-notification-types"])["AutoScalingNotificationTypes"],
        json!([
            "autoscaling:EC2_INSTANCE_LAUNCH",
            "autoscaling:EC2_INSTANCE_LAUNCH_ERROR",
            "autoscaling:EC2_INSTANCE_TERMINATE",
            "autoscaling:EC2_INSTANCE_TERMINATE_ERROR",
            "autoscaling:TEST_NOTIFICATION"
        ])
    );
    let limits = aws(&["describe-account-limits"]);
    assert_eq!(limits["MaxNumberOfLaunchConfigurations"], 200);
    assert_eq!(limits["NumberOfAutoScalingGroups"], 1);
}

/// A group from a launch template made on the cloud with `aws ec2 create-launch-template`: the
/// cloud (moto's EC2) resolves it at RunInstances.
#[test]
fn a_group_from_a_launch_template_on_the_cloud() {
    let s = stack();
    let u = s.new_user("cli-lt");
    let made = s.ec2(
        "hotel",
        &[
            "create-launch-template",
            "--launch-template-name",
            &format!("{}-web", u.name),
            "--launch-template-data",
            r#"{"ImageId": "ami-1e749f67", "InstanceType": "t3.micro"}"#,
        ],
    );
    assert!(made["LaunchTemplate"]["LaunchTemplateId"].is_string());
    // Its latest version is 2: the group's instances show that number, as AWS shows the version
    // an instance was launched from.
    let second = s.ec2(
        "hotel",
        &[
            "create-launch-template-version",
            "--launch-template-name",
            &format!("{}-web", u.name),
            "--launch-template-data",
            r#"{"ImageId": "ami-1e749f67", "InstanceType": "t3.small"}"#,
        ],
    );
    assert_eq!(second["LaunchTemplateVersion"]["VersionNumber"], 2);
    let template = format!("LaunchTemplateName={}-web@hotel,Version=$Latest", u.name);
    s.aws(
        &u,
        &argv!(
            "create-auto-scaling-group --auto-scaling-group-name from-lt --launch-template",
            &template,
            "--min-size 1 --max-size 2"
        ),
    )
    .json();
    let g = phantom_e2e::stack::eventually(60, "the template's VM InService", || {
        let g = describe_group(&u, "from-lt")?;
        (g["Instances"][0]["LifecycleState"] == "InService").then_some(g)
    });
    assert_eq!(
        g["LaunchTemplate"]["LaunchTemplateName"],
        format!("{}-web@hotel", u.name)
    );
    assert_eq!(g["LaunchTemplate"]["Version"], "$Latest");
    // Its id too, as the cloud gave it, as AWS shows both.
    assert_eq!(
        g["LaunchTemplate"]["LaunchTemplateId"],
        format!(
            "{}@hotel",
            made["LaunchTemplate"]["LaunchTemplateId"].as_str().unwrap()
        )
    );
    // Each instance names the template it was launched from and that version's number.
    let mut launched_from = g["LaunchTemplate"].clone();
    launched_from["Version"] = "2".into();
    assert_eq!(g["Instances"][0]["LaunchTemplate"], launched_from);
    let instances = s.aws(&u, &["describe-auto-scaling-instances"]).json();
    assert_eq!(
        instances["AutoScalingInstances"][0]["LaunchTemplate"],
        launched_from
    );
    let vms = s.vms("hotel", &u.name, "from-lt");
    assert_eq!(vms.len(), 1);
    // LocalStack 4.4.0's EC2 takes the template's image but launches m1.small whatever its
    // instance type (its bug, docs/emulators.md); moto's applies both, version 2's type.
    if s.env["PHANTOM_EMULATOR"] != "localstack" {
        assert_eq!(vms[0]["InstanceType"], "t3.small");
    }
    assert_eq!(vms[0]["ImageId"], "ami-1e749f67");
    // A template the cloud does not have, or not at that version, is refused at once (the api
    // asks moto's DescribeLaunchTemplateVersions), nothing created. LocalStack 4.4.0's EC2 answers
    // a missing version with a 500 (its bug, docs/emulators.md), which Phantom takes for a cloud it
    // cannot ask just now: the group is created and its launches fail later; not tried there.
    let mut missing = vec![format!(
        "LaunchTemplateName={}-nope@hotel,Version=$Latest",
        u.name
    )];
    if s.env["PHANTOM_EMULATOR"] != "localstack" {
        missing.push(format!("LaunchTemplateName={}-web@hotel,Version=9", u.name));
    }
    for template in missing {
        let message = s
            .aws(
                &u,
                &argv!(
                    "create-auto-scaling-group --auto-scaling-group-name ghost --launch-template",
                    &template,
                    "--min-size 1 --max-size 1"
                ),
            )
            .error("ValidationError");
        assert!(
            message.contains("valid fully-formed launch template"),
            "{message}"
        );
        assert!(describe_group(&u, "ghost").is_none());
    }
}

/// Phantom's own API from a script: curl signs with SigV4 itself (`--aws-sigv4`), as
/// docs/own-api.md shows; the user sets their credentials for a cloud and sees them listed, never the secret.
#[test]
fn phantoms_own_api_through_curl() {
    let s = stack();
    let u = s.new_user("curl");
    let curl = |op: &str, body: &str| -> (String, Value) {
        let out = std::process::Command::new("curl")
            .args([
                "-s",
                "-w",
                "\n%{http_code}",
                "--aws-sigv4",
                "aws:amz:us-east-1:autoscaling",
            ])
            .args(["--user", &format!("{}:{}", u.access_key_id, u.secret)])
            .args(["-H", "content-type: application/json", "-d", body])
            .arg(format!("{}/phantom/v1/{op}", s.url))
            .output()
            .expect("curl runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, status) = text.rsplit_once('\n').expect("a status line");
        (
            status.to_string(),
            serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON: {body}")),
        )
    };
    let (status, v) = curl(
        "PutCloudCredentials",
        r#"{"Cloud": "sierra", "AccessKeyId": "AKIACURL", "SecretAccessKey": "curl-secret"}"#,
    );
    assert_eq!(status, "200", "{v}");
    let (status, v) = curl("ListClouds", "{}");
    assert_eq!(status, "200", "{v}");
    let sierra = v["Clouds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["Name"] == "sierra")
        .unwrap()
        .clone();
    assert_eq!(sierra["AccessKeyId"], "AKIACURL");
    assert!(!v.to_string().contains("curl-secret"));
    let (status, v) = curl("DeleteCloudCredentials", r#"{"Cloud": "nowhere"}"#);
    assert_eq!(
        (status.as_str(), v["Error"]["Code"].as_str()),
        ("400", Some("ValidationError"))
    );
}

#[test]
fn scaling_policies_through_the_cli() {
    let s = stack();
    let u = s.new_user("cli-policies");
    let aws = |args: &[&str]| s.aws(&u, args);
    create_lc(&u, "pol@hotel");
    aws(&argv!("create-auto-scaling-group --auto-scaling-group-name pol --launch-configuration-name pol@hotel --min-size 0 --max-size 5 --desired-capacity 0"))
    .json();
    let put = aws(&argv!("put-scaling-policy --auto-scaling-group-name pol --policy-name out --adjustment-type ChangeInCapacity --scaling-adjustment 2 --cooldown 600"))
    .json();
    let arn = put["PolicyARN"].as_str().expect("an ARN");
    assert!(
        arn.ends_with(":autoScalingGroupName/pol:policyName/out"),
        "{arn}"
    );
    aws(&argv!("put-scaling-policy --auto-scaling-group-name pol --policy-name steps --policy-type StepScaling --adjustment-type PercentChangeInCapacity --min-adjustment-magnitude 1 --step-adjustments MetricIntervalLowerBound=0,MetricIntervalUpperBound=10,ScalingAdjustment=10 MetricIntervalLowerBound=10,ScalingAdjustment=50 MetricIntervalUpperBound=0,ScalingAdjustment=-50"))
    .json();
    // A step policy's warm-up and aggregation are its alarm's: taken and shown; a simple
    // policy has neither.
    aws(&argv!("put-scaling-policy --auto-scaling-group-name pol --policy-name tuned --policy-type StepScaling --adjustment-type ChangeInCapacity --step-adjustments MetricIntervalLowerBound=0,ScalingAdjustment=1 --estimated-instance-warmup 60 --metric-aggregation-type Maximum"))
    .json();
    let refused = aws(&argv!("put-scaling-policy --auto-scaling-group-name pol --policy-name refused --adjustment-type ChangeInCapacity --scaling-adjustment 1 --estimated-instance-warmup 60"))
    .error("ValidationError");
    assert!(refused.contains("EstimatedInstanceWarmup"), "{refused}");
    let refused = aws(&[
        "put-scaling-policy",
        "--auto-scaling-group-name",
        "pol",
        "--policy-name",
        "refused",
        "--adjustment-type",
        "ChangeInCapacity",
        "--scaling-adjustment",
        "1",
        "--target-tracking-configuration",
        r#"{"TargetValue": 50, "PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}}"#,
    ])
    .error("ValidationError");
    assert!(refused.contains("TargetTrackingConfiguration"), "{refused}");
    let policies = aws(&["describe-policies", "--auto-scaling-group-name", "pol"]).json();
    let list = policies["ScalingPolicies"].as_array().unwrap();
    assert_eq!(list.len(), 3);
    assert_eq!(list[1]["MetricAggregationType"], "Average");
    assert_eq!(list[1]["StepAdjustments"].as_array().unwrap().len(), 3);
    assert_eq!(list[1]["MinAdjustmentMagnitude"], 1);
    assert_eq!(list[2]["MetricAggregationType"], "Maximum");
    assert_eq!(list[2]["EstimatedInstanceWarmup"], 60);

    // By ARN, honouring the cooldown: once, then refused.
    aws(&["execute-policy", "--policy-name", arn, "--honor-cooldown"]).json();
    let refused = aws(&argv!(
        "execute-policy --auto-scaling-group-name pol --policy-name out --honor-cooldown"
    ))
    .error("ScalingActivityInProgress");
    assert!(refused.contains("cooldown"), "{refused}");
    // The step policy: 12 over the threshold is the +50 % step (1 of 2).
    aws(&argv!("execute-policy --auto-scaling-group-name pol --policy-name steps --metric-value 92 --breach-threshold 80"))
    .json();
    let g = describe_group(&u, "pol").expect("the group");
    assert_eq!(g["DesiredCapacity"], 3);
    let acts = aws(&argv!(
        "describe-scaling-activities --auto-scaling-group-name pol"
    ))
    .json();
    let causes: Vec<&str> = acts["Activities"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["Cause"].as_str())
        .collect();
    assert!(
        causes
            .iter()
            .any(|c| c.contains("executed policy steps changing the desired capacity from 2 to 3")),
        "{causes:?}"
    );
    aws(&argv!(
        "delete-policy --auto-scaling-group-name pol --policy-name out"
    ))
    .json();
    aws(&argv!(
        "delete-auto-scaling-group --auto-scaling-group-name pol --force-delete"
    ))
    .json();
}

/// A policy's webhook over real HTTP: made with a signed call, then POSTed to by curl with
/// Alertmanager's payload and no credentials, as Alertmanager would.
#[test]
fn an_alert_webhook_scales_a_group_through_plain_http() {
    let s = stack();
    let u = s.new_user("webhook");
    let aws = |args: &[&str]| s.aws(&u, args).json();
    create_lc(&u, "hooked@hotel");
    aws(&argv!("create-auto-scaling-group --auto-scaling-group-name hooked --launch-configuration-name hooked@hotel --min-size 0 --max-size 2 --desired-capacity 0"));
    aws(&argv!("put-scaling-policy --auto-scaling-group-name hooked --policy-name out --adjustment-type ChangeInCapacity --scaling-adjustment 1"));
    let post = |url: &str, args: &[&str], body: &str| -> (String, Value) {
        let out = std::process::Command::new("curl")
            .args(["-s", "-w", "\n%{http_code}"])
            .args(args)
            .args(["-H", "content-type: application/json", "-d", body, url])
            .output()
            .expect("curl runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, status) = text.rsplit_once('\n').expect("a status line");
        (
            status.to_string(),
            serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON: {body}")),
        )
    };
    let user = format!("{}:{}", u.access_key_id, u.secret);
    let signed = [
        "--aws-sigv4",
        "aws:amz:us-east-1:autoscaling",
        "--user",
        &user,
    ];
    let (status, made) = post(
        &format!("{}/phantom/v1/CreatePolicyWebhook", s.url),
        &signed,
        r#"{"AutoScalingGroupName": "hooked", "PolicyName": "out"}"#,
    );
    assert_eq!(status, "200", "{made}");
    let url = made["Webhook"]["Url"].as_str().expect("a URL");
    assert!(url.starts_with(&s.url), "{url} is on the API's own address");
    let firing = r#"{"version":"4","status":"firing","receiver":"phantom","commonLabels":{"alertname":"QueueDeep"},
        "alerts":[{"status":"firing","labels":{"alertname":"QueueDeep"}}]}"#;
    let (status, v) = post(url, &[], firing);
    assert_eq!(
        (status.as_str(), v["Executed"].as_bool()),
        ("200", Some(true)),
        "{v}"
    );
    assert_eq!(describe_group(&u, "hooked").unwrap()["DesiredCapacity"], 1);
    // Inside the default cooldown (300 s): absorbed.
    let (status, v) = post(url, &[], firing);
    assert_eq!(
        (status.as_str(), v["Executed"].as_bool()),
        ("200", Some(false)),
        "{v}"
    );
    let (status, v) = post(&format!("{url}x"), &[], firing);
    assert_eq!(
        (status.as_str(), v["Error"]["Code"].as_str()),
        ("403", Some("AccessDenied"))
    );
    assert_eq!(describe_group(&u, "hooked").unwrap()["DesiredCapacity"], 1);
    aws(&argv!(
        "delete-auto-scaling-group --auto-scaling-group-name hooked --force-delete"
    ));
}

/// phantomctl's own user commands against the stack's table: a rotated key works at once and the
/// old one (never cached by the api) is refused; `user list` shows the new key, never a secret.
#[test]
fn phantomctl_rotates_a_users_key() {
    let s = stack();
    let u = s.new_user("rotate");
    let (key, secret) = s.phantomctl_keys(&["user", "rotate", &u.name]);
    assert_ne!(key, u.access_key_id);
    s.aws_with_keys(&key, &secret, &["describe-auto-scaling-groups"])
        .json();
    s.aws(&u, &["describe-auto-scaling-groups"])
        .error("InvalidClientTokenId");
    let list = s.phantomctl(&["user", "list"]);
    let list = String::from_utf8(list.stdout).expect("utf-8");
    let row = list
        .lines()
        .find(|l| l.starts_with(&format!("{}\t", u.name)))
        .expect("the user is listed");
    assert!(
        row.contains(&key) && row.ends_with("\tuser\tenabled"),
        "{row}"
    );
    assert!(!list.contains(&secret));
}

/// A recurring scheduled action put with the AWS CLI, seen firing on the local stack (cron's
/// granularity is a minute, so this waits up to one), with a scaling activity naming it, and its
/// next run then shown as StartTime; then deleted. (Its later runs, time zones and skipped
/// minutes are the scheduler's in-process tests', on a paused clock.)
#[test]
fn a_recurring_scheduled_action_fires_on_the_local_stack() {
    let s = stack();
    let u = s.new_user("cli-schedule");
    let aws = |args: &[&str]| s.aws(&u, args);
    // The clouds' stock image: its VM launches and comes to rest (below).
    aws(&[
        "create-launch-configuration",
        "--launch-configuration-name",
        "tick@hotel",
        "--image-id",
        phantom_e2e::world::IMAGE,
        "--instance-type",
        "t2.micro",
    ])
    .json();
    aws(&argv!("create-auto-scaling-group --auto-scaling-group-name tick --launch-configuration-name tick@hotel --min-size 0 --max-size 3 --desired-capacity 0"))
    .json();
    aws(&[
        "put-scheduled-update-group-action",
        "--auto-scaling-group-name",
        "tick",
        "--scheduled-action-name",
        "every-minute",
        "--recurrence",
        "* * * * *",
        "--time-zone",
        "Europe/Paris",
        "--desired-capacity",
        "1",
    ])
    .json();
    let next_run = || {
        let listed = aws(&argv!(
            "describe-scheduled-actions --auto-scaling-group-name tick"
        ))
        .json();
        let a = &listed["ScheduledUpdateGroupActions"][0];
        assert_eq!(a["Recurrence"], "* * * * *");
        assert_eq!(a["TimeZone"], "Europe/Paris");
        a["StartTime"].as_str().expect("the next run").to_string()
    };
    let desired = || {
        aws(&argv!(
            "describe-auto-scaling-groups --auto-scaling-group-names tick"
        ))
        .json()["AutoScalingGroups"][0]["DesiredCapacity"]
            .as_i64()
            .expect("a desired capacity")
    };
    let first = next_run();
    assert!(first.ends_with(":00.000Z"), "on a whole minute: {first}");
    eventually(75, "the scheduled action runs", || {
        (desired() == 1).then_some(())
    });
    let activities = aws(&argv!(
        "describe-scaling-activities --auto-scaling-group-name tick"
    ))
    .json();
    let runs = activities["Activities"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| {
            a["Cause"].as_str().unwrap_or_default().contains(
                "a scheduled action every-minute update of AutoScalingGroup constraints to min: 0, max: 3, desired: 1 changing the desired capacity from 0 to 1",
            )
        })
        .count();
    assert_eq!(runs, 1, "one activity for its run");
    assert!(next_run() > first, "the next run moved on");
    // The group at rest before the next write: moto's DynamoDB (CI's run with it as the state
    // store) can fail a transaction that races another on the same item with its own
    // RuntimeError ('dictionary changed size during iteration').
    eventually(60, "the scheduled VM InService", || {
        let g = aws(&argv!(
            "describe-auto-scaling-groups --auto-scaling-group-names tick"
        ))
        .json();
        let instances = g["AutoScalingGroups"][0]["Instances"].as_array().cloned();
        instances
            .filter(|i| i.len() == 1 && i[0]["LifecycleState"] == "InService")
            .map(|_| ())
    });
    aws(&argv!("delete-scheduled-action --auto-scaling-group-name tick --scheduled-action-name every-minute"))
    .json();
    let listed = aws(&argv!(
        "describe-scheduled-actions --auto-scaling-group-name tick"
    ))
    .json();
    assert_eq!(listed["ScheduledUpdateGroupActions"], serde_json::json!([]));
}

/// Answers where tools compare them with AWS's (issue 23): a group's tags ordered by key (and
/// DescribeTags by group, then key), the `propagate-at-launch` filter, a group's zones filled in
/// from its subnets, and AWS's own words for the usual mistakes.
#[test]
fn answers_as_aws_gives_them_through_the_cli() {
    let s = stack();
    let u = s.new_user("cli-exact");
    let aws = |args: &[&str]| s.aws(&u, args).json();
    create_lc(&u, "exact@hotel");
    let (zone_a, zone_b) = ("us-east-1a", "us-east-1b");
    let (subnet_a, subnet_b) = (&subnet_in("hotel", zone_a), &subnet_in("hotel", zone_b));
    aws(&[
        "create-auto-scaling-group",
        "--auto-scaling-group-name",
        "exact",
        "--launch-configuration-name",
        "exact@hotel",
        "--min-size",
        "0",
        "--max-size",
        "1",
        "--vpc-zone-identifier",
        &format!("{subnet_b},{subnet_a}"),
        "--tags",
        "Key=role,Value=web",
        "Key=acc-run,Value=1,PropagateAtLaunch=true",
        "Key=owner,Value=me",
    ]);
    let g = describe_group(&u, "exact").unwrap();
    assert_eq!(g["AvailabilityZones"], json!([zone_a, zone_b]));
    let keys = |tags: &Value| -> Vec<String> {
        tags.as_array()
            .unwrap()
            .iter()
            .map(|t| {
                format!(
                    "{}/{}",
                    t["ResourceId"].as_str().unwrap(),
                    t["Key"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(
        keys(&g["Tags"]),
        ["exact/acc-run", "exact/owner", "exact/role"]
    );
    aws(&argv!("create-or-update-tags --tags ResourceId=exact,ResourceType=auto-scaling-group,Key=color,Value=blue,PropagateAtLaunch=false"));
    let g = describe_group(&u, "exact").unwrap();
    assert_eq!(
        keys(&g["Tags"]),
        ["exact/acc-run", "exact/color", "exact/owner", "exact/role"]
    );
    let all = aws(&["describe-tags"]);
    assert_eq!(
        keys(&all["Tags"]),
        ["exact/acc-run", "exact/color", "exact/owner", "exact/role"]
    );
    // `true` as the CLI user writes it, `True` as Python's str() of a boolean gives it.
    for value in ["true", "True"] {
        let found = aws(&[
            "describe-tags",
            "--filters",
            &format!("Name=propagate-at-launch,Values={value}"),
        ]);
        assert_eq!(keys(&found["Tags"]), ["exact/acc-run"], "{value}");
    }
    // New subnets bring their zones; a subnet the cloud does not have is refused.
    aws(&argv!(
        "update-auto-scaling-group --auto-scaling-group-name exact --vpc-zone-identifier",
        subnet_a
    ));
    assert_eq!(
        describe_group(&u, "exact").unwrap()["AvailabilityZones"],
        json!([zone_a])
    );
    let m = s
        .aws(
            &u,
            &argv!("update-auto-scaling-group --auto-scaling-group-name exact --vpc-zone-identifier subnet-0nope"),
        )
        .error("ValidationError");
    assert_eq!(m, "The subnet ID 'subnet-0nope' does not exist");

    // AWS's words for the usual mistakes.
    let refused = |args: &[&str]| s.aws(&u, args).error("ValidationError");
    // More instances than one request may name (AWS: 20), before any is looked at.
    let ids: Vec<String> = (0..21).map(|i| format!("i-{i:017x}")).collect();
    let mut detach = argv!("detach-instances --auto-scaling-group-name exact --should-decrement-desired-capacity --instance-ids");
    detach.extend(ids.iter().map(String::as_str));
    assert_eq!(
        refused(&detach),
        "List exceeds the maximum number of instances to detach. Please retry your request with fewer instances."
    );
    assert_eq!(
        refused(&[
            "create-launch-configuration",
            "--launch-configuration-name",
            "half@hotel",
            "--image-id",
            "ami-12345678",
        ]),
        "Valid requests must contain either the InstanceID parameter or both the ImageId and InstanceType parameters."
    );
    assert_eq!(
        refused(&[
            "update-auto-scaling-group",
            "--auto-scaling-group-name",
            "nope",
            "--max-size",
            "2",
        ]),
        "AutoScalingGroup name not found - null"
    );
    let no_source = [
        "create-auto-scaling-group",
        "--auto-scaling-group-name",
        "sourceless",
        "--min-size",
        "0",
        "--max-size",
        "1",
    ];
    let two_sources = [
        &no_source[..],
        &[
            "--launch-configuration-name",
            "exact@hotel",
            "--launch-template",
            "LaunchTemplateName=web@hotel,Version=$Latest",
        ],
    ]
    .concat();
    for args in [&no_source[..], &two_sources[..]] {
        assert_eq!(
            refused(args),
            "Valid requests must contain either LaunchTemplate, LaunchConfigurationName, InstanceId or MixedInstancesPolicy parameter."
        );
    }
    assert!(describe_group(&u, "sourceless").is_none());
    assert_eq!(
        refused(&[
            "update-auto-scaling-group",
            "--auto-scaling-group-name",
            "exact",
            "--launch-configuration-name",
            "exact@hotel",
            "--launch-template",
            "LaunchTemplateName=web@hotel,Version=$Latest",
        ]),
        "Valid requests must contain either LaunchTemplate, LaunchConfigurationName or MixedInstancesPolicy parameter."
    );
}

#[test]
fn a_force_delete_is_refused_under_deletion_protection() {
    let s = stack();
    let u = s.new_user("protect");
    s.lc_and_group(&u, "web", 0, 2, 1);
    s.serving(&u, "web", 1);
    s.aws(
        &u,
        &argv!("update-auto-scaling-group --auto-scaling-group-name web --deletion-protection prevent-force-deletion"),
    )
    .json();
    assert_eq!(
        describe_group(&u, "web").unwrap()["DeletionProtection"],
        "prevent-force-deletion"
    );
    let err = s
        .aws(
            &u,
            &argv!("delete-auto-scaling-group --auto-scaling-group-name web --force-delete"),
        )
        .error("ValidationError");
    assert!(
        err.contains(
            "DeletionProtection prevent-force-deletion: it cannot be deleted with ForceDelete"
        ),
        "{err}"
    );
    // Nothing changed: the group and its VM are there.
    s.serving(&u, "web", 1);
    // prevent-all-deletion refuses even an empty group's deletion.
    s.aws(
        &u,
        &argv!("update-auto-scaling-group --auto-scaling-group-name web --deletion-protection prevent-all-deletion --min-size 0 --desired-capacity 0"),
    )
    .json();
    eventually(60, "no instances", || {
        describe_group(&u, "web")?["Instances"]
            .as_array()?
            .is_empty()
            .then_some(())
    });
    s.aws(
        &u,
        &argv!("delete-auto-scaling-group --auto-scaling-group-name web"),
    )
    .error("ValidationError");
    s.aws(
        &u,
        &argv!(
            "update-auto-scaling-group --auto-scaling-group-name web --deletion-protection none"
        ),
    )
    .json();
    s.aws(
        &u,
        &argv!("delete-auto-scaling-group --auto-scaling-group-name web --force-delete"),
    )
    .json();
    eventually(60, "the group gone", || {
        describe_group(&u, "web").is_none().then_some(())
    });
}

#[test]
fn a_group_from_a_running_instance() {
    let s = stack();
    let u = s.new_user("from-vm");
    let run = s.ec2(
        "hotel",
        &argv!("run-instances --image-id ami-1e749f67 --instance-type t3.small --key-name ops --count 1"),
    );
    let vm = run["Instances"][0]["InstanceId"]
        .as_str()
        .expect("an instance")
        .to_string();
    let zone = run["Instances"][0]["Placement"]["AvailabilityZone"].clone();
    s.aws(
        &u,
        &argv!("create-auto-scaling-group --auto-scaling-group-name copy --min-size 0 --max-size 2 --desired-capacity 1 --instance-id", &vm),
    )
    .json();
    // A launch configuration named after the group, on the instance's cloud, copied from it.
    let lcs = s
        .aws(
            &u,
            &argv!("describe-launch-configurations --launch-configuration-names copy@hotel"),
        )
        .json();
    let lc = &lcs["LaunchConfigurations"][0];
    assert_eq!(lc["ImageId"], "ami-1e749f67");
    assert_eq!(lc["InstanceType"], "t3.small");
    assert_eq!(lc["KeyName"], "ops");
    let g = describe_group(&u, "copy").unwrap();
    assert_eq!(g["LaunchConfigurationName"], "copy@hotel");
    assert_eq!(g["AvailabilityZones"], json!([zone]));
    let ids = s.serving(&u, "copy", 1);
    assert!(
        !ids.contains(&vm),
        "the instance itself stays outside the group"
    );
    let launched = s.vms("hotel", &u.name, "copy");
    assert_eq!(launched[0]["InstanceType"], "t3.small");
    assert_eq!(launched[0]["KeyName"], "ops");
    s.aws(
        &u,
        &argv!("delete-auto-scaling-group --auto-scaling-group-name copy --force-delete"),
    )
    .json();
}

#[test]
fn a_group_in_a_placement_group_launches_its_vms_there() {
    let s = stack();
    let u = s.new_user("placed");
    let (_cloud, proxy) = s.proxied_cloud(&u, "placed");
    s.aws(&u, &argv!("create-launch-configuration --launch-configuration-name web@placed --image-id ami-1e749f67 --instance-type t2.micro")).json();
    s.aws(&u, &argv!("create-auto-scaling-group --auto-scaling-group-name web --launch-configuration-name web@placed --min-size 0 --max-size 2 --desired-capacity 1 --placement-group pg-1")).json();
    assert_eq!(describe_group(&u, "web").unwrap()["PlacementGroup"], "pg-1");
    s.serving(&u, "web", 1);
    // The cloud was asked to put the VM there. moto 5.2.1 has no placement groups to speak of
    // (its CreatePlacementGroup answer does not parse; it takes Placement.GroupName without
    // checking or recording it), so the request itself is what shows it.
    let runs = proxy.counts()["runs"].clone();
    let runs = runs.as_array().expect("the RunInstances calls");
    assert!(!runs.is_empty());
    assert!(
        runs.iter().all(|r| r["Placement.GroupName"] == "pg-1"),
        "{runs:?}"
    );
    s.aws(
        &u,
        &argv!("delete-auto-scaling-group --auto-scaling-group-name web --force-delete"),
    )
    .json();
}

#[test]
fn launch_instances_answers_with_the_vms_it_launched() {
    let s = stack();
    let u = s.new_user("sync");
    s.lc_and_group(&u, "web", 0, 4, 1);
    s.serving(&u, "web", 1);
    let launch = argv!("launch-instances --auto-scaling-group-name web --requested-capacity 2 --client-token tok-1");
    let answer = s.aws(&u, &launch).json();
    assert_eq!(answer["ClientToken"], "tok-1");
    assert_eq!(answer["Errors"], json!([]), "{answer}");
    let ids: Vec<String> = answer["Instances"][0]["InstanceIds"]
        .as_array()
        .expect("the instances launched")
        .iter()
        .map(|i| i.as_str().expect("an id").to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{answer}");
    // On the cloud at once, in the group, its desired capacity up by them.
    let on_cloud: Vec<Value> = s.vms("hotel", &u.name, "web");
    assert!(ids
        .iter()
        .all(|id| on_cloud.iter().any(|v| v["InstanceId"] == id.as_str())));
    assert_eq!(describe_group(&u, "web").unwrap()["DesiredCapacity"], 3);
    let serving = s.serving(&u, "web", 3);
    assert!(ids.iter().all(|id| serving.contains(id)));
    // Asked again with the token: the same answer.
    assert_eq!(s.aws(&u, &launch).json()["Instances"], answer["Instances"]);
    s.aws(
        &u,
        &argv!("delete-auto-scaling-group --auto-scaling-group-name web --force-delete"),
    )
    .json();
}

/// A predictive policy on PromQL metrics of the stack's Prometheus, through the AWS CLI. The
/// metrics are expressions of time (a daily wave of load, a scaling metric a quarter of it, a
/// capacity of 2), so Prometheus answers two weeks of history without a sample stored: the
/// forecast is the wave again, and the capacity the ratio learnt from the three (each VM carries
/// twice the load its scaling metric says) over the target.
#[test]
fn a_predictive_policy_on_promql_forecasts_load_and_capacity() {
    let s = stack();
    let u = s.new_user("cli-predictive");
    let aws = |args: &[&str]| s.aws(&u, args);
    create_lc(&u, "ps@hotel");
    aws(&argv!("create-auto-scaling-group --auto-scaling-group-name ps --launch-configuration-name ps@hotel --min-size 0 --max-size 10 --desired-capacity 0"))
    .json();
    let wave = "(200 + 100 * sin(vector(2 * pi() * time() / 86400)))";
    let queries = |id: &str, e: String| json!({"MetricDataQueries": [{"Id": id, "Expression": e}]});
    let cfg = json!({
        "MetricSpecifications": [{
            "TargetValue": 50.0,
            "CustomizedLoadMetricSpecification": queries("load", wave.into()),
            "CustomizedScalingMetricSpecification": queries("scaling", format!("{wave} / 4")),
            "CustomizedCapacityMetricSpecification": queries("capacity", "vector(2)".into()),
        }],
        "Mode": "ForecastOnly",
        "SchedulingBufferTime": 300,
    });
    let put = |name: &str, cfg: &Value| {
        aws(&[
            "put-scaling-policy",
            "--auto-scaling-group-name",
            "ps",
            "--policy-name",
            name,
            "--policy-type",
            "PredictiveScaling",
            "--predictive-scaling-configuration",
            &cfg.to_string(),
        ])
    };
    put("wave", &cfg).json();
    let shown = aws(&argv!("describe-policies --auto-scaling-group-name ps")).json();
    let p = &shown["ScalingPolicies"][0];
    assert_eq!(p["PolicyType"], "PredictiveScaling");
    let shown = &p["PredictiveScalingConfiguration"];
    assert_eq!(shown["MaxCapacityBreachBehavior"], "HonorMaxCapacity");
    assert_eq!(shown["SchedulingBufferTime"], 300);
    assert_eq!(
        shown["MetricSpecifications"][0]["CustomizedLoadMetricSpecification"]["MetricDataQueries"]
            [0]["Expression"],
        wave
    );

    let hour = 3600;
    let this_hour = || {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        now / hour * hour
    };
    // Asked again should the hour turn during the call (the forecast starts at the current one).
    let (start, f) = loop {
        let start = this_hour();
        let f = aws(&[
            "get-predictive-scaling-forecast",
            "--auto-scaling-group-name",
            "ps",
            "--policy-name",
            "wave",
            "--start-time",
            &start.to_string(),
            "--end-time",
            &(start + 48 * hour).to_string(),
        ])
        .json();
        if this_hour() == start {
            break (start, f);
        }
    };
    let load = f["LoadForecast"][0]["Values"]
        .as_array()
        .expect("load values");
    let capacity = f["CapacityForecast"]["Values"]
        .as_array()
        .expect("capacity values");
    assert_eq!((load.len(), capacity.len()), (48, 48), "{f}");
    assert_eq!(
        f["LoadForecast"][0]["Timestamps"].as_array().unwrap().len(),
        48
    );
    for (i, (l, c)) in load.iter().zip(capacity).enumerate() {
        let t = (start + i as u64 * hour) as f64;
        let want = 200.0 + 100.0 * (2.0 * std::f64::consts::PI * t / 86400.0).sin();
        let (l, c) = (l.as_f64().unwrap(), c.as_f64().unwrap());
        assert!(
            (l - want).abs() < 1e-6 * want,
            "hour {i}: {l} against {want}"
        );
        // 50 per VM at twice the load each: want / 100 VMs, whole.
        assert!(
            c >= want / 100.0 - 1e-6 && c < want / 100.0 + 1.0 + 1e-6,
            "hour {i}: capacity {c} for a load of {want}"
        );
    }
    assert!(f["UpdateTime"].is_string());

    // An expression Prometheus cannot parse is refused in its words, and not kept.
    let bad = json!({"MetricSpecifications": [{"TargetValue": 50.0,
        "CustomizedLoadMetricSpecification": queries("load", "vector(".into()),
        "CustomizedScalingMetricSpecification": queries("scaling", "vector(1)".into())}]});
    let refused = put("bad", &bad).error("ValidationError");
    assert!(refused.contains("refused by Prometheus"), "{refused}");
}
