//! IAM inside an account, in process (issue 63): the account's root makes an IAM user with the
//! cluster-autoscaler's documented policy and gives it keys; the user's requests are allowed on
//! the account's tagged group and refused on an untagged one in AWS's words; two keys a user,
//! an Inactive key refused; IAM's errors in its model's codes.

use super::{create_group, failure, Given};
use phantom_e2e::world::World;
use phantom_e2e::User;

/// The policy the Kubernetes cluster-autoscaler documents for AWS (its first statement with
/// the cluster's tags, its second for the reads).
const CLUSTER_AUTOSCALER: &str = r#"{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Action": [
        "autoscaling:SetDesiredCapacity",
        "autoscaling:TerminateInstanceInAutoScalingGroup"
      ],
      "Resource": "*",
      "Condition": {
        "StringEquals": {
          "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
          "aws:ResourceTag/k8s.io/cluster-autoscaler/demo": "owned"
        }
      }
    },
    {
      "Effect": "Allow",
      "Action": [
        "autoscaling:DescribeAutoScalingGroups",
        "autoscaling:DescribeAutoScalingInstances",
        "autoscaling:DescribeLaunchConfigurations",
        "autoscaling:DescribeScalingActivities",
        "autoscaling:DescribeTags",
        "ec2:DescribeImages",
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeLaunchTemplateVersions"
      ],
      "Resource": "*"
    }
  ]
}"#;

/// The text of the first `<tag>` element of an XML answer.
fn element(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(xml[start..end].to_string())
}

fn keys(u: &User) -> (&str, &str) {
    (&u.access_key_id, &u.secret)
}

/// An IAM call that must succeed: its answer.
async fn ok(w: &World, who: (&str, &str), action: &str, params: &[(&str, &str)]) -> String {
    let (status, body) = w.iam(who, action, params).await;
    assert_eq!(status, 200, "{action}: {body}");
    body
}

/// An IAM call that must fail: its status, code and message.
async fn refused(
    w: &World,
    who: (&str, &str),
    action: &str,
    params: &[(&str, &str)],
) -> (u16, String, String) {
    let (status, body) = w.iam(who, action, params).await;
    let code = element(&body, "Code").unwrap_or_else(|| panic!("{action}: {body}"));
    (status, code, element(&body, "Message").unwrap_or_default())
}

/// The account's root makes IAM user `name` with `policy` and one key: the key's id and secret.
async fn iam_user(w: &World, root: &User, name: &str, policy: &str) -> (String, String) {
    ok(w, keys(root), "CreateUser", &[("UserName", name)]).await;
    ok(
        w,
        keys(root),
        "PutUserPolicy",
        &[
            ("UserName", name),
            ("PolicyName", "scaling"),
            ("PolicyDocument", policy),
        ],
    )
    .await;
    let created = ok(w, keys(root), "CreateAccessKey", &[("UserName", name)]).await;
    (
        element(&created, "AccessKeyId").expect("a key id"),
        element(&created, "SecretAccessKey").expect("a secret"),
    )
}

/// The group `name` of `u`'s, tagged for the cluster-autoscaler when `tagged`.
async fn group(given: &Given, name: &str, tagged: bool) {
    create_group(&given.w, &given.u, name, "web@hotel", 0, 4, 0).await;
    if !tagged {
        return;
    }
    let tag = |k: &str, v: &str| {
        aws_sdk_autoscaling::types::Tag::builder()
            .resource_id(name)
            .resource_type("auto-scaling-group")
            .key(k)
            .value(v)
            .propagate_at_launch(false)
            .build()
    };
    given
        .c
        .create_or_update_tags()
        .tags(tag("k8s.io/cluster-autoscaler/enabled", "true"))
        .tags(tag("k8s.io/cluster-autoscaler/demo", "owned"))
        .send()
        .await
        .expect("tags");
}

#[tokio::test]
async fn the_cluster_autoscalers_policy_allows_its_tagged_group_and_refuses_another() {
    let given = Given::lc("iam").await;
    let w = &given.w;
    group(&given, "nodes", true).await;
    group(&given, "db", false).await;
    let (id, secret) = iam_user(w, &given.u, "ca", CLUSTER_AUTOSCALER).await;
    let ca = w.sdk_with_keys(&id, &secret);
    ca.set_desired_capacity()
        .auto_scaling_group_name("nodes")
        .desired_capacity(2)
        .send()
        .await
        .expect("the tagged group's size is the cluster-autoscaler's to set");
    let groups = ca
        .describe_auto_scaling_groups()
        .send()
        .await
        .expect("the reads are allowed");
    assert_eq!(
        groups.auto_scaling_groups().len(),
        2,
        "the account's groups"
    );
    let nodes = &groups.auto_scaling_groups()[1];
    assert_eq!(nodes.auto_scaling_group_name(), Some("nodes"));
    assert_eq!(nodes.desired_capacity(), Some(2));
    let db = &groups.auto_scaling_groups()[0];
    let db_arn = db.auto_scaling_group_arn().expect("an ARN").to_string();
    let account = db_arn.split(':').nth(4).expect("an account").to_string();
    let refused = ca
        .set_desired_capacity()
        .auto_scaling_group_name("db")
        .desired_capacity(1)
        .send()
        .await;
    assert_eq!(
        failure(refused),
        (
            "AccessDenied".to_string(),
            format!("User: arn:aws:iam::{account}:user/ca is not authorized to perform: autoscaling:SetDesiredCapacity on resource: {db_arn} because no identity-based policy allows the autoscaling:SetDesiredCapacity action")
        )
    );
    // Nothing the policy does not name, even on its own group.
    let refused = ca
        .delete_auto_scaling_group()
        .auto_scaling_group_name("nodes")
        .send()
        .await;
    assert_eq!(failure(refused).0, "AccessDenied");
    assert!(given.c.describe_auto_scaling_groups().send().await.is_ok());
    let unchanged = given
        .w
        .sdk(&given.u)
        .describe_auto_scaling_groups()
        .send()
        .await;
    assert_eq!(
        unchanged.expect("the root reads").auto_scaling_groups()[0].desired_capacity(),
        Some(0),
        "the refused request changed nothing"
    );
}

#[tokio::test]
async fn a_user_has_two_keys_and_an_inactive_one_is_refused() {
    let given = Given::lc("keys").await;
    let w = &given.w;
    group(&given, "nodes", true).await;
    let root = keys(&given.u);
    let (first, first_secret) = iam_user(w, &given.u, "ca", CLUSTER_AUTOSCALER).await;
    let second = ok(w, root, "CreateAccessKey", &[("UserName", "ca")]).await;
    let (second, second_secret) = (
        element(&second, "AccessKeyId").unwrap(),
        element(&second, "SecretAccessKey").unwrap(),
    );
    for (id, secret) in [(&first, &first_secret), (&second, &second_secret)] {
        w.sdk_with_keys(id, secret)
            .set_desired_capacity()
            .auto_scaling_group_name("nodes")
            .desired_capacity(1)
            .send()
            .await
            .expect("either key works");
    }
    assert_eq!(
        refused(w, root, "CreateAccessKey", &[("UserName", "ca")]).await,
        (
            409,
            "LimitExceeded".to_string(),
            "Cannot exceed quota for AccessKeysPerUser: 2".to_string()
        )
    );
    let listed = ok(w, root, "ListAccessKeys", &[("UserName", "ca")]).await;
    assert_eq!(listed.matches("<Status>Active</Status>").count(), 2);
    // The old key retired: Inactive, then refused as an unknown one is.
    ok(
        w,
        root,
        "UpdateAccessKey",
        &[
            ("UserName", "ca"),
            ("AccessKeyId", &first),
            ("Status", "Inactive"),
        ],
    )
    .await;
    let old = w
        .sdk_with_keys(&first, &first_secret)
        .describe_auto_scaling_groups()
        .send()
        .await;
    assert_eq!(failure(old).0, "InvalidClientTokenId");
    let last = ok(w, root, "GetAccessKeyLastUsed", &[("AccessKeyId", &second)]).await;
    assert_eq!(element(&last, "UserName").as_deref(), Some("ca"));
    assert_eq!(
        element(&last, "ServiceName").as_deref(),
        Some("autoscaling")
    );
    assert!(element(&last, "LastUsedDate").is_some());
    // A user with keys or policies is not deleted; without them it is.
    let (status, code, _) = refused(w, root, "DeleteUser", &[("UserName", "ca")]).await;
    assert_eq!((status, code.as_str()), (409, "DeleteConflict"));
    for id in [&first, &second] {
        ok(
            w,
            root,
            "DeleteAccessKey",
            &[("UserName", "ca"), ("AccessKeyId", id)],
        )
        .await;
    }
    ok(
        w,
        root,
        "DeleteUserPolicy",
        &[("UserName", "ca"), ("PolicyName", "scaling")],
    )
    .await;
    ok(w, root, "DeleteUser", &[("UserName", "ca")]).await;
    let gone = w
        .sdk_with_keys(&second, &second_secret)
        .describe_tags()
        .send()
        .await;
    assert_eq!(failure(gone).0, "InvalidClientTokenId");
}

#[tokio::test]
async fn iam_answers_in_its_own_words() {
    let w = World::new().await;
    let root = w.user("words").await;
    let r = keys(&root);
    let created = ok(
        &w,
        r,
        "CreateUser",
        &[("UserName", "Bob"), ("Path", "/ops/")],
    )
    .await;
    assert!(element(&created, "Arn").unwrap().ends_with(":user/ops/Bob"));
    assert!(element(&created, "UserId").unwrap().starts_with("AIDA"));
    assert_eq!(
        refused(&w, r, "CreateUser", &[("UserName", "bob")]).await,
        (
            409,
            "EntityAlreadyExists".to_string(),
            "User with name bob already exists.".to_string()
        ),
        "names are unique whatever their case"
    );
    assert_eq!(
        refused(&w, r, "GetUser", &[("UserName", "carol")]).await,
        (
            404,
            "NoSuchEntity".to_string(),
            "The user with name carol cannot be found.".to_string()
        )
    );
    let (status, code, message) = refused(
        &w,
        r,
        "PutUserPolicy",
        &[
            ("UserName", "Bob"),
            ("PolicyName", "p"),
            (
                "PolicyDocument",
                r#"{"Statement":{"Effect":"Maybe","Action":"*","Resource":"*"}}"#,
            ),
        ],
    )
    .await;
    assert_eq!(
        (status, code.as_str()),
        (400, "MalformedPolicyDocument"),
        "{message}"
    );
    let policy = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"autoscaling:Describe*","Resource":"*"}}"#;
    ok(
        &w,
        r,
        "PutUserPolicy",
        &[
            ("UserName", "Bob"),
            ("PolicyName", "read"),
            ("PolicyDocument", policy),
        ],
    )
    .await;
    let got = ok(
        &w,
        r,
        "GetUserPolicy",
        &[("UserName", "Bob"), ("PolicyName", "read")],
    )
    .await;
    let document = element(&got, "PolicyDocument").unwrap();
    let decoded = percent_decode(&document);
    assert_eq!(decoded, policy, "URL-encoded, as IAM answers it");
    let listed = ok(&w, r, "ListUsers", &[("PathPrefix", "/ops/")]).await;
    assert_eq!(element(&listed, "UserName").as_deref(), Some("Bob"));
    // An IAM user may do to IAM only what its policies allow.
    let key = ok(&w, r, "CreateAccessKey", &[("UserName", "Bob")]).await;
    let bob = (
        element(&key, "AccessKeyId").unwrap(),
        element(&key, "SecretAccessKey").unwrap(),
    );
    let (status, code, message) =
        refused(&w, (&bob.0, &bob.1), "CreateUser", &[("UserName", "eve")]).await;
    assert_eq!((status, code.as_str()), (403, "AccessDenied"));
    assert!(
        message.contains("is not authorized to perform: iam:CreateUser on resource: arn:aws:iam::"),
        "{message}"
    );
    // Naming no user, a user asks of itself: allowed only as anything else is.
    let (_, code, message) = refused(&w, (&bob.0, &bob.1), "GetUser", &[]).await;
    assert_eq!(code, "AccessDenied");
    assert!(
        message.contains("iam:GetUser on resource: arn:aws:iam::"),
        "{message}"
    );
    assert!(
        message.ends_with(
            ":user/ops/Bob because no identity-based policy allows the iam:GetUser action"
        ),
        "{message}"
    );
    let other = w.user("other").await;
    let (_, code, _) = refused(&w, keys(&other), "GetUser", &[("UserName", "Bob")]).await;
    assert_eq!(
        code, "NoSuchEntity",
        "another account's users are not this one's"
    );
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).expect("hex"));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("UTF-8")
}

#[tokio::test]
async fn an_account_disabled_by_an_administrator_stops_its_iam_users_keys_too() {
    let given = Given::lc("off").await;
    let w = &given.w;
    let (id, secret) = iam_user(w, &given.u, "ci", CLUSTER_AUTOSCALER).await;
    let ci = w.sdk_with_keys(&id, &secret);
    ci.describe_tags().send().await.expect("allowed");
    let admin = w.admin("admin").await;
    let (status, body) = w
        .phantom_api(
            &admin,
            "DisableUser",
            &serde_json::json!({"UserName": given.u.name}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    // Past the key cache's time, as another instance would see it.
    w.clock.advance_ms(api::KEY_CACHE_MS + 1);
    assert_eq!(
        failure(ci.describe_tags().send().await).0,
        "InvalidClientTokenId"
    );
}

#[tokio::test]
async fn a_session_acts_as_its_user_until_it_expires() {
    let given = Given::lc("sts").await;
    let w = &given.w;
    group(&given, "nodes", true).await;
    group(&given, "db", false).await;
    let (id, secret) = iam_user(w, &given.u, "ca", CLUSTER_AUTOSCALER).await;
    let who = ok_sts(w, (&id, &secret), "GetCallerIdentity", &[]).await;
    assert!(element(&who, "Arn").unwrap().ends_with(":user/ca"), "{who}");
    let got = ok_sts(
        w,
        (&id, &secret),
        "GetSessionToken",
        &[("DurationSeconds", "900")],
    )
    .await;
    let (key, secret_key, token) = (
        element(&got, "AccessKeyId").expect("a key"),
        element(&got, "SecretAccessKey").expect("a secret"),
        element(&got, "SessionToken").expect("a token"),
    );
    assert!(key.starts_with("ASIA"), "{key}");

    let session = w.sdk_in_session(&key, &secret_key, &token);
    session
        .set_desired_capacity()
        .auto_scaling_group_name("nodes")
        .desired_capacity(1)
        .send()
        .await
        .expect("the session acts as its user");
    let refused = session
        .set_desired_capacity()
        .auto_scaling_group_name("db")
        .desired_capacity(1)
        .send()
        .await;
    let (code, message) = failure(refused);
    assert_eq!(code, "AccessDenied");
    assert!(message.contains(":user/ca is not authorized"), "{message}");
    // Without its token, or with another, the key opens nothing.
    let bare = w
        .sdk_with_keys(&key, &secret_key)
        .describe_tags()
        .send()
        .await;
    assert_eq!(failure(bare).0, "InvalidClientTokenId");
    let (status, body) = w.sts((&key, &secret_key), "GetSessionToken", &[]).await;
    assert_eq!(status, 403, "{body}");
    // Fifteen minutes on, it has expired.
    w.clock.advance_ms(900_000);
    let late = session.describe_tags().send().await;
    assert_eq!(
        failure(late),
        (
            "ExpiredToken".to_string(),
            "The security token included in the request is expired".to_string()
        )
    );
    // A root's session lasts at most an hour.
    let (status, body) = w
        .sts(
            keys(&given.u),
            "GetSessionToken",
            &[("DurationSeconds", "7200")],
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let root = ok_sts(w, keys(&given.u), "GetCallerIdentity", &[]).await;
    assert!(element(&root, "Arn").unwrap().ends_with(":root"), "{root}");
}

/// An STS call that must succeed: its answer.
async fn ok_sts(w: &World, who: (&str, &str), action: &str, params: &[(&str, &str)]) -> String {
    let (status, body) = w.sts(who, action, params).await;
    assert_eq!(status, 200, "{action}: {body}");
    body
}

#[tokio::test]
async fn the_trail_records_who_changed_what_and_what_a_policy_refused() {
    let given = Given::lc("trail").await;
    let w = &given.w;
    group(&given, "nodes", true).await;
    group(&given, "db", false).await;
    let (id, secret) = iam_user(w, &given.u, "ca", CLUSTER_AUTOSCALER).await;
    let ca = w.sdk_with_keys(&id, &secret);
    ca.set_desired_capacity()
        .auto_scaling_group_name("nodes")
        .desired_capacity(1)
        .send()
        .await
        .expect("allowed");
    ca.describe_auto_scaling_groups()
        .send()
        .await
        .expect("a read");
    // Events of one millisecond come in no particular order; the world's clock stands still.
    w.clock.advance_ms(1);
    let refused = ca
        .set_desired_capacity()
        .auto_scaling_group_name("db")
        .desired_capacity(1)
        .send()
        .await;
    assert_eq!(failure(refused).0, "AccessDenied");
    let root = keys(&given.u);
    let lookup = serde_json::json!({"LookupAttributes": [
        {"AttributeKey": "EventName", "AttributeValue": "SetDesiredCapacity"}
    ]});
    let (status, answer) = w.lookup_events(root, lookup).await;
    assert_eq!(status, 200, "{answer}");
    let events = answer["Events"].as_array().expect("events");
    assert_eq!(events.len(), 2, "{answer}");
    // Newest first: the refusal, then the change.
    let record = |e: &serde_json::Value| -> serde_json::Value {
        serde_json::from_str(e["CloudTrailEvent"].as_str().expect("a record")).expect("JSON")
    };
    let (denied, allowed) = (record(&events[0]), record(&events[1]));
    assert_eq!(denied["errorCode"], "AccessDenied");
    assert_eq!(denied["requestParameters"]["AutoScalingGroupName"], "db");
    assert!(allowed.get("errorCode").is_none(), "{allowed}");
    for (e, r) in events.iter().zip([&denied, &allowed]) {
        assert_eq!(e["Username"], "ca");
        assert_eq!(e["AccessKeyId"].as_str(), Some(id.as_str()));
        assert_eq!(e["EventSource"], "autoscaling.amazonaws.com");
        assert!(
            e["EventTime"].is_number(),
            "epoch seconds, as JSON 1.1 writes times"
        );
        assert_eq!(r["userIdentity"]["type"], "IAMUser");
        assert_eq!(r["sourceIPAddress"], "127.0.0.1");
    }
    assert_eq!(events[1]["Resources"][0]["ResourceName"], "nodes");
    // Reads are not recorded; the root's changes are (its IAM calls, its group's tags).
    let (_, all) = w.lookup_events(root, serde_json::json!({})).await;
    let names: Vec<&str> = all["Events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["EventName"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"DescribeAutoScalingGroups"), "{names:?}");
    assert!(names.contains(&"CreateAccessKey") && names.contains(&"CreateOrUpdateTags"));
    let secret_shown = all.to_string().contains(&secret);
    assert!(!secret_shown, "a key's secret is never recorded");
    // A page at a time.
    let (_, first) = w
        .lookup_events(root, serde_json::json!({"MaxResults": 1}))
        .await;
    let token = first["NextToken"].as_str().expect("more");
    let (_, second) = w
        .lookup_events(
            root,
            serde_json::json!({"MaxResults": 1, "NextToken": token}),
        )
        .await;
    assert_eq!(second["Events"][0]["EventId"], all["Events"][1]["EventId"]);
    // Another account sees none of it; the user sees it only if a policy allows.
    let other = w.user("elsewhere").await;
    let (_, theirs) = w.lookup_events(keys(&other), serde_json::json!({})).await;
    assert_eq!(theirs["Events"], serde_json::json!([]));
    let (status, answer) = w.lookup_events((&id, &secret), serde_json::json!({})).await;
    assert_eq!(status, 403, "{answer}");
}

#[tokio::test]
async fn a_managed_policys_default_version_is_what_its_users_may_do() {
    let given = Given::lc("managed").await;
    let w = &given.w;
    group(&given, "nodes", true).await;
    let root = keys(&given.u);
    ok(w, root, "CreateUser", &[("UserName", "ci")]).await;
    let created = ok(
        w,
        root,
        "CreatePolicy",
        &[
            ("PolicyName", "scaling"),
            ("PolicyDocument", CLUSTER_AUTOSCALER),
        ],
    )
    .await;
    let arn = element(&created, "Arn").expect("an ARN");
    assert!(arn.ends_with(":policy/scaling"), "{arn}");
    assert_eq!(element(&created, "DefaultVersionId").as_deref(), Some("v1"));
    let key = ok(w, root, "CreateAccessKey", &[("UserName", "ci")]).await;
    let ci = w.sdk_with_keys(
        &element(&key, "AccessKeyId").unwrap(),
        &element(&key, "SecretAccessKey").unwrap(),
    );
    let set = || {
        ci.set_desired_capacity()
            .auto_scaling_group_name("nodes")
            .desired_capacity(1)
            .send()
    };
    assert_eq!(
        failure(set().await).0,
        "AccessDenied",
        "nothing attached yet"
    );
    ok(
        w,
        root,
        "AttachUserPolicy",
        &[("UserName", "ci"), ("PolicyArn", &arn)],
    )
    .await;
    set().await.expect("the attached policy allows it");
    let attached = ok(w, root, "ListAttachedUserPolicies", &[("UserName", "ci")]).await;
    assert_eq!(
        element(&attached, "PolicyArn").as_deref(),
        Some(arn.as_str())
    );
    // A new default version that denies: the user's keys carry it at once.
    let deny = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"autoscaling:SetDesiredCapacity","Resource":"*"}]}"#;
    let v2 = ok(
        w,
        root,
        "CreatePolicyVersion",
        &[
            ("PolicyArn", &arn),
            ("PolicyDocument", deny),
            ("SetAsDefault", "true"),
        ],
    )
    .await;
    assert_eq!(element(&v2, "VersionId").as_deref(), Some("v2"));
    let (code, message) = failure(set().await);
    assert_eq!(code, "AccessDenied");
    assert!(message.contains("with an explicit deny"), "{message}");
    // Back to v1; the default is not deleted; the policy is not deleted while attached.
    ok(
        w,
        root,
        "SetDefaultPolicyVersion",
        &[("PolicyArn", &arn), ("VersionId", "v1")],
    )
    .await;
    set().await.expect("v1 again");
    let got = ok(
        w,
        root,
        "GetPolicyVersion",
        &[("PolicyArn", &arn), ("VersionId", "v2")],
    )
    .await;
    assert_eq!(percent_decode(&element(&got, "Document").unwrap()), deny);
    assert_eq!(
        refused(
            w,
            root,
            "DeletePolicyVersion",
            &[("PolicyArn", &arn), ("VersionId", "v1")]
        )
        .await
        .1,
        "DeleteConflict"
    );
    assert_eq!(
        refused(w, root, "DeletePolicy", &[("PolicyArn", &arn)])
            .await
            .1,
        "DeleteConflict"
    );
    assert_eq!(
        refused(w, root, "DeleteUser", &[("UserName", "ci")])
            .await
            .1,
        "DeleteConflict",
        "a user with a policy attached"
    );
    ok(
        w,
        root,
        "DetachUserPolicy",
        &[("UserName", "ci"), ("PolicyArn", &arn)],
    )
    .await;
    assert_eq!(failure(set().await).0, "AccessDenied", "detached");
    ok(
        w,
        root,
        "DeletePolicyVersion",
        &[("PolicyArn", &arn), ("VersionId", "v2")],
    )
    .await;
    ok(w, root, "DeletePolicy", &[("PolicyArn", &arn)]).await;
    let (status, code, _) = refused(w, root, "GetPolicy", &[("PolicyArn", &arn)]).await;
    assert_eq!((status, code.as_str()), (404, "NoSuchEntity"));
    // Five versions at most.
    let p = ok(
        w,
        root,
        "CreatePolicy",
        &[("PolicyName", "many"), ("PolicyDocument", deny)],
    )
    .await;
    let many = element(&p, "Arn").unwrap();
    for _ in 0..4 {
        ok(
            w,
            root,
            "CreatePolicyVersion",
            &[("PolicyArn", &many), ("PolicyDocument", deny)],
        )
        .await;
    }
    let (status, code, _) = refused(
        w,
        root,
        "CreatePolicyVersion",
        &[("PolicyArn", &many), ("PolicyDocument", deny)],
    )
    .await;
    assert_eq!((status, code.as_str()), (409, "LimitExceeded"));
    let listed = ok(w, root, "ListPolicies", &[("Scope", "Local")]).await;
    assert_eq!(element(&listed, "PolicyName").as_deref(), Some("many"));
}

#[tokio::test]
async fn a_role_is_assumed_as_its_trust_policy_says_and_a_session_policy_only_narrows() {
    let given = Given::lc("roles").await;
    let w = &given.w;
    group(&given, "nodes", true).await;
    group(&given, "db", false).await;
    let root = keys(&given.u);
    let who = ok_sts(w, root, "GetCallerIdentity", &[]).await;
    let account = element(&who, "Account").expect("an account");
    let trust = format!(
        r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow","Principal":{{"AWS":"arn:aws:iam::{account}:root"}},"Action":"sts:AssumeRole"}}}}"#
    );
    let created = ok(
        w,
        root,
        "CreateRole",
        &[
            ("RoleName", "deployer"),
            ("AssumeRolePolicyDocument", &trust),
        ],
    )
    .await;
    let role_arn = element(&created, "Arn").expect("an ARN");
    assert_eq!(role_arn, format!("arn:aws:iam::{account}:role/deployer"));
    let scale_any = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":["autoscaling:SetDesiredCapacity","autoscaling:Describe*"],"Resource":"*"}}"#;
    ok(
        w,
        root,
        "PutRolePolicy",
        &[
            ("RoleName", "deployer"),
            ("PolicyName", "scale"),
            ("PolicyDocument", scale_any),
        ],
    )
    .await;
    // An IAM user may assume it only when its own policies allow (the trust names the account).
    let (id, secret) = iam_user(w, &given.u, "ci", CLUSTER_AUTOSCALER).await;
    let ci = (id.as_str(), secret.as_str());
    let assume = [
        ("RoleArn", role_arn.as_str()),
        ("RoleSessionName", "build-7"),
    ];
    let (status, code, message) = refused_sts(w, ci, "AssumeRole", &assume).await;
    assert_eq!((status, code.as_str()), (403, "AccessDenied"));
    assert!(
        message.ends_with(&format!("is not authorized to perform: sts:AssumeRole on resource: {role_arn} because no identity-based policy allows the sts:AssumeRole action")),
        "{message}"
    );
    let may_assume = format!(
        r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow","Action":"sts:AssumeRole","Resource":"{role_arn}"}}}}"#
    );
    ok(
        w,
        root,
        "PutUserPolicy",
        &[
            ("UserName", "ci"),
            ("PolicyName", "assume"),
            ("PolicyDocument", &may_assume),
        ],
    )
    .await;
    let got = ok_sts(w, ci, "AssumeRole", &assume).await;
    let session_arn = format!("arn:aws:sts::{account}:assumed-role/deployer/build-7");
    assert_eq!(element(&got, "Arn").as_deref(), Some(session_arn.as_str()));
    let (key, secret_key, token) = (
        element(&got, "AccessKeyId").unwrap(),
        element(&got, "SecretAccessKey").unwrap(),
        element(&got, "SessionToken").unwrap(),
    );
    let as_role = w.sdk_in_session(&key, &secret_key, &token);
    as_role
        .set_desired_capacity()
        .auto_scaling_group_name("db")
        .desired_capacity(1)
        .send()
        .await
        .expect("the role's policy allows any group");
    let me = w.sts((&key, &secret_key), "GetCallerIdentity", &[]).await;
    assert_eq!(me.0, 403, "a session's key without its token: {}", me.1);
    // A session policy narrows: only the tagged group, whatever the role allows.
    let narrow = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"autoscaling:*","Resource":"*","Condition":{"StringEquals":{"aws:ResourceTag/k8s.io/cluster-autoscaler/enabled":"true"}}}}"#;
    let got = ok_sts(
        w,
        root,
        "AssumeRole",
        &[
            ("RoleArn", role_arn.as_str()),
            ("RoleSessionName", "narrow"),
            ("Policy", narrow),
        ],
    )
    .await;
    let narrowed = w.sdk_in_session(
        &element(&got, "AccessKeyId").unwrap(),
        &element(&got, "SecretAccessKey").unwrap(),
        &element(&got, "SessionToken").unwrap(),
    );
    narrowed
        .set_desired_capacity()
        .auto_scaling_group_name("nodes")
        .desired_capacity(1)
        .send()
        .await
        .expect("allowed by both");
    let (code, message) = failure(
        narrowed
            .set_desired_capacity()
            .auto_scaling_group_name("db")
            .desired_capacity(1)
            .send()
            .await,
    );
    assert_eq!(code, "AccessDenied");
    assert!(
        message.starts_with(&format!(
            "User: arn:aws:sts::{account}:assumed-role/deployer/narrow is not authorized"
        )),
        "{message}"
    );
    // A managed policy named for the session (PolicyArns) narrows as well.
    let created = ok(
        w,
        root,
        "CreatePolicy",
        &[("PolicyName", "narrow"), ("PolicyDocument", narrow)],
    )
    .await;
    let narrow_arn = element(&created, "Arn").unwrap();
    let got = ok_sts(
        w,
        root,
        "AssumeRole",
        &[
            ("RoleArn", role_arn.as_str()),
            ("RoleSessionName", "managed"),
            ("PolicyArns.member.1.arn", narrow_arn.as_str()),
        ],
    )
    .await;
    let managed = w.sdk_in_session(
        &element(&got, "AccessKeyId").unwrap(),
        &element(&got, "SecretAccessKey").unwrap(),
        &element(&got, "SessionToken").unwrap(),
    );
    let refused_db = managed
        .set_desired_capacity()
        .auto_scaling_group_name("db")
        .desired_capacity(1)
        .send()
        .await;
    assert_eq!(failure(refused_db).0, "AccessDenied");
    // The trail names the role's sessions.
    let (_, trail) = w
        .lookup_events(
            root,
            serde_json::json!({"LookupAttributes": [{"AttributeKey": "Username", "AttributeValue": "narrow"}]}),
        )
        .await;
    // Both of the session's calls, in no particular order (one millisecond of the world's).
    let records: Vec<serde_json::Value> = trail["Events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| serde_json::from_str(e["CloudTrailEvent"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{trail}");
    assert!(records
        .iter()
        .all(|r| r["userIdentity"]["type"] == "AssumedRole"));
    assert_eq!(
        records
            .iter()
            .filter(|r| r["errorCode"] == "AccessDenied")
            .count(),
        1
    );
    // A role with policies is not deleted; a trust policy that names no principal is malformed.
    assert_eq!(
        refused(w, root, "DeleteRole", &[("RoleName", "deployer")])
            .await
            .1,
        "DeleteConflict"
    );
    let (status, code, _) = refused(
        w,
        root,
        "UpdateAssumeRolePolicy",
        &[
            ("RoleName", "deployer"),
            (
                "PolicyDocument",
                r#"{"Statement":{"Effect":"Allow","Action":"sts:AssumeRole"}}"#,
            ),
        ],
    )
    .await;
    assert_eq!((status, code.as_str()), (400, "MalformedPolicyDocument"));
    // An hour is the default; past the role's maximum is refused.
    let (status, _, _) = refused_sts(
        w,
        root,
        "AssumeRole",
        &[
            ("RoleArn", role_arn.as_str()),
            ("RoleSessionName", "long"),
            ("DurationSeconds", "7200"),
        ],
    )
    .await;
    assert_eq!(status, 400);
}

/// An STS call that must fail: its status, code and message.
async fn refused_sts(
    w: &World,
    who: (&str, &str),
    action: &str,
    params: &[(&str, &str)],
) -> (u16, String, String) {
    let (status, body) = w.sts(who, action, params).await;
    let code = element(&body, "Code").unwrap_or_else(|| panic!("{action}: {body}"));
    (status, code, element(&body, "Message").unwrap_or_default())
}

#[tokio::test]
async fn the_policy_simulator_answers_as_requests_are_decided() {
    let w = World::new().await;
    let root = w.user("simulate").await;
    let r = keys(&root);
    iam_user(&w, &root, "ca", CLUSTER_AUTOSCALER).await;
    let got = ok(&w, r, "GetUser", &[("UserName", "ca")]).await;
    let arn = element(&got, "Arn").unwrap();
    let simulate = |tag: Option<&'static str>| {
        let mut params = vec![
            ("PolicySourceArn", arn.clone()),
            (
                "ActionNames.member.1",
                "autoscaling:SetDesiredCapacity".to_string(),
            ),
            (
                "ActionNames.member.2",
                "autoscaling:DeleteAutoScalingGroup".to_string(),
            ),
            (
                "ActionNames.member.3",
                "autoscaling:DescribeTags".to_string(),
            ),
        ];
        if let Some(v) = tag {
            params.extend([
                (
                    "ContextEntries.member.1.ContextKeyName",
                    "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled".to_string(),
                ),
                (
                    "ContextEntries.member.1.ContextKeyValues.member.1",
                    v.to_string(),
                ),
                (
                    "ContextEntries.member.1.ContextKeyType",
                    "string".to_string(),
                ),
                (
                    "ContextEntries.member.2.ContextKeyName",
                    "aws:ResourceTag/k8s.io/cluster-autoscaler/demo".to_string(),
                ),
                (
                    "ContextEntries.member.2.ContextKeyValues.member.1",
                    "owned".to_string(),
                ),
                (
                    "ContextEntries.member.2.ContextKeyType",
                    "string".to_string(),
                ),
            ]);
        }
        params
    };
    let decisions = |xml: &str| -> Vec<String> {
        xml.split("<EvalDecision>")
            .skip(1)
            .map(|s| s.split('<').next().unwrap().to_string())
            .collect()
    };
    for (tag, want) in [
        (Some("true"), ["allowed", "implicitDeny", "allowed"]),
        (None, ["implicitDeny", "implicitDeny", "allowed"]),
    ] {
        let params = simulate(tag);
        let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let answer = ok(&w, r, "SimulatePrincipalPolicy", &pairs).await;
        assert_eq!(decisions(&answer), want, "{answer}");
    }
    let deny =
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Deny","Action":"*","Resource":"*"}}"#;
    let answer = ok(
        &w,
        r,
        "SimulateCustomPolicy",
        &[
            ("PolicyInputList.member.1", deny),
            ("ActionNames.member.1", "autoscaling:DescribeTags"),
        ],
    )
    .await;
    assert_eq!(decisions(&answer), ["explicitDeny"]);
}

#[tokio::test]
async fn the_accounts_root_rotates_its_own_key_without_an_outage() {
    let given = Given::lc("rootkeys").await;
    let w = &given.w;
    let first = keys(&given.u);
    let made = ok(w, first, "CreateAccessKey", &[]).await;
    let second = (
        element(&made, "AccessKeyId").unwrap(),
        element(&made, "SecretAccessKey").unwrap(),
    );
    let both = ok(w, first, "ListAccessKeys", &[]).await;
    assert_eq!(both.matches("<Status>Active</Status>").count(), 2, "{both}");
    let new_root = w.sdk_with_keys(&second.0, &second.1);
    new_root
        .describe_launch_configurations()
        .send()
        .await
        .expect("the second key is the root's too");
    assert_eq!(
        refused(w, first, "CreateAccessKey", &[]).await.1,
        "LimitExceeded"
    );
    // The old key retired: Inactive, refused, then deleted; the new one is the root's only key.
    let old_id = given.u.access_key_id.as_str();
    let new = (second.0.as_str(), second.1.as_str());
    ok(
        w,
        new,
        "UpdateAccessKey",
        &[("AccessKeyId", old_id), ("Status", "Inactive")],
    )
    .await;
    assert_eq!(
        failure(w.sdk(&given.u).describe_tags().send().await).0,
        "InvalidClientTokenId"
    );
    ok(w, new, "DeleteAccessKey", &[("AccessKeyId", old_id)]).await;
    let one = ok(w, new, "ListAccessKeys", &[]).await;
    assert_eq!(
        element(&one, "AccessKeyId").as_deref(),
        Some(second.0.as_str())
    );
    assert_eq!(one.matches("<member>").count(), 1, "{one}");
    assert_eq!(
        refused(w, new, "DeleteAccessKey", &[("AccessKeyId", &second.0)])
            .await
            .1,
        "DeleteConflict",
        "the root keeps a key"
    );
    new_root
        .describe_launch_configurations()
        .send()
        .await
        .expect("still the root");
    // An administrator's DisableUser stops both of a root's keys.
    let again = ok(w, new, "CreateAccessKey", &[]).await;
    let third = (
        element(&again, "AccessKeyId").unwrap(),
        element(&again, "SecretAccessKey").unwrap(),
    );
    let admin = w.admin("admin").await;
    let (status, body) = w
        .phantom_api(
            &admin,
            "DisableUser",
            &serde_json::json!({"UserName": given.u.name}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    w.clock.advance_ms(api::KEY_CACHE_MS + 1);
    for (id, secret) in [&second, &third] {
        let c = w.sdk_with_keys(id, secret);
        assert_eq!(
            failure(c.describe_tags().send().await).0,
            "InvalidClientTokenId"
        );
    }
}

#[tokio::test]
async fn a_roles_session_ends_with_the_key_that_assumed_it() {
    let given = Given::lc("ends").await;
    let w = &given.w;
    let root = keys(&given.u);
    let who = ok_sts(w, root, "GetCallerIdentity", &[]).await;
    let account = element(&who, "Account").unwrap();
    let trust = format!(
        r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow","Principal":{{"AWS":"arn:aws:iam::{account}:user/ci"}},"Action":"sts:AssumeRole"}}}}"#
    );
    let role = ok(
        w,
        root,
        "CreateRole",
        &[("RoleName", "reader"), ("AssumeRolePolicyDocument", &trust)],
    )
    .await;
    let role_arn = element(&role, "Arn").unwrap();
    let read = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"autoscaling:Describe*","Resource":"*"}}"#;
    ok(
        w,
        root,
        "PutRolePolicy",
        &[
            ("RoleName", "reader"),
            ("PolicyName", "read"),
            ("PolicyDocument", read),
        ],
    )
    .await;
    // The trust names the user itself: its own policies need not allow sts:AssumeRole.
    let (id, secret) = iam_user(w, &given.u, "ci", read).await;
    let got = ok_sts(
        w,
        (&id, &secret),
        "AssumeRole",
        &[("RoleArn", &role_arn), ("RoleSessionName", "s1")],
    )
    .await;
    let session = w.sdk_in_session(
        &element(&got, "AccessKeyId").unwrap(),
        &element(&got, "SecretAccessKey").unwrap(),
        &element(&got, "SessionToken").unwrap(),
    );
    session
        .describe_tags()
        .send()
        .await
        .expect("the role reads");
    ok(
        w,
        root,
        "UpdateAccessKey",
        &[
            ("UserName", "ci"),
            ("AccessKeyId", &id),
            ("Status", "Inactive"),
        ],
    )
    .await;
    w.clock.advance_ms(api::KEY_CACHE_MS + 1);
    assert_eq!(
        failure(session.describe_tags().send().await).0,
        "InvalidClientTokenId",
        "the key that assumed it is Inactive"
    );
}
