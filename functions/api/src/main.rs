//! The `api` Lambda function behind API Gateway.

use lambda_http::{service_fn, Error, Request};

#[tokio::main]
async fn main() -> Result<(), Error> {
    phantom_seams::logging::init();
    let ops = phantom_metrics::ops::namespace_for_life()?;
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
