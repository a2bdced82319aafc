//! Plain data that the store, the clouds and the pure rules share. It imports no other module of
//! the crate, so every layer above can use it without reaching into another layer.

pub mod activity;
pub mod cloud;
pub mod group;
pub mod hold;
pub mod instance;
pub mod record;

/// A value the domain's rules refuse, with the reason in AWS's words (a ValidationError to an API
/// caller: `error.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
