//! IAM's identity-based policies, pure: a policy document read as IAM reads it (`document`), its
//! conditions (`condition`), and a request's decision as IAM's evaluation logic makes it: an
//! explicit deny wins, else an allow, else the implicit deny; a session policy can only narrow
//! what its identity's policies allow (`decide_in_session`). The first step of least privilege
//! (issue 63): what each identity may do, evaluated without a store round trip.

pub mod autoscaling;
pub mod condition;
pub mod document;
pub mod identities;
pub mod principal;
pub mod sessions;
pub mod trust;

pub use condition::Context;
pub use document::{parse, parse_trust, Policy, Statement};

/// A request as a policy sees it: the action (`autoscaling:SetDesiredCapacity`), the resource's
/// ARN (`*` where the action names none), and its condition keys.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub action: &'a str,
    pub resource: &'a str,
    pub context: &'a Context,
}

/// What the policies say of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// A statement denies it.
    ExplicitDeny,
    /// No statement allows it.
    ImplicitDeny,
}

/// The decision of `policies` (all of an identity's) on `r`.
pub fn decide(policies: &[Policy], r: &Request<'_>) -> Decision {
    let applying = policies
        .iter()
        .flat_map(|p| &p.statements)
        .filter(|s| applies(s, r));
    let mut allowed = false;
    for s in applying {
        if !s.allow {
            return Decision::ExplicitDeny;
        }
        allowed = true;
    }
    match allowed {
        true => Decision::Allow,
        false => Decision::ImplicitDeny,
    }
}

/// The decision for a session: allowed only where the identity's policies and the session's
/// both allow; an explicit deny in either wins.
pub fn decide_in_session(identity: &[Policy], session: &[Policy], r: &Request<'_>) -> Decision {
    match (decide(identity, r), decide(session, r)) {
        (Decision::ExplicitDeny, _) | (_, Decision::ExplicitDeny) => Decision::ExplicitDeny,
        (Decision::Allow, Decision::Allow) => Decision::Allow,
        _ => Decision::ImplicitDeny,
    }
}

/// Whether statement `s` speaks of `r`: its action, its resource, and every condition.
fn applies(s: &Statement, r: &Request<'_>) -> bool {
    // Action names are compared without case, resources with it, as IAM's.
    let action = s
        .actions
        .iter()
        .any(|p| condition::wildcard(p, r.action, true));
    let expand = |text: &str| match s.variables {
        true => expand(text, r.context),
        false => Some(text.to_string()),
    };
    let resource = s
        .resources
        .iter()
        .filter_map(|p| expand(p))
        .any(|p| condition::wildcard(&p, r.resource, false));
    action != s.not_action
        && resource != s.not_resource
        && s.conditions.iter().all(|c| {
            let c = document::Condition {
                values: c.values.iter().filter_map(|v| expand(v)).collect(),
                ..c.clone()
            };
            condition::holds(&c, r.context)
        })
}

/// `text` with its policy variables (`${aws:username}`) replaced by the request's values, and
/// `${*}`, `${?}`, `${$}` by the characters themselves; None when a variable's key is absent or
/// has several values (IAM then matches nothing with it).
pub fn expand(text: &str, ctx: &Context) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find('}')?;
        let key = &after[..end];
        match key {
            "*" | "?" | "$" => out.push_str(key),
            _ => match ctx.get(key) {
                Some([one]) => out.push_str(one),
                _ => return None,
            },
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests;
