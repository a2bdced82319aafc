//! The `health-check` Lambda function, run by a schedule (the event's content is not used): fires
//! the scheduled actions that are due and puts one sweep message per (user, cloud) with groups on
//! the work queue.

use lambda_runtime::{service_fn, Error, LambdaEvent};

#[tokio::main]
async fn main() -> Result<(), Error> {
    phantom::logging::init();
    let h: &'static health_check::HealthCheck =
        Box::leak(Box::new(health_check::HealthCheck::from_env().await?));
    lambda_runtime::run(service_fn(
        move |_event: LambdaEvent<serde::de::IgnoredAny>| async move {
            let report = h.run().await?;
            Ok::<_, Error>(report)
        },
    ))
    .await
}
