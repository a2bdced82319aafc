//! Phantom's model, the bottom layer: plain data that the wire, the pure rules, the store and
//! the clouds share (each action's request and answer, groups, instances, clouds, users), the
//! domain's refusal, and timestamps as the Query protocol writes them. It depends on no other
//! crate of Phantom's and on no AWS, HTTP or async crate.

pub mod activity;
pub mod backoff;
pub mod cloud;
pub mod cloudwatch;
pub mod group;
pub mod hold;
pub mod iam;
pub mod instance;
pub mod instance_type;
pub mod launch_config;
pub mod launch_template;
pub mod limits;
pub mod notification;
pub mod predictive;
pub mod pulse;
pub mod record;
pub mod refresh;
pub mod request;
pub mod response;
pub mod status;
pub mod sync_launch;
pub mod time;
pub mod tracking;
pub mod traffic;
pub mod trail;
pub mod user;
pub mod warm_pool;

/// What the domain's rules refuse, with the reason in AWS's words. It becomes the error a client
/// sees in one place (`error.rs`): a ValidationError, or LimitExceeded for a quota.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Invalid(String),
    OverLimit(String),
}

impl Refusal {
    pub fn invalid(why: impl Into<String>) -> Self {
        Self::Invalid(why.into())
    }

    pub fn over_limit(why: impl Into<String>) -> Self {
        Self::OverLimit(why.into())
    }

    pub fn message(&self) -> &str {
        match self {
            Self::Invalid(m) | Self::OverLimit(m) => m,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

/// What a rule gives: its value, or why it refuses.
pub type Checked<T> = Result<T, Refusal>;
