//! STS's short-lived credentials: how long a session may last, its key and token, and whether a
//! request's token opens it.

use phantom_model::user::Session;
use sha2::{Digest, Sha256};

/// GetSessionToken's durations (seconds), as STS's: an IAM user's session 15 minutes to 36 hours
/// (12 by default), the root's at most an hour (and an hour by default).
pub const MIN_SECS: i64 = 900;
pub const USER_MAX_SECS: i64 = 129_600;
pub const USER_DEFAULT_SECS: i64 = 43_200;
pub const ROOT_MAX_SECS: i64 = 3_600;

/// The session's length for `asked` seconds (None: the default), for a root or an IAM user.
pub fn duration_secs(asked: Option<i64>, root: bool) -> Result<i64, String> {
    let (max, default) = match root {
        true => (ROOT_MAX_SECS, ROOT_MAX_SECS),
        false => (USER_MAX_SECS, USER_DEFAULT_SECS),
    };
    match asked {
        None => Ok(default),
        Some(s) if (MIN_SECS..=max).contains(&s) => Ok(s),
        Some(s) => Err(format!(
            "The requested DurationSeconds exceeds the allowed range: {s} is not between {MIN_SECS} and {max}."
        )),
    }
}

/// A role's longest session (`MaxSessionDuration`): an hour to 12 hours, an hour by default.
pub const ROLE_MIN_MAX_SECS: i64 = 3_600;
pub const ROLE_MAX_MAX_SECS: i64 = 43_200;

/// A role's `MaxSessionDuration` as CreateRole takes it.
pub fn role_max_secs(asked: Option<i64>) -> Result<i64, String> {
    match asked {
        None => Ok(ROLE_MIN_MAX_SECS),
        Some(s) if (ROLE_MIN_MAX_SECS..=ROLE_MAX_MAX_SECS).contains(&s) => Ok(s),
        Some(s) => Err(format!(
            "1 validation error detected: Value '{s}' at 'maxSessionDuration' failed to satisfy constraint: Member must have value between {ROLE_MIN_MAX_SECS} and {ROLE_MAX_MAX_SECS}"
        )),
    }
}

/// An AssumeRole session's length: 15 minutes to the role's maximum (an hour by default), at
/// most an hour when a role's session assumes another (role chaining), as STS's.
pub fn role_session_secs(asked: Option<i64>, role_max: i64, chained: bool) -> Result<i64, String> {
    let max = if chained {
        role_max.min(3_600)
    } else {
        role_max
    };
    let secs = asked.unwrap_or(3_600.min(max));
    if (MIN_SECS..=max).contains(&secs) {
        return Ok(secs);
    }
    Err(format!(
        "The requested DurationSeconds exceeds the MaxSessionDuration set for this role: {secs} is not between {MIN_SECS} and {max}."
    ))
}

/// `AROA` + 17 characters, the shape of a role's id.
pub fn new_role_id() -> String {
    format!(
        "AROA{}",
        crate::identity::random_from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 17)
    )
}

/// `ASIA` + 16 characters, the shape of a session's key id.
pub fn new_key_id() -> String {
    format!(
        "ASIA{}",
        crate::identity::random_from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    )
}

/// A session token: 160 random characters (only its hash is kept).
pub fn new_token() -> String {
    crate::identity::random_from(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        160,
    )
}

pub fn token_sha256(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Why a session's request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No token, or not its token: InvalidClientTokenId.
    Invalid,
    /// Its time is up: ExpiredToken.
    Expired,
}

/// Whether `token` (the request's `X-Amz-Security-Token`) opens `s` at `now_ms`.
pub fn check(s: &Session, token: Option<&str>, now_ms: i64) -> Result<(), Refused> {
    match token {
        Some(t) if token_sha256(t) == s.token_sha256 => {}
        _ => return Err(Refused::Invalid),
    }
    if now_ms >= s.expires_ms {
        return Err(Refused::Expired);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_last_as_sts_says_and_open_with_their_token_alone() {
        assert_eq!(duration_secs(None, false), Ok(43_200));
        assert_eq!(duration_secs(None, true), Ok(3_600));
        assert!(duration_secs(Some(7_200), true).is_err());
        assert!(duration_secs(Some(899), false).is_err());
        assert_eq!(duration_secs(Some(129_600), false), Ok(129_600));
        let token = new_token();
        let s = Session {
            token_sha256: token_sha256(&token),
            expires_ms: 10_000,
            parent: "PKIAPARENT".into(),
            role: None,
        };
        assert_eq!(check(&s, Some(&token), 9_999), Ok(()));
        assert_eq!(check(&s, Some(&token), 10_000), Err(Refused::Expired));
        assert_eq!(check(&s, Some("other"), 0), Err(Refused::Invalid));
        assert_eq!(check(&s, None, 0), Err(Refused::Invalid));
        assert!(new_key_id().starts_with("ASIA") && new_key_id().len() == 20);
        assert_eq!(role_max_secs(None), Ok(3_600));
        assert!(role_max_secs(Some(50_000)).is_err());
        assert_eq!(role_session_secs(None, 43_200, false), Ok(3_600));
        assert_eq!(role_session_secs(Some(7_200), 43_200, false), Ok(7_200));
        assert!(
            role_session_secs(Some(7_200), 43_200, true).is_err(),
            "chained: an hour"
        );
        assert!(role_session_secs(Some(7_200), 3_600, false).is_err());
    }
}
