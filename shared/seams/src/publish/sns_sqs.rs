//! The publisher on the deployment's SNS and SQS, with the function's own credentials: SNS's
//! Publish is one signed Query call, SQS's GetQueueUrl and SendMessage signed JSON calls, through
//! the clients the clouds' Query APIs use, so no function links an SDK for them.

use super::{PublishError, Publisher};
use crate::cloud::signed::Deployed;
use crate::cloud::CloudError;
use async_trait::async_trait;
use phantom_rules::notification::{parse, Notice, Service};
use std::time::Duration;

/// SNS's and SQS's error codes that say the target is wrong, not that the service failed.
const REFUSALS: [&str; 7] = [
    "NotFound",
    "InvalidParameter",
    "AuthorizationError",
    "AccessDenied",
    "AWS.SimpleQueueService.NonExistentQueue",
    "QueueDoesNotExist",
    "InvalidAddress",
];

/// SNS's API version (its Query protocol).
const SNS_VERSION: &str = "2010-03-31";
/// A publish never holds its caller longer.
const CALL_TIMEOUT: Duration = Duration::from_secs(8);

#[derive(Clone)]
pub struct SnsSqs {
    sns: Sns,
    sqs: crate::queue::sqs::Sqs,
}

/// The deployment's SNS.
#[derive(Clone)]
struct Sns(Deployed);

impl SnsSqs {
    pub fn new(sdk: &aws_config::SdkConfig) -> Self {
        Self {
            sns: Sns(Deployed::new(sdk, "sns", SNS_VERSION, CALL_TIMEOUT)),
            sqs: crate::queue::sqs::Sqs::new(sdk),
        }
    }
}

impl Sns {
    /// One Publish, signed with the credentials as they are now.
    async fn publish(&self, notice: &Notice, fifo: bool) -> Result<(), PublishError> {
        let client = self
            .0
            .client()
            .await
            .map_err(|e| PublishError::Unavailable(format!("{}: {}", e.code, e.message)))?;
        let mut params = vec![
            ("Action".to_string(), "Publish".to_string()),
            ("TopicArn".to_string(), notice.target.clone()),
            ("Message".to_string(), notice.body.clone()),
        ];
        if let Some(subject) = &notice.subject {
            params.push(("Subject".to_string(), subject.clone()));
        }
        // A FIFO topic wants a group and a deduplication id: the notice's own id makes a message
        // sent twice (a crash between sending and forgetting it) one.
        if fifo {
            params.push(("MessageGroupId".to_string(), "autoscaling".to_string()));
            params.push(("MessageDeduplicationId".to_string(), notice.id.clone()));
        }
        client.call(&params).await.map(|_| ()).map_err(refusal)
    }
}

/// SNS's or SQS's error as a publish error: refused if the service named the target wrong.
fn refusal(e: CloudError) -> PublishError {
    let text = format!("{}: {}", e.code, e.message);
    if REFUSALS.contains(&e.code.as_str()) {
        PublishError::Refused(text)
    } else {
        PublishError::Unavailable(text)
    }
}

#[async_trait]
impl Publisher for SnsSqs {
    async fn publish(&self, notice: &Notice) -> Result<(), PublishError> {
        // The target's region was checked when it was put.
        let t = parse(&notice.target, true).map_err(|e| PublishError::Refused(e.to_string()))?;
        // A FIFO topic or queue wants a group and a deduplication id (the notice's own id).
        let fifo = t.name.ends_with(".fifo");
        match t.service {
            Service::Sns => self.sns.publish(notice, fifo).await,
            Service::Sqs => {
                let found = self.sqs.call(
                    "GetQueueUrl",
                    serde_json::json!({"QueueName": t.name, "QueueOwnerAWSAccountId": t.account}),
                );
                let found = found.await.map_err(refusal)?;
                let url = found["QueueUrl"]
                    .as_str()
                    .ok_or_else(|| PublishError::Unavailable("GetQueueUrl gave no URL".into()))?;
                let mut input = serde_json::json!({"QueueUrl": url, "MessageBody": notice.body});
                if fifo {
                    input["MessageGroupId"] = "autoscaling".into();
                    input["MessageDeduplicationId"] = notice.id.clone().into();
                }
                self.sqs
                    .call("SendMessage", input)
                    .await
                    .map(|_| ())
                    .map_err(refusal)
            }
        }
    }
}
