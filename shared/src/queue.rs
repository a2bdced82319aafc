//! The work queue (SQS): reconcile messages for the provisioner. Messages say only which group to
//! look at; the provisioner reads the rest, so a duplicate or a late one does no harm.

use aws_sdk_sqs::error::DisplayErrorContext;
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use serde::{Deserialize, Serialize};

pub const QUEUE_URL_ENV: &str = "PHANTOM_WORK_QUEUE_URL";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconcile {
    pub owner: String,
    pub group: String,
    /// What asked for it (for the logs).
    pub reason: String,
}

#[derive(Clone)]
pub struct Queue {
    sqs: aws_sdk_sqs::Client,
    url: String,
}

impl Queue {
    pub fn new(sdk: &aws_config::SdkConfig, url: impl Into<String>) -> Self {
        Self {
            sqs: aws_sdk_sqs::Client::new(sdk),
            url: url.into(),
        }
    }

    pub fn from_env(sdk: &aws_config::SdkConfig) -> Option<Self> {
        std::env::var(QUEUE_URL_ENV)
            .ok()
            .filter(|u| !u.is_empty())
            .map(|u| Self::new(sdk, u))
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn client(&self) -> &aws_sdk_sqs::Client {
        &self.sqs
    }

    /// Sends one message, visible after `delay_secs` (SQS allows up to 900).
    pub async fn send(&self, msg: &Reconcile, delay_secs: i32) -> Result<(), String> {
        self.sqs
            .send_message()
            .queue_url(&self.url)
            .message_body(serde_json::to_string(msg).expect("serializable"))
            .delay_seconds(delay_secs.clamp(0, 900))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| DisplayErrorContext(e).to_string())
    }

    /// Sends many, ten to a request.
    pub async fn send_all(&self, msgs: &[Reconcile]) -> Result<(), String> {
        for chunk in msgs.chunks(10) {
            let entries: Vec<SendMessageBatchRequestEntry> = chunk
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    SendMessageBatchRequestEntry::builder()
                        .id(i.to_string())
                        .message_body(serde_json::to_string(m).expect("serializable"))
                        .build()
                        .expect("id and body are set")
                })
                .collect();
            let out = self
                .sqs
                .send_message_batch()
                .queue_url(&self.url)
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|e| DisplayErrorContext(e).to_string())?;
            if !out.failed().is_empty() {
                return Err(format!("{} messages not sent", out.failed().len()));
            }
        }
        Ok(())
    }
}
