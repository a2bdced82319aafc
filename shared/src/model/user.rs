//! Users, their access keys, and the verified caller a request acts for.

/// The verified caller. Every key of the caller's resources starts with `user`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user: String,
    pub account_id: String,
}

/// What the store holds for an access key id.
#[derive(Debug, Clone)]
pub struct AccessKey {
    pub access_key_id: String,
    pub secret: String,
    pub user: String,
    pub account_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
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
}
