//! Keeping VMs alive: groups launch on their cloud, converge on SetDesiredCapacity, replace dead
//! VMs, clean up on delete, back off when a cloud refuses, and never launch twice for one need.
//! Driven by the AWS CLI against the local stack (two moto clouds, the real SQS queue, the local
//! runner's provisioner and 1-second health sweep).

use phantom_e2e::{eventually, stack, User};
use serde_json::{json, Value};

const IMAGE: &str = "ami-1e749f67"; // one of moto's stock images

fn create_lc(u: &User, name: &str, extra: &[&str]) {
    let mut args = vec![
        "create-launch-configuration",
        "--launch-configuration-name",
        name,
        "--image-id",
        IMAGE,
        "--instance-type",
        "t2.micro",
    ];
    args.extend_from_slice(extra);
    stack().aws(u, &args).json();
}

fn create_group(u: &User, name: &str, lc: &str, min: i64, max: i64, desired: i64, extra: &[&str]) {
    let (min, max, desired) = (min.to_string(), max.to_string(), desired.to_string());
    let mut args = vec![
        "create-auto-scaling-group",
        "--auto-scaling-group-name",
        name,
        "--launch-configuration-name",
        lc,
        "--min-size",
        &min,
        "--max-size",
        &max,
        "--desired-capacity",
        &desired,
    ];
    args.extend_from_slice(extra);
    stack().aws(u, &args).json();
}

fn group(u: &User, name: &str) -> Option<Value> {
    let out = stack()
        .aws(
            u,
            &[
                "describe-auto-scaling-groups",
                "--auto-scaling-group-names",
                name,
            ],
        )
        .json();
    out["AutoScalingGroups"]
        .as_array()
        .unwrap()
        .first()
        .cloned()
}

fn in_service(u: &User, name: &str) -> Vec<String> {
    group(u, name)
        .map(|g| {
            g["Instances"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["LifecycleState"] == "InService")
                .map(|i| i["InstanceId"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn running_ids(cloud: &str, u: &User, group: &str) -> Vec<String> {
    let mut ids: Vec<String> = stack()
        .vms(cloud, &u.name, group)
        .iter()
        .filter(|v| v["State"]["Name"] == "running" || v["State"]["Name"] == "pending")
        .map(|v| v["InstanceId"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn activities(u: &User, group: &str) -> Vec<Value> {
    stack()
        .aws(
            u,
            &[
                "describe-scaling-activities",
                "--auto-scaling-group-name",
                group,
            ],
        )
        .json()["Activities"]
        .as_array()
        .unwrap()
        .clone()
}

/// Waits until the group has exactly `n` VMs on the cloud and `n` InService, and stays there.
fn converges(u: &User, cloud: &str, name: &str, n: usize) -> Vec<String> {
    let ids = eventually(30, &format!("{name} at {n} VMs"), || {
        let ids = running_ids(cloud, u, name);
        let mut svc = in_service(u, name);
        svc.sort();
        (ids.len() == n && svc == ids).then_some(ids)
    });
    // No stragglers: still n a little later.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert_eq!(running_ids(cloud, u, name), ids, "{name} drifted from {n}");
    ids
}

#[test]
fn a_group_launches_its_vms_on_its_cloud_from_its_launch_configuration() {
    let s = stack();
    let u = s.new_user("launch");
    let sg = s.ec2(
        "hotel",
        &[
            "create-security-group",
            "--group-name",
            &format!("{}-web", u.name),
            "--description",
            "web",
        ],
    )["GroupId"]
        .as_str()
        .unwrap()
        .to_string();
    create_lc(
        &u,
        "web@hotel",
        &[
            "--key-name",
            "my-key",
            "--security-groups",
            &sg,
            "--user-data",
            "#!/bin/sh\necho hi",
            "--block-device-mappings",
            r#"[{"DeviceName":"/dev/sda1","Ebs":{"VolumeSize":12,"DeleteOnTermination":true}}]"#,
        ],
    );
    create_group(
        &u,
        "web",
        "web@hotel",
        0,
        5,
        3,
        &[
            "--availability-zones",
            "us-east-1a",
            "us-east-1b",
            "--tags",
            "Key=team,Value=blue,PropagateAtLaunch=true",
            "Key=secret,Value=no,PropagateAtLaunch=false",
        ],
    );
    let ids = converges(&u, "hotel", "web", 3);
    assert!(
        running_ids("sierra", &u, "web").is_empty(),
        "nothing on sierra"
    );

    let vms = s.vms("hotel", &u.name, "web");
    let group_doc = group(&u, "web").unwrap();
    let arn = group_doc["AutoScalingGroupARN"].as_str().unwrap();
    let mut zones = Vec::new();
    for vm in &vms {
        assert_eq!(vm["ImageId"], IMAGE);
        assert_eq!(vm["InstanceType"], "t2.micro");
        assert_eq!(vm["KeyName"], "my-key");
        assert_eq!(vm["SecurityGroups"][0]["GroupId"], sg.as_str());
        zones.push(
            vm["Placement"]["AvailabilityZone"]
                .as_str()
                .unwrap()
                .to_string(),
        );
        let tags: Vec<(String, String)> = vm["Tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["Key"].as_str().unwrap().into(),
                    t["Value"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert!(
            tags.contains(&("phantom:owner".into(), u.name.clone())),
            "{tags:?}"
        );
        assert!(tags.contains(&("phantom:group".into(), "web".into())));
        assert!(tags
            .iter()
            .any(|(k, v)| k == "phantom:group-id" && arn.contains(v.as_str())));
        assert!(tags.contains(&("team".into(), "blue".into())));
        assert!(!tags.iter().any(|(k, _)| k == "secret"), "not propagated");
        assert!(vm["BlockDeviceMappings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["DeviceName"] == "/dev/sda1"));
    }
    zones.sort();
    assert_eq!(
        zones,
        ["us-east-1a", "us-east-1a", "us-east-1b"],
        "spread over the zones"
    );
    let user_data = s.ec2(
        "hotel",
        &[
            "describe-instance-attribute",
            "--instance-id",
            &ids[0],
            "--attribute",
            "userData",
        ],
    );
    assert_eq!(user_data["UserData"]["Value"], "IyEvYmluL3NoCmVjaG8gaGk="); // base64 of the script

    // What happened, and the instances from both describe calls.
    let acts = activities(&u, "web");
    assert_eq!(acts.len(), 3, "{acts:?}");
    assert!(acts.iter().all(|a| a["StatusCode"] == "Successful"
        && a["Description"]
            .as_str()
            .unwrap()
            .starts_with("Launching a new EC2 instance: i-")));
    let out = s.aws(&u, &["describe-auto-scaling-instances"]).json();
    let mut listed: Vec<&str> = out["AutoScalingInstances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            assert_eq!(i["AutoScalingGroupName"], "web");
            assert_eq!(i["HealthStatus"], "Healthy");
            i["InstanceId"].as_str().unwrap()
        })
        .collect();
    listed.sort();
    assert_eq!(listed, ids);
}

#[test]
fn set_desired_capacity_converges_up_and_down() {
    let s = stack();
    let u = s.new_user("scale");
    create_lc(&u, "app@sierra", &[]);
    create_group(
        &u,
        "app",
        "app@sierra",
        0,
        6,
        1,
        &["--termination-policies", "NewestInstance"],
    );
    let first = converges(&u, "sierra", "app", 1);
    s.aws(
        &u,
        &[
            "set-desired-capacity",
            "--auto-scaling-group-name",
            "app",
            "--desired-capacity",
            "4",
        ],
    )
    .json();
    converges(&u, "sierra", "app", 4);
    s.aws(
        &u,
        &[
            "set-desired-capacity",
            "--auto-scaling-group-name",
            "app",
            "--desired-capacity",
            "1",
        ],
    )
    .json();
    let left = converges(&u, "sierra", "app", 1);
    assert_eq!(left, first, "NewestInstance keeps the oldest");
    let acts = activities(&u, "app");
    let terminations = acts
        .iter()
        .filter(|a| {
            a["Description"]
                .as_str()
                .unwrap()
                .starts_with("Terminating EC2 instance")
        })
        .count();
    assert_eq!(terminations, 3);
    assert!(acts.iter().any(|a| a["Cause"]
        .as_str()
        .unwrap()
        .contains("shrinking the capacity from 4 to 1")));
}

#[test]
fn a_vm_that_dies_is_replaced() {
    let s = stack();
    let u = s.new_user("heal");
    create_lc(&u, "db@hotel", &[]);
    create_group(&u, "db", "db@hotel", 2, 2, 2, &[]);
    let before = converges(&u, "hotel", "db", 2);

    // Terminated behind Phantom's back.
    s.ec2(
        "hotel",
        &["terminate-instances", "--instance-ids", &before[0]],
    );
    let after = converges(&u, "hotel", "db", 2);
    assert!(!after.contains(&before[0]));
    assert!(after.contains(&before[1]));
    let acts = activities(&u, "db");
    let why = acts
        .iter()
        .find(|a| a["Description"] == format!("Terminating EC2 instance: {}", before[0]))
        .expect("an activity for the dead VM");
    assert!(
        why["Cause"].as_str().unwrap().contains("EC2 health check"),
        "{why}"
    );

    // Stopped behind Phantom's back: unhealthy, terminated, replaced.
    s.ec2("hotel", &["stop-instances", "--instance-ids", &after[0]]);
    let healed = converges(&u, "hotel", "db", 2);
    assert!(!healed.contains(&after[0]));
    let stopped = s.ec2(
        "hotel",
        &["describe-instances", "--instance-ids", &after[0]],
    );
    assert_eq!(
        stopped["Reservations"][0]["Instances"][0]["State"]["Name"],
        "terminated"
    );
}

#[test]
fn deleting_a_group_terminates_its_vms_and_leaves_none_behind() {
    let s = stack();
    let u = s.new_user("delete");
    create_lc(&u, "tmp@hotel", &[]);
    create_group(&u, "tmp", "tmp@hotel", 0, 3, 3, &[]);
    converges(&u, "hotel", "tmp", 3);
    let e = s
        .aws(
            &u,
            &[
                "delete-auto-scaling-group",
                "--auto-scaling-group-name",
                "tmp",
            ],
        )
        .error("ResourceInUse");
    assert!(e.contains("instances"), "{e}");
    s.aws(
        &u,
        &[
            "delete-auto-scaling-group",
            "--auto-scaling-group-name",
            "tmp",
            "--force-delete",
        ],
    )
    .json();
    let g = group(&u, "tmp");
    assert!(g.is_none() || g.unwrap()["Status"] == "Delete in progress");
    eventually(30, "the group is gone", || {
        group(&u, "tmp").is_none().then_some(())
    });
    assert!(running_ids("hotel", &u, "tmp").is_empty());
    // Its launch configuration is free again.
    s.aws(
        &u,
        &[
            "delete-launch-configuration",
            "--launch-configuration-name",
            "tmp@hotel",
        ],
    )
    .json();
}

#[test]
fn orphans_are_terminated() {
    let s = stack();
    let u = s.new_user("orphan");
    let out = s.ec2(
        "sierra",
        &[
            "run-instances",
            "--image-id",
            IMAGE,
            "--count",
            "1",
            "--tag-specifications",
            &format!(
                "ResourceType=instance,Tags=[{{Key=phantom:owner,Value={}}},{{Key=phantom:group,Value=ghost}},{{Key=phantom:group-id,Value=no-such-group}}]",
                u.name
            ),
        ],
    );
    let id = out["Instances"][0]["InstanceId"]
        .as_str()
        .unwrap()
        .to_string();
    eventually(15, "the orphan is terminated", || {
        let d = s.ec2("sierra", &["describe-instances", "--instance-ids", &id]);
        (d["Reservations"][0]["Instances"][0]["State"]["Name"] == "terminated").then_some(())
    });
}

#[test]
fn a_refusing_cloud_gives_failed_activities_with_backoff_not_a_hot_loop() {
    let s = stack();
    let u = s.new_user("refused");
    create_lc(&u, "bad@hotel", &[]);
    // An image the cloud does not have.
    s.aws(
        &u,
        &[
            "create-launch-configuration",
            "--launch-configuration-name",
            "noimage@hotel",
            "--image-id",
            "ami-00000000",
            "--instance-type",
            "t2.micro",
        ],
    )
    .json();
    create_group(&u, "noimage", "noimage@hotel", 0, 2, 2, &[]);
    let failed = eventually(15, "a failed activity", || {
        activities(&u, "noimage")
            .into_iter()
            .find(|a| a["StatusCode"] == "Failed")
    });
    let message = failed["StatusMessage"].as_str().unwrap();
    assert!(
        message.contains("InvalidAMIID"),
        "the cloud's words: {message}"
    );
    // Backoff: 2 s, 4 s, 8 s... so over ~8 s there are a handful of tries, not hundreds.
    std::thread::sleep(std::time::Duration::from_secs(8));
    let tries = activities(&u, "noimage")
        .iter()
        .filter(|a| a["StatusCode"] == "Failed")
        .count();
    assert!((2..=6).contains(&tries), "{tries} failed launches in ~10 s");
    assert!(running_ids("hotel", &u, "noimage").is_empty());

    // A cloud that is down.
    let out = s.phantomctl(&[
        "cloud",
        "add",
        "down",
        "--endpoint",
        "http://127.0.0.1:9",
        "--region",
        "us-east-1",
    ]);
    assert!(out.status.success());
    let out = s.phantomctl(&[
        "credentials",
        "set",
        &u.name,
        "down",
        "--access-key-id",
        "k",
        "--secret-access-key",
        "s",
    ]);
    assert!(out.status.success());
    create_lc(&u, "web@down", &[]);
    create_group(&u, "offline", "web@down", 0, 1, 1, &[]);
    let failed = eventually(30, "a failed activity for the down cloud", || {
        activities(&u, "offline")
            .into_iter()
            .find(|a| a["StatusCode"] == "Failed")
    });
    assert!(
        failed["StatusMessage"]
            .as_str()
            .unwrap()
            .contains("CloudUnreachable"),
        "{failed}"
    );
    // The api and the provisioner are still up.
    s.aws(&u, &["describe-auto-scaling-groups"]).json();
}

#[test]
fn redelivered_and_concurrent_messages_launch_nothing_twice() {
    let s = stack();
    let u = s.new_user("dupes");
    create_lc(&u, "w@hotel", &[]);
    create_group(&u, "w", "w@hotel", 0, 10, 2, &[]);
    let before = converges(&u, "hotel", "w", 2);
    // The same message, ten times, some of it at once.
    let body = json!({"owner": u.name, "group": "w", "reason": "test-duplicate"}).to_string();
    let queue = s.env["PHANTOM_WORK_QUEUE_URL"].clone();
    let state = s.env["AWS_ENDPOINT_URL"].clone();
    std::thread::scope(|scope| {
        for _ in 0..10 {
            scope.spawn(|| {
                s.aws_service(
                    "sqs",
                    &state,
                    &[
                        "send-message",
                        "--queue-url",
                        &queue,
                        "--message-body",
                        &body,
                    ],
                )
                .json();
            });
        }
    });
    // A change and its duplicates at once: exactly the new desired count.
    s.aws(
        &u,
        &[
            "set-desired-capacity",
            "--auto-scaling-group-name",
            "w",
            "--desired-capacity",
            "5",
        ],
    )
    .json();
    std::thread::scope(|scope| {
        for _ in 0..5 {
            scope.spawn(|| {
                s.aws_service(
                    "sqs",
                    &state,
                    &[
                        "send-message",
                        "--queue-url",
                        &queue,
                        "--message-body",
                        &body,
                    ],
                )
                .json();
            });
        }
    });
    let after = converges(&u, "hotel", "w", 5);
    assert!(before.iter().all(|id| after.contains(id)));
    let launches = activities(&u, "w")
        .iter()
        .filter(|a| a["Description"].as_str().unwrap().starts_with("Launching"))
        .count();
    assert_eq!(launches, 5, "one launch per VM");
}

#[test]
fn two_users_with_groups_of_the_same_name_get_their_own_vms() {
    let s = stack();
    let a = s.new_user("twin-a");
    let b = s.new_user("twin-b");
    for (u, n) in [(&a, 1), (&b, 2)] {
        create_lc(u, "same@sierra", &[]);
        create_group(u, "same", "same@sierra", 0, 3, n, &[]);
    }
    let va = converges(&a, "sierra", "same", 1);
    let vb = converges(&b, "sierra", "same", 2);
    assert!(va.iter().all(|id| !vb.contains(id)));
    s.aws(
        &a,
        &[
            "delete-auto-scaling-group",
            "--auto-scaling-group-name",
            "same",
            "--force-delete",
        ],
    )
    .json();
    eventually(30, "a's group gone", || {
        group(&a, "same").is_none().then_some(())
    });
    assert_eq!(running_ids("sierra", &b, "same"), vb, "b's VMs untouched");
}
