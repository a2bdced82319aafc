//! Users, their access keys, and the verified caller a request acts for.

use super::limits::Limits;

/// The verified caller. Every key of the caller's resources starts with `user`.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    pub user: String,
    pub account_id: String,
    /// Its request limits, if an administrator set them (None: the deployment's).
    pub limits: Option<Limits>,
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
}
