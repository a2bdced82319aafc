//! The work queue on SQS, and the deployment's SQS as the functions call it: each call one signed
//! request of SQS's JSON protocol (AWS JSON 1.0) through the clouds' signed client, so no function
//! links aws-sdk-sqs (the local runner's event sources, which receive and delete, do).

use super::{body, Work, WorkQueue, DUE_ATTRIBUTE, QUEUE_URL_ENV};
use crate::cloud::signed::Deployed;
use crate::cloud::CloudError;
use async_trait::async_trait;
use serde_json::{json, Value};
use std::time::Duration;

/// A call to SQS never holds its caller longer.
const SQS_TIMEOUT: Duration = Duration::from_secs(8);

/// The deployment's SQS with the function's credentials.
#[derive(Clone)]
pub struct Sqs(Deployed);

impl Sqs {
    pub fn new(sdk: &aws_config::SdkConfig) -> Self {
        Self(Deployed::new(sdk, "sqs", "", SQS_TIMEOUT))
    }

    /// `AmazonSQS.<action>` with this input: SQS's answer, or its error in its words.
    pub async fn call(&self, action: &str, input: Value) -> Result<Value, CloudError> {
        let call = async {
            let client = self.0.client().await?;
            client
                .json("1.0", &format!("AmazonSQS.{action}"), &input)
                .await
        };
        crate::metrics::timed(crate::metrics::Counter::Sqs, call).await
    }
}

/// An SQS error as the queue's callers report it.
fn said(e: CloudError) -> String {
    format!("{}: {}", e.code, e.message)
}

#[derive(Clone)]
pub struct SqsQueue {
    sqs: Sqs,
    url: String,
}

impl SqsQueue {
    pub fn new(sdk: &aws_config::SdkConfig, url: impl Into<String>) -> Self {
        Self {
            sqs: Sqs::new(sdk),
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
}

#[async_trait]
impl WorkQueue for SqsQueue {
    async fn send(&self, msg: &Work, delay_secs: i32) -> Result<(), String> {
        let input = json!({
            "QueueUrl": self.url,
            "MessageBody": body(msg),
            "DelaySeconds": delay_secs.clamp(0, 900),
            "MessageAttributes": { DUE_ATTRIBUTE: due(delay_secs) },
        });
        self.sqs
            .call("SendMessage", input)
            .await
            .map(|_| ())
            .map_err(said)
    }

    async fn backlog(&self) -> Result<u64, String> {
        let input = json!({
            "QueueUrl": self.url,
            "AttributeNames": ["ApproximateNumberOfMessages"],
        });
        let out = self
            .sqs
            .call("GetQueueAttributes", input)
            .await
            .map_err(said)?;
        let n = out["Attributes"]["ApproximateNumberOfMessages"]
            .as_str()
            .ok_or("the queue did not say how many messages it holds")?;
        n.parse()
            .map_err(|_| format!("ApproximateNumberOfMessages is not a number: {n}"))
    }

    /// Ten to a request (a provisioner's batch is one).
    async fn hide(&self, receipts: &[String], secs: i32) -> Result<(), String> {
        for chunk in receipts.chunks(10) {
            let entries: Vec<Value> = chunk
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    json!({
                        "Id": i.to_string(),
                        "ReceiptHandle": r,
                        "VisibilityTimeout": secs.clamp(0, 43_200),
                    })
                })
                .collect();
            let input = json!({ "QueueUrl": self.url, "Entries": entries });
            let out = self
                .sqs
                .call("ChangeMessageVisibilityBatch", input)
                .await
                .map_err(said)?;
            if let Some(f) = out["Failed"].as_array().and_then(|f| f.first()) {
                return Err(format!(
                    "{} of {} messages not hidden: {}: {}",
                    out["Failed"].as_array().map_or(0, Vec::len),
                    chunk.len(),
                    f["Code"].as_str().unwrap_or("(no code)"),
                    f["Message"].as_str().unwrap_or("(no message)")
                ));
            }
        }
        Ok(())
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
fn due(delay_secs: i32) -> Value {
    let due = phantom_model::time::now_ms() + i64::from(delay_secs.clamp(0, 900)) * 1000;
    json!({ "DataType": "Number", "StringValue": due.to_string() })
}

/// SendMessageBatch requests in flight at once in `send_all`.
const SEND_CONCURRENCY: usize = 16;

impl SqsQueue {
    async fn send_batch(&self, chunk: &[Work]) -> Result<(), String> {
        let entries: Vec<Value> = chunk
            .iter()
            .enumerate()
            .map(|(i, m)| {
                json!({
                    "Id": i.to_string(),
                    "MessageBody": body(m),
                    "MessageAttributes": { DUE_ATTRIBUTE: due(0) },
                })
            })
            .collect();
        let input = json!({ "QueueUrl": self.url, "Entries": entries });
        let out = self
            .sqs
            .call("SendMessageBatch", input)
            .await
            .map_err(said)?;
        match out["Failed"].as_array().map(Vec::len) {
            Some(n) if n > 0 => Err(format!("{n} messages not sent")),
            _ => Ok(()),
        }
    }
}
