//! The evaluator against cases taken from IAM's documented evaluation logic and condition
//! operators, and a property: a session policy never grants more than its identity's.

use super::*;
use proptest::prelude::*;

const GROUP: &str =
    "arn:aws:autoscaling:us-east-1:111122223333:autoScalingGroup:1f6b:autoScalingGroupName/web";

fn policy(json: &str) -> Policy {
    parse(json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

fn on(policies: &[Policy], action: &str, resource: &str, ctx: &Context) -> Decision {
    decide(
        policies,
        &Request {
            action,
            resource,
            context: ctx,
        },
    )
}

fn allowed(p: &str, action: &str, ctx: &Context) -> bool {
    on(&[policy(p)], action, GROUP, ctx) == Decision::Allow
}

/// A policy allowing SetDesiredCapacity where `operator` holds of `key` for `values`.
fn when(operator: &str, key: &str, values: &str) -> String {
    format!(
        r#"{{"Version": "2012-10-17", "Statement": {{"Effect": "Allow",
            "Action": "autoscaling:SetDesiredCapacity", "Resource": "*",
            "Condition": {{"{operator}": {{"{key}": {values}}}}}}}}}"#
    )
}

fn set(ctx: &Context, operator: &str, key: &str, values: &str) -> bool {
    allowed(
        &when(operator, key, values),
        "autoscaling:SetDesiredCapacity",
        ctx,
    )
}

#[test]
fn an_explicit_deny_wins_and_no_allow_is_a_deny() {
    let allow = policy(
        r#"{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "autoscaling:*", "Resource": "*"}]}"#,
    );
    let deny = policy(
        r#"{"Version": "2012-10-17", "Statement": {"Effect": "Deny", "Action": "autoscaling:Delete*", "Resource": "*"}}"#,
    );
    let ctx = Context::default();
    let both = [allow.clone(), deny.clone()];
    assert_eq!(
        on(&both, "autoscaling:DeleteAutoScalingGroup", GROUP, &ctx),
        Decision::ExplicitDeny
    );
    assert_eq!(
        on(&both, "autoscaling:SetDesiredCapacity", GROUP, &ctx),
        Decision::Allow
    );
    assert_eq!(
        on(&[deny], "autoscaling:SetDesiredCapacity", GROUP, &ctx),
        Decision::ImplicitDeny
    );
    assert_eq!(
        on(&[], "autoscaling:SetDesiredCapacity", GROUP, &ctx),
        Decision::ImplicitDeny
    );
}

#[test]
fn actions_match_with_wildcards_and_without_case_resources_with_case() {
    let ctx = Context::default();
    let describe = r#"{"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "autoscaling:Describe*", "Resource": "*"}}"#;
    assert!(allowed(
        describe,
        "autoscaling:DescribeAutoScalingGroups",
        &ctx
    ));
    assert!(allowed(
        describe,
        "AutoScaling:describeScalingActivities",
        &ctx
    ));
    assert!(!allowed(describe, "autoscaling:SetDesiredCapacity", &ctx));
    let one = r#"{"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "autoscaling:SetDesiredCapacit?", "Resource": "arn:aws:autoscaling:*:*:autoScalingGroup:*:autoScalingGroupName/we?"}}"#;
    assert!(allowed(one, "autoscaling:SetDesiredCapacity", &ctx));
    let p = [policy(one)];
    let upper = GROUP.replace("/web", "/WEB");
    assert_eq!(
        on(&p, "autoscaling:SetDesiredCapacity", &upper, &ctx),
        Decision::ImplicitDeny
    );
    let star = r#"{"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "*", "Resource": "*"}}"#;
    assert!(allowed(star, "phantom:PutCloudCredentials", &ctx));
}

#[test]
fn not_action_and_not_resource_match_everything_else() {
    let ctx = Context::default();
    let not_delete = r#"{"Version": "2012-10-17", "Statement": {"Effect": "Allow", "NotAction": "autoscaling:Delete*", "Resource": "*"}}"#;
    assert!(allowed(not_delete, "autoscaling:SetDesiredCapacity", &ctx));
    assert!(!allowed(
        not_delete,
        "autoscaling:DeleteAutoScalingGroup",
        &ctx
    ));
    let only_prod = [policy(
        r#"{"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "autoscaling:*", "Resource": "*"},
            {"Effect": "Deny", "Action": "autoscaling:*", "NotResource": "arn:aws:autoscaling:*:*:autoScalingGroup:*:autoScalingGroupName/prod-*"}]}"#,
    )];
    let prod = GROUP.replace("/web", "/prod-api");
    assert_eq!(
        on(&only_prod, "autoscaling:SetDesiredCapacity", &prod, &ctx),
        Decision::Allow
    );
    assert_eq!(
        on(&only_prod, "autoscaling:SetDesiredCapacity", GROUP, &ctx),
        Decision::ExplicitDeny
    );
}

#[test]
fn the_cluster_autoscalers_policy_acts_on_tagged_groups_only() {
    // Its documented policy: SetDesiredCapacity and TerminateInstanceInAutoScalingGroup on groups
    // tagged k8s.io/cluster-autoscaler/enabled.
    let p = r#"{"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
        "Resource": "*",
        "Condition": {"StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true"}}},
        {"Effect": "Allow", "Action": ["autoscaling:Describe*"], "Resource": "*"}]}"#;
    let tagged = Context::default().with(
        "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled",
        &["true"],
    );
    let untagged = Context::default();
    assert!(allowed(p, "autoscaling:SetDesiredCapacity", &tagged));
    assert!(!allowed(p, "autoscaling:SetDesiredCapacity", &untagged));
    assert!(!allowed(p, "autoscaling:UpdateAutoScalingGroup", &tagged));
    assert!(allowed(
        p,
        "autoscaling:DescribeAutoScalingGroups",
        &untagged
    ));
    // Condition keys are compared without case.
    let shouted = Context::default().with(
        "AWS:RESOURCETAG/k8s.io/cluster-autoscaler/enabled",
        &["true"],
    );
    assert!(allowed(p, "autoscaling:SetDesiredCapacity", &shouted));
}

#[test]
fn each_operator_as_iam_documents_it() {
    let c = Context::default()
        .with("aws:username", &["alice"])
        .with("aws:SourceIp", &["203.0.113.7"])
        .with("aws:SecureTransport", &["true"])
        .with("aws:CurrentTime", &["2026-11-29T05:00:00Z"])
        .with("autoscaling:MaxSize", &["10"])
        .with("aws:TagKeys", &["team", "env"])
        .with("autoscaling:LaunchConfigurationName", &["web@hotel"]);
    let k = "aws:username";
    assert!(
        set(&c, "StringEquals", k, r#"["bob", "alice"]"#),
        "values are alternatives"
    );
    assert!(!set(&c, "StringEquals", k, r#""Alice""#));
    assert!(set(&c, "StringEqualsIgnoreCase", k, r#""ALICE""#));
    assert!(!set(&c, "StringNotEquals", k, r#""alice""#));
    assert!(set(&c, "StringNotEquals", k, r#"["bob", "carol"]"#));
    assert!(!set(&c, "StringNotEqualsIgnoreCase", k, r#""ALICE""#));
    assert!(set(&c, "StringLike", k, r#""al*""#));
    assert!(set(&c, "StringLike", k, r#""?lice""#));
    assert!(!set(&c, "StringNotLike", k, r#""a*""#));
    let n = "autoscaling:MaxSize";
    assert!(set(&c, "NumericEquals", n, r#""10""#));
    assert!(set(&c, "NumericNotEquals", n, r#""11""#));
    assert!(set(&c, "NumericLessThan", n, "11"));
    assert!(!set(&c, "NumericLessThan", n, "10"));
    assert!(set(&c, "NumericLessThanEquals", n, "10"));
    assert!(set(&c, "NumericGreaterThan", n, "9"));
    assert!(set(&c, "NumericGreaterThanEquals", n, "10"));
    assert!(
        !set(&c, "NumericEquals", n, r#""ten""#),
        "a value that is not a number matches nothing"
    );
    let t = "aws:CurrentTime";
    assert!(set(&c, "DateLessThan", t, r#""2026-12-01T00:00:00Z""#));
    assert!(set(&c, "DateGreaterThan", t, r#""2026-11-29""#));
    assert!(!set(
        &c,
        "DateGreaterThanEquals",
        t,
        r#""2027-01-01T00:00:00Z""#
    ));
    assert!(set(&c, "DateNotEquals", t, "1"));
    // The same moment in seconds since 1970.
    assert!(set(&c, "DateEquals", t, "1795928400"));
    assert!(!set(&c, "DateEquals", t, "1795928401"));
    assert!(set(&c, "Bool", "aws:SecureTransport", "true"));
    assert!(!set(&c, "Bool", "aws:SecureTransport", r#""false""#));
    let ip = "aws:SourceIp";
    assert!(set(&c, "IpAddress", ip, r#""203.0.113.0/24""#));
    assert!(!set(&c, "IpAddress", ip, r#""198.51.100.0/24""#));
    assert!(set(&c, "NotIpAddress", ip, r#""198.51.100.0/24""#));
    assert!(set(&c, "IpAddress", ip, r#""203.0.113.7""#));
    let v6 = Context::default().with(ip, &["2001:db8::1"]);
    assert!(set(&v6, "IpAddress", ip, r#""2001:db8::/32""#));
    assert!(!set(&v6, "IpAddress", ip, r#""203.0.113.0/24""#));
    let lc = "autoscaling:LaunchConfigurationName";
    assert!(set(&c, "ArnLike", lc, r#""web@*""#));
    assert!(set(&c, "ArnNotEquals", lc, r#""api@*""#));
    assert!(!set(&c, "ArnNotLike", lc, r#""web@*""#));
}

#[test]
fn an_absent_key_null_if_exists_and_sets() {
    let none = Context::default();
    let k = "aws:ResourceTag/team";
    // Absent: a positive operator is false, a negated one true.
    assert!(!set(&none, "StringEquals", k, r#""ops""#));
    assert!(set(&none, "StringNotEquals", k, r#""ops""#));
    assert!(!set(&none, "NumericLessThan", k, "3"));
    // IfExists: true when absent, as written when there.
    assert!(set(&none, "StringEqualsIfExists", k, r#""ops""#));
    let ops = Context::default().with(k, &["ops"]);
    assert!(set(&ops, "StringEqualsIfExists", k, r#""ops""#));
    assert!(!set(&ops, "StringEqualsIfExists", k, r#""dev""#));
    // Null: "true" holds when absent, "false" when there.
    assert!(set(&none, "Null", k, r#""true""#));
    assert!(!set(&ops, "Null", k, "true"));
    assert!(set(&ops, "Null", k, r#""false""#));
    // Sets: ForAllValues holds of every value (and of none); ForAnyValue of one.
    let tags = Context::default().with("aws:TagKeys", &["team", "env"]);
    let tk = "aws:TagKeys";
    assert!(set(
        &tags,
        "ForAllValues:StringEquals",
        tk,
        r#"["team", "env", "cost"]"#
    ));
    assert!(!set(&tags, "ForAllValues:StringEquals", tk, r#"["team"]"#));
    assert!(set(&none, "ForAllValues:StringEquals", tk, r#"["team"]"#));
    assert!(set(&tags, "ForAnyValue:StringEquals", tk, r#"["env"]"#));
    assert!(!set(&none, "ForAnyValue:StringEquals", tk, r#"["env"]"#));
    assert!(set(&tags, "ForAnyValue:StringNotEquals", tk, r#"["env"]"#));
    assert!(!set(
        &tags,
        "ForAllValues:StringNotEquals",
        tk,
        r#"["env"]"#
    ));
    // Several keys, several operators: all must hold.
    let two = r#"{"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "autoscaling:*", "Resource": "*",
        "Condition": {"StringEquals": {"aws:ResourceTag/team": "ops", "aws:username": "alice"},
                      "Bool": {"aws:SecureTransport": "true"}}}}"#;
    let all = ops
        .clone()
        .with("aws:username", &["alice"])
        .with("aws:SecureTransport", &["true"]);
    assert!(allowed(two, "autoscaling:SetDesiredCapacity", &all));
    let insecure = all.clone().with("aws:SecureTransport", &["false"]);
    assert!(!allowed(two, "autoscaling:SetDesiredCapacity", &insecure));
    assert!(!allowed(two, "autoscaling:SetDesiredCapacity", &ops));
}

#[test]
fn a_malformed_document_is_refused_in_iams_words() {
    let bad = |json: &str, words: &str| {
        let e = parse(json).expect_err(json);
        assert!(e.contains(words), "{words}: {e}");
    };
    let stmt = |s: &str| format!(r#"{{"Version": "2012-10-17", "Statement": {s}}}"#);
    bad("{", "Syntax errors in policy");
    bad(
        r#"{"Version": "2012-10-17"}"#,
        "Missing required field Statement",
    );
    bad(
        r#"{"Version": "2020-01-01", "Statement": []}"#,
        "Version must be one of",
    );
    bad(
        &stmt(r#"{"Effect": "Permit", "Action": "autoscaling:*", "Resource": "*"}"#),
        "Invalid effect: Permit",
    );
    bad(
        &stmt(r#"{"Action": "autoscaling:*", "Resource": "*"}"#),
        "Missing required field Effect",
    );
    bad(
        &stmt(r#"{"Effect": "Allow", "Action": "SetDesiredCapacity", "Resource": "*"}"#),
        "prefaced by a vendor",
    );
    bad(
        &stmt(r#"{"Effect": "Allow", "Action": "a:b", "NotAction": "a:c", "Resource": "*"}"#),
        "both Action and NotAction",
    );
    bad(
        &stmt(r#"{"Effect": "Allow", "Action": "a:b"}"#),
        "Missing required field Resource",
    );
    bad(
        &stmt(r#"{"Effect": "Allow", "Action": "a:b", "Resource": "*", "Principal": "*"}"#),
        "prohibited field Principal",
    );
    bad(
        &stmt(
            r#"{"Effect": "Allow", "Action": "a:b", "Resource": "*", "Condition": {"StringSort": {"k": "v"}}}"#,
        ),
        "Invalid Condition type",
    );
    bad(
        &stmt(r#"{"Effect": "Allow", "Action": [], "Resource": "*"}"#),
        "Action is empty",
    );
}

fn arb_policy() -> impl Strategy<Value = Policy> {
    let actions = prop::sample::subsequence(
        vec![
            "autoscaling:*",
            "autoscaling:Describe*",
            "autoscaling:SetDesiredCapacity",
            "autoscaling:Delete*",
            "*",
        ],
        1..3,
    );
    let resources = prop::sample::subsequence(
        vec![
            "*",
            GROUP,
            "arn:aws:autoscaling:*:*:autoScalingGroup:*:autoScalingGroupName/prod-*",
        ],
        1..3,
    );
    let statement =
        (
            any::<bool>(),
            any::<bool>(),
            actions,
            any::<bool>(),
            resources,
            prop::option::of(prop::sample::select(vec!["ops", "dev"])),
        )
            .prop_map(
                |(allow, not_action, actions, not_resource, resources, team)| {
                    let q = |v: Vec<&str>| serde_json::to_string(&v).expect("strings");
                    let condition = team.map_or(String::new(), |t| {
                format!(r#", "Condition": {{"StringEquals": {{"aws:ResourceTag/team": "{t}"}}}}"#)
            });
                    format!(
                        r#"{{"Effect": "{}", "{}": {}, "{}": {}{condition}}}"#,
                        if allow { "Allow" } else { "Deny" },
                        if not_action { "NotAction" } else { "Action" },
                        q(actions),
                        if not_resource {
                            "NotResource"
                        } else {
                            "Resource"
                        },
                        q(resources),
                    )
                },
            );
    prop::collection::vec(statement, 1..4).prop_map(|s| {
        policy(&format!(
            r#"{{"Version": "2012-10-17", "Statement": [{}]}}"#,
            s.join(",")
        ))
    })
}

proptest! {
    /// A session policy can only narrow: whatever a session may do, its identity may.
    #[test]
    fn a_session_never_grants_more_than_its_identity(
        identity in prop::collection::vec(arb_policy(), 0..3),
        session in prop::collection::vec(arb_policy(), 0..3),
        action in prop::sample::select(vec!["autoscaling:SetDesiredCapacity", "autoscaling:DeleteAutoScalingGroup", "autoscaling:DescribeAutoScalingGroups"]),
        prod in any::<bool>(),
        team in prop::option::of(prop::sample::select(vec!["ops", "dev"])),
    ) {
        let resource = if prod { GROUP.replace("/web", "/prod-api") } else { GROUP.to_string() };
        let ctx = match team {
            Some(t) => Context::default().with("aws:ResourceTag/team", &[t]),
            None => Context::default(),
        };
        let r = Request { action, resource: &resource, context: &ctx };
        if decide_in_session(&identity, &session, &r) == Decision::Allow {
            prop_assert_eq!(decide(&identity, &r), Decision::Allow);
        }
        if decide(&identity, &r) == Decision::ExplicitDeny {
            prop_assert_eq!(decide_in_session(&identity, &session, &r), Decision::ExplicitDeny);
        }
    }
}

#[test]
fn policy_variables_name_the_caller_in_2012_10_17_policies_only() {
    // IAM's documented example: each user manages their own keys.
    let own_keys = |version: &str| {
        policy(&format!(
            r#"{{"Version":"{version}","Statement":{{"Effect":"Allow","Action":"iam:*AccessKey*",
                "Resource":"arn:aws:iam::111122223333:user/${{aws:username}}"}}}}"#
        ))
    };
    let alice = Context::default().with("aws:username", &["alice"]);
    let mine = "arn:aws:iam::111122223333:user/alice";
    let theirs = "arn:aws:iam::111122223333:user/bob";
    let now = own_keys("2012-10-17");
    assert_eq!(
        on(
            std::slice::from_ref(&now),
            "iam:CreateAccessKey",
            mine,
            &alice
        ),
        Decision::Allow
    );
    assert_eq!(
        on(
            std::slice::from_ref(&now),
            "iam:CreateAccessKey",
            theirs,
            &alice
        ),
        Decision::ImplicitDeny
    );
    assert_eq!(
        on(&[now], "iam:CreateAccessKey", mine, &Context::default()),
        Decision::ImplicitDeny,
        "a variable whose key is absent matches nothing"
    );
    let old = own_keys("2008-10-17");
    assert_eq!(
        on(&[old], "iam:CreateAccessKey", mine, &alice),
        Decision::ImplicitDeny,
        "literal"
    );
    // In condition values, and the escapes.
    let tagged = policy(
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"autoscaling:*","Resource":"*",
            "Condition":{"StringEquals":{"aws:ResourceTag/owner":"${aws:username}"}}}}"#,
    );
    let ctx = alice.clone().with("aws:ResourceTag/owner", &["alice"]);
    assert_eq!(
        on(
            std::slice::from_ref(&tagged),
            "autoscaling:SetDesiredCapacity",
            GROUP,
            &ctx
        ),
        Decision::Allow
    );
    let ctx = alice.with("aws:ResourceTag/owner", &["bob"]);
    assert_eq!(
        on(&[tagged], "autoscaling:SetDesiredCapacity", GROUP, &ctx),
        Decision::ImplicitDeny
    );
    assert_eq!(
        expand("a${*}b${?}${$}", &Context::default()).as_deref(),
        Some("a*b?$")
    );
}
