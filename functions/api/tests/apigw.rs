//! Behind API Gateway (REST, stage Prod) the client signs `POST https://ID.execute-api.REGION.
//! amazonaws.com/Prod/` with that Host. lambda_http turns the proxy event into a request whose path
//! keeps the stage, and the Host header passes through, so the signature verifies as signed.

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use phantom_wire::sigv4::{self, SignedRequest};
use std::time::SystemTime;

const HOST: &str = "abc123.execute-api.us-east-1.amazonaws.com";
const BODY: &str = "Action=DescribeAutoScalingGroups&Version=2011-01-01";

/// The headers a client sends for `POST https://HOST/Prod/`, signed with `secret`.
fn client_headers(secret: &str) -> Vec<(String, String)> {
    let headers = vec![
        (
            "content-type".to_string(),
            "application/x-www-form-urlencoded; charset=utf-8".to_string(),
        ),
        ("host".to_string(), HOST.to_string()),
    ];
    let signable = SignableRequest::new(
        "POST",
        "/Prod/",
        headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        SignableBody::Bytes(BODY.as_bytes()),
    )
    .unwrap();
    let identity: Identity = Credentials::new("PKIAEXAMPLE", secret, None, None, "t").into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name("autoscaling")
        .time(SystemTime::now())
        .settings(SigningSettings::default())
        .build()
        .unwrap()
        .into();
    let (instructions, _) = sign(signable, &params).unwrap().into_parts();
    let mut all = headers;
    all.extend(
        instructions
            .headers()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    all
}

/// The REST API proxy event API Gateway sends for that request.
fn event(headers: &[(String, String)]) -> String {
    let h: serde_json::Map<String, serde_json::Value> = headers
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
        .collect();
    serde_json::json!({
        "resource": "/",
        "path": "/",
        "httpMethod": "POST",
        "headers": h,
        "multiValueHeaders": headers.iter().map(|(k, v)| (k.clone(), serde_json::json!([v]))).collect::<serde_json::Map<_, _>>(),
        "queryStringParameters": null,
        "multiValueQueryStringParameters": null,
        "pathParameters": null,
        "stageVariables": null,
        "requestContext": {
            "resourceId": "r", "resourcePath": "/", "httpMethod": "POST", "path": "/Prod/",
            "accountId": "123456789012", "stage": "Prod", "requestId": "id", "apiId": "abc123",
            "identity": {"sourceIp": "127.0.0.1"}, "protocol": "HTTP/1.1",
            "requestTimeEpoch": 0
        },
        "body": BODY,
        "isBase64Encoded": false
    })
    .to_string()
}

fn verify(secret_signed: &str, secret_stored: &str) -> Result<(), phantom_wire::ApiError> {
    let req = lambda_http::request::from_str(&event(&client_headers(secret_signed))).unwrap();
    let path = req.uri().path_and_query().unwrap().as_str().to_string();
    assert!(
        path.starts_with("/Prod/"),
        "lambda_http keeps the stage: {path}"
    );
    let signed = SignedRequest {
        method: req.method().as_str(),
        path_and_query: &path,
        headers: req.headers(),
        body: req.body().as_ref(),
    };
    let auth = sigv4::authorization(req.headers())?;
    let at = sigv4::check_request(&signed, &auth, phantom_model::time::now())?;
    sigv4::verify(&signed, &auth, secret_stored, at)
}

#[test]
fn a_request_signed_for_the_stage_url_verifies_behind_api_gateway() {
    verify("s3cret", "s3cret").unwrap();
    assert_eq!(
        verify("s3cret", "other").unwrap_err().code,
        "SignatureDoesNotMatch"
    );
}
