//! Load balancers on the local stack, through the AWS CLI: a classic load balancer and an ELBv2
//! target group made on the cloud's emulator (moto), a group created behind both; its VMs
//! registered as they come (as the cloud's own ELB API reports them), deregistered and drained as
//! they go, the attachments' states as AWS shows them, and a detached source left by every VM.
//! (An ELB-unhealthy VM that still runs cannot be made on moto, whose load balancers judge a VM
//! by its EC2 state: that replacement is shown in process, `inproc/balancers.rs`.)

use phantom_e2e::argv;
use phantom_e2e::{eventually, stack, User};
use serde_json::Value;

fn elb(args: &[&str]) -> Value {
    let s = stack();
    s.aws_service("elb", &s.cloud_url("hotel"), args).json()
}

fn elbv2(args: &[&str]) -> Value {
    let s = stack();
    s.aws_service("elbv2", &s.cloud_url("hotel"), args).json()
}

/// The VMs the cloud's ELB APIs say are registered (and running) with the classic load balancer
/// and the target group.
fn registered(lb: &str, tg: &str) -> (Vec<String>, Vec<String>) {
    let mut classic: Vec<String> = elb(&["describe-instance-health", "--load-balancer-name", lb])
        ["InstanceStates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["State"] == "InService")
        .map(|i| i["InstanceId"].as_str().unwrap().to_string())
        .collect();
    let mut v2: Vec<String> = elbv2(&["describe-target-health", "--target-group-arn", tg])
        ["TargetHealthDescriptions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["TargetHealth"]["State"] == "healthy")
        .map(|t| t["Target"]["Id"].as_str().unwrap().to_string())
        .collect();
    classic.sort();
    v2.sort();
    (classic, v2)
}

fn in_service(u: &User) -> Vec<String> {
    let g = stack().group_of(u, "web");
    let mut ids: Vec<String> = g["Instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["LifecycleState"] == "InService")
        .map(|i| i["InstanceId"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_group_behind_a_load_balancer_and_a_target_group_registers_and_drains_its_vms() {
    let s = stack();
    let u = s.new_user("lb");
    let lb = format!("{}-lb", u.name.replace('_', "-"))
        .chars()
        .take(32)
        .collect::<String>();
    elb(&argv!("create-load-balancer --load-balancer-name", &lb, "--listeners Protocol=HTTP,LoadBalancerPort=80,InstanceProtocol=HTTP,InstancePort=80 --availability-zones us-east-1a"));
    let vpc = s.ec2("hotel", &["describe-vpcs"])["Vpcs"][0]["VpcId"]
        .as_str()
        .unwrap()
        .to_string();
    let tg = elbv2(&argv!(
        "create-target-group --name",
        &lb,
        "--protocol HTTP --port 80 --vpc-id",
        &vpc,
        "--target-type instance"
    ))["TargetGroups"][0]["TargetGroupArn"]
        .as_str()
        .unwrap()
        .to_string();
    elbv2(&argv!(
        "modify-target-group-attributes --target-group-arn",
        &tg,
        "--attributes Key=deregistration_delay.timeout_seconds,Value=3"
    ));
    s.aws(
        &u,
        &argv!("create-launch-configuration --launch-configuration-name web@hotel --image-id ami-1e749f67 --instance-type t2.micro"),
    )
    .json();
    s.aws(
        &u,
        &argv!("create-auto-scaling-group --auto-scaling-group-name web --launch-configuration-name web@hotel --min-size 0 --max-size 3 --desired-capacity 2 --load-balancer-names", &lb, "--target-group-arns", &tg, "--health-check-type ELB"),
    )
    .json();
    let two = eventually(60, "2 InService, registered with both", || {
        let ids = in_service(&u);
        (ids.len() == 2 && registered(&lb, &tg) == (ids.clone(), ids.clone())).then_some(ids)
    });
    let group = s.group_of(&u, "web");
    assert_eq!(group["LoadBalancerNames"], serde_json::json!([lb]));
    assert_eq!(group["TargetGroupARNs"], serde_json::json!([tg]));
    eventually(30, "both sources InService", || {
        let sources = s
            .aws(
                &u,
                &argv!("describe-traffic-sources --auto-scaling-group-name web"),
            )
            .json();
        sources["TrafficSources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["State"] == "InService")
            .then_some(())
    });

    // Scale in: the leaving VM leaves both at once, then goes once its 3 s have drained.
    s.aws(
        &u,
        &argv!("set-desired-capacity --auto-scaling-group-name web --desired-capacity 1"),
    )
    .json();
    let left = eventually(30, "one VM deregistered from both", || {
        let (classic, v2) = registered(&lb, &tg);
        (classic.len() == 1 && v2 == classic).then_some(classic)
    });
    let leaving = two.iter().find(|id| !left.contains(id)).unwrap().clone();
    eventually(30, "the drained VM terminated", || {
        let alive: Vec<String> = s
            .live_vms(&s.cloud_url("hotel"), &u.name)
            .iter()
            .map(|v| v["InstanceId"].as_str().unwrap().to_string())
            .collect();
        (!alive.contains(&leaving) && in_service(&u) == left).then_some(())
    });

    // Detached: the target group is left by every VM, then no longer the group's.
    s.aws(
        &u,
        &argv!(
            "detach-load-balancer-target-groups --auto-scaling-group-name web --target-group-arns",
            &tg
        ),
    )
    .json();
    eventually(30, "the target group empty and gone", || {
        let tgs = s
            .aws(
                &u,
                &argv!("describe-load-balancer-target-groups --auto-scaling-group-name web"),
            )
            .json();
        (registered(&lb, &tg).1.is_empty()
            && tgs["LoadBalancerTargetGroups"]
                .as_array()
                .unwrap()
                .is_empty())
        .then_some(())
    });
    assert_eq!(
        registered(&lb, &tg).0,
        left,
        "the classic load balancer keeps its VM"
    );
    s.aws(
        &u,
        &argv!("delete-auto-scaling-group --auto-scaling-group-name web --force-delete"),
    )
    .json();
    eventually(
        60,
        "the classic load balancer left by the deleted group's VM",
        || registered(&lb, &tg).0.is_empty().then_some(()),
    );
}
