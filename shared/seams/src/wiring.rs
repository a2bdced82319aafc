//! The seams a handler is built from, and the real adapters filling them, read from the
//! environment. Only the mains (the Lambda functions, phantom-local, the benchmarks) call
//! `Seams::from_env`; the handlers take the seams they are given, so the in-process tests give
//! them the memory twins instead.

use crate::cloud::ec2_query::Ec2Lookups;
use crate::cloud::ConnectLookup;
use crate::config::{aws_sdk_config, metric_period_ms, Config};
use crate::prometheus;
use crate::publish::{Publisher, SnsSqs};
use crate::queue::pulse::{PulseQueue, SqsPulse};
use crate::queue::{SqsQueue, WorkQueue};
use crate::store::{DynamoStore, Store};
use phantom_model::time::{Clock, SystemClock};
use std::sync::Arc;

/// Every seam a handler may need.
pub struct Seams {
    pub config: Config,
    /// The SDK's settings (endpoint, region, credentials), for the adapters a main builds beside
    /// these (the provisioner's EC2 clients).
    pub sdk: aws_config::SdkConfig,
    pub store: Arc<dyn Store>,
    /// The work queue (PHANTOM_WORK_QUEUE_URL), if set.
    pub queue: Option<Arc<dyn WorkQueue>>,
    /// The pulse's FIFO queue (PHANTOM_PULSE_QUEUE_URL), if set.
    pub pulse: Option<Arc<dyn PulseQueue>>,
    /// The deployment's SNS and SQS, for notifications and hooks' messages.
    pub publisher: Arc<dyn Publisher>,
    /// The clouds' read-only lookups and load balancers (their Query APIs).
    pub lookups: Arc<dyn ConnectLookup>,
    /// The metric source (a Prometheus HTTP API) that policies read.
    pub metrics: Arc<dyn prometheus::Connect>,
    /// A metric's datapoints are this far apart (PHANTOM_METRIC_PERIOD_SECS; AWS's is a minute).
    pub metric_period_ms: i64,
    pub clock: Arc<dyn Clock>,
}

impl Seams {
    /// The real adapters: DynamoDB (secrets sealed with KMS), SQS, SNS, the clouds' Query APIs,
    /// Prometheus's HTTP API, the system clock. A value that cannot be read is an error.
    pub async fn from_env() -> Result<Self, String> {
        let config = Config::from_env();
        let sdk = aws_sdk_config().await;
        Ok(Self {
            store: Arc::new(DynamoStore::from_env(&sdk, &config.table)?),
            queue: SqsQueue::from_env(&sdk).map(|q| Arc::new(q) as Arc<dyn WorkQueue>),
            pulse: SqsPulse::from_env(&sdk).map(|q| Arc::new(q) as Arc<dyn PulseQueue>),
            publisher: Arc::new(SnsSqs::new(&sdk)),
            lookups: Arc::new(Ec2Lookups::default()),
            metrics: Arc::new(prometheus::http::Connect),
            metric_period_ms: metric_period_ms()?,
            clock: Arc::new(SystemClock),
            config,
            sdk,
        })
    }
}

/// For the functions' tests: bootstrap `bin`, started with none of its environment, stops at once
/// with an error naming the key it has no value for (no panic, no default standing in).
pub fn stops_without_environment(bin: &str) {
    let out = std::process::Command::new(bin)
        .env_clear()
        .output()
        .expect("the bootstrap runs");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains(crate::config::env::SECRETS_KEY), "{said}");
    assert!(!said.contains("panicked"), "{said}");
}
