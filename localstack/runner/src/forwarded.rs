//! Behind LocalStack's API Gateway (HTTP_PROXY integrations made by localstack/bootstrap.py), the
//! request as the client sent it, which is what it signed. The gateway forwards `/{proxy}` with a
//! Host of its own; it passes the client's Host as X-Forwarded-Host and the path in front of
//! `/{proxy}` (`/_aws/execute-api/<id>/Prod`) as X-Forwarded-Prefix. On AWS, Lambda's event
//! carries both (api::lambda). Read only when PHANTOM_TRUST_FORWARDED=true: otherwise any client
//! could name the host and path its signature is checked against.

use hyper::header::{HeaderMap, HOST};

pub const HOST_HEADER: &str = "x-forwarded-host";
pub const PREFIX_HEADER: &str = "x-forwarded-prefix";

/// The path and query the client used, with `headers`' Host set to the one it reached; as they
/// are when the request did not come through the gateway.
pub fn restore(headers: &mut HeaderMap, path_and_query: &str) -> Result<String, String> {
    let prefix = match headers.get(PREFIX_HEADER) {
        None => String::new(),
        Some(v) => {
            let p = v
                .to_str()
                .map_err(|_| format!("{PREFIX_HEADER} is not text"))?;
            if !p.starts_with('/') || p.ends_with('/') || p.contains(['?', '#']) {
                return Err(format!(
                    "{PREFIX_HEADER} {p:?} is not a path without a trailing slash"
                ));
            }
            p.to_string()
        }
    };
    if let Some(host) = headers.get(HOST_HEADER).cloned() {
        headers.insert(HOST, host);
    }
    Ok(format!("{prefix}{path_and_query}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn the_gateway_s_request_becomes_the_client_s() {
        let mut h = headers(&[
            ("host", "127.0.0.1:4580"),
            (HOST_HEADER, "127.0.0.1:4570"),
            (PREFIX_HEADER, "/_aws/execute-api/abc/Prod"),
        ]);
        assert_eq!(restore(&mut h, "/").unwrap(), "/_aws/execute-api/abc/Prod/");
        assert_eq!(h["host"], "127.0.0.1:4570");
        assert_eq!(
            restore(&mut h, "/console/app.js?v=1").unwrap(),
            "/_aws/execute-api/abc/Prod/console/app.js?v=1"
        );
    }

    #[test]
    fn a_direct_request_is_left_alone() {
        let mut h = headers(&[("host", "127.0.0.1:4580")]);
        assert_eq!(restore(&mut h, "/?Action=X").unwrap(), "/?Action=X");
        assert_eq!(h["host"], "127.0.0.1:4580");
    }

    #[test]
    fn a_prefix_that_is_not_a_path_is_refused() {
        for bad in ["Prod", "/Prod/", "/a?b", ""] {
            let mut h = headers(&[(PREFIX_HEADER, bad)]);
            assert!(restore(&mut h, "/").is_err(), "{bad:?}");
        }
    }
}
