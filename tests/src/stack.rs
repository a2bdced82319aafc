//! The end-to-end harness: one local stack per test binary, started with `localstack/up.sh` on free
//! ports (it stops when the test process does), and the clients the tests drive it with: the AWS
//! CLI, aws-sdk-autoscaling, and raw SigV4-signed HTTP for what well-behaved clients never send.

use crate::argv;
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

pub const REGION: &str = "us-east-1";

pub struct Stack {
    /// What up.sh wrote to its `env` file.
    pub env: HashMap<String, String>,
    pub url: String,
    pub port: u16,
    pub root: PathBuf,
    /// up.sh's run folder (its logs and the env file).
    pub run_dir: PathBuf,
    /// up.sh, which stops the stack when it is told to or this process ends.
    up: Child,
}

#[derive(Debug, Clone)]
pub struct User {
    pub name: String,
    pub access_key_id: String,
    pub secret: String,
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_path_buf()
}

/// Where cargo put the workspace's binaries (up.sh builds them there).
pub fn bin_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
        .join(std::env::var("PHANTOM_PROFILE").unwrap_or_else(|_| "debug".into()))
}

/// A port nothing listens on, never one this process was given before: the kernel may hand the
/// same one out twice in a row once its listener is closed (two servers on one port).
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        if GIVEN.lock().expect("never poisoned").insert(port) {
            return port;
        }
    }
}

/// The calling file's stack, started when the file first asks for it (on the emulators
/// PHANTOM_EMULATOR and PHANTOM_STATE_STORE name, as up.sh reads them). Each file of a binary has
/// its own, so files run side by side without meeting each other's users, clouds or metric source.
#[track_caller]
pub fn stack() -> &'static Stack {
    stack_of(std::panic::Location::caller().file(), &[])
}

/// The calling file's stack on LocalStack whatever the environment says (with API Gateway in
/// front of the api).
#[track_caller]
pub fn localstack_stack() -> &'static Stack {
    stack_of(
        std::panic::Location::caller().file(),
        &[
            ("PHANTOM_EMULATOR", "localstack"),
            ("PHANTOM_STATE_STORE", "dynamodb-local"),
        ],
    )
}

/// The calling file's stack with the functions as Lambda runs them (`PHANTOM_RUNTIME=lambda`),
/// whatever the environment says.
#[track_caller]
pub fn lambda_stack() -> &'static Stack {
    stack_of(
        std::panic::Location::caller().file(),
        &[("PHANTOM_RUNTIME", "lambda")],
    )
}

/// As `lambda_stack`, with more of template.yaml's parameters (`"NAME=VALUE ..."`, as `sam
/// deploy --parameter-overrides` sets them); each call of a file gives the same.
#[track_caller]
pub fn lambda_stack_with(params: &'static str) -> &'static Stack {
    let env: &'static [(&str, &str)] = Box::leak(Box::new([
        ("PHANTOM_RUNTIME", "lambda"),
        ("PHANTOM_TEMPLATE_PARAMS", params),
    ]));
    stack_of(std::panic::Location::caller().file(), env)
}

/// A file's stack, and the threads using it now: once none has for a while, the file's tests
/// are over (a test binary runs its tests in name order, so a file's come one after another) and
/// the stack is stopped, so that a binary of many files keeps only the running files' stacks busy.
struct Kept {
    file: &'static str,
    stack: OnceLock<Stack>,
    users: Mutex<Users>,
}

#[derive(Default)]
struct Users {
    threads: usize,
    /// Counts the threads that ever took the stack, so a stop planned before the last came is
    /// called off.
    taken: u64,
    stopped: bool,
}

/// How long a stack with no test using it stays up, in case another test of its file comes.
const IDLE_STOP: Duration = Duration::from_secs(10);

impl Kept {
    fn take(&'static self) {
        let mut users = self.users.lock().expect("never poisoned");
        assert!(
            !users.stopped,
            "the stack of {} was stopped: a test of that file came {IDLE_STOP:?} after the others \
             had ended",
            self.file
        );
        users.threads += 1;
        users.taken += 1;
    }

    fn give_back(&'static self) {
        let mut users = self.users.lock().expect("never poisoned");
        users.threads -= 1;
        if users.threads > 0 {
            return;
        }
        let taken = users.taken;
        std::thread::spawn(move || {
            std::thread::sleep(IDLE_STOP);
            let mut users = self.users.lock().expect("never poisoned");
            if users.threads == 0 && users.taken == taken && !users.stopped {
                if let Some(stack) = self.stack.get() {
                    stack.stop();
                    users.stopped = true;
                }
            }
        });
    }
}

/// The stacks the current thread uses, given back when the thread (a test) ends.
struct Taken(Vec<&'static Kept>);

impl Drop for Taken {
    fn drop(&mut self) {
        for kept in &self.0 {
            kept.give_back();
        }
    }
}

thread_local! {
    static TAKEN: std::cell::RefCell<Taken> = const { std::cell::RefCell::new(Taken(Vec::new())) };
}

/// The stack kept for `file`, started on first use; a file asks for one kind of stack only.
fn stack_of(file: &'static str, emulators: &'static [(&str, &str)]) -> &'static Stack {
    static STACKS: Mutex<BTreeMap<&str, &Kept>> = Mutex::new(BTreeMap::new());
    let kept: &'static Kept = STACKS
        .lock()
        .expect("never poisoned")
        .entry(file)
        .or_insert_with(|| {
            Box::leak(Box::new(Kept {
                file,
                stack: OnceLock::new(),
                users: Mutex::default(),
            }))
        });
    TAKEN.with(|taken| {
        let mut taken = taken.borrow_mut();
        if !taken.0.iter().any(|k| std::ptr::eq(*k, kept)) {
            kept.take();
            taken.0.push(kept);
        }
    });
    // Started outside the map's lock: other files' stacks start meanwhile, once the first is up
    // (its up.sh installs what is missing and builds the console, which the others then find done).
    static FIRST_UP: Mutex<bool> = Mutex::new(false);
    kept.stack.get_or_init(|| {
        let mut first_up = FIRST_UP.lock().unwrap_or_else(|e| e.into_inner());
        if *first_up {
            drop(first_up);
            return start(emulators);
        }
        let stack = start(emulators);
        *first_up = true;
        stack
    })
}

fn start(emulators: &[(&str, &str)]) -> Stack {
    let root = root();
    // `cargo test --workspace` has built both (their own packages' tests need them); the stack
    // never builds the workspace again from inside a test.
    for bin in ["phantom-local", "phantomctl"] {
        assert!(
            bin_dir().join(bin).exists(),
            "{bin} is not built: run `cargo test --workspace` (or `cargo build -p phantom-local -p phantomctl`) first"
        );
    }
    let setting = |name: &str| {
        emulators
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
            .or_else(|| std::env::var(name).ok())
    };
    // LocalStack is installed on first use (493 MB, a minute or so): done here, where its progress
    // reaches the terminal that runs `cargo test`, not in the stack's log.
    let on_localstack = setting("PHANTOM_EMULATOR").is_some_and(|e| e == "localstack");
    if on_localstack {
        let ok = Command::new(root.join("localstack/localstack-host/install.sh"))
            .stdout(Stdio::null())
            .status()
            .expect("localstack/localstack-host/install.sh runs")
            .success();
        assert!(ok, "localstack/localstack-host/install.sh failed");
    }
    // The binary's one DynamoDB Local, unless the stack keeps its state in moto or the caller
    // gave an endpoint of their own.
    let dynamodb = (setting("PHANTOM_STATE_STORE").is_none_or(|s| s == "dynamodb-local")
        && setting("PHANTOM_DYNAMODB_ENDPOINT").is_none())
    .then(shared_dynamodb);
    let port = free_port();
    let run_dir = std::env::temp_dir().join(format!("phantom-e2e-{}-{port}", std::process::id()));
    let log_path =
        std::env::temp_dir().join(format!("phantom-e2e-{}-{port}-up.log", std::process::id()));
    let log = std::fs::File::create(&log_path).expect("a log file");
    let mut child = Command::new(root.join("localstack/up.sh"))
        .env("PHANTOM_PORT", port.to_string())
        .env("PHANTOM_STATE_PORT", free_port().to_string())
        .env("PHANTOM_HOTEL_PORT", free_port().to_string())
        .env("PHANTOM_SIERRA_PORT", free_port().to_string())
        .env("PHANTOM_DYNAMODB_PORT", free_port().to_string())
        .env("PHANTOM_LOCALSTACK_PORT", free_port().to_string())
        .env("PHANTOM_PROMETHEUS_PORT", free_port().to_string())
        .env("PHANTOM_LAMBDA_PORT", free_port().to_string())
        .env("PHANTOM_RUN_DIR", &run_dir)
        .env("PHANTOM_STACK_NAME", format!("phantom-{port}"))
        .envs(dynamodb.map(|url| ("PHANTOM_DYNAMODB_ENDPOINT", url)))
        .env("PHANTOM_WATCH_PID", std::process::id().to_string())
        .env("PHANTOM_SKIP_BUILD", "1")
        .env("RUST_LOG", "info")
        .envs(emulators.iter().copied())
        // 1 s for the tests; a benchmark may ask for the local default (5) or another.
        .env(
            "PHANTOM_HEALTH_INTERVAL_SECS",
            std::env::var("PHANTOM_HEALTH_INTERVAL_SECS").unwrap_or_else(|_| "1".into()),
        )
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn()
        .expect("localstack/up.sh starts");
    let env_file = run_dir.join("env");
    let deadline = Instant::now() + Duration::from_secs(900);
    while !env_file.exists() {
        let exited = child.try_wait().expect("up.sh is waitable");
        assert!(
            exited.is_none() && Instant::now() < deadline,
            "the local stack did not come up ({exited:?}); see {}",
            log_path.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let env: HashMap<String, String> = std::fs::read_to_string(&env_file)
        .expect("the env file")
        .lines()
        .filter_map(|l| l.strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Stack {
        url: env["PHANTOM_URL"].clone(),
        env,
        port,
        root,
        run_dir,
        up: child,
    }
}

/// One DynamoDB Local for every stack of this binary, each stack with a table of its own (named
/// after its port): a JVM of its own per stack cost about 7 s of CPU to start and a fifth of a core
/// while it ran, the suite's second cost after moto. It ends with this process, as up.sh ends with
/// PHANTOM_WATCH_PID.
fn shared_dynamodb() -> &'static str {
    static DB: OnceLock<crate::moto::DynamoDbLocal> = OnceLock::new();
    &DB.get_or_init(|| {
        // Installed by the first up.sh too; its own run here says what it installs, if anything.
        let ok = Command::new(root().join("localstack/install.sh"))
            .stdout(Stdio::null())
            .status()
            .expect("localstack/install.sh runs")
            .success();
        assert!(ok, "localstack/install.sh failed");
        crate::moto::DynamoDbLocal::for_this_process()
    })
    .url
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

impl Stack {
    /// The pids of the stack's processes running `bin` (a Lambda mode's function instances): the
    /// descendants of its up.sh with that name.
    pub fn processes(&self, bin: &str) -> Vec<u32> {
        let mut parent = std::collections::HashMap::new();
        let mut name = std::collections::HashMap::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // pid (comm) state ppid ...: the name may hold spaces, the rest follows its ')'.
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                continue;
            };
            let ppid = stat[close + 1..].split_whitespace().nth(1);
            if let Some(ppid) = ppid.and_then(|p| p.parse::<u32>().ok()) {
                parent.insert(pid, ppid);
                name.insert(pid, stat[open + 1..close].to_string());
            }
        }
        let root = self.up.id();
        let descends = |mut pid: u32| loop {
            match parent.get(&pid) {
                Some(&p) if p == root => return true,
                Some(&p) if p > 1 => pid = p,
                _ => return false,
            }
        };
        // /proc's comm is the name cut to 15 bytes.
        let comm: String = bin.chars().take(15).collect();
        name.iter()
            .filter(|(pid, n)| **n == comm && descends(**pid))
            .map(|(pid, _)| *pid)
            .collect()
    }

    /// Stops the stack: up.sh, told to end, stops what it started.
    fn stop(&self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.up.id().to_string()])
            .status();
    }

    /// The lines phantom-local has logged so far (JSON, one an object), in order.
    pub fn api_log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.run_dir.join("api.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Runs phantomctl against the stack's DynamoDB.
    pub fn phantomctl(&self, args: &[&str]) -> std::process::Output {
        Command::new(bin_dir().join("phantomctl"))
            .args(args)
            .env("AWS_ENDPOINT_URL", &self.env["AWS_ENDPOINT_URL"])
            .env(
                "AWS_ENDPOINT_URL_DYNAMODB",
                &self.env["AWS_ENDPOINT_URL_DYNAMODB"],
            )
            .env("AWS_ACCESS_KEY_ID", "admin")
            .env("AWS_SECRET_ACCESS_KEY", "admin")
            .env("AWS_REGION", REGION)
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("PHANTOM_STATE_TABLE", &self.env["PHANTOM_STATE_TABLE"])
            .env("PHANTOM_SECRETS_KEY", &self.env["PHANTOM_SECRETS_KEY"])
            .output()
            .expect("phantomctl runs")
    }

    /// `phantomctl ARGS` that prints a key (user create, user rotate): the key and its secret.
    pub fn phantomctl_keys(&self, args: &[&str]) -> (String, String) {
        keys_of(self.phantomctl(args))
    }

    /// A new user of its own, so tests running side by side never share resources.
    pub fn new_user(&self, prefix: &str) -> User {
        let fresh = || {
            format!(
                "{prefix}-{}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::SeqCst)
            )
        };
        let mut name = fresh();
        let mut out = self.phantomctl(&["user", "create", &name]);
        // DynamoDB Local now and then refuses a transaction the SDK sent again after a transient
        // failure (the same request, the same ClientRequestToken) with
        // IdempotentParameterMismatchException (aws/aws-sdk#413); the first try may have written
        // the user, whose secret is then lost: another name.
        for _ in 0..2 {
            if !local_mismatch(&out) {
                break;
            }
            name = fresh();
            out = self.phantomctl(&["user", "create", &name]);
        }
        let (key, secret) = keys_of(out);
        for cloud in ["hotel", "sierra"] {
            let cloud_key = format!("{name}-{cloud}");
            let set = || {
                self.phantomctl(&[
                    "credentials",
                    "set",
                    &name,
                    cloud,
                    "--access-key-id",
                    &cloud_key,
                    "--secret-access-key",
                    "cloud-secret",
                ])
            };
            let mut out = set();
            // Setting credentials again is harmless (the same DynamoDB Local refusal as above).
            if local_mismatch(&out) {
                out = set();
            }
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        User {
            name,
            access_key_id: key.to_string(),
            secret: secret.to_string(),
        }
    }

    /// Gives a user (before its first request: the api keeps a key 30 s) request limits of its
    /// own, with phantomctl: for a test that makes many calls in a row by design.
    pub fn set_limits(&self, user: &User, per_sec: f64, burst: f64) {
        let (rate, burst) = (per_sec.to_string(), burst.to_string());
        let out = self.phantomctl(&[
            "user",
            "limits",
            &user.name,
            "--describe-rate",
            &rate,
            "--describe-burst",
            &burst,
            "--mutate-rate",
            &rate,
            "--mutate-burst",
            &burst,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Registers the cloud `cloud` at `endpoint` (a test's own moto, or a fault proxy in front
    /// of one) and gives `user` credentials on it.
    pub fn add_cloud_for(&self, user: &User, cloud: &str, endpoint: &str) {
        for args in [
            argv!(
                "cloud add",
                cloud,
                "--endpoint",
                endpoint,
                "--region",
                REGION
            ),
            argv!(
                "credentials set",
                &user.name,
                cloud,
                "--access-key-id k --secret-access-key s"
            ),
        ] {
            let out = self.phantomctl(&args);
            assert!(out.status.success(), "phantomctl {args:?}: {out:?}");
        }
    }

    /// A cloud of the test's own for `user`: a moto server behind the fault proxy, registered as
    /// `cloud` (both stop when dropped).
    pub fn proxied_cloud(
        &self,
        user: &User,
        cloud: &str,
    ) -> (crate::moto::Moto, crate::fault_proxy::FaultProxy) {
        let moto = crate::moto::Moto::start();
        let proxy = crate::fault_proxy::FaultProxy::before(&moto.url);
        self.add_cloud_for(user, cloud, &proxy.url);
        (moto, proxy)
    }

    /// The EC2 endpoint of a local cloud (`hotel`, `sierra`).
    pub fn cloud_url(&self, cloud: &str) -> String {
        self.env[&format!("PHANTOM_CLOUD_{}_URL", cloud.to_uppercase())].clone()
    }

    /// `aws SERVICE ARGS --endpoint-url URL --output json`, with throwaway credentials (the
    /// emulator's clouds accept any).
    pub fn aws_service(&self, service: &str, url: &str, args: &[&str]) -> Cli {
        let args = [
            &[service],
            args,
            &["--endpoint-url", url, "--output", "json"],
        ]
        .concat();
        let set = [
            ("AWS_ACCESS_KEY_ID", "tester"),
            ("AWS_SECRET_ACCESS_KEY", "tester"),
            ("AWS_DEFAULT_REGION", REGION),
            ("AWS_CONFIG_FILE", "/nonexistent"),
            ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"),
            ("AWS_PAGER", ""),
        ];
        crate::aws_cli::aws(&args, &set, &["AWS_ENDPOINT_URL"]).into()
    }

    /// `aws ec2 ARGS` against a local cloud.
    pub fn ec2(&self, cloud: &str, args: &[&str]) -> Value {
        self.aws_service("ec2", &self.cloud_url(cloud), args).json()
    }

    /// The live (pending, running) VMs tagged for `owner` on the EC2 endpoint at `url`.
    pub fn live_vms(&self, url: &str, owner: &str) -> Vec<Value> {
        let out = self
            .aws_service(
                "ec2",
                url,
                &[
                    "describe-instances",
                    "--filters",
                    &format!("Name=tag:phantom:owner,Values={owner}"),
                    "Name=instance-state-name,Values=pending,running",
                ],
            )
            .json();
        instances(&out)
    }

    /// The VMs on `cloud` tagged for `owner`'s group `group` (by name), any state but terminated.
    pub fn vms(&self, cloud: &str, owner: &str, group: &str) -> Vec<Value> {
        let out = self.ec2(
            cloud,
            &[
                "describe-instances",
                "--filters",
                &format!("Name=tag:phantom:owner,Values={owner}"),
                &format!("Name=tag:phantom:group,Values={group}"),
                "Name=instance-state-name,Values=pending,running,stopping,stopped,shutting-down",
            ],
        );
        instances(&out)
    }
}

/// DynamoDB Local's false IdempotentParameterMismatchException on a retried transaction
/// (aws/aws-sdk#413), as phantomctl reports it.
fn local_mismatch(out: &std::process::Output) -> bool {
    !out.status.success()
        && String::from_utf8_lossy(&out.stderr).contains("IdempotentParameterMismatch")
}

/// The instances of a DescribeInstances answer.
fn instances(out: &Value) -> Vec<Value> {
    out["Reservations"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["Instances"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Prints the last lines of its stack's log if the test panics while it lives (`Stack::tell_on_panic`).
pub struct TellOnPanic<'a>(&'a Stack);

impl Drop for TellOnPanic<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        const LINES: usize = 80;
        let path = self.0.run_dir.join("api.log");
        let log = std::fs::read_to_string(&path).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        eprintln!("the last {LINES} lines of {}:", path.display());
        for line in &lines[lines.len().saturating_sub(LINES)..] {
            eprintln!("{line}");
        }
    }
}

impl Stack {
    /// A guard that prints the stack's last log lines if the test fails while it lives: for the
    /// tests whose failure the functions' own account explains (a stack of the test file's own).
    pub fn tell_on_panic(&self) -> TellOnPanic<'_> {
        TellOnPanic(self)
    }
}

/// Polls `check` every 200 ms until it returns Some, or panics after `secs` seconds saying `what`.
pub fn eventually<T>(secs: u64, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(Instant::now() < deadline, "not within {secs} s: {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Stack {
    /// Launch configuration `<group>@hotel` (moto's stock image) and `group` from it, through the
    /// AWS CLI as `user`.
    pub fn lc_and_group(&self, user: &User, group: &str, min: i64, max: i64, desired: i64) {
        let lc = format!("{group}@hotel");
        self.aws(
            user,
            &[
                "create-launch-configuration",
                "--launch-configuration-name",
                &lc,
                "--image-id",
                crate::world::IMAGE,
                "--instance-type",
                "t2.micro",
            ],
        )
        .json();
        let (min, max, desired) = (min.to_string(), max.to_string(), desired.to_string());
        self.aws(
            user,
            &argv!(
                "create-auto-scaling-group --auto-scaling-group-name",
                group,
                "--launch-configuration-name",
                &lc,
                "--min-size",
                &min,
                "--max-size",
                &max,
                "--desired-capacity",
                &desired
            ),
        )
        .json();
    }

    /// Group `group` as DescribeAutoScalingGroups shows it to `user`, if it has one.
    pub fn group(&self, user: &User, group: &str) -> Option<Value> {
        let out = self
            .aws(
                user,
                &argv!(
                    "describe-auto-scaling-groups --auto-scaling-group-names",
                    group
                ),
            )
            .json();
        out["AutoScalingGroups"].as_array()?.first().cloned()
    }

    /// The same, null if it has none.
    pub fn group_of(&self, user: &User, group: &str) -> Value {
        self.group(user, group).unwrap_or(Value::Null)
    }

    /// The ids of `group`'s InService VMs, once it has exactly `n` VMs and all serve.
    pub fn serving(&self, user: &User, group: &str, n: usize) -> Vec<String> {
        eventually(60, &format!("{n} VMs of {group} InService"), || {
            let g = self.group_of(user, group);
            let all = g["Instances"].as_array()?.clone();
            let up: Vec<String> = all
                .iter()
                .filter(|i| i["LifecycleState"] == "InService")
                .filter_map(|i| i["InstanceId"].as_str().map(str::to_string))
                .collect();
            (up.len() == n && all.len() == n).then_some(up)
        })
    }

    /// `aws autoscaling ARGS --endpoint-url URL --output json` as `user`.
    pub fn aws(&self, user: &User, args: &[&str]) -> Cli {
        self.aws_with_keys(&user.access_key_id, &user.secret, args)
    }

    pub fn aws_with_keys(&self, key: &str, secret: &str, args: &[&str]) -> Cli {
        self.aws_at(&self.url, key, secret, args)
    }

    /// `aws cloudwatch ARGS --endpoint-url URL --output json` as `user`.
    pub fn cloudwatch(&self, user: &User, args: &[&str]) -> Cli {
        self.aws_as(
            "cloudwatch",
            &self.url,
            &user.access_key_id,
            &user.secret,
            args,
        )
    }

    /// The AWS CLI with another endpoint URL (LocalStack's API Gateway in front of the api).
    pub fn aws_at(&self, url: &str, key: &str, secret: &str, args: &[&str]) -> Cli {
        self.aws_as("autoscaling", url, key, secret, args)
    }

    /// `aws SERVICE ARGS` at Phantom's endpoint with a session's key, secret and token (STS's).
    pub fn aws_in_session(
        &self,
        service: &str,
        (key, secret, token): (&str, &str, &str),
        args: &[&str],
    ) -> Cli {
        let args = [
            &[service],
            args,
            &["--endpoint-url", &self.url, "--output", "json"],
        ]
        .concat();
        let set = [
            ("AWS_ACCESS_KEY_ID", key),
            ("AWS_SECRET_ACCESS_KEY", secret),
            ("AWS_SESSION_TOKEN", token),
            ("AWS_DEFAULT_REGION", REGION),
            ("AWS_CONFIG_FILE", "/nonexistent"),
            ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"),
            ("AWS_MAX_ATTEMPTS", "1"),
            ("AWS_PAGER", ""),
        ];
        crate::aws_cli::aws(&args, &set, &["AWS_ENDPOINT_URL", "AWS_PROFILE"]).into()
    }

    /// `aws SERVICE ARGS` at `url` with the given keys.
    pub fn aws_as(&self, service: &str, url: &str, key: &str, secret: &str, args: &[&str]) -> Cli {
        let args = [
            &[service],
            args,
            &["--endpoint-url", url, "--output", "json"],
        ]
        .concat();
        let set = [
            ("AWS_ACCESS_KEY_ID", key),
            ("AWS_SECRET_ACCESS_KEY", secret),
            ("AWS_DEFAULT_REGION", REGION),
            ("AWS_CONFIG_FILE", "/nonexistent"),
            ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"),
            ("AWS_MAX_ATTEMPTS", "1"),
            ("AWS_PAGER", ""),
        ];
        crate::aws_cli::aws(&args, &set, &["AWS_ENDPOINT_URL", "AWS_PROFILE"]).into()
    }

    /// A health check (with its scheduler) on the stack's own table and queue, as a second Lambda
    /// instance of the function would run beside the stack's.
    pub async fn health_check(&self) -> health_check::HealthCheck {
        // The state store (DynamoDB Local or moto), and the queue and the key.
        let (db, sdk) = (
            crate::moto::sdk_for(&self.env["AWS_ENDPOINT_URL_DYNAMODB"]).await,
            crate::moto::sdk_for(&self.env["AWS_ENDPOINT_URL"]).await,
        );
        let secrets =
            std::sync::Arc::new(phantom_seams::secrets::Secrets::new(std::sync::Arc::new(
                phantom_seams::secrets::Kms::new(&sdk, self.env["PHANTOM_SECRETS_KEY"].clone()),
            )));
        health_check::HealthCheck {
            store: std::sync::Arc::new(phantom_seams::store::DynamoStore::new(
                &db,
                self.env["PHANTOM_STATE_TABLE"].clone(),
                secrets,
            )),
            queue: std::sync::Arc::new(phantom_seams::queue::SqsQueue::new(
                &sdk,
                self.env["PHANTOM_WORK_QUEUE_URL"].clone(),
            )),
            clock: std::sync::Arc::new(phantom_model::time::SystemClock),
            metrics: std::sync::Arc::new(phantom_seams::prometheus::http::Connect),
            metric_period_ms: 60_000,
            pulse: None,
            emf: None,
            probing: std::sync::Arc::new(health_check::prober::Probing::new(
                std::sync::Arc::new(phantom_seams::probe::NetProber::default()),
                std::sync::Arc::new(phantom_seams::cloud::ec2_query::Ec2Lookups::default()),
            )),
            publisher: std::sync::Arc::new(phantom_seams::publish::SnsSqs::new(&sdk)),
            listed: Default::default(),
        }
    }

    /// aws-sdk-autoscaling, configured as a user would: endpoint URL, region, static keys.
    pub fn sdk(&self, user: &User) -> aws_sdk_autoscaling::Client {
        sdk_at(&self.url, user)
    }

    /// POSTs `body` signed by `key`/`secret` at `at`; `tamper` may change the request after
    /// signing. Returns the status and the body.
    pub fn raw(
        &self,
        key: &str,
        secret: &str,
        body: &str,
        at: SystemTime,
        tamper: impl FnOnce(&mut RawRequest),
    ) -> (u16, String) {
        let mut req = RawRequest::signed(self.port, key, secret, "POST", "/", body, at);
        tamper(&mut req);
        req.send(self.port)
    }

    /// GETs `/?query`, signed.
    pub fn raw_get(&self, key: &str, secret: &str, query: &str) -> (u16, String) {
        let path = format!("/?{query}");
        RawRequest::signed(self.port, key, secret, "GET", &path, "", SystemTime::now())
            .send(self.port)
    }
}

/// The result of an AWS CLI call.
#[derive(Debug)]
pub struct Cli {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl From<crate::aws_cli::Run> for Cli {
    fn from(run: crate::aws_cli::Run) -> Self {
        Self {
            ok: run.code == 0,
            stdout: run.stdout,
            stderr: run.stderr,
        }
    }
}

impl Cli {
    pub fn json(&self) -> Value {
        assert!(
            self.ok,
            "the AWS CLI failed: {}{}",
            self.stderr, self.stdout
        );
        if self.stdout.trim().is_empty() {
            return Value::Null;
        }
        serde_json::from_str(&self.stdout).expect("the AWS CLI prints JSON")
    }

    /// Asserts the call failed with `code` and returns the message.
    pub fn error(&self, code: &str) -> String {
        assert!(
            !self.ok,
            "expected {code}, the call succeeded: {}",
            self.stdout
        );
        let marker = format!("({code})");
        assert!(
            self.stderr.contains(&marker),
            "expected {code}, got: {}",
            self.stderr
        );
        self.stderr
            .split_once(": ")
            .map(|(_, m)| m.trim().to_string())
            .unwrap_or_default()
    }
}

/// A hand-built HTTP/1.1 request, signed with aws-sigv4 as the SDKs sign.
pub struct RawRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawRequest {
    pub fn signed(
        port: u16,
        key: &str,
        secret: &str,
        method: &str,
        path: &str,
        body: &str,
        at: SystemTime,
    ) -> Self {
        let headers = vec![
            (
                "content-type".to_string(),
                "application/x-www-form-urlencoded; charset=utf-8".to_string(),
            ),
            ("host".to_string(), format!("127.0.0.1:{port}")),
        ];
        Self::signed_for(
            "autoscaling",
            (key, secret),
            method,
            path,
            headers,
            body,
            at,
        )
    }

    /// A Query protocol call (`Action=...&Version=...` in a form body) signed for `service`
    /// (`iam`, `sts`), with a session token when there is one.
    pub fn query(
        port: u16,
        service: &str,
        (key, secret): (&str, &str),
        body: &str,
        at: SystemTime,
    ) -> Self {
        let headers = vec![
            (
                "content-type".to_string(),
                "application/x-www-form-urlencoded; charset=utf-8".to_string(),
            ),
            ("host".to_string(), format!("127.0.0.1:{port}")),
        ];
        Self::signed_for(service, (key, secret), "POST", "/", headers, body, at)
    }

    /// A CloudTrail call in the JSON 1.1 protocol, as the AWS CLI sends it.
    pub fn cloudtrail(
        port: u16,
        keys: (&str, &str),
        operation: &str,
        body: &str,
        at: SystemTime,
    ) -> Self {
        let headers = vec![
            (
                "content-type".to_string(),
                "application/x-amz-json-1.1".to_string(),
            ),
            (
                "x-amz-target".to_string(),
                format!("com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.{operation}"),
            ),
            ("host".to_string(), format!("127.0.0.1:{port}")),
        ];
        Self::signed_for("cloudtrail", keys, "POST", "/", headers, body, at)
    }

    /// A CloudWatch call in the JSON 1.0 protocol, as the AWS CLI sends it, signed for
    /// `monitoring`.
    pub fn cloudwatch(
        port: u16,
        (key, secret): (&str, &str),
        operation: &str,
        body: &str,
        at: SystemTime,
    ) -> Self {
        let headers = vec![
            (
                "content-type".to_string(),
                "application/x-amz-json-1.0".to_string(),
            ),
            (
                "x-amz-target".to_string(),
                format!("GraniteServiceVersion20100801.{operation}"),
            ),
            ("host".to_string(), format!("127.0.0.1:{port}")),
        ];
        Self::signed_for("monitoring", (key, secret), "POST", "/", headers, body, at)
    }

    fn signed_for(
        service: &str,
        (key, secret): (&str, &str),
        method: &str,
        path: &str,
        headers: Vec<(String, String)>,
        body: &str,
        at: SystemTime,
    ) -> Self {
        let signable = SignableRequest::new(
            method,
            path,
            headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            SignableBody::Bytes(body.as_bytes()),
        )
        .expect("signable");
        let identity: Identity = Credentials::new(key, secret, None, None, "test").into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(REGION)
            .name(service)
            .time(at)
            .settings(SigningSettings::default())
            .build()
            .expect("params")
            .into();
        let (instructions, _) = sign(signable, &params).expect("signs").into_parts();
        let mut all = headers;
        for (k, v) in instructions.headers() {
            all.push((k.to_string(), v.to_string()));
        }
        Self {
            method: method.into(),
            path: path.into(),
            headers: all,
            body: body.to_string(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn set_header(&mut self, name: &str, value: &str) {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.headers.push((name.to_string(), value.to_string()));
    }

    pub fn remove_header(&mut self, name: &str) {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    }

    pub fn send(&self, port: u16) -> (u16, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the api listens");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!(
            "content-length: {}\r\nconnection: close\r\n\r\n",
            self.body.len()
        ));
        // A server may answer (an oversized body, a bad header) and close before it has read the
        // whole request: the write then fails with a broken pipe, and the answer is still there
        // to read.
        let sent = stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(self.body.as_bytes()));
        if let Err(e) = sent {
            assert!(
                matches!(
                    e.kind(),
                    std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
                ),
                "write: {e}"
            );
        }
        let mut response = Vec::new();
        // A reset after the answer (the request's unread rest) keeps what was read.
        if let Err(e) = stream.read_to_end(&mut response) {
            assert!(
                e.kind() == std::io::ErrorKind::ConnectionReset && !response.is_empty(),
                "read: {e}"
            );
        }
        let text = String::from_utf8_lossy(&response).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (status, body)
    }
}

/// The text of `<tag>` in an XML document.
pub fn xml_text<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(&xml[start..end])
}

/// aws-sdk-autoscaling for `user` against the api at `url`.
pub fn sdk_at(url: &str, user: &User) -> aws_sdk_autoscaling::Client {
    let creds = Credentials::new(&user.access_key_id, &user.secret, None, None, "test");
    let config = aws_sdk_autoscaling::Config::builder()
        .http_client(phantom_seams::config::https_client())
        .behavior_version(aws_sdk_autoscaling::config::BehaviorVersion::latest())
        .region(aws_sdk_autoscaling::config::Region::new(REGION))
        .endpoint_url(url)
        .credentials_provider(creds)
        .build();
    aws_sdk_autoscaling::Client::from_conf(config)
}

/// One user calling DescribeAutoScalingGroups from `clients` clients at once, retries off, until
/// `stop`: what it was answered, by code ("ok" for an answer).
pub struct Flood {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    answers: std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, usize>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Flood {
    /// Starts the clients on the current tokio runtime.
    pub fn start(url: &str, user: &User, clients: usize) -> Self {
        use aws_sdk_autoscaling::error::ProvideErrorMetadata;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let answers =
            std::sync::Arc::<std::sync::Mutex<std::collections::BTreeMap<String, usize>>>::default(
            );
        let tasks = (0..clients)
            .map(|_| {
                let config = sdk_at(url, user)
                    .config()
                    .to_builder()
                    .retry_config(aws_sdk_autoscaling::config::retry::RetryConfig::disabled())
                    .build();
                let f = aws_sdk_autoscaling::Client::from_conf(config);
                let (stop, answers) = (stop.clone(), answers.clone());
                tokio::spawn(async move {
                    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                        let key = match f.describe_auto_scaling_groups().send().await {
                            Ok(_) => "ok".to_string(),
                            Err(e) => e.code().unwrap_or("?").to_string(),
                        };
                        *answers.lock().unwrap().entry(key).or_default() += 1;
                    }
                })
            })
            .collect();
        Self {
            stop,
            answers,
            tasks,
        }
    }

    /// Stops the clients and gives what they were answered.
    pub async fn stop(self) -> std::collections::BTreeMap<String, usize> {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        for t in self.tasks {
            t.await.expect("a flooding client");
        }
        let answers = self.answers.lock().unwrap().clone();
        answers
    }
}

/// The `ACCESS_KEY SECRET` line phantomctl printed.
fn keys_of(out: std::process::Output) -> (String, String) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8(out.stdout).expect("utf-8");
    let (key, secret) = line.trim().split_once(' ').expect("ACCESS_KEY SECRET");
    (key.to_string(), secret.to_string())
}
