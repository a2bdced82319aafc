//! The `api` Lambda function behind API Gateway.

use lambda_http::{service_fn, Body, Error, Request, Response};

#[tokio::main]
async fn main() -> Result<(), Error> {
    phantom::logging::init();
    let app: &'static api::App = Box::leak(Box::new(api::App::from_env().await?));
    lambda_http::run(service_fn(move |req: Request| async move {
        let path_and_query = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        let out = app
            .handle(api::HttpRequest {
                method: req.method().as_str(),
                path_and_query: &path_and_query,
                headers: req.headers(),
                body: req.body().as_ref(),
            })
            .await;
        let mut response = Response::builder()
            .status(out.status)
            .header("content-type", out.content_type);
        for (name, value) in out.headers {
            response = response.header(name, value);
        }
        response
            .body(Body::Text(out.body.into_owned()))
            .map_err(Error::from)
    }))
    .await
}
