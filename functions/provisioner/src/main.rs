//! The `provisioner` Lambda function: an SQS event source with partial batch failures.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use lambda_runtime::{service_fn, Error, LambdaEvent};
use phantom_seams::queue::Received;

#[tokio::main]
async fn main() -> Result<(), Error> {
    phantom_seams::logging::init();
    let ops = phantom_metrics::ops::namespace_for_life()?;
    let seams = phantom_seams::wiring::Seams::from_env().await?;
    let clouds = std::sync::Arc::new(phantom_seams::cloud::ec2_cloud::Ec2Clouds::default());
    let p: &'static provisioner::Provisioner =
        Box::leak(Box::new(provisioner::Provisioner::new(&seams, clouds)));
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        let messages = event
            .payload
            .records
            .into_iter()
            // SQS gives every message an id, a receipt, a body and a SentTimestamp; one without is
            // unreadable, as a body that is not a message is (logged and dropped).
            .filter_map(|m| {
                let due = m
                    .message_attributes
                    .get(phantom_seams::queue::DUE_ATTRIBUTE)
                    .and_then(|a| a.string_value.clone());
                let sent = m.attributes.get("SentTimestamp").cloned();
                let (Some(id), Some(receipt), Some(body)) =
                    (m.message_id.clone(), m.receipt_handle, m.body)
                else {
                    tracing::error!(message_id = ?m.message_id, "a message without an id, a receipt handle or a body dropped");
                    return None;
                };
                match Received::from_sqs(id, receipt, body, due.as_deref(), sent.as_deref()) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        tracing::error!(message_id = ?m.message_id, error = e, "an unreadable message dropped");
                        None
                    }
                }
            })
            .collect();
        let mut response = SqsBatchResponse::default();
        for id in p.handle_batch(messages).await {
            response.add_failure(id);
        }
        // This instance's operating metrics, once a minute.
        phantom_metrics::ops::flush_emf(ops, phantom_model::time::now_ms());
        Ok::<_, Error>(response)
    }))
    .await
}
