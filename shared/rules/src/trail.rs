//! The audit trail's rules (issue 63): which requests are recorded (every change, and every
//! request a policy refused), what of their parameters (secrets never), which resources they
//! name, how an event reads in CloudTrail's record format, and LookupEvents' attributes.

use crate::iam::autoscaling;
use phantom_model::trail::{Event, Resource, TrailEvent, TrailResource};
use serde_json::{json, Map, Value};

/// Events are kept 90 days, as CloudTrail's event history keeps them.
pub const RETENTION_MS: i64 = 90 * 24 * 3_600_000;

/// What replaces a secret in a recorded request (CloudTrail's words).
pub const HIDDEN: &str = "HIDDEN_DUE_TO_SECURITY_REASONS";

/// Whether an action only reads.
pub fn read_only(action: &str) -> bool {
    let reads = ["Describe", "Get", "List", "Lookup", "Simulate"];
    action != "GetSessionToken" && reads.iter().any(|p| action.starts_with(p))
}

/// Whether a request is recorded: a change whatever its outcome, and a read a policy refused.
/// A throttled request is refused before anything is read or written, the trail included.
pub fn recorded(action: &str, error_code: Option<&str>) -> bool {
    match error_code {
        Some("Throttling") => false,
        Some("AccessDenied") => true,
        _ => !read_only(action),
    }
}

/// `params` with every secret replaced: a member named for a secret, password or token, and a
/// VM's user data (which carries them).
pub fn redact(params: &Value) -> Value {
    match params {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| {
                    let lower = k.to_ascii_lowercase();
                    let secret = ["secret", "password", "token", "userdata"]
                        .iter()
                        .any(|s| lower.contains(s));
                    let v = match secret && !lower.contains("nexttoken") {
                        true => Value::String(HIDDEN.into()),
                        false => redact(v),
                    };
                    (k.clone(), v)
                })
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        other => other.clone(),
    }
}

/// The resources a request names, as CloudTrail lists them.
pub fn resources(source: &str, action: &str, params: &Value) -> Vec<TrailResource> {
    let of = |kind: &str, name: &str| TrailResource {
        kind: kind.into(),
        name: name.into(),
    };
    let text = |member: &str| params.get(member).and_then(Value::as_str);
    match source {
        AUTOSCALING => {
            let named = autoscaling::named(action, params);
            let mut out: Vec<_> = named
                .groups
                .iter()
                .map(|g| of("AWS::AutoScaling::AutoScalingGroup", g))
                .collect();
            if let Some(group) = text("AutoScalingGroupName").filter(|_| out.is_empty()) {
                out.push(of("AWS::AutoScaling::AutoScalingGroup", group));
            }
            if let Some(lc) = text("LaunchConfigurationName") {
                out.push(of("AWS::AutoScaling::LaunchConfiguration", lc));
            }
            if let Some(vm) = named.instance {
                out.push(of("AWS::EC2::Instance", &vm));
            }
            out
        }
        IAM => [
            ("UserName", "AWS::IAM::User"),
            ("AccessKeyId", "AWS::IAM::AccessKey"),
            ("PolicyName", "AWS::IAM::Policy"),
        ]
        .iter()
        .filter_map(|(member, kind)| text(member).map(|n| of(kind, n)))
        .collect(),
        _ => Vec::new(),
    }
}

pub const AUTOSCALING: &str = "autoscaling.amazonaws.com";
pub const IAM: &str = "iam.amazonaws.com";

/// The event source of a service by its signing name (`autoscaling`, `iam`, ...), and Phantom's
/// own API (`phantom`).
pub fn source_of(signing_name: &str) -> String {
    match signing_name {
        "phantom" => "phantom".into(),
        name => format!("{name}.amazonaws.com"),
    }
}

/// The event in CloudTrail's record format (`CloudTrailEvent`).
pub fn record_json(e: &TrailEvent, event_time: &str) -> String {
    let w = &e.who;
    let mut identity = json!({
        "type": w.kind,
        "principalId": w.principal_id,
        "arn": w.arn,
        "accountId": w.account_id,
    });
    if let Some(k) = &w.access_key_id {
        identity["accessKeyId"] = json!(k);
    }
    if let Some(n) = &w.user_name {
        identity["userName"] = json!(n);
    }
    if w.in_session {
        identity["sessionContext"] = json!({"attributes": {"mfaAuthenticated": "false"}});
    }
    let mut record = json!({
        "eventVersion": "1.08",
        "userIdentity": identity,
        "eventTime": event_time,
        "eventSource": e.event_source,
        "eventName": e.event_name,
        "awsRegion": e.region,
        "sourceIPAddress": e.source_ip,
        "userAgent": e.user_agent,
        "requestParameters": e.request_parameters,
        "responseElements": Value::Null,
        "requestID": e.request_id,
        "eventID": e.event_id,
        "readOnly": e.read_only,
        "eventType": "AwsApiCall",
        "managementEvent": true,
        "recipientAccountId": w.account_id,
        "eventCategory": "Management",
    });
    if let Some(code) = &e.error_code {
        record["errorCode"] = json!(code);
        record["errorMessage"] = json!(e.error_message);
    }
    record.to_string()
}

/// The name LookupEvents gives the caller: the IAM user's, or `root`.
pub fn username(e: &TrailEvent) -> String {
    e.who.user_name.clone().unwrap_or_else(|| "root".into())
}

/// The event as LookupEvents answers it.
pub fn shown(e: &TrailEvent) -> Event {
    let at = phantom_model::time::from_ms(e.at_ms);
    let event_time = phantom_model::time::format_timestamp(at);
    Event {
        event_id: e.event_id.clone(),
        event_name: e.event_name.clone(),
        read_only: e.read_only.to_string(),
        access_key_id: e.who.access_key_id.clone(),
        event_time,
        event_source: e.event_source.clone(),
        username: username(e),
        resources: e
            .resources
            .iter()
            .map(|r| Resource {
                resource_type: r.kind.clone(),
                resource_name: r.name.clone(),
            })
            .collect(),
        cloud_trail_event: record_json(e, &phantom_model::time::format_seconds(at)),
    }
}

/// Whether `e` has LookupEvents' attribute `key` = `value` (the model's enum names the keys).
pub fn matches(e: &TrailEvent, key: &str, value: &str) -> bool {
    match key {
        "EventId" => e.event_id == value,
        "EventName" => e.event_name == value,
        "ReadOnly" => e.read_only.to_string() == value,
        "Username" => username(e) == value,
        "ResourceType" => e.resources.iter().any(|r| r.kind == value),
        "ResourceName" => e.resources.iter().any(|r| r.name == value),
        "EventSource" => e.event_source == value,
        "AccessKeyId" => e.who.access_key_id.as_deref() == Some(value),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phantom_model::trail::Who;

    fn event(error: Option<&str>) -> TrailEvent {
        TrailEvent {
            event_id: "e1".into(),
            at_ms: 0,
            event_source: AUTOSCALING.into(),
            event_name: "SetDesiredCapacity".into(),
            region: "us-east-1".into(),
            source_ip: Some("10.0.0.1".into()),
            user_agent: Some("aws-cli/2".into()),
            who: Who {
                kind: "IAMUser".into(),
                principal_id: "AIDAX".into(),
                arn: "arn:aws:iam::1:user/ca".into(),
                account_id: "1".into(),
                access_key_id: Some("PKIAX".into()),
                user_name: Some("ca".into()),
                in_session: false,
            },
            request_parameters: json!({"AutoScalingGroupName": "web"}),
            error_code: error.map(String::from),
            error_message: error.map(|_| "no".into()),
            request_id: "r1".into(),
            read_only: false,
            resources: resources(
                AUTOSCALING,
                "SetDesiredCapacity",
                &json!({"AutoScalingGroupName": "web"}),
            ),
        }
    }

    #[test]
    fn changes_and_refusals_are_recorded_and_reads_are_not() {
        assert!(recorded("SetDesiredCapacity", None));
        assert!(recorded("SetDesiredCapacity", Some("ValidationError")));
        assert!(!recorded("DescribeAutoScalingGroups", None));
        assert!(recorded("DescribeAutoScalingGroups", Some("AccessDenied")));
        assert!(!recorded("SetDesiredCapacity", Some("Throttling")));
        assert!(recorded("GetSessionToken", None));
        assert!(!recorded("GetCallerIdentity", None));
    }

    #[test]
    fn secrets_are_never_recorded() {
        let params = json!({
            "Cloud": "moto", "AccessKeyId": "AKIA", "SecretAccessKey": "s3cret",
            "Auth": {"Password": "pw", "BearerToken": "t"}, "UserData": "c2VjcmV0",
            "NextToken": "page-2",
        });
        let shown = redact(&params).to_string();
        for secret in ["s3cret", "\"pw\"", "\"t\"", "c2VjcmV0"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains("AKIA") && shown.contains("page-2"));
    }

    #[test]
    fn an_event_reads_as_cloudtrails() {
        let e = event(Some("AccessDenied"));
        let record: Value = serde_json::from_str(&record_json(&e, "2026-11-29T07:00:00Z")).unwrap();
        assert_eq!(record["userIdentity"]["userName"], "ca");
        assert_eq!(record["userIdentity"]["type"], "IAMUser");
        assert_eq!(record["errorCode"], "AccessDenied");
        assert_eq!(record["sourceIPAddress"], "10.0.0.1");
        assert_eq!(record["requestParameters"]["AutoScalingGroupName"], "web");
        let shown = shown(&e);
        assert!(shown
            .cloud_trail_event
            .contains(r#""eventTime":"1970-01-01T00:00:00Z""#));
        assert_eq!(shown.username, "ca");
        assert_eq!(shown.resources[0].resource_name, "web");
        assert!(matches(&e, "ResourceName", "web"));
        assert!(matches(&e, "Username", "ca"));
        assert!(!matches(&e, "EventName", "DeleteAutoScalingGroup"));
    }
}
