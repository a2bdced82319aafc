//! The publisher on the deployment's SNS and SQS, with the function's own credentials.

use super::{PublishError, Publisher};
use async_trait::async_trait;
use aws_sdk_sns::error::{DisplayErrorContext, ProvideErrorMetadata};
use phantom_rules::notification::{parse, Notice, Service};

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

#[derive(Clone)]
pub struct SnsSqs {
    sns: aws_sdk_sns::Client,
    sqs: aws_sdk_sqs::Client,
}

impl SnsSqs {
    pub fn new(sdk: &aws_config::SdkConfig) -> Self {
        Self {
            sns: aws_sdk_sns::Client::new(sdk),
            sqs: aws_sdk_sqs::Client::new(sdk),
        }
    }
}

/// An SDK error as a publish error: refused if the service named the target wrong.
fn error<E: ProvideErrorMetadata + std::error::Error + 'static, R: std::fmt::Debug>(
    e: aws_smithy_runtime_api::client::result::SdkError<E, R>,
) -> PublishError {
    let refused = e.code().is_some_and(|c| REFUSALS.contains(&c));
    let text = DisplayErrorContext(e).to_string();
    if refused {
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
        // A FIFO topic or queue wants a group and a deduplication id: the notice's own id makes a
        // message sent twice (a crash between sending and forgetting it) one.
        let fifo = t.name.ends_with(".fifo");
        match t.service {
            Service::Sns => self
                .sns
                .publish()
                .topic_arn(&notice.target)
                .message(&notice.body)
                .set_subject(notice.subject.clone())
                .set_message_group_id(fifo.then(|| "autoscaling".to_string()))
                .set_message_deduplication_id(fifo.then(|| notice.id.clone()))
                .send()
                .await
                .map(|_| ())
                .map_err(error),
            Service::Sqs => {
                let url = self
                    .sqs
                    .get_queue_url()
                    .queue_name(&t.name)
                    .queue_owner_aws_account_id(&t.account)
                    .send()
                    .await
                    .map_err(error)?
                    .queue_url
                    .ok_or_else(|| PublishError::Unavailable("GetQueueUrl gave no URL".into()))?;
                self.sqs
                    .send_message()
                    .queue_url(url)
                    .message_body(&notice.body)
                    .set_message_group_id(fifo.then(|| "autoscaling".to_string()))
                    .set_message_deduplication_id(fifo.then(|| notice.id.clone()))
                    .send()
                    .await
                    .map(|_| ())
                    .map_err(error)
            }
        }
    }
}
