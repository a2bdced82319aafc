//! What well-behaved clients never send, over real HTTP: bad signatures, stale dates, missing
//! parameters, unknown actions. Each gets AWS's error document and status and changes nothing.

use phantom_e2e::{stack, xml_text};
use std::time::{Duration, SystemTime};

const DESCRIBE: &str = "Action=DescribeAutoScalingGroups&Version=2011-01-01";

fn code(body: &str) -> &str {
    xml_text(body, "Code").unwrap_or("(no code)")
}

#[test]
fn a_well_signed_raw_request_works() {
    let s = stack();
    let u = s.new_user("raw-ok");
    let (status, body) = s.raw(
        &u.access_key_id,
        &u.secret,
        DESCRIBE,
        SystemTime::now(),
        |_| {},
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("<DescribeAutoScalingGroupsResponse xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\">"));
    assert!(xml_text(&body, "RequestId").is_some());
}

#[test]
fn authentication_failures_get_403_and_awss_codes() {
    let s = stack();
    let u = s.new_user("raw-auth");
    let now = SystemTime::now();
    let create = "Action=CreateLaunchConfiguration&Version=2011-01-01&LaunchConfigurationName=x%40hotel&ImageId=ami-1&InstanceType=t2.micro";

    let cases: Vec<(&str, u16, String)> = vec![
        {
            let (st, b) = s.raw(&u.access_key_id, &u.secret, create, now, |r| {
                r.remove_header("authorization")
            });
            ("MissingAuthenticationToken", st, b)
        },
        {
            let (st, b) = s.raw(&u.access_key_id, &u.secret, create, now, |r| {
                r.set_header("authorization", "AWS4-HMAC-SHA256 Credential=abc")
            });
            ("IncompleteSignature", st, b)
        },
        {
            let (st, b) = s.raw("PKIANOSUCHKEY0000000", "x", create, now, |_| {});
            ("InvalidClientTokenId", st, b)
        },
        {
            let (st, b) = s.raw(&u.access_key_id, "wrong-secret", create, now, |_| {});
            ("SignatureDoesNotMatch", st, b)
        },
        {
            // Signed correctly, then the body is changed.
            let (st, b) = s.raw(&u.access_key_id, &u.secret, create, now, |r| {
                r.body = r.body.replace("ami-1", "ami-2")
            });
            ("SignatureDoesNotMatch", st, b)
        },
        {
            let stale = now - Duration::from_secs(16 * 60);
            let (st, b) = s.raw(&u.access_key_id, &u.secret, create, stale, |_| {});
            ("RequestExpired", st, b)
        },
        {
            let future = now + Duration::from_secs(16 * 60);
            let (st, b) = s.raw(&u.access_key_id, &u.secret, create, future, |_| {});
            ("RequestExpired", st, b)
        },
    ];
    for (want, status, body) in cases {
        assert_eq!((status, code(&body)), (403, want), "{body}");
        assert!(
            body.starts_with("<?xml") && body.contains("<Type>Sender</Type>"),
            "{body}"
        );
    }
    // None of them created anything.
    let (_, body) = s.raw(
        &u.access_key_id,
        &u.secret,
        "Action=DescribeLaunchConfigurations&Version=2011-01-01",
        now,
        |_| {},
    );
    assert!(!body.contains("<member>"), "{body}");
}

#[test]
fn request_errors_get_400_and_awss_codes() {
    let s = stack();
    let u = s.new_user("raw-400");
    let now = SystemTime::now();
    let send = |body: &str| s.raw(&u.access_key_id, &u.secret, body, now, |_| {});

    let (st, b) = send("Action=LaunchRockets&Version=2011-01-01");
    assert_eq!((st, code(&b)), (400, "InvalidAction"), "{b}");
    assert!(b.contains("Could not find operation LaunchRockets for version 2011-01-01"));

    let (st, b) = send("Version=2011-01-01");
    assert_eq!((st, code(&b)), (400, "InvalidAction"), "{b}");

    let (st, b) = send("Action=DescribeAutoScalingGroups&Version=2010-01-01");
    assert_eq!((st, code(&b)), (400, "InvalidAction"), "{b}");

    // Missing required parameters: each named.
    let (st, b) = send("Action=CreateAutoScalingGroup&Version=2011-01-01&AutoScalingGroupName=g");
    assert_eq!((st, code(&b)), (400, "ValidationError"), "{b}");
    assert!(
        b.contains("Value null at &apos;minSize&apos;") || b.contains("Value null at 'minSize'"),
        "{b}"
    );
    assert!(b.contains("maxSize"), "{b}");

    let (st, b) = send(
        "Action=SetDesiredCapacity&Version=2011-01-01&AutoScalingGroupName=g&DesiredCapacity=lots",
    );
    assert_eq!((st, code(&b)), (400, "ValidationError"), "{b}");

    let (st, b) = send("Action=CreateLaunchConfiguration&Version=2011-01-01&LaunchConfigurationName=a%40hotel&ImageId=ami-1&InstanceType=t&SecurityGroups.member.1=a&SecurityGroups.member.3=c");
    assert_eq!((st, code(&b)), (400, "ValidationError"), "{b}");

    let (st, b) = send("Action=CreateLaunchConfiguration&Version=2011-01-01&LaunchConfigurationName=a%40hotel&InstanceType=t");
    assert_eq!((st, code(&b)), (400, "ValidationError"), "{b}");
    assert!(b.contains("ImageId"), "{b}");

    let (st, b) = send("Action=DescribeLaunchConfigurations&Version=2011-01-01&NextToken=%21%21");
    assert_eq!((st, code(&b)), (400, "InvalidNextToken"), "{b}");

    // Nothing above left a record behind.
    let (_, b) = send("Action=DescribeLaunchConfigurations&Version=2011-01-01");
    assert!(!b.contains("<member>"), "{b}");
}

#[test]
fn get_with_query_parameters_works_too() {
    let s = stack();
    let u = s.new_user("raw-get");
    let (status, body) = s.raw_get(&u.access_key_id, &u.secret, DESCRIBE);
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("<DescribeAutoScalingGroupsResponse"),
        "{body}"
    );
    // A POST signature does not cover a GET of the same parameters.
    let (status, body) = s.raw(&u.access_key_id, &u.secret, "", SystemTime::now(), |r| {
        r.method = "GET".into();
        r.path = format!("/?{DESCRIBE}");
    });
    assert_eq!(
        (status, code(&body)),
        (403, "SignatureDoesNotMatch"),
        "{body}"
    );
}
