//! phantom-local fails loudly on an address it cannot serve (and, being an integration test of
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
