//! A moto server of a test's own, and AWS's DynamoDB Local, for the contract suites (each stopped
//! when dropped).

use phantom_seams::store::{CloudCredentials, CloudRecord};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Moto {
    child: Child,
    pub url: String,
}

impl Moto {
    /// `aws ARGS` against this server (throwaway credentials, JSON out), as a user of the
    /// emulator runs it; a failed command fails the test.
    pub fn aws(&self, args: &[&str]) -> serde_json::Value {
        let args = [args, &["--endpoint-url", &self.url, "--output", "json"]].concat();
        let set = [
            ("AWS_ACCESS_KEY_ID", "contract"),
            ("AWS_SECRET_ACCESS_KEY", "contract"),
            ("AWS_DEFAULT_REGION", crate::REGION),
            ("AWS_CONFIG_FILE", "/nonexistent"),
            ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"),
        ];
        let run = crate::aws_cli::aws(&args, &set, &["AWS_ENDPOINT_URL"]);
        assert!(run.code == 0, "{args:?}: {}", run.stderr);
        serde_json::from_str(&run.stdout).unwrap_or(serde_json::Value::Null)
    }

    /// Up to 10 messages of the SQS queue at `url` (its attributes too), as a consumer receives
    /// them with the AWS CLI: a long poll of `wait_secs` that ends once one is visible.
    pub fn receive(&self, url: &str, wait_secs: u64) -> Vec<serde_json::Value> {
        let out = self.aws(&[
            "sqs",
            "receive-message",
            "--queue-url",
            url,
            "--max-number-of-messages",
            "10",
            "--attribute-names",
            "All",
            "--wait-time-seconds",
            &wait_secs.to_string(),
        ]);
        out["Messages"].as_array().cloned().unwrap_or_default()
    }

    /// Starts moto's server on a free port and waits until it listens.
    pub fn start() -> Self {
        Self::on(crate::free_port())
    }

    /// Starts moto's server on a free port with `env` set (e.g. PHANTOM_CLOUD_FORGET_SECS).
    pub fn start_with(env: &[(&str, &str)]) -> Self {
        Self::spawn(crate::free_port(), env)
    }

    /// Starts moto's server on `port` (again, after a stop: an empty cloud) as the local stack
    /// runs it (localstack/moto/serve.py) and waits until it listens.
    pub fn on(port: u16) -> Self {
        Self::spawn(port, &[])
    }

    fn spawn(port: u16, env: &[(&str, &str)]) -> Self {
        let child = Command::new("python3")
            .arg(crate::root().join("localstack/moto/serve.py"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs localstack/moto/serve.py (localstack/install.sh installs moto)");
        let moto = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        wait_for(port, "moto_server");
        moto
    }

    /// Creates template.yaml's table, KMS key and queues here (localstack/bootstrap.py) for stack
    /// `stack`, the table on `dynamodb` if given (DynamoDB Local), and returns the store of that
    /// table (its secrets sealed with this server's KMS) and the table's name.
    pub async fn state_store(
        &self,
        stack: &str,
        dynamodb: Option<&str>,
    ) -> (phantom_seams::store::DynamoStore, String) {
        let db_url = dynamodb.unwrap_or(&self.url);
        let exports = self.bootstrap(&["--stack", stack], db_url);
        let sdk = self.sdk().await;
        let secrets =
            std::sync::Arc::new(phantom_seams::secrets::Secrets::new(std::sync::Arc::new(
                phantom_seams::secrets::Kms::new(&sdk, exports["PHANTOM_SECRETS_KEY"].clone()),
            )));
        let table = exports["PHANTOM_STATE_TABLE"].clone();
        (
            phantom_seams::store::DynamoStore::new(&sdk_for(db_url).await, table.clone(), secrets),
            table,
        )
    }

    /// localstack/bootstrap.py with `args` on this server (the table on `dynamodb`): what it
    /// exports (the names of the table, key and queues).
    pub fn bootstrap(
        &self,
        args: &[&str],
        dynamodb: &str,
    ) -> std::collections::HashMap<String, String> {
        let out = Command::new("python3")
            .arg(crate::root().join("localstack/bootstrap.py"))
            .arg(crate::root().join("template.yaml"))
            .args(args)
            .envs(self.aws_env())
            .env("AWS_ENDPOINT_URL_DYNAMODB", dynamodb)
            .output()
            .expect("bootstrap.py runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.strip_prefix("export ")?.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// An AWS identity and region on this server (any credentials do), as the environment gives it.
    pub fn aws_env(&self) -> [(&'static str, String); 5] {
        [
            ("AWS_ENDPOINT_URL", self.url.clone()),
            ("AWS_ACCESS_KEY_ID", "contract".into()),
            ("AWS_SECRET_ACCESS_KEY", "contract".into()),
            ("AWS_REGION", crate::REGION.into()),
            ("AWS_DEFAULT_REGION", crate::REGION.into()),
        ]
    }

    /// SDK configuration for this server (any credentials do).
    pub async fn sdk(&self) -> aws_config::SdkConfig {
        sdk_for(&self.url).await
    }
}

/// SDK configuration for an emulator (credentials of letters only, as DynamoDB Local wants them).
pub async fn sdk_for(url: &str) -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(phantom_seams::config::https_client())
        .endpoint_url(url)
        .region(aws_config::Region::new(crate::REGION))
        .credentials_provider(aws_credential_types::Credentials::new(
            "contract", "contract", None, None, "test",
        ))
        .load()
        .await
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// AWS's DynamoDB Local (the jar localstack/install.sh installs), in memory, on a free port.
pub struct DynamoDbLocal {
    child: Child,
    pub url: String,
}

impl DynamoDbLocal {
    /// One stopped when dropped.
    pub fn start() -> Self {
        Self::spawn(r#"source "$1" && ddb_run "$2""#)
    }

    /// One that ends with this process, dropped or not (a static's): a watcher stops it once this
    /// process is gone, as up.sh stops with PHANTOM_WATCH_PID.
    pub fn for_this_process() -> Self {
        Self::spawn(
            r#"source "$1" && { ddb_run "$2" & db=$!
               while kill -0 "$3" 2>/dev/null && kill -0 "$db" 2>/dev/null; do sleep 1; done
               kill "$db" 2>/dev/null; }"#,
        )
    }

    /// `script` with home.sh, a free port and this process's id as $1, $2 and $3.
    fn spawn(script: &str) -> Self {
        let port = crate::free_port();
        // As up.sh runs it: one definition of its flags (localstack/dynamodb-local/home.sh).
        let child = Command::new("bash")
            .arg("-c")
            .arg(script)
            .arg("bash")
            .arg(crate::root().join("localstack/dynamodb-local/home.sh"))
            .arg(port.to_string())
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("bash runs");
        let db = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        wait_for(port, "DynamoDB Local (localstack/install.sh installs it)");
        db
    }
}

/// Waits up to a minute until something listens on `port`.
pub(crate) fn wait_for(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for DynamoDbLocal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A cloud named `name` at `endpoint` in moto's region, with launch templates and load balancers,
/// and keys named after it (moto takes any).
pub fn cloud(name: &str, endpoint: &str) -> (CloudRecord, CloudCredentials) {
    (
        CloudRecord {
            name: name.into(),
            endpoint: endpoint.into(),
            region: crate::REGION.into(),
            zone: "us-east-1a".into(),
            launch_templates: true,
            load_balancers: true,
            events: false,
            status_checks: true,
        },
        CloudCredentials {
            cloud: name.into(),
            access_key_id: name.into(),
            secret: name.into(),
        },
    )
}
