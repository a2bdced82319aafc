//! API Gateway's REST API proxy integration (payload 1.0), as it stands between a client and the
//! api function: the event of a request, for template.yaml's routes (`/` and `/{proxy+}`, ANY),
//! and the request's answer from the function's. AWS's documented shapes
//! (https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html):
//! `path` without the stage, `requestContext.path` and `stage` with it, the client's Host header.
//! phantom-local plays API Gateway with them in its Lambda mode; the tests, in process.

use base64::Engine;
use serde_json::{json, Map, Value};

/// The REST API's id in the events (and in its default execute-api domain).
pub const API_ID: &str = "a1b2c3d4e5";

/// The proxy event of one request: to `https://<id>.execute-api.../<stage>/<rest>?<query>`, or,
/// on any other host, a custom domain mapped at its root to `stage` (AWS's `path` and
/// `requestContext.path` are then both the path as sent).
pub fn rest_event(
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
        Err(_) => (
            json!(base64::engine::general_purpose::STANDARD.encode(body)),
            true,
        ),
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

/// An HTTP response: status, headers, body.
pub type Answer = (u16, Vec<(String, String)>, Vec<u8>);

/// A proxy integration's answer (`statusCode`, `headers`, `multiValueHeaders`, `body`,
/// `isBase64Encoded`) as the HTTP response API Gateway makes of it.
pub fn rest_answer(answer: &Value) -> Result<Answer, String> {
    let status = answer["statusCode"]
        .as_u64()
        .and_then(|s| u16::try_from(s).ok())
        .ok_or_else(|| format!("an answer without a statusCode: {answer}"))?;
    let mut headers = Vec::new();
    if let Some(multi) = answer["multiValueHeaders"].as_object() {
        for (k, vs) in multi {
            for v in vs.as_array().into_iter().flatten() {
                headers.push((k.clone(), v.as_str().unwrap_or_default().to_string()));
            }
        }
    }
    if let Some(single) = answer["headers"].as_object() {
        for (k, v) in single {
            if !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(k)) {
                headers.push((k.clone(), v.as_str().unwrap_or_default().to_string()));
            }
        }
    }
    let text = answer["body"].as_str().unwrap_or_default();
    let body = if answer["isBase64Encoded"].as_bool() == Some(true) {
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| format!("a body that is not base64: {e}"))?
    } else {
        text.as_bytes().to_vec()
    };
    Ok((status, headers, body))
}
