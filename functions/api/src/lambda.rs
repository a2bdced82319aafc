//! The Lambda adapter: API Gateway's proxy event, as lambda_http hands it over, to `App::handle`,
//! and the answer back. lambda_http rebuilds the URI from the event: the Host header the client
//! used and the path with the stage in front (`/Prod/`), which is what the client signed.

use crate::{App, HttpRequest};
use lambda_http::{Body, Error, Request, Response};

pub use lambda_http;

pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Error> {
    let path_and_query = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let out = app
        .handle(HttpRequest {
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
}
