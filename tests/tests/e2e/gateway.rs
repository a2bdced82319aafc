//! The deployed shape on this machine: the AWS CLI reaches the api through LocalStack's API Gateway
//! (template.yaml's REST API, built by localstack/bootstrap.py, stage Prod), the api's reconcile
//! messages go through LocalStack's SQS to the provisioner, which launches on LocalStack's EC2 (the
//! cloud hotel). phantom-local stands in for the Lambda functions (LocalStack runs functions only
//! in Docker): the gateway forwards to it over HTTP (HTTP_PROXY, the client's Host and path in
//! X-Forwarded-Host and X-Forwarded-Prefix) where AWS would invoke the function.
//!
//! Always on LocalStack, whatever PHANTOM_EMULATOR says (`localstack_stack`).

use phantom_e2e::argv;
use phantom_e2e::{eventually, localstack_stack, xml_text, RawRequest, Stack, User};
use std::time::SystemTime;

const IMAGE: &str = "ami-1e749f67"; // one of moto's stock images, which LocalStack's EC2 knows

fn gateway(s: &Stack) -> &str {
    s.env
        .get("PHANTOM_GATEWAY_URL")
        .expect("up.sh on LocalStack writes PHANTOM_GATEWAY_URL")
}

fn aws(s: &Stack, u: &User, args: &[&str]) -> phantom_e2e::Cli {
    s.aws_at(gateway(s), &u.access_key_id, &u.secret, args)
}

#[test]
fn the_aws_cli_through_api_gateway_keeps_a_group_alive() {
    let s = localstack_stack();
    let u = s.new_user("gw");
    aws(
        s,
        &u,
        &[
            "create-launch-configuration",
            "--launch-configuration-name",
            "web@hotel",
            "--image-id",
            IMAGE,
            "--instance-type",
            "t2.micro",
        ],
    )
    .json();
    aws(
        s,
        &u,
        &argv!("create-auto-scaling-group --auto-scaling-group-name web --launch-configuration-name web@hotel --min-size 1 --max-size 3 --desired-capacity 2"),
    )
    .json();
    eventually(120, "two VMs on LocalStack's EC2", || {
        (s.vms("hotel", &u.name, "web").len() == 2).then_some(())
    });
    let described = aws(
        s,
        &u,
        &argv!("describe-auto-scaling-groups --auto-scaling-group-names web"),
    )
    .json();
    assert_eq!(
        described["AutoScalingGroups"][0]["DesiredCapacity"], 2,
        "{described}"
    );
    // A user's mistake keeps AWS's code and message through the gateway.
    let message = aws(
        s,
        &u,
        &argv!("set-desired-capacity --auto-scaling-group-name web --desired-capacity 9"),
    )
    .error("ValidationError");
    assert_eq!(
        message,
        "New SetDesiredCapacity value 9 is above max value 3 for the AutoScalingGroup."
    );
    aws(
        s,
        &u,
        &argv!("set-desired-capacity --auto-scaling-group-name web --desired-capacity 1"),
    );
    eventually(120, "one VM left", || {
        (s.vms("hotel", &u.name, "web").len() == 1).then_some(())
    });
    aws(
        s,
        &u,
        &argv!("delete-auto-scaling-group --auto-scaling-group-name web --force-delete"),
    );
    eventually(120, "no VM left", || {
        s.vms("hotel", &u.name, "web").is_empty().then_some(())
    });
}

#[test]
fn signatures_errors_and_the_console_through_api_gateway() {
    let s = localstack_stack();
    let u = s.new_user("gwe");
    let url = gateway(s);
    let rest = url.strip_prefix("http://127.0.0.1:").expect("a local URL");
    let (port, path) = rest.split_once('/').expect("a port and a path");
    let port: u16 = port.parse().expect("a port");
    let path = format!("/{path}");
    let post = |secret: &str, body: &str| {
        RawRequest::signed(
            port,
            &u.access_key_id,
            secret,
            "POST",
            &path,
            body,
            SystemTime::now(),
        )
        .send(port)
    };
    let (status, body) = post(
        &u.secret,
        "Action=DescribeAutoScalingGroups&Version=2011-01-01",
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("<DescribeAutoScalingGroupsResponse"),
        "{body}"
    );
    let (status, body) = post(
        &format!("{}x", u.secret),
        "Action=DescribeAutoScalingGroups&Version=2011-01-01",
    );
    assert_eq!(
        (status, xml_text(&body, "Code")),
        (403, Some("SignatureDoesNotMatch")),
        "{body}"
    );
    let (status, body) = post(&u.secret, "Action=LaunchRockets&Version=2011-01-01");
    assert_eq!(
        (status, xml_text(&body, "Code")),
        (400, Some("InvalidAction")),
        "{body}"
    );
    // The console, below the stage as on AWS.
    let (status, page) = RawRequest {
        method: "GET".into(),
        path: format!("{path}console/"),
        headers: vec![("host".into(), format!("127.0.0.1:{port}"))],
        body: String::new(),
    }
    .send(port);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<script"), "{page}");
}

/// docs/local-stack.md's command for the gateway (its block `sh gateway`), as written: the demo user's
/// groups through LocalStack's API Gateway, parsed by the AWS CLI.
#[test]
fn the_readmes_gateway_command_works_as_written() {
    let s = localstack_stack();
    let out = s.shell().run(&phantom_e2e::readme::block("gateway"));
    let answer: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("the AWS CLI printed no JSON ({e}): {}", out.stdout));
    assert!(answer["AutoScalingGroups"].is_array(), "{answer}");
}
