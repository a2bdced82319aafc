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
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub const API_ID: &str = "a1b2c3d4e5";

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

/// The proxy event of one request: to `https://<id>.execute-api.../<stage>/<rest>?<query>`, or,
/// on any other host, a custom domain mapped at its root to `stage` (AWS's `path` and
/// `requestContext.path` are then both the path as sent).
pub fn event(
    stage: &str,
    method: &str,
    uri: &http::Uri,
    headers: &[(String, String)],
    body: &[u8],
) -> Value {
    let full = uri.path();
    let custom_domain = !uri
        .host()
        .is_some_and(|h| h.ends_with(".execute-api.us-east-1.amazonaws.com"));
    let rest = if custom_domain {
        full.trim_start_matches('/')
    } else {
        // The stage is the path's first segment; API Gateway routes on what follows it.
        full.strip_prefix('/')
            .and_then(|p| p.split_once('/').map(|(_, r)| r).or(Some("")))
            .unwrap_or_default()
    };
    let path = format!("/{rest}");
    let context_path = if custom_domain {
        path.clone()
    } else {
        format!("/{stage}{path}")
    };
    let (resource, path_parameters) = if rest.is_empty() {
        ("/", Value::Null)
    } else {
        ("/{proxy+}", json!({ "proxy": rest }))
    };
    let (single, multi) = grouped(headers.iter().cloned());
    let (query, multi_query) = grouped(
        form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned())),
    );
    let (query, multi_query) = if query.is_empty() {
        (Value::Null, Value::Null)
    } else {
        (Value::Object(query), Value::Object(multi_query))
    };
    let (body, base64) = match std::str::from_utf8(body) {
        Ok(text) if !text.is_empty() => (json!(text), false),
        Ok(_) => (Value::Null, false),
        Err(_) => {
            use base64::Engine;
            (
                json!(base64::engine::general_purpose::STANDARD.encode(body)),
                true,
            )
        }
    };
    json!({
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": single,
        "multiValueHeaders": multi,
        "queryStringParameters": query,
        "multiValueQueryStringParameters": multi_query,
        "pathParameters": path_parameters,
        "stageVariables": null,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": API_ID,
            "domainName": uri.host(),
            "httpMethod": method,
            "path": context_path,
            "protocol": "HTTP/1.1",
            "requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
            "requestTimeEpoch": 1_700_000_000_000_u64,
            "resourceId": "abc123",
            "resourcePath": resource,
            "stage": stage,
            "identity": { "sourceIp": "203.0.113.7", "userAgent": "test" },
        },
        "body": body,
        "isBase64Encoded": base64,
    })
}

/// The event's two views of repeatable pairs: the last value of each name, and all of them.
fn grouped(
    pairs: impl Iterator<Item = (String, String)>,
) -> (Map<String, Value>, Map<String, Value>) {
    let (mut single, mut multi) = (Map::new(), Map::new());
    for (k, v) in pairs {
        single.insert(k.clone(), json!(v));
        multi
            .entry(k)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .expect("an array")
            .push(json!(v));
    }
    (single, multi)
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
