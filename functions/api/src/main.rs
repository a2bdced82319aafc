//! The `api` Lambda function behind API Gateway.

use lambda_http::{service_fn, Error, Request};

#[tokio::main]
async fn main() -> Result<(), Error> {
    phantom_seams::logging::init();
    // Where this instance's operating metrics go (checked before any work).
    let ops: Option<&'static str> =
        phantom_metrics::ops::namespace_from_env()?.map(|ns| &*Box::leak(ns.into_boxed_str()));
    // The real adapters, built once for the instance's life.
    let seams = phantom_seams::wiring::Seams::from_env().await?;
    let app: &'static api::App = Box::leak(Box::new(api::App::new(&seams)));
    lambda_http::run(service_fn(move |req: Request| async move {
        let answer = api::lambda::handle(app, req).await;
        // This instance's operating metrics, once a minute.
        phantom_metrics::ops::flush_emf(ops, phantom_model::time::now_ms());
        answer
    }))
    .await
}
