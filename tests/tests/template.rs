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

/// What template.yaml's EventBridge rule `rule` puts on the work queue for `event`: its input
/// transformer applied the way EventBridge applies it (each `<name>` replaced by the JSON value at
/// its path).
fn transformed(template: &str, rule: &str, event: &serde_json::Value) -> String {
    let lines: Vec<&str> = template.lines().collect();
    let from = lines
        .iter()
        .position(|l| *l == format!("  {rule}:"))
        .unwrap_or_else(|| panic!("template.yaml has no {rule}"));
    let at = |key: &str| {
        from + lines[from..]
            .iter()
            .position(|l| l.trim_start().starts_with(key))
            .unwrap_or_else(|| panic!("{rule} has no {key}"))
    };
    let paths_at = at("InputPathsMap:");
    let indent = |l: &str| l.len() - l.trim_start().len();
    let paths: Vec<(&str, &str)> = lines[paths_at + 1..]
        .iter()
        .take_while(|l| indent(l) > indent(lines[paths_at]))
        .map(|l| l.trim().split_once(": ").expect("name: path"))
        .collect();
    let mut message = lines[at("InputTemplate:")]
        .trim()
        .trim_start_matches("InputTemplate:")
        .trim()
        .trim_matches('\'')
        .to_string();
    for (name, path) in &paths {
        // A path's keys are split on dots; `detail-type` is one key.
        let value = path
            .trim_start_matches("$.")
            .split('.')
            .fold(event, |v, k| &v[k]);
        assert!(!value.is_null(), "{path} is not in EC2's event");
        message = message.replace(&format!("<{name}>"), &value.to_string());
    }
    message
}

/// EC2's event of `detail_type` for i-abcd1111 (EventBridge's documentation of EC2 events).
fn ec2_event(detail_type: &str, detail: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "version": "0",
        "id": "7bf73129-1428-4cd3-a780-95db273d1602",
        "detail-type": detail_type,
        "source": "aws.ec2",
        "account": "123456789012",
        "time": "2026-11-25T14:06:02Z",
        "region": "us-east-1",
        "resources": ["arn:aws:ec2:us-east-1:123456789012:instance/i-abcd1111"],
        "detail": detail
    })
}

/// The EventBridge rules' input transformers, applied to EC2's documented events, give messages
/// the provisioner reads, for the events the provisioner acts on. This stands in for routing real
/// EC2 events on an emulator: moto's EC2 and LocalStack's send none to EventBridge.
#[test]
fn the_event_rules_write_what_the_provisioner_reads() {
    let template = std::fs::read_to_string(phantom_e2e::root().join("template.yaml")).unwrap();
    let event = ec2_event(
        "EC2 Instance State-change Notification",
        serde_json::json!({"instance-id": "i-abcd1111", "state": "terminated"}),
    );
    assert_eq!(
        phantom_seams::queue::Work::parse(&transformed(&template, "StateChangeRule", &event))
            .expect("the provisioner reads it"),
        phantom_seams::queue::Work::StateChange(phantom_seams::queue::StateChange {
            instance: "i-abcd1111".into(),
            state: "terminated".into(),
            region: "us-east-1".into(),
            account: "123456789012".into(),
        })
    );
    // The rule passes the states the provisioner acts on, and no others.
    assert!(template.contains("state: [stopping, stopped, shutting-down, terminated]"));
    let code =
        std::fs::read_to_string(phantom_e2e::root().join("functions/provisioner/src/lib.rs"))
            .unwrap();
    assert!(code.contains(r#""stopping" | "stopped" | "shutting-down" | "terminated""#));

    // The at-risk signals, each with the detail-type the memory cloud sends in process.
    for (detail_type, detail) in [
        (
            phantom_seams::cloud::memory::REBALANCE_RECOMMENDATION,
            serde_json::json!({"instance-id": "i-abcd1111"}),
        ),
        (
            phantom_seams::cloud::memory::INTERRUPTION_WARNING,
            serde_json::json!({"instance-id": "i-abcd1111", "instance-action": "terminate"}),
        ),
    ] {
        assert!(
            template.contains(detail_type),
            "AtRiskRule passes {detail_type}"
        );
        let event = ec2_event(detail_type, detail);
        assert_eq!(
            phantom_seams::queue::Work::parse(&transformed(&template, "AtRiskRule", &event))
                .expect("the provisioner reads it"),
            phantom_seams::queue::Work::AtRisk(phantom_seams::queue::AtRisk {
                instance: "i-abcd1111".into(),
                signal: detail_type.into(),
                region: "us-east-1".into(),
                account: "123456789012".into(),
            })
        );
    }
}

/// AWS Health's scheduled change to an EC2 instance (AWS Health's documented event, its resources
/// the instances' ids) reaches the provisioner as a `Scheduled` message.
#[test]
fn aws_healths_scheduled_events_reach_the_provisioner() {
    let template = std::fs::read_to_string(phantom_e2e::root().join("template.yaml")).unwrap();
    let event = serde_json::json!({
        "version": "0",
        "id": "121345678-1234-1234-1234-123456789012",
        "detail-type": "AWS Health Event",
        "source": "aws.health",
        "account": "123456789012",
        "time": "2026-11-25T14:06:02Z",
        "region": "us-east-1",
        "resources": ["i-abcd1111", "i-abcd2222"],
        "detail": {
            "eventArn": "arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_123",
            "service": "EC2",
            "eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
            "eventTypeCategory": "scheduledChange",
            "affectedEntities": [{"entityValue": "i-abcd1111"}, {"entityValue": "i-abcd2222"}]
        }
    });
    assert_eq!(
        phantom_seams::queue::Work::parse(&transformed(&template, "ScheduledEventRule", &event))
            .expect("the provisioner reads it"),
        phantom_seams::queue::Work::Scheduled(phantom_seams::queue::Scheduled {
            instances: vec!["i-abcd1111".into(), "i-abcd2222".into()],
            code: "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED".into(),
            region: "us-east-1".into(),
            account: "123456789012".into(),
        })
    );
    assert!(template.contains("source: [aws.health]"));
    assert!(template.contains("eventTypeCategory: [scheduledChange]"));
}

/// Each function's bootstrap starts with exactly the environment template.yaml gives it and
/// Lambda's own variables: it gets as far as asking the Runtime API for its first event. Without
/// a variable it needs, it stops first, saying which: a main that reads what the template does not
/// set for it fails here, not on a user's account.
#[test]
fn each_function_starts_with_the_environment_template_yaml_gives_it() {
    use phantom_e2e::lambda::{functions_on, run};
    let moto = phantom_e2e::moto::Moto::start();
    let functions = functions_on(&moto);
    let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["api", "provisioner", "health-check"]);
    for f in &functions {
        if let Err(e) = run(f, &f.env, &moto, None) {
            panic!("{e}");
        }
    }
    // One the template did not set: the bootstrap stops, naming it.
    let api = &functions[0];
    let without: Vec<_> = api
        .env
        .iter()
        .filter(|(k, _)| k != "PHANTOM_SECRETS_KEY")
        .cloned()
        .collect();
    let said = run(api, &without, &moto, None).expect_err("no key, no start");
    assert!(said.contains("PHANTOM_SECRETS_KEY"), "{said}");
}
