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
    None
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
    }
}
