//! template.yaml: it agrees with the code (infra/check_template.py compares the functions'
//! binaries, the environment variables, the table's keys, TTL and indexes, both ways), and it deploys.

use std::process::Command;

fn check(template: &std::path::Path) -> (bool, String) {
    let out = Command::new("python3")
        .arg(phantom_e2e::root().join("infra/check_template.py"))
        .arg(template)
        .output()
        .expect("python3 runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_template_and_the_code_agree() {
    let (ok, err) = check(&phantom_e2e::root().join("template.yaml"));
    assert!(ok, "{err}");
}

#[test]
fn drift_either_way_is_caught() {
    let original = std::fs::read_to_string(phantom_e2e::root().join("template.yaml")).unwrap();
    let cases = [
        (
            "Binary: api\n",
            "Binary: api-v2\n",
            "builds binary 'api-v2'",
        ),
        (
            "Binary: health-check\n",
            "Binary: provisioner\n",
            "binary 'health-check' (functions/) has no function",
        ),
        (
            "        PHANTOM_REGION: !Ref AWS::Region\n",
            "",
            "the code reads PHANTOM_REGION",
        ),
        (
            "        RUST_LOG: !Ref LogLevel\n",
            "        RUST_LOG: !Ref LogLevel\n        PHANTOM_COLOUR: blue\n",
            "the template sets PHANTOM_COLOUR",
        ),
        (
            "        - AttributeName: sk\n          KeyType: RANGE",
            "        - AttributeName: sortkey\n          KeyType: RANGE",
            "table keys",
        ),
        (
            "        AttributeName: expires\n",
            "        AttributeName: ttl\n",
            "TTL attribute",
        ),
    ];
    let dir = std::env::temp_dir().join(format!("phantom-template-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (from, to, expect) in cases {
        assert!(original.contains(from), "the template has {from:?}");
        let path = dir.join("template.yaml");
        std::fs::write(&path, original.replacen(from, to, 1)).unwrap();
        let (ok, err) = check(&path);
        assert!(!ok, "{expect}: the check passed");
        assert!(err.contains(expect), "{expect}: {err}");
    }
}

/// The SAM template, transformed as `sam deploy` would and deployed with CloudFormation to moto.
#[test]
fn the_template_deploys_to_the_emulator() {
    let out = Command::new("python3")
        .arg(phantom_e2e::root().join("infra/smoke_deploy.py"))
        .arg(phantom_e2e::free_port().to_string())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
