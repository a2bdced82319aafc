//! AWS's protocols without their SDKs: the clouds' Query APIs (EC2, and ELB and ELBv2 for load
//! balancers, and the deployment's SNS), a JSON protocol call (the deployment's KMS) and a
//! REST-JSON one (VPC Lattice's target groups). A request
//! is signed with aws-sigv4 and sent with hyper on the SDK's connector; a Query answer is read with
//! quick-xml into `Node`s, and an error (`<Error><Code>`, or JSON's `__type`) becomes a
//! `CloudError` with the service's words. The api links none of these services' crates.

use super::CloudError;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use aws_smithy_http_client::Connector;
use aws_smithy_runtime_api::client::http::HttpConnector;
use aws_smithy_runtime_api::client::identity::Identity;
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::byte_stream::ByteStream;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// One service of one cloud, with a user's credentials there.
pub(crate) struct QueryClient {
    pub connector: Arc<Connector>,
    pub endpoint: String,
    pub region: String,
    pub identity: Identity,
    /// SigV4's service name (`ec2`, `elasticloadbalancing`, `kms`).
    pub service: &'static str,
    /// The API version every Query request names (a JSON call names none).
    pub version: &'static str,
    /// A call's attempt never holds its caller longer.
    pub timeout: Duration,
    /// Attempts at a Query call that fails on the way or on the service's side (a timeout, a 5xx,
    /// throttling), as the SDK's standard retry mode makes them: 1 where the caller waits for the
    /// answer (the api), 3 for the provisioner (`ec2_cloud`).
    pub attempts: u32,
}

impl QueryClient {
    pub async fn call(&self, params: &[(String, String)]) -> Result<Node, CloudError> {
        let (status, text) = self.send(params).await?;
        answer(&self.endpoint, status, &text)
    }

    /// The call's answer as sent: its status and text, unread. The pulse's looks read it as a
    /// stream (`ec2_query::instance_states`); `answer` reads it otherwise. Made again, up to
    /// `attempts` in all, while it fails in a way that may pass (`passing`).
    pub async fn send(
        &self,
        params: &[(String, String)],
    ) -> Result<(http::StatusCode, String), CloudError> {
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .append_pair("Version", self.version)
            .finish();
        let form = "application/x-www-form-urlencoded; charset=utf-8";
        let attempts = async {
            let mut attempt = 1;
            loop {
                let sent = self.post(body.clone(), form, None).await;
                if attempt >= self.attempts || !passing(&self.endpoint, &sent) {
                    return sent;
                }
                tokio::time::sleep(backoff(attempt)).await;
                attempt += 1;
            }
        };
        // EC2's calls are counted once however many attempts, as the SDK's interceptor counted
        // them and the in-memory cloud counts them (`metrics::Counter`).
        if self.service == "ec2" {
            crate::metrics::timed(crate::metrics::Counter::Ec2, attempts).await
        } else {
            attempts.await
        }
    }

    /// One call of a JSON protocol (`X-Amz-Target: <target>`; AWS JSON `version` 1.0 or 1.1): its
    /// answer, or the service's error (`__type`, `message`).
    pub async fn json(
        &self,
        version: &str,
        target: &str,
        input: &serde_json::Value,
    ) -> Result<serde_json::Value, CloudError> {
        let json = &format!("application/x-amz-json-{version}");
        let (status, text) = self.post(input.to_string(), json, Some(target)).await?;
        let answer: Option<serde_json::Value> = serde_json::from_str(&text).ok();
        match answer {
            Some(a) if status.is_success() => Ok(a),
            Some(a) if a.get("__type").is_some() => {
                let kind = a["__type"].as_str().unwrap_or_default();
                // `com.amazonaws.kms#NotFoundException` or `NotFoundException`: the last part.
                let code = kind.rsplit('#').next().unwrap_or(kind);
                let message = a.get("message").or_else(|| a.get("Message"));
                let message = message.and_then(|m| m.as_str()).unwrap_or("(no message)");
                Err(CloudError::new(code.to_string(), message.to_string()))
            }
            _ => Err(CloudError::new(
                format!("HTTP{}", status.as_u16()),
                format!(
                    "{} answered HTTP {}: {}",
                    self.endpoint,
                    status.as_u16(),
                    text.chars().take(200).collect::<String>()
                ),
            )),
        }
    }

    /// POSTs `body` of `content_type` (with `X-Amz-Target` if given), signed: the answer's status
    /// and text.
    async fn post(
        &self,
        body: String,
        content_type: &str,
        target: Option<&str>,
    ) -> Result<(http::StatusCode, String), CloudError> {
        let a = self
            .exchange("POST", "/", body, content_type, target)
            .await?;
        Ok((a.status, a.text))
    }

    /// One call of a REST-JSON protocol (VPC Lattice): `method` on `path` (its query included)
    /// with `input` as the body, if any. Its answer, or the service's error (the
    /// `x-amzn-ErrorType` header, or `__type`, and `message`).
    pub async fn rest(
        &self,
        method: &str,
        path: &str,
        input: Option<&serde_json::Value>,
    ) -> Result<serde_json::Value, CloudError> {
        let body = input.map(|v| v.to_string()).unwrap_or_default();
        let a = self
            .exchange(method, path, body, "application/json", None)
            .await?;
        let json: Option<serde_json::Value> = serde_json::from_str(&a.text).ok();
        if a.status.is_success() {
            return json.ok_or_else(|| {
                CloudError::unreadable(format!("an answer to {method} {path} that is not JSON"))
            });
        }
        let kind = a
            .error_type
            .or_else(|| json.as_ref()?.get("__type")?.as_str().map(str::to_string));
        match kind {
            Some(kind) => {
                // `ResourceNotFoundException:http://internal.amazon.com/...` or
                // `com.amazonaws.x#ResourceNotFoundException`: the name alone.
                let kind = kind.split(':').next().unwrap_or(&kind);
                let code = kind.rsplit('#').next().unwrap_or(kind);
                let message = json
                    .as_ref()
                    .and_then(|j| j.get("message").or_else(|| j.get("Message")))
                    .and_then(|m| m.as_str())
                    .unwrap_or("(no message)");
                Err(CloudError::new(code, message))
            }
            None => Err(CloudError::new(
                format!("HTTP{}", a.status.as_u16()),
                format!(
                    "{} answered {method} {path} with HTTP {}: {}",
                    self.endpoint,
                    a.status.as_u16(),
                    a.text.chars().take(200).collect::<String>()
                ),
            )),
        }
    }

    /// Sends `body` of `content_type` to `path` with `method` (and `X-Amz-Target` if given),
    /// signed: the answer's status, error type header and text.
    async fn exchange(
        &self,
        method: &str,
        path: &str,
        body: String,
        content_type: &str,
        target: Option<&str>,
    ) -> Result<Exchanged, CloudError> {
        let uri: http::Uri = format!("{}{path}", self.endpoint)
            .parse()
            .map_err(|e| CloudError::unreachable(format!("bad endpoint {}: {e}", self.endpoint)))?;
        let host = uri
            .authority()
            .map(|a| a.to_string())
            .ok_or_else(|| CloudError::unreachable(format!("bad endpoint {}", self.endpoint)))?;
        let mut headers = vec![("content-type", content_type), ("host", host.as_str())];
        headers.extend(target.map(|t| ("x-amz-target", t)));
        let uri_text = uri.to_string();
        let signable = SignableRequest::new(
            method,
            &uri_text,
            headers.iter().copied(),
            SignableBody::Bytes(body.as_bytes()),
        )
        .map_err(|e| CloudError::unreachable(format!("cannot sign: {e}")))?;
        let params = v4::SigningParams::builder()
            .identity(&self.identity)
            .region(&self.region)
            .name(self.service)
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| CloudError::unreachable(format!("cannot sign: {e}")))?
            .into();
        let (instructions, _) = sign(signable, &params)
            .map_err(|e| CloudError::unreachable(format!("cannot sign: {e}")))?
            .into_parts();
        let mut req = HttpRequest::new(SdkBody::from(body));
        req.set_method(method)
            .map_err(|e| CloudError::unreachable(e.to_string()))?;
        req.set_uri(uri_text.as_str())
            .map_err(|e| CloudError::unreachable(e.to_string()))?;
        for (name, value) in &headers {
            req.headers_mut()
                .insert(name.to_string(), value.to_string());
        }
        for (name, value) in instructions.headers() {
            req.headers_mut()
                .insert(name.to_string(), value.to_string());
        }
        let answer = async {
            let resp = self.connector.call(req).await.map_err(|e| {
                CloudError::unreachable(format!("{}: {}", self.endpoint, error_chain(&e)))
            })?;
            let status = resp.status();
            let error_type = resp.headers().get("x-amzn-errortype").map(str::to_string);
            let bytes = ByteStream::new(resp.into_body())
                .collect()
                .await
                .map_err(|e| CloudError::unreachable(format!("{}: {e}", self.endpoint)))?
                .into_bytes();
            Ok::<_, CloudError>((status, error_type, bytes))
        };
        // The connector's timeouts bound connecting and each read; this bounds the whole call.
        let (status, error_type, bytes) = tokio::time::timeout(self.timeout, answer)
            .await
            .map_err(|_| {
                CloudError::unreachable(format!(
                    "{} did not answer within {:?}",
                    self.endpoint, self.timeout
                ))
            })??;
        let status = http::StatusCode::from_u16(status.as_u16())
            .map_err(|e| CloudError::unreachable(format!("{}: {e}", self.endpoint)))?;
        Ok(Exchanged {
            status,
            error_type,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}

/// The error codes of a service too busy to answer now (the SDK's standard retry mode's list).
const THROTTLED: [&str; 14] = [
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
    "PriorRequestNotComplete",
    "EC2ThrottledException",
];

/// Whether a Query call's outcome is a failure that may pass if made again: lost on the way, the
/// service's own (5xx), or throttled.
fn passing(endpoint: &str, sent: &Result<(http::StatusCode, String), CloudError>) -> bool {
    match sent {
        Err(e) => e.code == "CloudUnreachable",
        Ok((status, _)) if status.is_success() => false,
        Ok((status, _)) if status.is_server_error() => true,
        Ok((status, text)) => answer(endpoint, *status, text)
            .err()
            .is_some_and(|e| THROTTLED.contains(&e.code.as_str())),
    }
}

/// The wait before attempt `attempt + 1`: up to a second, doubled each attempt, at random within
/// that (the SDK's standard retry mode's full jitter), never over 20 s.
fn backoff(attempt: u32) -> Duration {
    let mut byte = [0u8; 1];
    getrandom::fill(&mut byte).expect("the OS random source works");
    let ceiling = Duration::from_secs(1) * 2u32.pow(attempt.saturating_sub(1).min(5));
    (ceiling.mul_f64(f64::from(byte[0]) / 255.0)).min(Duration::from_secs(20))
}

/// An answer as it came: its status, the REST protocols' error type header, its text.
struct Exchanged {
    status: http::StatusCode,
    error_type: Option<String>,
    text: String,
}

/// One of the deployment's own services (SNS, SQS, KMS) with the function's credentials: where it
/// answers, as the SDK resolves it (`config::service_endpoint`), and the credentials, read at
/// each call (a role's are renewed).
#[derive(Clone)]
pub(crate) struct Deployed {
    connector: Arc<Connector>,
    /// None when the SDK's settings name no region (then every call fails, saying so).
    endpoint: Option<(String, String)>,
    credentials: Option<aws_credential_types::provider::SharedCredentialsProvider>,
    /// SigV4's name for it (`sns`, `sqs`, `kms`).
    service: &'static str,
    /// The Query API's version (none for a JSON protocol).
    version: &'static str,
    timeout: Duration,
}

impl Deployed {
    pub fn new(
        sdk: &aws_config::SdkConfig,
        service: &'static str,
        version: &'static str,
        timeout: Duration,
    ) -> Self {
        Self {
            connector: Arc::new(crate::config::connector(timeout, timeout)),
            endpoint: crate::config::service_endpoint(sdk, service),
            credentials: sdk.credentials_provider(),
            service,
            version,
            timeout,
        }
    }

    /// A client signed with the credentials as they are now.
    pub async fn client(&self) -> Result<QueryClient, CloudError> {
        use aws_credential_types::provider::ProvideCredentials;
        let name = self.service.to_uppercase();
        let (endpoint, region) = self.endpoint.clone().ok_or_else(|| {
            CloudError::unreachable(format!("no region is set for the deployment's {name}"))
        })?;
        let provider = self.credentials.as_ref().ok_or_else(|| {
            CloudError::unreachable(format!("no credentials for the deployment's {name}"))
        })?;
        let credentials = provider
            .provide_credentials()
            .await
            .map_err(|e| CloudError::unreachable(format!("{name} credentials: {e}")))?;
        Ok(QueryClient {
            connector: self.connector.clone(),
            endpoint,
            region,
            identity: credentials.into(),
            service: self.service,
            version: self.version,
            timeout: self.timeout,
            attempts: 1,
        })
    }
}

/// A Query answer read as a tree, or the error it is.
pub(crate) fn answer(
    endpoint: &str,
    status: http::StatusCode,
    text: &str,
) -> Result<Node, CloudError> {
    let doc = parse(text);
    if status.is_success() {
        return doc.ok_or_else(|| {
            CloudError::unreachable(format!("{endpoint}: an answer that is not XML"))
        });
    }
    let error = doc.as_ref().and_then(|d| d.find("Error"));
    {
        match error.and_then(|e| e.find("Code")) {
            Some(code) => Err(CloudError::new(
                code.text.clone(),
                error
                    .and_then(|e| e.find("Message"))
                    .map(|m| m.text.clone())
                    .unwrap_or_else(|| "(no message)".to_string()),
            )),
            None => Err(CloudError::new(
                format!("HTTP{}", status.as_u16()),
                format!(
                    "{endpoint} answered HTTP {}: {}",
                    status.as_u16(),
                    text.chars().take(200).collect::<String>()
                ),
            )),
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

/// An XML element: its local name, its text and its child elements.
#[derive(Debug, Default)]
pub(crate) struct Node {
    pub name: String,
    pub text: String,
    pub children: Vec<Node>,
}

impl Node {
    /// The first element so named, depth first (this node included).
    pub fn find(&self, name: &str) -> Option<&Node> {
        if self.name == name {
            return Some(self);
        }
        self.children.iter().find_map(|c| c.find(name))
    }

    /// The child at this path of direct children.
    pub fn path(&self, path: &[&str]) -> Option<&Node> {
        path.iter()
            .try_fold(self, |n, p| n.children.iter().find(|c| c.name == *p))
    }

    pub fn items(&self) -> Vec<&Node> {
        self.children.iter().filter(|c| c.name == "item").collect()
    }

    /// A Query list's entries (ELB's answers name them `member`).
    pub fn members(&self) -> Vec<&Node> {
        self.children
            .iter()
            .filter(|c| c.name == "member")
            .collect()
    }
}

/// The character a reference stands for: a character reference, or one of XML's five entities;
/// None for anything else.
pub(crate) fn referenced(r: &quick_xml::events::BytesRef<'_>) -> Option<char> {
    match r.resolve_char_ref().ok()? {
        Some(c) => Some(c),
        None => match &*r.xml10_content() {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => None,
        },
    }
}

/// The document's root element, or `None` if it is not well-formed XML.
pub(crate) fn parse(text: &str) -> Option<Node> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack = vec![Node::default()];
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) => stack.push(Node {
                name: e.local_name().as_ref().to_string(),
                ..Node::default()
            }),
            Event::Empty(e) => stack.last_mut()?.children.push(Node {
                name: e.local_name().as_ref().to_string(),
                ..Node::default()
            }),
            Event::End(_) => {
                let done = stack.pop()?;
                stack.last_mut()?.children.push(done);
            }
            Event::Text(t) => stack.last_mut()?.text.push_str(&t.xml10_content()),
            Event::CData(t) => stack.last_mut()?.text.push_str(&t.xml10_content()),
            Event::GeneralRef(r) => stack.last_mut()?.text.push(referenced(&r)?),
            Event::Eof => break,
            _ => {}
        }
    }
    let mut root = stack.pop()?;
    if !stack.is_empty() || root.children.len() != 1 {
        return None;
    }
    root.children.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_made_again_only_when_it_may_pass() {
        let sent = |status: u16, code: &str| {
            Ok((
                http::StatusCode::from_u16(status).unwrap(),
                format!("<Response><Errors><Error><Code>{code}</Code><Message>m</Message></Error></Errors></Response>"),
            ))
        };
        let again = |s| passing("http://cloud", &s);
        assert!(again(Err(CloudError::unreachable("timed out"))));
        assert!(!again(Err(CloudError::unreadable(
            "an instance without an id"
        ))));
        assert!(!again(Ok((http::StatusCode::OK, "<R/>".into()))));
        assert!(again(sent(503, "Unavailable")));
        assert!(again(sent(500, "InternalError")));
        assert!(again(sent(400, "RequestLimitExceeded")));
        assert!(again(Ok((http::StatusCode::BAD_GATEWAY, "not XML".into()))));
        assert!(!again(sent(400, "InvalidAMIID.NotFound")));
        assert!(!again(sent(400, "InsufficientInstanceCapacity")));
        assert!(!again(Ok((http::StatusCode::FORBIDDEN, "not XML".into()))));
    }

    #[test]
    fn the_wait_before_another_attempt_doubles_its_ceiling_up_to_20_s() {
        for _ in 0..50 {
            assert!(backoff(1) <= Duration::from_secs(1));
            assert!(backoff(2) <= Duration::from_secs(2));
            assert!(backoff(3) <= Duration::from_secs(4));
            assert!(backoff(40) <= Duration::from_secs(20));
        }
        let waits: std::collections::BTreeSet<Duration> = (0..50).map(|_| backoff(2)).collect();
        assert!(waits.len() > 5, "at random: {waits:?}");
    }
}
