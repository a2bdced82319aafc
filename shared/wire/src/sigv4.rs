//! SigV4 verification of incoming requests.
//!
//! The signature is recomputed with aws-sigv4 (the signer the AWS SDK for Rust uses) over the request
//! exactly as the client signed it: its method, path and query, the headers it named in
//! SignedHeaders, its body hash and its X-Amz-Date, then compared in constant time.

use crate::error::{ApiError, ApiResult};
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use http::HeaderMap;
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

pub const SERVICE: &str = "autoscaling";
/// How far a request's X-Amz-Date may be from our clock.
pub const MAX_SKEW: time::Duration = time::Duration::minutes(15);

/// The parts of `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorization {
    pub access_key_id: String,
    pub scope_date: String,
    pub region: String,
    pub service: String,
    pub signed_headers: Vec<String>,
    pub signature: String,
}

/// The request as the client signed it.
pub struct SignedRequest<'a> {
    pub method: &'a str,
    /// Path and query as they stood on the wire (`/`, `/Prod/?Action=…`).
    pub path_and_query: &'a str,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
}

/// Reads the Authorization header; a request without one is `MissingAuthenticationToken`.
pub fn authorization(headers: &HeaderMap) -> ApiResult<Authorization> {
    let Some(value) = headers.get(http::header::AUTHORIZATION) else {
        return Err(ApiError::missing_authentication_token());
    };
    let value = value
        .to_str()
        .map_err(|_| ApiError::incomplete_signature("Authorization header is not ASCII"))?;
    parse_authorization(value)
}

pub fn parse_authorization(value: &str) -> ApiResult<Authorization> {
    let (algorithm, rest) = value.trim().split_once(' ').unwrap_or((value.trim(), ""));
    if algorithm != "AWS4-HMAC-SHA256" {
        return Err(ApiError::incomplete_signature(format!(
            "Unsupported AWS 'algorithm': '{algorithm}'"
        )));
    }
    let (mut credential, mut signed, mut signature) = (None, None, None);
    for part in rest.split(',') {
        match part.trim().split_once('=') {
            Some(("Credential", v)) => credential = Some(v),
            Some(("SignedHeaders", v)) => signed = Some(v),
            Some(("Signature", v)) => signature = Some(v),
            _ => {}
        }
    }
    let missing: Vec<&str> = [
        ("Credential", credential),
        ("Signature", signature),
        ("SignedHeaders", signed),
    ]
    .iter()
    .filter(|(_, v)| v.is_none())
    .map(|(k, _)| *k)
    .collect();
    let (Some(credential), Some(signed), Some(signature)) = (credential, signed, signature) else {
        let list: Vec<String> = missing.iter().map(|k| format!("'{k}'")).collect();
        return Err(ApiError::incomplete_signature(format!(
            "Authorization header requires {} parameter{}. Authorization={value}",
            list.join(", "),
            if missing.len() == 1 { "" } else { "s" }
        )));
    };
    let scope: Vec<&str> = credential.split('/').collect();
    let [akid, date, region, service, "aws4_request"] = scope.as_slice() else {
        return Err(ApiError::incomplete_signature(format!(
            "Credential should be scoped to a valid region, not '{credential}'. \
             Expected ACCESS_KEY/DATE/REGION/SERVICE/aws4_request"
        )));
    };
    Ok(Authorization {
        access_key_id: akid.to_string(),
        scope_date: date.to_string(),
        region: region.to_string(),
        service: service.to_string(),
        signed_headers: signed
            .split(';')
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect(),
        signature: signature.to_string(),
    })
}

/// Checks everything about the request except the secret: the signed headers, the date, the scope.
/// Returns the signing time.
pub fn check_request(
    req: &SignedRequest<'_>,
    auth: &Authorization,
    now: OffsetDateTime,
) -> ApiResult<OffsetDateTime> {
    check_request_for(SERVICE, req, auth, now)
}

/// `check_request` for a request to `service` (its signing name: `monitoring` for CloudWatch).
pub fn check_request_for(
    service: &str,
    req: &SignedRequest<'_>,
    auth: &Authorization,
    now: OffsetDateTime,
) -> ApiResult<OffsetDateTime> {
    if !auth.signed_headers.iter().any(|h| h == "host") {
        return Err(ApiError::signature_does_not_match(
            "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
        ));
    }
    let Some(amz_date) = req.headers.get("x-amz-date").and_then(|v| v.to_str().ok()) else {
        return Err(ApiError::incomplete_signature(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
        ));
    };
    let Some(signed_at) = phantom_model::time::parse_amz_date(amz_date) else {
        return Err(ApiError::incomplete_signature(format!(
            "Date must be in ISO-8601 'basic format'. Got '{amz_date}'."
        )));
    };
    if (now - signed_at).abs() > MAX_SKEW {
        return Err(ApiError::request_expired(format!(
            "Request has expired. Signed at {amz_date}, which is more than 15 minutes from the server time {}.",
            phantom_model::time::format_timestamp(now)
        )));
    }
    if !amz_date.starts_with(&auth.scope_date) || auth.scope_date.len() != 8 {
        return Err(ApiError::signature_does_not_match(format!(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{}' != '{}'",
            auth.scope_date,
            &amz_date[..amz_date.len().min(8)]
        )));
    }
    if auth.service != service {
        return Err(ApiError::signature_does_not_match(format!(
            "Credential should be scoped to correct service: '{service}'."
        )));
    }
    for name in &auth.signed_headers {
        if !req.headers.contains_key(name.as_str()) {
            return Err(ApiError::signature_does_not_match(format!(
                "The request signature we calculated does not match the signature you provided: \
                 signed header '{name}' is not in the request."
            )));
        }
    }
    Ok(signed_at)
}

/// The signature the client should have sent, computed with `secret`.
pub fn expected_signature(
    req: &SignedRequest<'_>,
    auth: &Authorization,
    secret: &str,
    signed_at: OffsetDateTime,
) -> ApiResult<String> {
    let mut headers: Vec<(&str, String)> = Vec::new();
    for name in &auth.signed_headers {
        // Repeated headers are signed as one, their values joined by commas.
        let values: Vec<&str> = req
            .headers
            .get_all(name.as_str())
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        headers.push((name.as_str(), values.join(",")));
    }
    let signable = SignableRequest::new(
        req.method,
        req.path_and_query,
        headers.iter().map(|(k, v)| (*k, v.as_str())),
        SignableBody::Bytes(req.body),
    )
    .map_err(|e| ApiError::incomplete_signature(format!("The request cannot be verified: {e}")))?;

    let identity: Identity =
        Credentials::new(&auth.access_key_id, secret, None, None, "phantom").into();
    let mut settings = SigningSettings::default();
    // Sign exactly the headers the client named, no more and no fewer.
    settings.excluded_headers = None;
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(&auth.region)
        // The scope's service, which `check_request_for` held to the one the request is for.
        .name(&auth.service)
        .time(signed_at.into())
        .settings(settings)
        .build()
        .map_err(|e| ApiError::internal(format!("signing parameters: {e}")))?
        .into();
    let out = sign(signable, &params).map_err(|e| {
        ApiError::incomplete_signature(format!("The request cannot be verified: {e}"))
    })?;
    Ok(out.signature().to_string())
}

/// Verifies the signature with the caller's secret, in constant time. `signed_at` is what
/// `check_request` returned.
pub fn verify(
    req: &SignedRequest<'_>,
    auth: &Authorization,
    secret: &str,
    signed_at: OffsetDateTime,
) -> ApiResult<()> {
    let expected = expected_signature(req, auth, secret, signed_at)?;
    if bool::from(expected.as_bytes().ct_eq(auth.signature.as_bytes())) {
        Ok(())
    } else {
        Err(ApiError::signature_does_not_match(
            "The request signature we calculated does not match the signature you provided. \
             Check your AWS Secret Access Key and signing method. Consult the service documentation for details.",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    // Values computed with botocore 1.43 (`botocore.auth.SigV4Auth`) for this request:
    //   POST http://127.0.0.1:4566/ body `Action=DescribeAutoScalingGroups&Version=2011-01-01`,
    //   key AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, region us-east-1, at 20150830T123600Z.
    const BODY: &str = "Action=DescribeAutoScalingGroups&Version=2011-01-01";
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

    fn headers() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            "content-type",
            HeaderValue::from_static("application/x-www-form-urlencoded; charset=utf-8"),
        );
        h.insert("host", HeaderValue::from_static("127.0.0.1:4566"));
        h.insert("x-amz-date", HeaderValue::from_static("20150830T123600Z"));
        h
    }

    fn auth(signature: &str) -> Authorization {
        parse_authorization(&format!(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/autoscaling/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, Signature={signature}"
        ))
        .unwrap()
    }

    fn at() -> OffsetDateTime {
        phantom_model::time::parse_amz_date("20150830T123600Z").unwrap()
    }

    #[test]
    fn matches_botocore() {
        let h = headers();
        let req = SignedRequest {
            method: "POST",
            path_and_query: "/",
            headers: &h,
            body: BODY.as_bytes(),
        };
        let sig = expected_signature(&req, &auth(""), SECRET, at()).unwrap();
        assert_eq!(sig, include_str!("../testdata/sigv4-botocore.sig").trim());
        let signed_at = check_request(&req, &auth(&sig), at()).unwrap();
        verify(&req, &auth(&sig), SECRET, signed_at).unwrap();
    }

    #[test]
    fn refuses_wrong_secret_altered_body_and_stale_dates() {
        let h = headers();
        let good = include_str!("../testdata/sigv4-botocore.sig").trim();
        let req = SignedRequest {
            method: "POST",
            path_and_query: "/",
            headers: &h,
            body: BODY.as_bytes(),
        };
        let e = verify(&req, &auth(good), "other", at()).unwrap_err();
        assert_eq!(e.code, "SignatureDoesNotMatch");
        let altered = SignedRequest {
            body: b"Action=DeleteAutoScalingGroup",
            ..req
        };
        let e = verify(&altered, &auth(good), SECRET, at()).unwrap_err();
        assert_eq!(e.code, "SignatureDoesNotMatch");
        let later = at() + time::Duration::minutes(16);
        let e = check_request(&req, &auth(good), later).unwrap_err();
        assert_eq!((e.code, e.status), ("RequestExpired", 403));
    }

    #[test]
    fn parses_and_rejects_authorization_headers() {
        let a = auth("abc");
        assert_eq!(a.access_key_id, "AKIDEXAMPLE");
        assert_eq!(a.signed_headers, ["content-type", "host", "x-amz-date"]);
        for bad in [
            "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/autoscaling/aws4_request",
            "AWS4-HMAC-SHA256 SignedHeaders=host, Signature=x",
            "AWS4-HMAC-SHA256 Credential=AKID, SignedHeaders=host, Signature=x",
            "AWS3 Credential=a",
        ] {
            assert_eq!(
                parse_authorization(bad).unwrap_err().code,
                "IncompleteSignature",
                "{bad}"
            );
        }
        assert_eq!(
            authorization(&HeaderMap::new()).unwrap_err().code,
            "MissingAuthenticationToken"
        );
    }
}
