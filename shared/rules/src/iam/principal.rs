//! Who asks, as IAM's policies and refusals see it: an account's root or one of its IAM users,
//! the global condition keys of a request, the decision over every resource a request names, and
//! a refusal in AWS's words.

use super::{decide, Context, Decision, Policy, Request};
use phantom_model::iam::{root_arn, user_arn, Identity};

/// An IAM user's policies, read from its key's record: a document that no longer reads (IAM
/// refused it when it was put) allows nothing.
pub fn policies_of(identity: &Identity) -> Vec<Policy> {
    identity
        .policies
        .iter()
        .filter_map(|text| super::parse(text).ok())
        .collect()
}

/// The principal's ARN: the root's, the IAM user's, or a role's session's
/// (`arn:aws:sts::<account>:assumed-role/<role>/<session>`).
pub fn arn(account_id: &str, identity: Option<&Identity>) -> String {
    match identity {
        None => root_arn(account_id),
        Some(i) => match &i.role_session {
            Some(session) => format!(
                "arn:aws:sts::{account_id}:assumed-role/{}/{session}",
                i.name
            ),
            None => user_arn(account_id, &i.path, &i.name),
        },
    }
}

/// The id CloudTrail and `aws:userid` give the principal: the user's, or `<role id>:<session>`.
pub fn principal_id(account_id: &str, identity: Option<&Identity>) -> String {
    match identity {
        None => account_id.to_string(),
        Some(i) => match &i.role_session {
            Some(session) => format!("{}:{session}", i.user_id),
            None => i.user_id.clone(),
        },
    }
}

/// What a request says of itself, for the global condition keys.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub account_id: &'a str,
    pub identity: &'a Identity,
    /// The request's time, as `aws:CurrentTime` writes it (ISO 8601), and in Unix seconds.
    pub current_time: &'a str,
    pub epoch_secs: i64,
    /// The caller's address, where the endpoint knows it.
    pub source_ip: Option<&'a str>,
    /// Whether it came over TLS.
    pub secure: bool,
    pub region: &'a str,
}

/// The global condition keys IAM sets on every request of an IAM user.
pub fn global_keys(f: &Facts<'_>) -> Context {
    let mut ctx = Context::default();
    let i = f.identity;
    let (kind, principal_arn) = match i.role_arn(f.account_id) {
        Some(role) => ("AssumedRole", role),
        None => {
            // `aws:username` is an IAM user's alone.
            ctx.set("aws:username", vec![i.name.clone()]);
            ("User", arn(f.account_id, Some(i)))
        }
    };
    ctx.set("aws:userid", vec![principal_id(f.account_id, Some(i))]);
    ctx.set("aws:PrincipalArn", vec![principal_arn]);
    ctx.set("aws:PrincipalAccount", vec![f.account_id.to_string()]);
    ctx.set("aws:PrincipalType", vec![kind.to_string()]);
    ctx.set("aws:CurrentTime", vec![f.current_time.to_string()]);
    ctx.set("aws:EpochTime", vec![f.epoch_secs.to_string()]);
    ctx.set("aws:SecureTransport", vec![f.secure.to_string()]);
    ctx.set("aws:RequestedRegion", vec![f.region.to_string()]);
    ctx.set("aws:MultiFactorAuthPresent", vec!["false".to_string()]);
    if let Some(ip) = f.source_ip {
        ctx.set("aws:SourceIp", vec![ip.to_string()]);
    }
    for t in &i.tags {
        ctx.set(
            &format!("aws:PrincipalTag/{}", t.key),
            vec![t.value.clone()],
        );
    }
    ctx
}

/// The first resource the policies do not allow `action` on, and why; None when every one is
/// allowed. Each resource comes with its own keys beside the request's. A session policy
/// (`session`, when there is one) narrows what the identity's allow.
pub fn first_refused<'r>(
    policies: &[Policy],
    session: Option<&[Policy]>,
    action: &str,
    resources: &'r [(String, Context)],
) -> Option<(&'r str, Decision)> {
    resources.iter().find_map(|(resource, ctx)| {
        let r = Request {
            action,
            resource,
            context: ctx,
        };
        let d = match session {
            Some(session) => super::decide_in_session(policies, session, &r),
            None => decide(policies, &r),
        };
        (d != Decision::Allow).then_some((resource.as_str(), d))
    })
}

/// A session's policies (AssumeRole's `Policy`), if it has any.
pub fn session_policies_of(identity: &Identity) -> Option<Vec<Policy>> {
    (!identity.session_policies.is_empty()).then(|| {
        identity
            .session_policies
            .iter()
            .filter_map(|text| super::parse(text).ok())
            .collect()
    })
}

/// AWS's refusal: "User: <arn> is not authorized to perform: <action> on resource: <arn>
/// because no identity-based policy allows the <action> action" (or "with an explicit deny in
/// an identity-based policy"). A request on `*` names no resource.
pub fn refusal(principal: &str, action: &str, resource: &str, d: Decision) -> String {
    let on = match resource {
        "*" => String::new(),
        r => format!(" on resource: {r}"),
    };
    let why = match d {
        Decision::ExplicitDeny => "with an explicit deny in an identity-based policy".to_string(),
        _ => format!("because no identity-based policy allows the {action} action"),
    };
    format!("User: {principal} is not authorized to perform: {action}{on} {why}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use phantom_model::iam::Tag;

    fn identity(policies: &[&str]) -> Identity {
        Identity {
            name: "ca".into(),
            user_id: "AIDAEXAMPLE".into(),
            path: "/".into(),
            tags: vec![Tag {
                key: "team".into(),
                value: "k8s".into(),
            }],
            policies: policies.iter().map(|p| p.to_string()).collect(),
            role_session: None,
            session_policies: Vec::new(),
        }
    }

    #[test]
    fn refusals_are_in_aws_words() {
        let arn = arn("111122223333", Some(&identity(&[])));
        assert_eq!(arn, "arn:aws:iam::111122223333:user/ca");
        let group = "arn:aws:autoscaling:us-east-1:111122223333:autoScalingGroup:u:autoScalingGroupName/web";
        assert_eq!(
            refusal(&arn, "autoscaling:SetDesiredCapacity", group, Decision::ImplicitDeny),
            format!("User: {arn} is not authorized to perform: autoscaling:SetDesiredCapacity on resource: {group} because no identity-based policy allows the autoscaling:SetDesiredCapacity action")
        );
        assert_eq!(
            refusal(&arn, "autoscaling:DescribeTags", "*", Decision::ExplicitDeny),
            format!("User: {arn} is not authorized to perform: autoscaling:DescribeTags with an explicit deny in an identity-based policy")
        );
    }

    #[test]
    fn the_global_keys_say_who_asks() {
        let allow_own = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow",
            "Action":"autoscaling:*","Resource":"*",
            "Condition":{"StringEquals":{"aws:PrincipalTag/team":"k8s"},
                         "IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}}"#;
        let i = identity(&[allow_own, "not a policy"]);
        let policies = policies_of(&i);
        assert_eq!(
            policies.len(),
            1,
            "a document that does not read allows nothing"
        );
        let facts = |ip| Facts {
            account_id: "111122223333",
            identity: &i,
            current_time: "2026-11-29T07:00:00Z",
            epoch_secs: 1_795_000_000,
            source_ip: ip,
            secure: false,
            region: "us-east-1",
        };
        let inside = [("*".to_string(), global_keys(&facts(Some("10.1.2.3"))))];
        assert_eq!(
            first_refused(&policies, None, "autoscaling:SetDesiredCapacity", &inside),
            None
        );
        let outside = [("*".to_string(), global_keys(&facts(Some("192.0.2.1"))))];
        assert_eq!(
            first_refused(&policies, None, "autoscaling:SetDesiredCapacity", &outside),
            Some(("*", Decision::ImplicitDeny))
        );
        let unknown = [("*".to_string(), global_keys(&facts(None)))];
        assert!(
            first_refused(&policies, None, "autoscaling:SetDesiredCapacity", &unknown).is_some()
        );
    }
}
