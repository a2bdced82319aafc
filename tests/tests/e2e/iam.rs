//! Least privilege through the unmodified AWS CLI on the local stack (issue 63): the demo account
//! makes an IAM user with the Kubernetes cluster-autoscaler's policy; with the user's key
//! SetDesiredCapacity works on the account's tagged group and is refused on an untagged one in
//! AWS's words; a second key works; a session from `aws sts get-session-token` acts as the user;
//! `aws cloudtrail lookup-events` shows both SetDesiredCapacity calls with their callers and
//! outcomes.

use phantom_e2e::{argv, stack};
use serde_json::Value;

/// The cluster-autoscaler's documented policy (its reads, and its writes on its cluster's
/// tagged groups).
const POLICY: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["autoscaling:SetDesiredCapacity","autoscaling:TerminateInstanceInAutoScalingGroup"],"Resource":"*","Condition":{"StringEquals":{"aws:ResourceTag/k8s.io/cluster-autoscaler/enabled":"true"}}},{"Effect":"Allow","Action":["autoscaling:DescribeAutoScalingGroups","autoscaling:DescribeAutoScalingInstances","autoscaling:DescribeLaunchConfigurations","autoscaling:DescribeScalingActivities","autoscaling:DescribeTags"],"Resource":"*"}]}"#;

#[test]
fn an_iam_user_with_the_cluster_autoscalers_policy_through_the_aws_cli() {
    let s = stack();
    let demo = s.new_user("iam-demo");
    let root = (demo.access_key_id.as_str(), demo.secret.as_str());
    let iam = |args: &[&str]| s.aws_as("iam", &s.url, root.0, root.1, args);
    s.lc_and_group(&demo, "nodes", 0, 2, 0);
    s.lc_and_group(&demo, "db", 0, 2, 0);
    s.aws(
        &demo,
        &argv!("create-or-update-tags --tags ResourceId=nodes,ResourceType=auto-scaling-group,Key=k8s.io/cluster-autoscaler/enabled,Value=true,PropagateAtLaunch=false"),
    )
    .json();
    let user = iam(&argv!("create-user --user-name cluster-autoscaler")).json();
    let arn = user["User"]["Arn"].as_str().expect("an ARN").to_string();
    assert!(arn.ends_with(":user/cluster-autoscaler"), "{user}");
    iam(&argv!(
        "put-user-policy --user-name cluster-autoscaler --policy-name scaling --policy-document",
        POLICY
    ))
    .json();
    let got = iam(&argv!(
        "get-user-policy --user-name cluster-autoscaler --policy-name scaling"
    ))
    .json();
    assert_eq!(
        got["PolicyDocument"],
        serde_json::from_str::<Value>(POLICY).unwrap(),
        "the CLI decodes the document IAM answers URL-encoded"
    );
    let key = |out: Value| {
        let k = &out["AccessKey"];
        (
            k["AccessKeyId"].as_str().unwrap().to_string(),
            k["SecretAccessKey"].as_str().unwrap().to_string(),
        )
    };
    let first = key(iam(&argv!("create-access-key --user-name cluster-autoscaler")).json());
    let as_ca = |(id, secret): &(String, String), args: &[&str]| s.aws_with_keys(id, secret, args);
    as_ca(
        &first,
        &argv!("set-desired-capacity --auto-scaling-group-name nodes --desired-capacity 0"),
    )
    .json();
    let message = as_ca(
        &first,
        &argv!("set-desired-capacity --auto-scaling-group-name db --desired-capacity 0"),
    )
    .error("AccessDenied");
    let db_arn = s.group(&demo, "db").expect("db")["AutoScalingGroupARN"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        message,
        format!("User: {arn} is not authorized to perform: autoscaling:SetDesiredCapacity on resource: {db_arn} because no identity-based policy allows the autoscaling:SetDesiredCapacity action")
    );
    // A second key, for rotating without a moment's outage.
    let second = key(iam(&argv!("create-access-key --user-name cluster-autoscaler")).json());
    let groups = as_ca(&second, &argv!("describe-auto-scaling-groups")).json();
    assert_eq!(groups["AutoScalingGroups"].as_array().unwrap().len(), 2);
    let keys = iam(&argv!("list-access-keys --user-name cluster-autoscaler")).json();
    assert_eq!(keys["AccessKeyMetadata"].as_array().unwrap().len(), 2);
    // A session: the same rights, for as long as it lasts.
    let session = s
        .aws_as(
            "sts",
            &s.url,
            &first.0,
            &first.1,
            &argv!("get-session-token --duration-seconds 900"),
        )
        .json();
    let c = &session["Credentials"];
    let creds = (
        c["AccessKeyId"].as_str().unwrap(),
        c["SecretAccessKey"].as_str().unwrap(),
        c["SessionToken"].as_str().unwrap(),
    );
    let me = s
        .aws_in_session("sts", creds, &argv!("get-caller-identity"))
        .json();
    assert_eq!(me["Arn"], arn.as_str());
    s.aws_in_session(
        "autoscaling",
        creds,
        &argv!("set-desired-capacity --auto-scaling-group-name nodes --desired-capacity 0"),
    )
    .json();
    s.aws_in_session(
        "autoscaling",
        creds,
        &argv!("set-desired-capacity --auto-scaling-group-name db --desired-capacity 0"),
    )
    .error("AccessDenied");
    // The trail: who set the sizes, and what was refused.
    let trail = s
        .aws_as(
            "cloudtrail",
            &s.url,
            root.0,
            root.1,
            &argv!("lookup-events --lookup-attributes AttributeKey=EventName,AttributeValue=SetDesiredCapacity"),
        )
        .json();
    let events = trail["Events"].as_array().expect("events");
    let seen: Vec<(String, String, String)> = events
        .iter()
        .map(|e| {
            let record: Value =
                serde_json::from_str(e["CloudTrailEvent"].as_str().unwrap()).unwrap();
            let group = record["requestParameters"]["AutoScalingGroupName"].as_str();
            let outcome = record["errorCode"].as_str().unwrap_or("allowed");
            (
                e["Username"].as_str().unwrap().to_string(),
                group.unwrap().to_string(),
                outcome.to_string(),
            )
        })
        .collect();
    let by_ca = |g: &str, o: &str| {
        (
            "cluster-autoscaler".to_string(),
            g.to_string(),
            o.to_string(),
        )
    };
    for want in [by_ca("nodes", "allowed"), by_ca("db", "AccessDenied")] {
        assert_eq!(
            seen.iter().filter(|s| **s == want).count(),
            2,
            "once with the key and once in the session: {seen:?}"
        );
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
}
