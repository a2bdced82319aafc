//! The in-process world: `api::App`, the provisioner and the health check over the in-memory
//! store, queue and two clouds (`hotel`, the default, and `sierra`), with a clock that moves only
//! when told to. Clients are the real aws-sdk-autoscaling (its requests reach `App::handle`
//! through `InProcess`, signed with the world's clock) and raw signed requests.
//!
//! `settle` delivers queued messages until none is visible; `run_for` moves the clock a second at a
//! time, settling and sweeping as Lambda's queue and schedule would: deterministic, no sleeps.

use crate::stack::{RawRequest, User, REGION};
use api::App;
use aws_credential_types::Credentials;
use aws_smithy_async::time::{SharedTimeSource, TimeSource};
use aws_smithy_runtime_api::client::http::{
    http_client_fn, HttpConnector, HttpConnectorFuture, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_types::body::SdkBody;
use health_check::pulse::Pulse;
use health_check::HealthCheck;
use phantom_model::time::{Clock, ManualClock};
use phantom_rules::identity;
use phantom_rules::pulse::Cadence;
use phantom_seams::cloud::memory::{MemoryCloud, MemoryClouds};
use phantom_seams::config::Config;
use phantom_seams::fault::Tripwire;
use phantom_seams::prometheus::memory::{self as prometheus, MemoryPrometheus};
use phantom_seams::publish::memory::MemoryPublisher;
use phantom_seams::queue::pulse::MemoryPulse;
use phantom_seams::queue::{AtRisk, MemoryQueue, Reconcile, Scheduled, StateChange, WorkQueue};
use phantom_seams::store::MetricSource;
use phantom_seams::store::{CloudCredentials, CloudRecord, Directory, MemoryStore};
use provisioner::Provisioner;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The namespace the in-process health check writes group metrics to.
pub const EMF_NAMESPACE: &str = "Phantom/AutoScaling";
/// An image both memory clouds know (moto's Ubuntu image id, as on the local stack).
pub const IMAGE: &str = "ami-1e749f67";
/// A second image both memory clouds know (an arm64 build, say, for another instance type).
pub const IMAGE_ARM: &str = "ami-0a1b2c3d4e5f60718";
pub const ZONES: [&str; 2] = ["us-east-1a", "us-east-1b"];

/// A MixedInstancesPolicy of launch template `template` (`<name>@<cloud>`, at `version` if
/// given), the instance types `types` as its overrides in order, split as `split` says.
pub fn mixed_policy(
    template: &str,
    version: Option<&str>,
    types: &[&str],
    split: aws_sdk_autoscaling::types::InstancesDistribution,
) -> aws_sdk_autoscaling::types::MixedInstancesPolicy {
    let weighed: Vec<(&str, Option<&str>)> = types.iter().map(|t| (*t, None)).collect();
    weighted_policy(template, version, &weighed, split)
}

/// The same, with each override's `WeightedCapacity` (None: not given).
pub fn weighted_policy(
    template: &str,
    version: Option<&str>,
    types: &[(&str, Option<&str>)],
    split: aws_sdk_autoscaling::types::InstancesDistribution,
) -> aws_sdk_autoscaling::types::MixedInstancesPolicy {
    use aws_sdk_autoscaling::types::{
        LaunchTemplate, LaunchTemplateOverrides, LaunchTemplateSpecification, MixedInstancesPolicy,
    };
    let overrides = types
        .iter()
        .map(|(t, w)| {
            LaunchTemplateOverrides::builder()
                .instance_type(*t)
                .set_weighted_capacity(w.map(str::to_string))
                .build()
        })
        .collect();
    MixedInstancesPolicy::builder()
        .launch_template(
            LaunchTemplate::builder()
                .launch_template_specification(
                    LaunchTemplateSpecification::builder()
                        .launch_template_name(template)
                        .set_version(version.map(str::to_string))
                        .build(),
                )
                .set_overrides(Some(overrides))
                .build(),
        )
        .instances_distribution(split)
        .build()
}
/// The metric period of target tracking in the world: a datapoint a second, one each health check.
pub const METRIC_PERIOD_MS: i64 = 1_000;
/// The pulse's period in the world, and the pulse queue's visibility timeout.
pub const PULSE_MS: i64 = 5_000;
pub const PULSE_VISIBILITY_MS: i64 = 60_000;

pub struct World {
    pub clock: Arc<ManualClock>,
    pub trip: Arc<Tripwire>,
    pub store: Arc<MemoryStore>,
    pub queue: Arc<MemoryQueue>,
    pub hotel: Arc<MemoryCloud>,
    pub sierra: Arc<MemoryCloud>,
    pub clouds: Arc<MemoryClouds>,
    /// The metric source of target tracking (set in the store by `metric_source`).
    pub prometheus: Arc<MemoryPrometheus>,
    /// The deployment's SNS topics and SQS queues (`create` one before naming it).
    pub publisher: Arc<MemoryPublisher>,
    /// The pulse's queue (`pulsed`): a beat every `PULSE_MS`.
    pub pulse: Arc<MemoryPulse>,
    /// The group metrics' log lines the health check wrote (CloudWatch's Embedded Metric Format).
    pub emf: Arc<health_check::collector::MemorySink>,
    /// The health check's probes and what they found, kept across its runs as a warm Lambda
    /// instance keeps them (the probes go over the network: tests serve their VMs' applications
    /// on the memory clouds' loopback addresses).
    pub probing: Arc<health_check::prober::Probing>,
    pub app: Arc<App>,
    users: AtomicUsize,
    /// Clouds added after hotel and sierra, by name.
    extra: std::sync::Mutex<std::collections::BTreeMap<String, Arc<MemoryCloud>>>,
}

/// A memory cloud named `name`, reachable at `memory://<name>` and registered in the store.
async fn register_cloud(
    name: &str,
    clock: &Arc<ManualClock>,
    trip: &Arc<Tripwire>,
    store: &MemoryStore,
    clouds: &MemoryClouds,
) -> Arc<MemoryCloud> {
    let cloud = Arc::new(
        MemoryCloud::new(&ZONES, clock.clone(), trip.clone()).with_images(&[IMAGE, IMAGE_ARM]),
    );
    let endpoint = format!("memory://{name}");
    clouds.add(&endpoint, cloud.clone());
    store
        .put_cloud(&CloudRecord {
            name: name.into(),
            endpoint,
            region: REGION.into(),
            zone: ZONES[0].into(),
            launch_templates: true,
            load_balancers: true,
            events: false,
            status_checks: true,
        })
        .await
        .expect("the memory store takes a cloud");
    cloud
}

impl World {
    pub async fn new() -> Self {
        Self::starting_at(phantom_model::time::now_ms()).await
    }

    /// A world whose clock starts at `start_ms` (Unix ms): a simulation's, the same every run.
    pub async fn starting_at(start_ms: i64) -> Self {
        let clock = Arc::new(ManualClock::starting_at(start_ms));
        let trip = Tripwire::new();
        let store = Arc::new(MemoryStore::new(trip.clone()));
        let queue = Arc::new(MemoryQueue::new(clock.clone(), trip.clone()));
        let clouds = Arc::new(MemoryClouds::default());
        let mut made = Vec::new();
        for name in ["hotel", "sierra"] {
            made.push(register_cloud(name, &clock, &trip, &store, &clouds).await);
        }
        let prometheus = Arc::new(MemoryPrometheus::default());
        let publisher = Arc::new(MemoryPublisher::with_tripwire(trip.clone()));
        let app = Arc::new(App {
            store: store.clone(),
            queue: Some(queue.clone()),
            config: Config {
                table: "memory".into(),
                default_cloud: Some("hotel".into()),
                region: REGION.into(),
            },
            clock: clock.clone(),
            clouds: clouds.clone(),
            metrics: Arc::new(prometheus::Connect(prometheus.clone())),
            metric_period_ms: METRIC_PERIOD_MS,
            publisher: publisher.clone(),
            keys: api::KeyCache::default(),
            throttle: api::throttle::Throttle::default(),
            heartbeats: api::throttle::Throttle::new(api::heartbeats::HEARTBEATS),
            listed: phantom_seams::store::Listed::default(),
        });
        let sierra = made.pop().expect("two clouds");
        let hotel = made.pop().expect("two clouds");
        let pulse = Arc::new(MemoryPulse::new(clock.clone(), trip.clone(), PULSE_MS));
        let probing = Arc::new(health_check::prober::Probing::new(
            Arc::new(phantom_seams::probe::NetProber::default()),
            clouds.clone(),
        ));
        Self {
            pulse,
            probing,
            emf: Arc::default(),
            clock,
            trip,
            store,
            queue,
            hotel,
            sierra,
            clouds,
            prometheus,
            publisher,
            app,
            users: AtomicUsize::new(0),
            extra: Default::default(),
        }
    }

    pub fn cloud(&self, name: &str) -> &Arc<MemoryCloud> {
        match name {
            "hotel" => &self.hotel,
            "sierra" => &self.sierra,
            other => panic!("no cloud {other} in the world"),
        }
    }

    /// Registers one more memory cloud (users made afterwards get credentials there too).
    pub async fn add_cloud(&self, name: &str) -> Arc<MemoryCloud> {
        let cloud = register_cloud(name, &self.clock, &self.trip, &self.store, &self.clouds).await;
        self.extra
            .lock()
            .expect("no test panics holding the clouds")
            .insert(name.to_string(), cloud.clone());
        cloud
    }

    /// A cloud added with `add_cloud`.
    pub fn extra_cloud(&self, name: &str) -> Arc<MemoryCloud> {
        self.extra
            .lock()
            .expect("no test panics holding the clouds")
            .get(name)
            .unwrap_or_else(|| panic!("no cloud {name} in the world"))
            .clone()
    }

    /// A provisioner as a new Lambda instance would start it (nothing carried over).
    pub fn provisioner(&self) -> Provisioner {
        Provisioner {
            store: self.store.clone(),
            queue: Some(self.queue.clone()),
            clouds: self.clouds.clone(),
            clock: self.clock.clone(),
            publisher: self.publisher.clone(),
            lookups: self.clouds.clone(),
        }
    }

    pub fn health(&self) -> HealthCheck {
        HealthCheck {
            store: self.store.clone(),
            queue: self.queue.clone(),
            clock: self.clock.clone(),
            metrics: Arc::new(prometheus::Connect(self.prometheus.clone())),
            metric_period_ms: METRIC_PERIOD_MS,
            pulse: None,
            emf: Some(health_check::collector::Emf {
                namespace: EMF_NAMESPACE.into(),
                sink: self.emf.clone(),
            }),
            probing: self.probing.clone(),
            publisher: self.publisher.clone(),
            listed: Default::default(),
        }
    }

    /// A health check with the pulse (a beat every `PULSE_MS`, looks and sweeps as `cadence`
    /// says), as a new Lambda instance would start it. Keep it: it keeps the credentials it
    /// opened.
    pub fn pulsed(&self, cadence: Cadence) -> HealthCheck {
        HealthCheck {
            pulse: Some(Arc::new(Pulse::new(
                Some(self.pulse.clone()),
                PULSE_MS,
                cadence,
                self.clouds.clone(),
            ))),
            ..self.health()
        }
    }

    /// What template.yaml's EventBridge rules do with a cloud's EC2 events: the state changes of a
    /// VM leaving service go on the work queue as `StateChange` messages, the at-risk signals as
    /// `AtRisk` messages. Returns how many.
    pub async fn deliver_events(&self, cloud: &MemoryCloud) -> usize {
        let account = || "123456789012".to_string();
        let mut events: Vec<phantom_seams::queue::Work> = cloud
            .take_signals()
            .into_iter()
            .map(|(id, signal)| {
                AtRisk {
                    instance: id,
                    signal: signal.into(),
                    region: REGION.into(),
                    account: account(),
                }
                .into()
            })
            .collect();
        for (id, state) in cloud.take_events() {
            if matches!(
                state.name(),
                "stopping" | "stopped" | "shutting-down" | "terminated"
            ) {
                events.push(
                    StateChange {
                        instance: id,
                        state: state.name().to_string(),
                        region: REGION.into(),
                        account: account(),
                    }
                    .into(),
                );
            }
        }
        // AWS Health's scheduled changes, with its event type codes.
        for (id, code) in cloud.take_health_events() {
            events.push(
                Scheduled {
                    instances: vec![id],
                    code: health_code(code).into(),
                    region: REGION.into(),
                    account: account(),
                }
                .into(),
            );
        }
        for event in &events {
            self.queue
                .send(event, 0)
                .await
                .expect("the world's queue takes an event");
        }
        events.len()
    }

    /// Moves the clock `secs` seconds, one at a time, as the deployment runs with a pulse: each
    /// second the tick that is due (if any) runs on `h` (failing back to the queue after the
    /// visibility timeout, `PULSE_VISIBILITY_MS`), the work queue settles, and every 60 s the
    /// schedule runs (which keeps the pulse alive).
    pub async fn pulse_for(&self, h: &HealthCheck, secs: u64) {
        for _ in 0..secs {
            self.clock.advance_ms(1_000);
            while let Some(tick) = self.pulse.receive() {
                if h.tick(tick).await.is_err() {
                    self.pulse.redeliver(tick, PULSE_VISIBILITY_MS);
                }
            }
            self.settle().await;
            if self.clock.now_ms() % 60_000 < 1_000 {
                h.run().await.expect("the schedule's run reads the store");
                self.settle().await;
            }
        }
    }

    /// Sets the deployment's metric source (the memory Prometheus answers whatever URL it has),
    /// its series naming a VM in `instance_id`.
    pub async fn metric_source(&self) {
        self.store
            .put_metric_source(&MetricSource {
                url: "memory://prometheus".into(),
                instance_label: "instance_id".into(),
                auth: None,
            })
            .await
            .expect("the memory store takes a metric source");
    }

    /// From now on, range queries that name `metric` give `value` (None: no data).
    pub fn metric(&self, metric: &str, value: Option<f64>) {
        self.prometheus.record(metric, self.clock.now_ms(), value);
    }

    /// A new user with credentials on every cloud of the world.
    pub async fn user(&self, prefix: &str) -> User {
        self.new_user(prefix, false).await
    }

    /// A new administrator, with credentials on every cloud of the world.
    pub async fn admin(&self, prefix: &str) -> User {
        self.new_user(prefix, true).await
    }

    async fn new_user(&self, prefix: &str, admin: bool) -> User {
        let name = format!("{prefix}-{}", self.users.fetch_add(1, Ordering::SeqCst));
        let (user, secret) = identity::new_user(
            &name,
            admin,
            phantom_model::time::format_timestamp(self.clock.now()),
        )
        .expect("a valid name");
        self.store
            .create_user(&user, &secret)
            .await
            .expect("a new user");
        let clouds = self
            .store
            .clouds()
            .await
            .expect("the memory store lists clouds");
        for cloud in clouds.iter().map(|c| c.name.as_str()) {
            self.store
                .put_cloud_credentials(
                    &name,
                    &CloudCredentials {
                        cloud: cloud.into(),
                        access_key_id: format!("{name}-{cloud}"),
                        secret: "cloud-secret".into(),
                    },
                )
                .await
                .expect("credentials for a new user");
        }
        User {
            name,
            access_key_id: user.access_key_id,
            secret,
        }
    }

    /// aws-sdk-autoscaling as a user configures it, reaching `App::handle` in this process.
    pub fn sdk(&self, user: &User) -> aws_sdk_autoscaling::Client {
        self.sdk_with_keys(&user.access_key_id, &user.secret)
    }

    /// A client as users run it: the SDK's standard retry mode (Throttling retried with backoff).
    pub fn sdk_retrying(&self, user: &User) -> aws_sdk_autoscaling::Client {
        let config = self
            .sdk(user)
            .config()
            .to_builder()
            .retry_config(aws_sdk_autoscaling::config::retry::RetryConfig::standard())
            .build();
        aws_sdk_autoscaling::Client::from_conf(config)
    }

    /// Another instance of the api function over the world's seams: its own key cache and
    /// throttle, as a second Lambda instance has.
    pub fn api_instance(&self) -> Arc<App> {
        let app = &self.app;
        Arc::new(App {
            store: app.store.clone(),
            queue: app.queue.clone(),
            config: app.config.clone(),
            clock: app.clock.clone(),
            clouds: app.clouds.clone(),
            metrics: app.metrics.clone(),
            metric_period_ms: app.metric_period_ms,
            publisher: app.publisher.clone(),
            keys: api::KeyCache::default(),
            throttle: api::throttle::Throttle::default(),
            heartbeats: api::throttle::Throttle::new(api::heartbeats::HEARTBEATS),
            listed: phantom_seams::store::Listed::default(),
        })
    }

    /// aws-sdk-autoscaling for `user` reaching the api instance `app` in this process.
    pub fn sdk_on(&self, app: &Arc<App>, user: &User) -> aws_sdk_autoscaling::Client {
        let to = InProcess(app.clone());
        self.sdk_via(
            "http://phantom.in-process",
            &user.access_key_id,
            &user.secret,
            to,
        )
    }

    pub fn sdk_with_keys(&self, key: &str, secret: &str) -> aws_sdk_autoscaling::Client {
        let to = InProcess(self.app.clone());
        self.sdk_via("http://phantom.in-process", key, secret, to)
    }

    /// aws-sdk-autoscaling with a session's credentials (STS's key, secret and token).
    pub fn sdk_in_session(
        &self,
        key: &str,
        secret: &str,
        token: &str,
    ) -> aws_sdk_autoscaling::Client {
        let config = self
            .sdk_with_keys(key, secret)
            .config()
            .to_builder()
            .credentials_provider(Credentials::new(
                key,
                secret,
                Some(token.to_string()),
                None,
                "session",
            ))
            .build();
        aws_sdk_autoscaling::Client::from_conf(config)
    }

    /// aws-sdk-autoscaling at `url` signing with `key`/`secret` at the world's time, each request
    /// handed to `connector` (once: no retries).
    fn sdk_via(
        &self,
        url: &str,
        key: &str,
        secret: &str,
        connector: impl HttpConnector + Clone + 'static,
    ) -> aws_sdk_autoscaling::Client {
        let config = aws_sdk_autoscaling::Config::builder()
            .behavior_version(aws_sdk_autoscaling::config::BehaviorVersion::latest())
            .region(aws_sdk_autoscaling::config::Region::new(REGION))
            .endpoint_url(url)
            .credentials_provider(Credentials::new(key, secret, None, None, "test"))
            .http_client(http_client_fn(move |_, _| {
                SharedHttpConnector::new(connector.clone())
            }))
            .time_source(SharedTimeSource::new(WorldTime(self.clock.clone())))
            .retry_config(aws_sdk_autoscaling::config::retry::RetryConfig::disabled())
            .build();
        aws_sdk_autoscaling::Client::from_conf(config)
    }

    /// aws-sdk-autoscaling configured with a deployed URL (`api_gateway::url("Prod")`, or a custom
    /// domain's), its requests reaching the api as API Gateway's events on `stage` through the
    /// Lambda adapter.
    pub fn sdk_through_gateway(
        &self,
        user: &User,
        url: &str,
        stage: &str,
    ) -> aws_sdk_autoscaling::Client {
        let to = crate::api_gateway::ApiGateway {
            app: self.app.clone(),
            stage: stage.into(),
        };
        self.sdk_via(url, &user.access_key_id, &user.secret, to)
    }

    /// A request of Phantom's own API (`POST /phantom/v1/<op>`, JSON), signed with `u`'s key:
    /// the status and the body.
    pub async fn phantom_api(&self, u: &User, op: &str, body: &serde_json::Value) -> (u16, String) {
        let path = format!("/phantom/v1/{op}");
        let body = body.to_string();
        self.raw(
            &u.access_key_id,
            &u.secret,
            "POST",
            &path,
            &body,
            None,
            |_| {},
        )
        .await
    }

    /// A raw request, signed by `key`/`secret` at the world's time unless `at` says otherwise;
    /// `tamper` may change it after signing. Returns the status and the body.
    // Each argument is a part of the request the auth tests vary.
    #[allow(clippy::too_many_arguments)]
    pub async fn raw(
        &self,
        key: &str,
        secret: &str,
        method: &str,
        path: &str,
        body: &str,
        at: Option<SystemTime>,
        tamper: impl FnOnce(&mut RawRequest),
    ) -> (u16, String) {
        let at = at.unwrap_or_else(|| WorldTime(self.clock.clone()).now());
        let mut req = RawRequest::signed(4580, key, secret, method, path, body, at);
        tamper(&mut req);
        let out = self.send(&req).await;
        let body = String::from_utf8(out.body.into_owned()).expect("the api answers text here");
        (out.status, body)
    }

    /// A raw request, as the api function gets it.
    async fn send(&self, req: &RawRequest) -> api::HttpResponse {
        let mut headers = http::HeaderMap::new();
        for (k, v) in &req.headers {
            headers.append(
                http::HeaderName::from_bytes(k.as_bytes()).expect("a header name"),
                http::HeaderValue::from_str(v).expect("a header value"),
            );
        }
        self.app
            .handle(api::HttpRequest {
                method: &req.method,
                path_and_query: &req.path,
                headers: &headers,
                body: req.body.as_bytes(),
                source_ip: Some(std::net::IpAddr::from([127, 0, 0, 1])),
                secure: false,
            })
            .await
    }

    /// An IAM call (the Query protocol, as the AWS CLI makes it) signed with `key`/`secret` at
    /// the world's time: the status and the XML answer.
    pub async fn iam(
        &self,
        keys: (&str, &str),
        action: &str,
        params: &[(&str, &str)],
    ) -> (u16, String) {
        self.query_call("iam", "2010-05-08", keys, action, params)
            .await
    }

    /// An STS call, as `iam`.
    pub async fn sts(
        &self,
        keys: (&str, &str),
        action: &str,
        params: &[(&str, &str)],
    ) -> (u16, String) {
        self.query_call("sts", "2011-06-15", keys, action, params)
            .await
    }

    async fn query_call(
        &self,
        service: &str,
        version: &str,
        keys: (&str, &str),
        action: &str,
        params: &[(&str, &str)],
    ) -> (u16, String) {
        let at = WorldTime(self.clock.clone()).now();
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("Action", action)
            .append_pair("Version", version);
        for (k, v) in params {
            form.append_pair(k, v);
        }
        let req = RawRequest::query(4580, service, keys, &form.finish(), at);
        let out = self.send(&req).await;
        let body = String::from_utf8(out.body.into_owned()).expect("the answer is text");
        (out.status, body)
    }

    /// CloudTrail's LookupEvents as the AWS CLI sends it, signed with `keys`: the status and the
    /// answer.
    pub async fn lookup_events(
        &self,
        keys: (&str, &str),
        body: serde_json::Value,
    ) -> (u16, serde_json::Value) {
        let at = WorldTime(self.clock.clone()).now();
        let req = RawRequest::cloudtrail(4580, keys, "LookupEvents", &body.to_string(), at);
        let out = self.send(&req).await;
        let answer = serde_json::from_slice(&out.body).expect("CloudTrail answers JSON");
        (out.status, answer)
    }

    /// A CloudWatch call as the AWS CLI makes it (JSON 1.0), signed by `u` at the world's time:
    /// the status and the answer (`{}` for none; `{"__type", "message"}` for an error).
    pub async fn cloudwatch(
        &self,
        u: &User,
        operation: &str,
        body: serde_json::Value,
    ) -> (u16, serde_json::Value) {
        let at = WorldTime(self.clock.clone()).now();
        let req = RawRequest::cloudwatch(
            4580,
            (&u.access_key_id, &u.secret),
            operation,
            &body.to_string(),
            at,
        );
        let out = self.send(&req).await;
        // An answer that is not JSON is shown as it came (`__unparsed`), for the simulation to
        // judge it.
        let answer = serde_json::from_slice(&out.body).unwrap_or_else(
            |_| serde_json::json!({"__unparsed": String::from_utf8_lossy(&out.body)}),
        );
        (out.status, answer)
    }

    /// Delivers queued messages to a provisioner until none is visible now, as Lambda's event
    /// source does (a failed message comes back as the provisioner hid it). Returns how many were
    /// handled.
    pub async fn settle(&self) -> usize {
        let mut handled = 0;
        loop {
            let batch = self.queue.receive(10);
            if batch.is_empty() {
                return handled;
            }
            handled += batch.len();
            let failed = self.provisioner().handle_batch(batch.clone()).await;
            self.queue.settle(&batch, &failed);
        }
    }

    /// One run of the health check (the scheduled actions due, a sweep message per (user,
    /// cloud)), then what it queued: the sweeps, and the reconciles they and the scheduler queue.
    pub async fn sweep(&self) -> health_check::Report {
        let run = self
            .health()
            .run()
            .await
            .expect("the health check reads the store");
        self.settle().await;
        run.health
    }

    /// Runs the scheduler alone with the `k`-th adapter step armed to crash: true if it crashed
    /// there (the run is dropped mid-way, as a killed Lambda is), false if it finished first.
    pub async fn scheduler_crashing_at(&self, k: u64) -> bool {
        let now = self.clock.now_ms();
        self.trip.arm(k);
        let crashed = tokio::select! {
            _ = health_check::scheduler::fire_due(self.store.as_ref(), self.queue.as_ref(), now) => false,
            _ = self.trip.tripped() => true,
        };
        self.trip.disarm();
        crashed
    }

    /// Runs the metric policies' evaluation alone with the `k`-th adapter step armed to crash: true
    /// if it crashed there (the run is dropped mid-way, as a killed Lambda is), false if it
    /// finished first.
    pub async fn tracker_crashing_at(&self, k: u64) -> bool {
        let now = self.clock.now_ms();
        let connect = prometheus::Connect(self.prometheus.clone());
        let tracker = health_check::tracker::Tracker {
            store: self.store.as_ref(),
            queue: self.queue.as_ref(),
            connect: &connect,
            period_ms: METRIC_PERIOD_MS,
            now_ms: now,
        };
        self.trip.arm(k);
        let run = async {
            if let Ok(due) = phantom_seams::store::Fleet::due(self.store.as_ref(), now).await {
                let mut groups = Vec::new();
                for read in
                    phantom_seams::store::samples::groups_of_due(self.store.as_ref(), &due).await
                {
                    if let Ok(gs) = read.groups {
                        groups.extend(gs.into_iter().map(|g| (read.user.clone(), g)));
                    }
                }
                let _ = tracker.run(&groups).await;
            }
        };
        let crashed = tokio::select! {
            _ = run => false,
            _ = self.trip.tripped() => true,
        };
        self.trip.disarm();
        crashed
    }

    /// Moves the clock `secs` seconds, one at a time: each second the queue settles, and the
    /// health check sweeps every second (the local stack's test interval).
    pub async fn run_for(&self, secs: u64) {
        for _ in 0..secs {
            self.clock.advance_ms(1_000);
            self.settle().await;
            self.sweep().await;
        }
    }

    /// Moves the clock `secs` seconds, one at a time, delivering what the queue holds each second
    /// but never running the health check: what the provisioner does on its own.
    pub async fn run_without_sweeps(&self, secs: u64) {
        for _ in 0..secs {
            self.clock.advance_ms(1_000);
            self.settle().await;
        }
    }

    /// Runs second by second until `check` holds, at most `secs`; says `what` if it never does.
    pub async fn until<T>(
        &self,
        secs: u64,
        what: &str,
        mut check: impl AsyncFnMut() -> Option<T>,
    ) -> T {
        self.settle().await;
        for _ in 0..=secs {
            if let Some(v) = check().await {
                return v;
            }
            self.run_for(1).await;
        }
        panic!("not within {secs} s of the world's clock: {what}");
    }

    /// Runs one reconcile with the `k`-th adapter step armed to crash: true if it crashed there
    /// (the reconcile is dropped mid-way, as a killed Lambda is), false if it finished first.
    /// Receives a batch and runs it with the `k`-th adapter step armed to crash, as a Lambda
    /// invocation killed mid-batch: true if it crashed (its messages are left on the queue as it
    /// last hid them), false if it finished first (settled as Lambda settles a batch).
    pub async fn batch_crashing_at(&self, k: u64) -> bool {
        let batch = self.queue.receive(10);
        let p = self.provisioner();
        self.trip.arm(k);
        let failed = tokio::select! {
            biased;
            _ = self.trip.tripped() => None,
            failed = p.handle_batch(batch.clone()) => Some(failed),
        };
        self.trip.disarm();
        match failed {
            Some(failed) => {
                self.queue.settle(&batch, &failed);
                false
            }
            None => true,
        }
    }

    pub async fn reconcile_crashing_at(&self, msg: &Reconcile, k: u64) -> bool {
        let p = self.provisioner();
        self.trip.arm(k);
        let crashed = tokio::select! {
            _ = p.reconcile(msg) => false,
            _ = self.trip.tripped() => true,
        };
        self.trip.disarm();
        crashed
    }
}

/// AWS Health's event type code for a scheduled EC2 event.
pub fn health_code(code: phantom_model::status::EventCode) -> &'static str {
    use phantom_model::status::EventCode::*;
    match code {
        InstanceRetirement => "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
        InstanceStop => "AWS_EC2_INSTANCE_STOP_SCHEDULED",
        InstanceReboot => "AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED",
        SystemReboot => "AWS_EC2_SYSTEM_REBOOT_MAINTENANCE_SCHEDULED",
        SystemMaintenance => "AWS_EC2_MAINTENANCE_SCHEDULED",
    }
}

/// The SDK's HTTP client, in process: each request goes to `App::handle`.
#[derive(Clone)]
pub struct InProcess(pub Arc<App>);

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InProcess")
    }
}

impl HttpConnector for InProcess {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let app = self.0.clone();
        HttpConnectorFuture::new(async move {
            let uri: http::Uri = request.uri().parse().expect("the SDK sends a valid URI");
            let mut headers = http::HeaderMap::new();
            for (k, v) in request.headers() {
                headers.append(
                    http::HeaderName::from_bytes(k.as_bytes()).expect("a header name"),
                    http::HeaderValue::from_str(v).expect("a header value"),
                );
            }
            // What a socket would add: the Host the SDK signed.
            if !headers.contains_key(http::header::HOST) {
                let host = uri.authority().map(|a| a.as_str()).unwrap_or_default();
                headers.insert(
                    http::header::HOST,
                    http::HeaderValue::from_str(host).expect("a host"),
                );
            }
            let body = request.body().bytes().unwrap_or_default().to_vec();
            let path_and_query = uri.path_and_query().map_or("/", |p| p.as_str());
            let out = app
                .handle(api::HttpRequest {
                    method: request.method(),
                    path_and_query,
                    headers: &headers,
                    body: &body,
                    source_ip: Some(std::net::IpAddr::from([127, 0, 0, 1])),
                    secure: false,
                })
                .await;
            let mut response = HttpResponse::new(
                out.status.try_into().expect("a valid status"),
                SdkBody::from(out.body.into_owned()),
            );
            response
                .headers_mut()
                .insert("content-type", out.content_type);
            Ok(response)
        })
    }
}

/// The world's clock as the SDK's time source, so signatures carry the world's time.
#[derive(Clone)]
pub struct WorldTime(pub Arc<ManualClock>);

impl std::fmt::Debug for WorldTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WorldTime")
    }
}

impl TimeSource for WorldTime {
    fn now(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_millis(self.0.now_ms() as u64)
    }
}
