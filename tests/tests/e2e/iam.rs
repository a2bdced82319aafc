//! Least privilege through the unmodified AWS CLI on the local stack (issue 63): the demo account
//! makes an IAM user with the Kubernetes cluster-autoscaler's policy; with the user's key
//! SetDesiredCapacity works on the account's tagged group and is refused on an untagged one in
//! AWS's words; a second key works; a session from `aws sts get-session-token` acts as the user;
//! `aws cloudtrail lookup-events` shows both SetDesiredCapacity calls with their callers and
//! outcomes. And a role assumed by the AWS CLI's own credential provider (a profile's
//! `role_arn`), as tools are configured against AWS.

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
    // An administrator's view of the same, with phantomctl.
    let text = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("text")
    };
    let iam_users = text(s.phantomctl(&["user", "iam", &demo.name]));
    assert!(
        iam_users.contains(":user/cluster-autoscaler"),
        "{iam_users}"
    );
    assert_eq!(
        iam_users.matches(" Active last used ").count(),
        2,
        "{iam_users}"
    );
    assert!(iam_users.contains("inline policy scaling"), "{iam_users}");
    let trail = text(s.phantomctl(&["user", "trail", &demo.name]));
    assert!(
        trail.contains("cluster-autoscaler SetDesiredCapacity AccessDenied db"),
        "{trail}"
    );
}

#[test]
fn the_aws_clis_role_profile_assumes_a_role_at_phantoms_endpoint() {
    let s = stack();
    let demo = s.new_user("role-demo");
    let root = (demo.access_key_id.as_str(), demo.secret.as_str());
    let iam = |args: &[&str]| s.aws_as("iam", &s.url, root.0, root.1, args);
    s.lc_and_group(&demo, "web", 0, 2, 0);
    let account = s
        .aws_as("sts", &s.url, root.0, root.1, &argv!("get-caller-identity"))
        .json()["Account"]
        .as_str()
        .unwrap()
        .to_string();
    let trust = format!(
        r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow","Principal":{{"AWS":"arn:aws:iam::{account}:root"}},"Action":"sts:AssumeRole"}}}}"#
    );
    let role = iam(&argv!(
        "create-role --role-name reader --assume-role-policy-document",
        &trust
    ))
    .json();
    let role_arn = role["Role"]["Arn"].as_str().unwrap().to_string();
    iam(&argv!(
        "put-role-policy --role-name reader --policy-name read --policy-document",
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"autoscaling:Describe*","Resource":"*"}}"#
    ))
    .json();
    // A profile that assumes the role from the account's own keys, as against AWS.
    let dir = std::env::temp_dir().join(format!("phantom-role-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config");
    let credentials = dir.join("credentials");
    std::fs::write(
        &config,
        format!(
            "[profile base]\nregion = us-east-1\n\n[profile reader]\nregion = us-east-1\nrole_arn = {role_arn}\nsource_profile = base\nrole_session_name = cli\n"
        ),
    )
    .unwrap();
    std::fs::write(
        &credentials,
        format!(
            "[base]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            root.0, root.1
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let (config, credentials) = (config.to_str().unwrap(), credentials.to_str().unwrap());
        let set = [
            ("AWS_CONFIG_FILE", config),
            ("AWS_SHARED_CREDENTIALS_FILE", credentials),
            ("AWS_PROFILE", "reader"),
            ("AWS_ENDPOINT_URL", s.url.as_str()),
            ("AWS_MAX_ATTEMPTS", "1"),
            ("AWS_PAGER", ""),
        ];
        let unset = [
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
        ];
        phantom_e2e::aws_cli::aws(args, &set, &unset)
    };
    let me = run(&argv!("sts get-caller-identity --output json"));
    assert_eq!(me.code, 0, "{}", me.stderr);
    let me: Value = serde_json::from_str(&me.stdout).unwrap();
    assert_eq!(
        me["Arn"],
        format!("arn:aws:sts::{account}:assumed-role/reader/cli").as_str()
    );
    let groups = run(&argv!(
        "autoscaling describe-auto-scaling-groups --output json"
    ));
    assert_eq!(groups.code, 0, "{}", groups.stderr);
    assert!(groups.stdout.contains("\"web\""), "{}", groups.stdout);
    let refused = run(&argv!(
        "autoscaling set-desired-capacity --auto-scaling-group-name web --desired-capacity 0"
    ));
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("(AccessDenied)"),
        "{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains("assumed-role/reader/cli is not authorized"),
        "{}",
        refused.stderr
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
