//! The `provisioner` Lambda function: an SQS event source with partial batch failures.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use lambda_runtime::{service_fn, Error, LambdaEvent};

#[tokio::main]
async fn main() -> Result<(), Error> {
    phantom::logging::init();
    let p: &'static provisioner::Provisioner =
        Box::leak(Box::new(provisioner::Provisioner::from_env().await?));
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        let messages = event
            .payload
            .records
            .into_iter()
            // SQS gives every message an id and a body; one without is unreadable, as a body
            // that is not a message is (logged and dropped).
            .filter_map(|m| match (m.message_id, m.body) {
                (Some(id), Some(body)) => Some((id, body)),
                (id, _) => {
                    tracing::error!(message_id = ?id, "a message without an id or a body dropped");
                    None
                }
            })
            .collect();
        let mut response = SqsBatchResponse::default();
        for id in p.handle_batch(messages).await {
            response.add_failure(id);
        }
        // This instance's operating metrics, once a minute.
        phantom::ops::flush_emf(phantom::time::now_ms());
        Ok::<_, Error>(response)
    }))
    .await
}
