//! The Lambda adapter: API Gateway's proxy event, as lambda_http hands it over, to `App::handle`,
//! and the answer back. The signature covers the Host and the path the client used: the Host
//! header is the client's; the path is the event's `requestContext.path` (`/Prod/...` on the
//! execute-api domain, the path as sent on a custom domain, base path included). lambda_http's
//! own URI puts the stage in front of `path`, which is right on the execute-api domain only: on a
//! custom domain the client never sent the stage.

use crate::{App, HttpRequest};
use lambda_http::request::RequestContext;
use lambda_http::{Body, Error, Request, RequestExt, Response};

pub use lambda_http;

pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Error> {
    let path_and_query = client_path(&req);
    let out = app
        .handle(HttpRequest {
            method: req.method().as_str(),
            path_and_query: &path_and_query,
            headers: req.headers(),
            body: req.body().as_ref(),
            source_ip: source_ip(&req),
            // API Gateway's endpoints are HTTPS only.
            secure: true,
        })
        .await;
    let binary = !out.content_type.starts_with("text/") && !out.content_type.contains("json");
    Ok(out.into_http().map(|body| {
        let body = body.into_owned();
        // CBOR goes back base64-encoded (API Gateway's BinaryMediaTypes); text stays text.
        match String::from_utf8(body) {
            Ok(text) if !binary => Body::Text(text),
            Ok(text) => Body::Binary(text.into_bytes()),
            Err(e) => Body::Binary(e.into_bytes()),
        }
    }))
}

/// The path and query the client sent. REST APIs' events always carry `requestContext.path`;
/// other events (an HTTP API's) have lambda_http's URI, which is their raw path.
fn client_path(req: &Request) -> String {
    let path = match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV1(c)) => c.path.clone(),
        _ => None,
    }
    .unwrap_or_else(|| req.uri().path().to_string());
    match req.uri().query() {
        Some(q) => format!("{path}?{q}"),
        None => path,
    }
}

/// The caller's address, as API Gateway saw it.
fn source_ip(req: &Request) -> Option<std::net::IpAddr> {
    let ip = match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV1(c)) => c.identity.source_ip.clone(),
        Some(RequestContext::ApiGatewayV2(c)) => c.http.source_ip.clone(),
        _ => None,
    };
    ip.and_then(|ip| ip.parse().ok())
}
