//! Hostile input through the real HTTP path: malformed bodies, wrong content types, huge bodies and
//! values, every length limit at and past the edge, non-UTF-8, XML special characters, list
//! indices with gaps and huge numbers, numbers out of range, unknown parameters. Each gets the
//! error a client expects (4xx, AWS's code), never a 500, a panic or a hang, and changes nothing.

use phantom_e2e::argv;
use phantom_e2e::{stack, xml_text, User};
use std::time::SystemTime;

fn send(u: &User, body: &str) -> (u16, String) {
    stack().raw(&u.access_key_id, &u.secret, body, SystemTime::now(), |_| {})
}

fn code(body: &str) -> String {
    xml_text(body, "Code").unwrap_or("(none)").to_string()
}

fn create_lc_body(name: &str, extra: &str) -> String {
    format!(
        "Action=CreateLaunchConfiguration&Version=2011-01-01&LaunchConfigurationName={}&ImageId=ami-1e749f67&InstanceType=t2.micro{extra}",
        pct(name)
    )
}

/// Percent-encodes everything but unreserved characters.
fn pct(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn lc_count(u: &User) -> usize {
    let (status, b) = send(
        u,
        "Action=DescribeLaunchConfigurations&Version=2011-01-01&MaxRecords=100",
    );
    // A failed Describe would count zero and pass every "nothing was created" check.
    assert_eq!(status, 200, "{b}");
    b.matches("<LaunchConfigurationName>").count()
}

#[test]
fn malformed_input_gets_4xx_and_changes_nothing() {
    let s = stack();
    let u = s.new_user("hostile");
    let long = "x".repeat(1 << 20);
    let cases: Vec<(String, &str)> = vec![
        ("Action=CreateLaunchConfiguration&Version=2011-01-01&LaunchConfigurationName=".into(), "ValidationError"),
        ("Action=CreateLaunchConfiguration&Version=2011-01".into(), "InvalidAction"),
        ("Action=Create%ZZLaunch&Version=2011-01-01".into(), "InvalidAction"),
        ("&&&=&==&".into(), "InvalidAction"),
        ("Action".into(), "InvalidAction"),
        ("{\"Action\":\"DescribeAutoScalingGroups\"}".into(), "InvalidAction"),
        (create_lc_body("web@", ""), "ValidationError"),
        (format!("{}&ImageId=%FF%FE", create_lc_body("n@hotel", "")), "MalformedQueryString"),
        (create_lc_body(&long, ""), "ValidationError"),
        (create_lc_body("ctl\u{1}@hotel", ""), "ValidationError"),
        (create_lc_body("n@hotel", "&SecurityGroups.member.1=a&SecurityGroups.member.3=c"), "ValidationError"),
        (create_lc_body("n@hotel", "&SecurityGroups.member.4294967296=a"), "ValidationError"),
        (create_lc_body("n@hotel", "&SecurityGroups.member.99999999999999999999999999=a"), "ValidationError"),
        (create_lc_body("n@hotel", "&SecurityGroups.member.-1=a"), "ValidationError"),
        (create_lc_body("n@hotel", "&BlockDeviceMappings.member.1.Ebs.VolumeSize=16385&BlockDeviceMappings.member.1.DeviceName=x"), "ValidationError"),
        (create_lc_body("n@hotel", "&BlockDeviceMappings.member.1.Ebs.VolumeSize=1e3&BlockDeviceMappings.member.1.DeviceName=x"), "ValidationError"),
        (create_lc_body("n@hotel", "&EbsOptimized=maybe"), "ValidationError"),
        (create_lc_body("n@hotel", &format!("&UserData={}", "A".repeat(21848))), "ValidationError"),
        ("Action=CreateAutoScalingGroup&Version=2011-01-01&AutoScalingGroupName=g&LaunchConfigurationName=x&MinSize=2147483648&MaxSize=1".into(), "ValidationError"),
        ("Action=CreateAutoScalingGroup&Version=2011-01-01&AutoScalingGroupName=g&LaunchConfigurationName=x&MinSize=-1&MaxSize=1".into(), "ValidationError"),
        ("Action=SetDesiredCapacity&Version=2011-01-01&AutoScalingGroupName=g&DesiredCapacity=%20".into(), "ValidationError"),
        ("Action=DescribeAutoScalingGroups&Version=2011-01-01&MaxRecords=0".into(), "ValidationError"),
        ("Action=DescribeAutoScalingGroups&Version=2011-01-01&MaxRecords=-5".into(), "ValidationError"),
        ("Action=DescribeAutoScalingGroups&Version=2011-01-01&NextToken=cDI6eA".into(), "InvalidNextToken"),
    ];
    for (body, want) in &cases {
        let (status, b) = send(&u, body);
        assert_eq!(
            (status, code(&b).as_str()),
            (400, *want),
            "{}: {b}",
            &body[..body.len().min(120)]
        );
    }
    assert_eq!(lc_count(&u), 0, "nothing was created");

    // Wrong content type: the body is still read as the form (as AWS does), never a 500.
    let (status, b) = s.raw(
        &u.access_key_id,
        &u.secret,
        "Action=DescribeAutoScalingGroups&Version=2011-01-01",
        SystemTime::now(),
        |r| {
            r.set_header("content-type", "application/json");
        },
    );
    assert!(status == 200 || status == 403, "{status} {b}");

    // Over API Gateway's 10 MiB: refused before it is read into a request.
    let huge = format!(
        "Action=DescribeAutoScalingGroups&Version=2011-01-01&X={}",
        "y".repeat(11 << 20)
    );
    let (status, _) = send(&u, &huge);
    assert_eq!(status, 413);
}

#[test]
fn limits_at_the_edge_pass_and_past_it_fail() {
    let s = stack();
    let u = s.new_user("edges");
    // LaunchConfigurationName: 255 characters (the cloud suffix counts).
    let at = format!("{}@hotel", "a".repeat(255 - 6));
    let past = format!("{}@hotel", "a".repeat(256 - 6));
    assert_eq!(send(&u, &create_lc_body(&at, "")).0, 200);
    assert_eq!(
        code(&send(&u, &create_lc_body(&past, "")).1),
        "ValidationError"
    );
    // UserData: 21847 characters (base64, so 21844 of them and three newlines).
    let ud_at = format!("&UserData={}%0A%0A%0A", "A".repeat(21844));
    assert_eq!(send(&u, &create_lc_body("ud@hotel", &ud_at)).0, 200);
    // Tags: key 128, value 256.
    let group = |name: &str, key_len: usize, value_len: usize| {
        format!(
            "Action=CreateAutoScalingGroup&Version=2011-01-01&AutoScalingGroupName={name}&LaunchConfigurationName=ud%40hotel&MinSize=0&MaxSize=0&Tags.member.1.Key={}&Tags.member.1.Value={}",
            "k".repeat(key_len),
            "v".repeat(value_len)
        )
    };
    let (status, b) = send(&u, &group("t1", 128, 256));
    assert_eq!(status, 200, "{b}");
    assert_eq!(code(&send(&u, &group("t2", 129, 1)).1), "ValidationError");
    assert_eq!(code(&send(&u, &group("t3", 1, 257)).1), "ValidationError");
    // VPCZoneIdentifier: 5000.
    let vpc = |n: usize| {
        format!(
            "Action=CreateAutoScalingGroup&Version=2011-01-01&AutoScalingGroupName=v{n}&LaunchConfigurationName=ud%40hotel&MinSize=0&MaxSize=0&VPCZoneIdentifier={}",
            "s".repeat(n)
        )
    };
    // 5000 is read: refused because no such subnet exists when the cloud answers in time, or
    // accepted for the provisioner to ask, as designed, when it does not (moto can take longer
    // than the api waits over a 5000-character filter on a loaded machine: seen in CI twice).
    // 5001 is too long to be read.
    let (status, b) = send(&u, &vpc(5000));
    let refused = b.contains("The subnet ID &apos;sss") || b.contains("The subnet ID 'sss");
    assert!(status == 200 || (status == 400 && refused), "{status}: {b}");
    let (_, b) = send(&u, &vpc(5001));
    assert_eq!(code(&b), "ValidationError");
    assert!(b.contains("vPCZoneIdentifier"), "{b}");
}

#[test]
fn xml_special_characters_round_trip_escaped() {
    let s = stack();
    let u = s.new_user("xmlchars");
    let name = "a<b>&\"'c é 😀@hotel";
    let (status, b) = send(&u, &create_lc_body(name, "&KeyName=%3C%2Fkey%3E%26amp%3B"));
    assert_eq!(status, 200, "{b}");
    let out = s
        .aws(
            &u,
            &argv!(
                "describe-launch-configurations --launch-configuration-names",
                name
            ),
        )
        .json();
    assert_eq!(
        out["LaunchConfigurations"][0]["LaunchConfigurationName"],
        name
    );
    assert_eq!(out["LaunchConfigurations"][0]["KeyName"], "</key>&amp;");
}

#[test]
fn duplicates_and_unknown_parameters() {
    let s = stack();
    let u = s.new_user("dupes-params");
    // A repeated parameter: the last one counts; an unknown one is ignored (as AWS's Query APIs do).
    let body = format!(
        "{}&LaunchConfigurationName=second%40hotel&NoSuchParameter=1&SecurityGroups.member.1=x&SecurityGroups.member.1=y",
        create_lc_body("first@hotel", "")
    );
    assert_eq!(send(&u, &body).0, 200);
    let out = s.aws(&u, &["describe-launch-configurations"]).json();
    let lcs = out["LaunchConfigurations"].as_array().unwrap();
    assert_eq!(lcs.len(), 1);
    assert_eq!(lcs[0]["LaunchConfigurationName"], "second@hotel");
    assert_eq!(lcs[0]["SecurityGroups"], serde_json::json!(["y"]));
}

#[test]
fn a_missing_signed_header_is_refused() {
    let s = stack();
    let u = s.new_user("nohdr");
    // Signed with content-type, sent without it.
    let (status, b) = s.raw(
        &u.access_key_id,
        &u.secret,
        "Action=DescribeAutoScalingGroups&Version=2011-01-01",
        SystemTime::now(),
        |r| {
            r.remove_header("content-type");
        },
    );
    assert_eq!(
        (status, code(&b).as_str()),
        (403, "SignatureDoesNotMatch"),
        "{b}"
    );
    // Host is not signed: refused even with the right secret.
    let (status, b) = s.raw(
        &u.access_key_id,
        &u.secret,
        "Action=DescribeAutoScalingGroups&Version=2011-01-01",
        SystemTime::now(),
        |r| {
            let auth = r
                .header("authorization")
                .unwrap()
                .replace("content-type;host;", "content-type;");
            r.set_header("authorization", &auth);
        },
    );
    assert_eq!(status, 403, "{b}");
}

#[test]
fn secrets_never_reach_the_logs() {
    let s = stack();
    let u = s.new_user("logs");
    s.aws(&u, &["describe-auto-scaling-groups"]).json();
    s.aws_with_keys(
        &u.access_key_id,
        "wrong-secret-value",
        &["describe-auto-scaling-groups"],
    );
    let log = std::fs::read_to_string(s.run_dir.join("api.log")).expect("the api log");
    assert!(log.contains(&u.name), "the log has the requests");
    assert!(!log.contains(&u.secret), "the secret is not logged");
    assert!(!log.contains("wrong-secret-value"));
    assert!(
        !log.contains("cloud-secret"),
        "cloud credentials are not logged"
    );
}
