//! phantom-local fails loudly on an address it cannot serve or a setting it cannot read (and, being an integration test of
//! this package, makes `cargo test --workspace` build the binary the local stack runs).

use std::process::Command;

#[test]
fn an_unusable_bind_address_is_an_error_not_a_hang() {
    let out = Command::new(env!("CARGO_BIN_EXE_phantom-local"))
        .env("PHANTOM_BIND", "not-an-address")
        .env("PHANTOM_HEALTH_INTERVAL_SECS", "0")
        .env_remove("PHANTOM_WORK_QUEUE_URL")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "x")
        .env("AWS_SECRET_ACCESS_KEY", "x")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .output()
        .expect("phantom-local runs");
    assert!(!out.status.success());
}

#[test]
fn an_unreadable_trust_setting_is_an_error_not_a_default() {
    let out = Command::new(env!("CARGO_BIN_EXE_phantom-local"))
        .env("PHANTOM_BIND", "127.0.0.1:0")
        .env("PHANTOM_TRUST_FORWARDED", "yes")
        .env("PHANTOM_HEALTH_INTERVAL_SECS", "0")
        .env_remove("PHANTOM_WORK_QUEUE_URL")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "x")
        .env("AWS_SECRET_ACCESS_KEY", "x")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .output()
        .expect("phantom-local runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("PHANTOM_TRUST_FORWARDED=yes is neither true nor false"),
        "{stderr}"
    );
}
