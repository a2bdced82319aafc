//! Users, their access keys, and the verified caller a request acts for.

use super::iam::Identity;
use super::limits::Limits;

/// The verified caller. Every key of the caller's resources starts with `user`.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    pub user: String,
    pub account_id: String,
    /// Its request limits, if an administrator set them (None: the deployment's).
    pub limits: Option<Limits>,
    /// The IAM user the key belongs to, with its policies (None: the account's root).
    pub identity: Option<Identity>,
    /// The key the request was signed with (None: a webhook's, which acts for the account).
    pub access_key_id: Option<String>,
    /// The session the request was signed in, if it was (the key is then its `ASIA...` one).
    pub session: Option<Session>,
}

/// What the store holds for an access key id.
#[derive(Debug, Clone)]
pub struct AccessKey {
    pub access_key_id: String,
    pub secret: String,
    pub user: String,
    pub account_id: String,
    /// The user's request limits, kept with the key so a request reads them with it (None: the
    /// deployment's, `phantom_rules::throttle::DEFAULT`).
    pub limits: Option<Limits>,
    /// The IAM user it belongs to, with its policies (None: the account's root).
    pub identity: Option<Identity>,
    /// False once UpdateAccessKey made it Inactive: nothing it signs is accepted.
    pub active: bool,
    /// When it was last used, recorded at most once an hour (GetAccessKeyLastUsed).
    pub last_used: Option<KeyUse>,
    /// STS's short-lived credentials: the session it is (None: a long-term key).
    pub session: Option<Session>,
}

/// A session's key (`ASIA...`), as GetSessionToken issues it: signed requests must carry its
/// token, and it acts as the key it was issued to, until it expires.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Session {
    /// The SHA-256 (hex) of its session token (the token itself is never stored).
    pub token_sha256: String,
    /// When it expires (Unix ms).
    pub expires_ms: i64,
    /// The key it was issued to: GetSessionToken's session acts with that key's identity and
    /// policies; AssumeRole's records who assumed the role.
    pub parent: String,
    /// AssumeRole's session: the role it acts as (its policies as they were when it began,
    /// and the session policy).
    #[serde(default)]
    pub role: Option<Identity>,
}

/// A key's last use, as GetAccessKeyLastUsed answers it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeyUse {
    pub at: String,
    pub service: String,
    pub region: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub name: String,
    pub account_id: String,
    /// The user's one access key (the last one, once disabled).
    pub access_key_id: String,
    pub created: String,
    /// Reaches the administrators' operations of Phantom's API.
    pub admin: bool,
    /// Its access key is deleted: nothing it signs is accepted until the key is rotated.
    pub disabled: bool,
    /// Request limits an administrator set (None: the deployment's).
    pub limits: Option<Limits>,
    /// The SHA-256 (hex) of the password its Prometheus scrapes its group metrics with (none:
    /// no scrape is accepted).
    pub scrape_sha256: Option<String>,
    /// The root's second access key, made with IAM's CreateAccessKey (two a root, as an IAM
    /// user's: a key is rotated by adding the new one first).
    pub second_key: Option<String>,
}
