//! The `api` Lambda function behind API Gateway.

use lambda_http::{service_fn, Error, Request};

#[tokio::main]
async fn main() -> Result<(), Error> {
    phantom::logging::init();
    let app: &'static api::App = Box::leak(Box::new(api::App::from_env().await?));
    lambda_http::run(service_fn(move |req: Request| async move {
        let answer = api::lambda::handle(app, req).await;
        // This instance's operating metrics, once a minute.
        phantom::ops::flush_emf(phantom::time::now_ms());
        answer
    }))
    .await
}
