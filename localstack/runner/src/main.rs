//! The local runner: the same `api` handler as on Lambda, served over HTTP on this machine.
//!
//! Listens on PHANTOM_BIND (default 127.0.0.1:4580). Bodies over 10 MiB (API Gateway's limit) are
//! refused with 413.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;

const MAX_BODY: usize = 10 * 1024 * 1024;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    phantom::logging::init();
    let bind = std::env::var("PHANTOM_BIND").unwrap_or_else(|_| "127.0.0.1:4580".into());
    let app = Arc::new(api::App::from_env().await);
    let listener = TcpListener::bind(&bind).await?;
    tracing::info!(
        bind,
        table = app.store.table(),
        "phantom-local serving the api"
    );
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = shutdown() => return Ok(()),
        };
        let app = app.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| serve(app.clone(), req));
            if let Err(e) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %e, "connection closed");
            }
        });
    }
}

async fn shutdown() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
    tracing::info!("phantom-local stopping");
}

async fn serve(
    app: Arc<api::App>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return Ok(Response::builder()
                .status(413)
                .body(Full::new(Bytes::from_static(b"Request body too large")))
                .expect("a valid response"));
        }
    };
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let out = app
        .handle(api::HttpRequest {
            method: parts.method.as_str(),
            path_and_query,
            headers: &parts.headers,
            body: &body,
        })
        .await;
    Ok(Response::builder()
        .status(out.status)
        .header("content-type", api::CONTENT_TYPE)
        .body(Full::new(Bytes::from(out.body)))
        .expect("a valid response"))
}
