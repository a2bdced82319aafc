//! One group, two clouds, on the local stack through the AWS CLI (issue 11): two moto clouds of
//! this test's own, `east` behind the fault proxy (tests/faultproxy.py) and `west`. The group is
//! tagged `phantom:clouds = east:2,west:10`: it fills east first, spills to west when east is
//! full, moves back when east has room again, survives east's moto process being killed, and
//! ends with nothing leaked when it is started again. Times are printed (`-- --nocapture`) and
//! recorded in docs/benchmarks.md.

use phantom_e2e::argv;
use phantom_e2e::fault_proxy::FaultProxy;
use phantom_e2e::moto::Moto;
use phantom_e2e::{eventually, free_port, stack, User};
use serde_json::{json, Value};
use std::time::Instant;

fn url(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// The user's live VMs on a cloud (asked of its moto directly).
fn live(moto_url: &str, u: &User) -> usize {
    stack().live_vms(moto_url, &u.name).len()
}

fn describe(u: &User) -> Value {
    stack()
        .aws(
            u,
            &argv!("describe-auto-scaling-groups --auto-scaling-group-names web"),
        )
        .json()["AutoScalingGroups"][0]
        .clone()
}

/// InService VMs by cloud as Describe shows them (each instance's launch configuration names
/// its cloud), and the instances recorded.
fn serving(u: &User) -> (usize, usize, usize) {
    let g = describe(u);
    let instances = g["Instances"].as_array().cloned().unwrap_or_default();
    let on = |lc: &str| {
        instances
            .iter()
            .filter(|i| i["LifecycleState"] == "InService" && i["LaunchConfigurationName"] == lc)
            .count()
    };
    (on("web@east"), on("web@west"), instances.len())
}

#[test]
fn a_group_across_two_clouds_overflows_moves_back_and_survives_a_cloud_going_down() {
    let s = stack();
    let u = s.new_user("across");
    let (east_port, west_port) = (free_port(), free_port());
    let mut east = Moto::on(east_port);
    let _west = Moto::on(west_port);
    let proxy = FaultProxy::before(&url(east_port));
    for (cloud, endpoint) in [("east", proxy.url.clone()), ("west", url(west_port))] {
        s.add_cloud_for(&u, cloud, &endpoint);
        s.aws(
            &u,
            &[
                "create-launch-configuration",
                "--launch-configuration-name",
                &format!("web@{cloud}"),
                "--image-id",
                "ami-1e749f67",
                "--instance-type",
                "t2.micro",
            ],
        )
        .json();
    }
    let tags = json!([{
        "ResourceId": "web", "ResourceType": "auto-scaling-group",
        "Key": "phantom:clouds", "Value": "east:2,west:10", "PropagateAtLaunch": false
    }])
    .to_string();
    s.aws(
        &u,
        &argv!("create-auto-scaling-group --auto-scaling-group-name web --launch-configuration-name web@east --min-size 0 --max-size 10 --desired-capacity 5 --tags", &tags),
    )
    .json();
    let (east_url, west_url) = (url(east_port), url(west_port));
    eventually(90, "2 on east, 3 on west", || {
        (serving(&u) == (2, 3, 5)).then_some(())
    });
    assert_eq!((live(&east_url, &u), live(&west_url, &u)), (2, 3));

    // Scale-in takes from the worst-ranked cloud first.
    s.aws(
        &u,
        &argv!("set-desired-capacity --auto-scaling-group-name web --desired-capacity 3"),
    );
    eventually(90, "2 on east, 1 on west", || {
        (serving(&u) == (2, 1, 3) && live(&west_url, &u) == 1).then_some(())
    });

    // east is full: its VMs die, its launches are refused, the replacements go to west.
    proxy.set(json!({"mode": "capacity", "rate": 1.0}));
    let ids: Vec<String> = describe(&u)["Instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["LaunchConfigurationName"] == "web@east")
        .map(|i| i["InstanceId"].as_str().unwrap().to_string())
        .collect();
    let mut args = vec!["terminate-instances", "--instance-ids"];
    args.extend(ids.iter().map(String::as_str));
    s.aws_service("ec2", &east_url, &args).json();
    eventually(120, "3 on west", || {
        (serving(&u) == (0, 3, 3)).then_some(())
    });
    let acts = s
        .aws(
            &u,
            &argv!("describe-scaling-activities --auto-scaling-group-name web"),
        )
        .json();
    let causes: Vec<String> = acts["Activities"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["Cause"].as_str().map(str::to_string))
        .collect();
    assert!(
        causes
            .iter()
            .any(|c| c.contains("east refused: InsufficientInstanceCapacity")
                && c.contains("launching on west")),
        "{causes:#?}"
    );

    // east has room again: the group moves back, never below 3 InService on the way.
    proxy.set(json!({"mode": "none", "rate": 1.0}));
    let started = Instant::now();
    let mut lowest = usize::MAX;
    eventually(400, "back to 2 on east, 1 on west", || {
        let (e, w, n) = serving(&u);
        lowest = lowest.min(e + w);
        ((e, w, n) == (2, 1, 3) && live(&west_url, &u) == 1).then_some(())
    });
    let moved_back = started.elapsed();
    assert!(
        lowest >= 3,
        "went down to {lowest} InService while moving back"
    );
    assert_eq!(
        (live(&east_url, &u), live(&west_url, &u)),
        (2, 1),
        "nothing leaked"
    );

    // east's moto process is killed: after the grace its VMs count as lost and west takes
    // their place.
    drop(east);
    let down = Instant::now();
    eventually(180, "3 running on west", || {
        (live(&west_url, &u) == 3 && serving(&u).1 == 3).then_some(())
    });
    let failed_over = down.elapsed();

    // Started again (an empty cloud: moto keeps nothing): east's records are found gone, the
    // group launches there again and lets west's surplus go; nothing leaked on either cloud.
    east = Moto::on(east_port);
    let back = Instant::now();
    eventually(400, "2 on east, 1 on west again", || {
        ((serving(&u) == (2, 1, 3)) && live(&east_url, &u) == 2 && live(&west_url, &u) == 1)
            .then_some(())
    });
    let recovered = back.elapsed();
    println!(
        "across clouds: moved back to east in {:.1} s after it had room; east down -> 3 on west in {:.1} s; east back -> shares restored in {:.1} s; VMs leaked 0, doubled 0",
        moved_back.as_secs_f64(),
        failed_over.as_secs_f64(),
        recovered.as_secs_f64()
    );
    drop(proxy);
    drop(east);
}
