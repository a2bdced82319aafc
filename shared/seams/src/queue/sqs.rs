//! The work queue on SQS.

use super::{body, Work, WorkQueue, DUE_ATTRIBUTE, QUEUE_URL_ENV};
use async_trait::async_trait;
use aws_sdk_sqs::error::DisplayErrorContext;
use aws_sdk_sqs::types::{MessageAttributeValue, SendMessageBatchRequestEntry};

/// An SQS client whose calls `metrics` counts.
pub(crate) fn counted_client(sdk: &aws_config::SdkConfig) -> aws_sdk_sqs::Client {
    let config = aws_sdk_sqs::config::Builder::from(sdk)
        .interceptor(crate::metrics::Counter::Sqs)
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

#[derive(Clone)]
pub struct SqsQueue {
    sqs: aws_sdk_sqs::Client,
    url: String,
}

impl SqsQueue {
    pub fn new(sdk: &aws_config::SdkConfig, url: impl Into<String>) -> Self {
        Self {
            sqs: counted_client(sdk),
            url: url.into(),
        }
    }

    /// The queue named by PHANTOM_WORK_QUEUE_URL, if set.
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
}

#[async_trait]
impl WorkQueue for SqsQueue {
    async fn send(&self, msg: &Work, delay_secs: i32) -> Result<(), String> {
        self.sqs
            .send_message()
            .queue_url(&self.url)
            .message_body(body(msg))
            .delay_seconds(delay_secs.clamp(0, 900))
            .message_attributes(DUE_ATTRIBUTE, due(delay_secs))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| DisplayErrorContext(e).to_string())
    }

    async fn backlog(&self) -> Result<u64, String> {
        use aws_sdk_sqs::types::QueueAttributeName;
        let out = self
            .sqs
            .get_queue_attributes()
            .queue_url(&self.url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .send()
            .await
            .map_err(|e| DisplayErrorContext(e).to_string())?;
        let n = out
            .attributes()
            .and_then(|a| a.get(&QueueAttributeName::ApproximateNumberOfMessages))
            .ok_or("the queue did not say how many messages it holds")?;
        n.parse()
            .map_err(|_| format!("ApproximateNumberOfMessages is not a number: {n}"))
    }

    /// Ten to a request, up to `SEND_CONCURRENCY` requests at a time (a sweep fans out thousands).
    async fn send_all(&self, msgs: &[Work]) -> Result<(), String> {
        use futures::stream::{self, StreamExt, TryStreamExt};
        let batches: Vec<_> = msgs
            .chunks(10)
            .map(|chunk| Box::pin(self.send_batch(chunk)))
            .collect();
        stream::iter(batches)
            .buffer_unordered(SEND_CONCURRENCY)
            .try_collect::<()>()
            .await
    }
}

/// The due attribute of a message sent now with this delay.
fn due(delay_secs: i32) -> MessageAttributeValue {
    let due = phantom_model::time::now_ms() + i64::from(delay_secs.clamp(0, 900)) * 1000;
    MessageAttributeValue::builder()
        .data_type("Number")
        .string_value(due.to_string())
        .build()
        .expect("the data type is set")
}

/// SendMessageBatch requests in flight at once in `send_all`.
const SEND_CONCURRENCY: usize = 16;

impl SqsQueue {
    async fn send_batch(&self, chunk: &[Work]) -> Result<(), String> {
        let entries: Vec<SendMessageBatchRequestEntry> = chunk
            .iter()
            .enumerate()
            .map(|(i, m)| {
                SendMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .message_body(body(m))
                    .message_attributes(DUE_ATTRIBUTE, due(0))
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
        Ok(())
    }
}
