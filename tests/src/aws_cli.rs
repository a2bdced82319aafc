//! The AWS CLI as the end-to-end tests run it: `awscli.clidriver`, the code the `aws` script runs,
//! kept running in a few Python processes (aws_cli/driver.py) that take one command at a time.
//! Each command builds its session from its own environment, as a new `aws` process would; what is
//! saved is the 0.4 s of CPU that importing the CLI and parsing the models takes per process, which
//! made the AWS CLI half the suite's CPU. The README's blocks and Ansible still run `aws` itself.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

/// How a command exited and what it printed.
pub struct Run {
    pub code: i64,
    pub stdout: String,
    pub stderr: String,
}

/// `aws ARGS` in the test process's environment with `set` added and `unset` removed.
pub fn aws(args: &[&str], set: &[(&str, &str)], unset: &[&str]) -> Run {
    let mut env: BTreeMap<String, String> = std::env::vars().collect();
    for name in unset {
        env.remove(*name);
    }
    for (name, value) in set {
        env.insert(name.to_string(), value.to_string());
    }
    let request = serde_json::json!({ "args": args, "env": env }).to_string();
    // One driver per command in flight: an idle one, or a new one when all are busy.
    let idle = IDLE.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let mut driver = idle.unwrap_or_else(Driver::start);
    let run = driver.run(&request);
    IDLE.lock().unwrap_or_else(|e| e.into_inner()).push(driver);
    run
}

static IDLE: Mutex<Vec<Driver>> = Mutex::new(Vec::new());

/// One Python process running the CLI's driver. It exits when the test process does (its stdin
/// closes).
struct Driver {
    child: Child,
    requests: ChildStdin,
    answers: BufReader<ChildStdout>,
}

impl Driver {
    fn start() -> Self {
        // The interpreter localstack/install.sh installs the AWS CLI into.
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
        let mut child = Command::new(&python)
            .args(["-c", include_str!("aws_cli/driver.py")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{python} runs the AWS CLI's driver: {e}"));
        let requests = child.stdin.take().expect("piped");
        let answers = BufReader::new(child.stdout.take().expect("piped"));
        Self {
            child,
            requests,
            answers,
        }
    }

    fn run(&mut self, request: &str) -> Run {
        let mut line = String::new();
        let asked = writeln!(self.requests, "{request}").and_then(|()| self.requests.flush());
        if asked.is_err() || self.answers.read_line(&mut line).unwrap_or(0) == 0 {
            let mut why = String::new();
            if let Some(mut stderr) = self.child.stderr.take() {
                let _ = stderr.read_to_string(&mut why);
            }
            panic!(
                "the AWS CLI's driver stopped (pip install awscli: localstack/install.sh): {why}"
            );
        }
        let answer: serde_json::Value =
            serde_json::from_str(&line).expect("the driver answers one JSON line");
        let text = |k: &str| answer[k].as_str().expect("the driver's answer").to_string();
        Run {
            code: answer["code"].as_i64().expect("the driver's exit code"),
            stdout: text("stdout"),
            stderr: text("stderr"),
        }
    }
}
