//! The publish seam: sends a notification (`phantom_rules::notification::Notice`) to its SNS topic or SQS
//! queue, both the deployment's own (its region, its emulator locally). `sns_sqs` (SNS's Query API signed by hand,
//! aws-sdk-sqs) and `memory` (feature `memory`: topics and queues it is told of, what each got,
//! crash injection).

pub mod sns_sqs;

#[cfg(any(test, feature = "memory"))]
pub mod memory;

pub use sns_sqs::SnsSqs;

use async_trait::async_trait;
use phantom_rules::notification::Notice;

/// Why a message was not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PublishError {
    /// No such topic or queue (or not one the deployment may send to): the user's to fix.
    #[error("{0}")]
    Refused(String),
    /// The service did not answer, or failed: try again.
    #[error("{0}")]
    Unavailable(String),
}

#[async_trait]
pub trait Publisher: Send + Sync {
    /// Sends `notice` to its target.
    async fn publish(&self, notice: &Notice) -> Result<(), PublishError>;
}
