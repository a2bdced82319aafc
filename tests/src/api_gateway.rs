//! API Gateway in front of the api function, in process: each SDK request becomes the REST API
//! proxy event (payload 1.0) that API Gateway sends Lambda for template.yaml's routes (`/` and
//! `/{proxy+}`, ANY, stage `Prod`), lambda_http parses it, and `api::lambda::handle` answers it
//! as the deployed function does. The event's shape is AWS's documented one
//! (https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html):
//! `path` without the stage, `requestContext.path` and `stage` with it, the client's Host header.

use api::lambda::lambda_http;
use api::App;
use aws_smithy_runtime_api::client::http::{HttpConnector, HttpConnectorFuture};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_types::body::SdkBody;
use std::sync::Arc;

pub use phantom_wire::gateway::{rest_event as event, API_ID};

/// The URL clients use: the default execute-api domain and the stage.
pub fn url(stage: &str) -> String {
    format!("https://{API_ID}.execute-api.us-east-1.amazonaws.com/{stage}/")
}

/// The HTTP client of an SDK configured with `url(..)` or a custom domain's URL: API Gateway and
/// Lambda in one. `stage` is the stage the gateway delivers on (a request replayed to another stage
/// says another one).
#[derive(Clone)]
pub struct ApiGateway {
    pub app: Arc<App>,
    pub stage: String,
}

impl std::fmt::Debug for ApiGateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiGateway")
    }
}

impl HttpConnector for ApiGateway {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let me = self.clone();
        HttpConnectorFuture::new(async move {
            let uri: http::Uri = request.uri().parse().expect("the SDK sends a valid URI");
            let mut headers: Vec<(String, String)> = request
                .headers()
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            // What API Gateway adds: the Host the client reached, how it came.
            if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
                let host = uri.authority().map(|a| a.as_str()).unwrap_or_default();
                headers.push(("Host".into(), host.into()));
            }
            headers.push(("X-Forwarded-Proto".into(), "https".into()));
            headers.push(("X-Forwarded-Port".into(), "443".into()));
            headers.push(("X-Forwarded-For".into(), "203.0.113.7".into()));
            let body = request.body().bytes().unwrap_or_default().to_vec();
            let event = event(&me.stage, request.method(), &uri, &headers, &body);
            let req = lambda_http::request::from_str(&event.to_string())
                .expect("lambda_http reads API Gateway's event");
            let out = api::lambda::handle(&me.app, req)
                .await
                .expect("the function answers");
            let (parts, body) = out.into_parts();
            let body = match body {
                lambda_http::Body::Text(t) => SdkBody::from(t),
                lambda_http::Body::Binary(b) => SdkBody::from(b),
                lambda_http::Body::Empty => SdkBody::empty(),
                other => panic!("an answer API Gateway cannot carry: {other:?}"),
            };
            let mut response =
                HttpResponse::new(parts.status.as_u16().try_into().expect("a status"), body);
            for (k, v) in &parts.headers {
                response.headers_mut().insert(
                    k.as_str().to_string(),
                    v.to_str().expect("a text header").to_string(),
                );
            }
            Ok(response)
        })
    }
}
