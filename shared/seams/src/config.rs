//! Configuration from the environment, the same for every function and for phantomctl.

/// Environment variables Phantom reads (the SAM template sets them; so does localstack/up.sh).
pub mod env {
    /// The DynamoDB table holding all state.
    pub const TABLE: &str = "PHANTOM_STATE_TABLE";
    /// The cloud of launch configuration names without `@cloud`.
    pub const DEFAULT_CLOUD: &str = "PHANTOM_DEFAULT_CLOUD";
    /// The region written into ARNs (default: AWS_REGION).
    pub const REGION: &str = "PHANTOM_REGION";
    /// The KMS key (id, ARN or alias) that secrets at rest are encrypted with (`secrets`).
    pub const SECRETS_KEY: &str = "PHANTOM_SECRETS_KEY";
}

#[derive(Debug, Clone)]
pub struct Config {
    pub table: String,
    pub default_cloud: Option<String>,
    pub region: String,
}

impl Config {
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Self {
            table: var(env::TABLE).unwrap_or_else(|| "phantom-state".into()),
            default_cloud: var(env::DEFAULT_CLOUD),
            region: var(env::REGION)
                .or_else(|| var("AWS_REGION"))
                .or_else(|| var("AWS_DEFAULT_REGION"))
                .unwrap_or_else(|| "us-east-1".into()),
        }
    }
}

/// Where the metric period is set: the spacing of a metric's datapoints for target tracking and
/// step policy alarms. Unset, a minute (AWS's period).
pub const METRIC_PERIOD_ENV: &str = "PHANTOM_METRIC_PERIOD_SECS";

/// The metric period (ms) from the environment: unset is a minute, anything but a positive whole
/// number of seconds an error.
pub fn metric_period_ms() -> Result<i64, String> {
    match std::env::var(METRIC_PERIOD_ENV) {
        Err(_) => Ok(60_000),
        Ok(v) => match v.parse::<i64>() {
            Ok(s) if s > 0 => Ok(s * 1000),
            _ => Err(format!(
                "{METRIC_PERIOD_ENV} is {v:?}: it must be a whole number of seconds above 0"
            )),
        },
    }
}

/// The AWS SDK configuration: region, credentials and endpoints (AWS_ENDPOINT_URL locally) all
/// come from the environment, never from code. Every client is built from it, so every client
/// uses its HTTPS client: rustls with ring (the crates are built without the SDK's default
/// client, which brings aws-lc).
pub async fn aws_sdk_config() -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(https_client())
        .load()
        .await
}

/// A connection pool on the SDK's own connector (hyper, rustls with ring), for the HTTP calls
/// Phantom makes without an SDK client (the api's EC2 lookups, a metric source's queries), so
/// every package carries one HTTP stack.
/// Where one of the deployment's services answers (`sns`, `kms`), as the SDK resolves it: its own
/// variable (`AWS_ENDPOINT_URL_SNS`), the global override, then AWS's; with the region. None when
/// the SDK's settings name no region.
pub fn service_endpoint(sdk: &aws_config::SdkConfig, service: &str) -> Option<(String, String)> {
    let region = sdk.region()?.to_string();
    let own = format!("AWS_ENDPOINT_URL_{}", service.to_uppercase());
    let url = std::env::var(own)
        .ok()
        .or_else(|| sdk.endpoint_url().map(str::to_string))
        .unwrap_or_else(|| format!("https://{service}.{region}.amazonaws.com"));
    Some((url.trim_end_matches('/').to_string(), region))
}

pub fn connector(
    connect_timeout: std::time::Duration,
    read_timeout: std::time::Duration,
) -> aws_smithy_http_client::Connector {
    use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
    let settings = aws_smithy_runtime_api::client::http::HttpConnectorSettings::builder()
        .connect_timeout(connect_timeout)
        .read_timeout(read_timeout)
        .build();
    aws_smithy_http_client::Connector::builder()
        .connector_settings(settings)
        .sleep_impl(aws_smithy_async::rt::sleep::TokioSleep::new())
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build()
}

/// The HTTPS client every SDK client of Phantom's uses (the tests' too, so that a test build
/// compiles the SDKs with the same features as the functions and nothing twice).
pub fn https_client() -> aws_smithy_runtime_api::client::http::SharedHttpClient {
    use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
    aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https()
}
