//! phantom-local fails loudly on an address it cannot serve or a setting it cannot read (and,
//! being an integration test of this package, makes `cargo test --workspace` build the binary the
//! local stack runs).

use std::process::{Command, Output};

/// phantom-local with `vars` and just enough else to get as far as reading them (no queue, no
/// health check, an AWS endpoint nobody listens on).
fn run(vars: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phantom-local"))
        .env("PHANTOM_HEALTH_INTERVAL_SECS", "0")
        .env_remove("PHANTOM_WORK_QUEUE_URL")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "x")
        .env("AWS_SECRET_ACCESS_KEY", "x")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .envs(vars.iter().copied())
        .output()
        .expect("phantom-local runs")
}

#[test]
fn an_unusable_bind_address_is_an_error_not_a_hang() {
    assert!(!run(&[("PHANTOM_BIND", "not-an-address")]).status.success());
}

#[test]
fn an_unreadable_trust_setting_is_an_error_not_a_default() {
    let out = run(&[
        ("PHANTOM_BIND", "127.0.0.1:0"),
        ("PHANTOM_TRUST_FORWARDED", "yes"),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("PHANTOM_TRUST_FORWARDED=yes is neither true nor false"),
        "{stderr}"
    );
}
