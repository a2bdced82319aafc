//! Any Prometheus, through its HTTP API: `GET <url>/api/v1/query?query=…` and
//! `/api/v1/query_range`, with a bearer token or basic auth if the source has one, sent with the
//! SDK's own connector (`config::connector`).

use super::{parse, parse_range, Answer, MetricSource, Prometheus, QueryError, Range, RangeSeries};
use async_trait::async_trait;
use aws_smithy_http_client::Connector;
use aws_smithy_runtime_api::client::http::HttpConnector;
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::byte_stream::ByteStream;
use std::sync::Arc;
use std::time::Duration;

/// A query runs inside a scheduled run: it may not hold it long.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How Phantom proves itself to the metric source, if it must.
pub use phantom_model::tracking::MetricAuth as Auth;

/// Connects to the metric source over HTTP.
pub struct Connect;

impl super::Connect for Connect {
    fn connect(&self, source: &MetricSource) -> Arc<dyn Prometheus> {
        Arc::new(PrometheusHttp::new(&source.url, source.auth.clone()))
    }
}

#[derive(Clone)]
pub struct PrometheusHttp {
    connector: Arc<Connector>,
    /// The server's base URL (`http://prometheus:9090`), without the API's path.
    url: String,
    auth: Option<Auth>,
}

impl PrometheusHttp {
    pub fn new(url: &str, auth: Option<Auth>) -> Self {
        Self {
            connector: Arc::new(crate::config::connector(CONNECT_TIMEOUT, CALL_TIMEOUT)),
            url: url.trim_end_matches('/').to_string(),
            auth,
        }
    }

    fn authorization(&self) -> Option<String> {
        match self.auth.as_ref()? {
            Auth::Bearer(token) => Some(format!("Bearer {token}")),
            Auth::Basic { user, password } => Some(format!(
                "Basic {}",
                aws_smithy_types::base64::encode(format!("{user}:{password}"))
            )),
        }
    }
}

impl PrometheusHttp {
    /// GET `<url>/api/v1/<api>?<params>`: the body of Prometheus's answer, or why there is none.
    async fn get(&self, api: &str, params: &[(&str, &str)]) -> Result<Vec<u8>, QueryError> {
        let unreachable = |e: &dyn std::fmt::Display| QueryError::Unreachable(e.to_string());
        let query: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params)
            .finish();
        let mut req = HttpRequest::new(SdkBody::empty());
        req.set_uri(format!("{}/api/v1/{api}?{query}", self.url))
            .map_err(|e| unreachable(&e))?;
        if let Some(auth) = self.authorization() {
            req.headers_mut().insert("authorization", auth);
        }
        let call = self.connector.call(req);
        let res = tokio::time::timeout(CALL_TIMEOUT, call)
            .await
            .map_err(|_| unreachable(&"no answer in time"))?
            .map_err(|e| unreachable(&e))?;
        let status = res.status().as_u16();
        let body = ByteStream::new(res.into_body())
            .collect()
            .await
            .map_err(|e| unreachable(&e))?
            .into_bytes();
        // 400 (bad query) and 422 (it cannot be run) carry Prometheus's JSON error; anything else
        // that is not 200 (401, 503, a proxy's page) is the source failing, not the query.
        match status {
            200 | 400 | 422 => Ok(body.to_vec()),
            status => Err(QueryError::Unreachable(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&body)
                    .chars()
                    .take(200)
                    .collect::<String>()
            ))),
        }
    }
}

/// Seconds, as Prometheus's API takes a time.
fn seconds(ms: i64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

#[async_trait]
impl Prometheus for PrometheusHttp {
    async fn query(&self, promql: &str) -> Result<Answer, QueryError> {
        let body = self.get("query", &[("query", promql)]).await?;
        parse(&body)
    }

    async fn query_range(
        &self,
        promql: &str,
        range: Range,
    ) -> Result<Vec<RangeSeries>, QueryError> {
        let (start, end, step) = (
            seconds(range.start_ms),
            seconds(range.end_ms),
            seconds(range.step_ms),
        );
        let params = [
            ("query", promql),
            ("start", &start),
            ("end", &end),
            ("step", &step),
        ];
        let body = self.get("query_range", &params).await?;
        parse_range(&body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_in_the_authorization_header_and_never_in_a_log() {
        let bearer = PrometheusHttp::new("http://p:9090/", Some(Auth::Bearer("t0k".into())));
        assert_eq!(bearer.url, "http://p:9090");
        assert_eq!(bearer.authorization().as_deref(), Some("Bearer t0k"));
        let basic = Auth::Basic {
            user: "phantom".into(),
            password: "s3cret".into(),
        };
        assert_eq!(format!("{basic:?}"), "Basic(phantom, ..)");
        let basic = PrometheusHttp::new("http://p:9090", Some(basic));
        // base64("phantom:s3cret")
        assert_eq!(
            basic.authorization().as_deref(),
            Some("Basic cGhhbnRvbTpzM2NyZXQ=")
        );
        assert!(PrometheusHttp::new("http://p", None)
            .authorization()
            .is_none());
    }
}
