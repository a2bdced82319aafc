//! phantomctl refuses bad arguments before it touches the store (and, being an integration test
//! of this package, makes `cargo test --workspace` build the binary the local stack runs).

use std::process::Command;

#[test]
fn a_bad_user_name_is_refused_without_touching_the_store() {
    let out = Command::new(env!("CARGO_BIN_EXE_phantomctl"))
        .args(["user", "create", "not a name!"])
        .env("PHANTOM_SECRETS_KEY", "alias/never-asked")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "x")
        .env("AWS_SECRET_ACCESS_KEY", "x")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .output()
        .expect("phantomctl runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("must be 1 to 64 letters"), "{err}");
}

#[test]
fn without_the_secrets_key_it_refuses_to_start() {
    let out = Command::new(env!("CARGO_BIN_EXE_phantomctl"))
        .args(["user", "list"])
        .env_remove("PHANTOM_SECRETS_KEY")
        .env("AWS_REGION", "us-east-1")
        .output()
        .expect("phantomctl runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("PHANTOM_SECRETS_KEY is not set"), "{err}");
}

#[test]
fn an_unknown_command_prints_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_phantomctl"))
        .arg("frobnicate")
        .output()
        .expect("phantomctl runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage"));
}
