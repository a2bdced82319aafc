//! IAM's identities inside an account: their ids, and the quotas and checks IAM keeps on them.

use phantom_model::iam::IamUser;
use std::collections::BTreeMap;

/// Access keys an IAM user may have: two, so a key is rotated by adding the new one first.
pub const KEYS_PER_USER: usize = 2;

/// The characters (whitespace not counted) all of a user's inline policies may hold, IAM's quota.
pub const INLINE_POLICY_CHARS: usize = 2048;

/// `AIDA` + 17 characters, the shape of an IAM user's id.
pub fn new_user_id() -> String {
    format!(
        "AIDA{}",
        crate::identity::random_from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 17)
    )
}

/// A path as IAM takes it: `/` or `/division/team/`.
pub fn check_path(path: &str) -> Result<(), String> {
    if path.starts_with('/') && path.ends_with('/') && !path.contains("//") {
        Ok(())
    } else {
        Err(format!(
            "The specified value for path is invalid. It must begin and end with / and contain only alphanumeric characters and/or / characters. Got: {path}"
        ))
    }
}

/// IAM's quota on a user's inline policies, checked as the set would be after a put.
pub fn check_inline_size(policies: &BTreeMap<String, String>) -> Result<(), String> {
    let used: usize = policies
        .values()
        .map(|p| p.chars().filter(|c| !c.is_whitespace()).count())
        .sum();
    if used > INLINE_POLICY_CHARS {
        return Err(format!(
            "Maximum policy size of {INLINE_POLICY_CHARS} bytes exceeded for user"
        ));
    }
    Ok(())
}

/// What stops a user's deletion, in IAM's words (DeleteConflict).
pub fn delete_conflict(u: &IamUser) -> Option<String> {
    if !u.keys.is_empty() {
        return Some("Cannot delete entity, must delete access keys first.".into());
    }
    if !u.policies.is_empty() {
        return Some("Cannot delete entity, must delete policies first.".into());
    }
    if !u.attached.is_empty() {
        return Some("Cannot delete entity, must detach all policies first.".into());
    }
    None
}

/// A managed policy keeps at most five versions, as IAM's.
pub const MAX_VERSIONS: usize = 5;

/// Managed policies attached to one user, IAM's default quota.
pub const POLICIES_PER_USER: usize = 10;

/// Identities one managed policy is attached to at most: a new default version rewrites each
/// one's copy (and its keys') in one transaction, which holds 100 items. IAM sets no such bound.
pub const ATTACHMENTS: usize = 30;

/// The characters (whitespace not counted) a managed policy's document may hold, IAM's quota.
pub const MANAGED_POLICY_CHARS: usize = 6144;

/// `ANPA` + 17 characters, the shape of a managed policy's id.
pub fn new_policy_id() -> String {
    format!(
        "ANPA{}",
        crate::identity::random_from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 17)
    )
}

/// IAM's quota on a managed policy's document.
pub fn check_managed_size(document: &str) -> Result<(), String> {
    let used = document.chars().filter(|c| !c.is_whitespace()).count();
    if used > MANAGED_POLICY_CHARS {
        return Err(format!(
            "Cannot exceed quota for PolicySize: {MANAGED_POLICY_CHARS}"
        ));
    }
    Ok(())
}

/// A managed policy's ARN read: the account id, path and name
/// (`arn:aws:iam::<account>:policy<path><name>`).
pub fn parse_policy_arn(arn: &str) -> Option<(&str, &str, &str)> {
    let rest = arn.strip_prefix("arn:aws:iam::")?;
    let (account, rest) = rest.split_once(':')?;
    let rest = rest.strip_prefix("policy")?;
    let slash = rest.rfind('/')?;
    let (path, name) = (&rest[..=slash], &rest[slash + 1..]);
    (path.starts_with('/') && !name.is_empty()).then_some((account, path, name))
}

/// A role's ARN read: the account id and the role's name
/// (`arn:aws:iam::<account>:role<path><name>`).
pub fn parse_role_arn(arn: &str) -> Option<(&str, &str)> {
    let rest = arn.strip_prefix("arn:aws:iam::")?;
    let (account, rest) = rest.split_once(':')?;
    let rest = rest.strip_prefix("role/")?;
    let name = rest.rsplit('/').next()?;
    (!name.is_empty()).then_some((account, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_paths_and_quotas() {
        let id = new_user_id();
        assert_eq!(id.len(), 21);
        assert!(id.starts_with("AIDA"));
        assert!(check_path("/").is_ok());
        assert!(check_path("/ops/ci/").is_ok());
        assert!(check_path("ops").is_err());
        let mut p = BTreeMap::from([("a".to_string(), "x ".repeat(2048))]);
        assert!(check_inline_size(&p).is_ok(), "whitespace is not counted");
        p.insert("b".into(), "y".into());
        assert!(check_inline_size(&p).is_err());
        assert_eq!(
            parse_policy_arn("arn:aws:iam::111122223333:policy/ops/scaling"),
            Some(("111122223333", "/ops/", "scaling"))
        );
        assert_eq!(
            parse_policy_arn("arn:aws:iam::aws:policy/ReadOnlyAccess"),
            Some(("aws", "/", "ReadOnlyAccess"))
        );
        assert_eq!(parse_policy_arn("arn:aws:iam::1:user/x"), None);
        assert!(new_policy_id().starts_with("ANPA"));
        assert_eq!(
            parse_role_arn("arn:aws:iam::111122223333:role/ops/deployer"),
            Some(("111122223333", "deployer"))
        );
        assert_eq!(parse_role_arn("arn:aws:iam::1:user/x"), None);
    }
}
