//! A role's trust policy: who may assume the role (`sts:AssumeRole`), as IAM reads a
//! resource-based policy's `Principal`. An account's id or root ARN names every identity of the
//! account (each then also needs its own policies to allow it); an identity's own ARN names it
//! alone (its own policies then need not); `*` names anyone.

use super::{condition, Context, Decision, Policy};

/// Who asks to assume a role.
#[derive(Debug, Clone, Copy)]
pub struct Asker<'a> {
    pub account_id: &'a str,
    /// The identity's ARN (a user's, the root's, or an assumed role's session).
    pub arn: &'a str,
    /// An assumed role's session: the role's own ARN, which a trust policy names.
    pub role_arn: Option<&'a str>,
}

/// How a trust policy takes an asker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Named by its own ARN: its own policies need not allow `sts:AssumeRole`.
    Named,
    /// Named through its account: its own policies must allow it too.
    Account,
    Refused,
}

fn names(principal: &str, a: &Asker<'_>) -> Option<Trust> {
    let root = format!("arn:aws:iam::{}:root", a.account_id);
    match principal {
        "*" | "AWS:*" => Some(Trust::Account),
        p => {
            let aws = p.strip_prefix("AWS:")?;
            if aws == a.arn || Some(aws) == a.role_arn {
                Some(Trust::Named)
            } else if aws == a.account_id || aws == root {
                Some(Trust::Account)
            } else {
                None
            }
        }
    }
}

/// Whether `policy` lets `a` take `action` (`sts:AssumeRole`) with the request's keys.
pub fn trusts(policy: &Policy, a: &Asker<'_>, action: &str, ctx: &Context) -> Trust {
    let mut trust = None;
    for s in &policy.statements {
        let acts = s
            .actions
            .iter()
            .any(|p| condition::wildcard(p, action, true))
            != s.not_action;
        let named = s
            .principals
            .iter()
            .filter_map(|p| names(p, a))
            .min_by_key(|t| *t != Trust::Named);
        let applies = acts
            && named.is_some() != s.not_principal
            && s.conditions.iter().all(|c| condition::holds(c, ctx));
        if !applies {
            continue;
        }
        if !s.allow {
            return Trust::Refused;
        }
        let t = named.unwrap_or(Trust::Account);
        trust = match (trust, t) {
            (Some(Trust::Named), _) | (_, Trust::Named) => Some(Trust::Named),
            _ => Some(Trust::Account),
        };
    }
    trust.unwrap_or(Trust::Refused)
}

/// Whether `a` may assume a role with trust policy `trust` and its own identity policies'
/// decision `own` (the root's: Allow) on the role.
pub fn may_assume(trust: Trust, own: Decision) -> bool {
    match trust {
        Trust::Named => own != Decision::ExplicitDeny,
        Trust::Account => own == Decision::Allow,
        Trust::Refused => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iam::parse_trust;

    const ACCOUNT: &str = "111122223333";

    fn asker(arn: &str) -> Asker<'_> {
        Asker {
            account_id: ACCOUNT,
            arn,
            role_arn: None,
        }
    }

    #[test]
    fn a_trust_policy_names_its_principals() {
        let account = parse_trust(
            r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow",
                "Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"sts:AssumeRole"}}"#,
        )
        .unwrap();
        let ci = "arn:aws:iam::111122223333:user/ci";
        let ctx = Context::default();
        assert_eq!(
            trusts(&account, &asker(ci), "sts:AssumeRole", &ctx),
            Trust::Account
        );
        let other = Asker {
            account_id: "999999999999",
            arn: "arn:aws:iam::999999999999:user/ci",
            role_arn: None,
        };
        assert_eq!(
            trusts(&account, &other, "sts:AssumeRole", &ctx),
            Trust::Refused
        );
        let named = parse_trust(&format!(
            r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow",
                "Principal":{{"AWS":["{ci}"]}},"Action":"sts:AssumeRole",
                "Condition":{{"StringEquals":{{"sts:ExternalId":"x1"}}}}}}}}"#
        ))
        .unwrap();
        let with_id = Context::default().with("sts:ExternalId", &["x1"]);
        assert_eq!(
            trusts(&named, &asker(ci), "sts:AssumeRole", &with_id),
            Trust::Named
        );
        assert_eq!(
            trusts(&named, &asker(ci), "sts:AssumeRole", &ctx),
            Trust::Refused
        );
        assert!(may_assume(Trust::Named, Decision::ImplicitDeny));
        assert!(!may_assume(Trust::Account, Decision::ImplicitDeny));
        assert!(may_assume(Trust::Account, Decision::Allow));
        // A trust policy names a principal and no resource; an identity policy the reverse.
        assert!(
            parse_trust(r#"{"Statement":{"Effect":"Allow","Action":"sts:AssumeRole"}}"#).is_err()
        );
        assert!(crate::iam::parse(
            r#"{"Statement":{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"}}"#
        )
        .is_err());
        let service = parse_trust(
            r#"{"Statement":{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}}"#,
        )
        .unwrap();
        assert_eq!(
            trusts(&service, &asker(ci), "sts:AssumeRole", &ctx),
            Trust::Refused
        );
    }
}
