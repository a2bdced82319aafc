//! Launch configurations: the name's cloud, and the record CreateLaunchConfiguration stores, which is
//! exactly what DescribeLaunchConfigurations returns.

use crate::error::{ApiError, ApiResult};
use serde_json::{json, Value};
use time::OffsetDateTime;

/// A stored launch configuration: its document (the botocore `LaunchConfiguration` shape) and the
/// cloud its VMs run on.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchConfig {
    pub name: String,
    pub cloud: String,
    pub doc: Value,
}

/// `web@hotel` runs on `hotel`; a name without `@` runs on the default cloud. The last `@` counts,
/// so a base name may itself hold one.
pub fn cloud_of(name: &str, default_cloud: Option<&str>) -> ApiResult<String> {
    match name.rsplit_once('@') {
        Some((base, cloud)) if !base.is_empty() && !cloud.is_empty() => Ok(cloud.to_string()),
        Some(_) => Err(ApiError::validation(format!(
            "Launch configuration name '{name}' must be <name>@<cloud>, both parts non-empty."
        ))),
        None => default_cloud.map(str::to_string).ok_or_else(|| {
            ApiError::validation(format!(
                "Launch configuration name '{name}' names no cloud and no default cloud is set: use <name>@<cloud>."
            ))
        }),
    }
}

/// The error for a cloud that is not registered, naming those that are.
pub fn unknown_cloud(cloud: &str, known: &[String]) -> ApiError {
    let known = if known.is_empty() {
        "none are registered".to_string()
    } else {
        format!("known clouds: {}", known.join(", "))
    };
    ApiError::validation(format!("Cloud '{cloud}' is not registered ({known})."))
}

pub fn arn(region: &str, account: &str, id: &str, name: &str) -> String {
    format!("arn:aws:autoscaling:{region}:{account}:launchConfiguration:{id}:launchConfigurationName/{name}")
}

/// Builds the stored record from a decoded CreateLaunchConfiguration input.
pub fn from_input(
    input: &Value,
    cloud: String,
    arn: String,
    now: OffsetDateTime,
) -> ApiResult<LaunchConfig> {
    let name = input["LaunchConfigurationName"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if input.get("InstanceId").is_some() {
        return Err(ApiError::validation(
            "Phantom cannot copy a launch configuration from an instance: give ImageId and InstanceType instead of InstanceId.",
        ));
    }
    for required in ["ImageId", "InstanceType"] {
        if input.get(required).is_none() {
            return Err(ApiError::validation(format!(
                "{required} is required to create a launch configuration."
            )));
        }
    }
    if let Some(ud) = input["UserData"].as_str() {
        check_base64(ud)?;
    }
    let mut doc = json!({
        "SecurityGroups": [],
        "ClassicLinkVPCSecurityGroups": [],
        "BlockDeviceMappings": [],
        "InstanceMonitoring": {"Enabled": true},
        "EbsOptimized": false,
    });
    let obj = doc.as_object_mut().expect("an object");
    for (k, v) in input.as_object().into_iter().flatten() {
        obj.insert(k.clone(), v.clone());
    }
    obj.insert("LaunchConfigurationARN".into(), Value::String(arn));
    obj.insert(
        "CreatedTime".into(),
        Value::String(crate::time::format_timestamp(now)),
    );
    Ok(LaunchConfig { name, cloud, doc })
}

/// UserData travels base64-encoded (the AWS CLI encodes it); refuse what no VM could decode.
fn check_base64(s: &str) -> ApiResult<()> {
    use base64::Engine;
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map(|_| ())
        .map_err(|_| ApiError::validation("Invalid base64 encoding of UserData."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloud_comes_from_the_name_or_the_default() {
        assert_eq!(cloud_of("web@hotel", Some("sierra")).unwrap(), "hotel");
        assert_eq!(cloud_of("a@b@sierra", None).unwrap(), "sierra");
        assert_eq!(cloud_of("web", Some("sierra")).unwrap(), "sierra");
        assert!(cloud_of("web", None).is_err());
        assert!(cloud_of("web@", Some("x")).is_err());
        assert!(cloud_of("@hotel", Some("x")).is_err());
    }

    #[test]
    fn record_keeps_input_and_adds_arn_time_and_defaults() {
        let input = json!({"LaunchConfigurationName": "web@hotel", "ImageId": "ami-1", "InstanceType": "m1.small",
                           "SecurityGroups": ["sg-1"], "UserData": "aGVsbG8="});
        let t = crate::time::parse_timestamp("2026-01-02T03:04:05Z").unwrap();
        let lc = from_input(&input, "hotel".into(), "arn:x".into(), t).unwrap();
        assert_eq!(lc.name, "web@hotel");
        assert_eq!(lc.doc["SecurityGroups"], json!(["sg-1"]));
        assert_eq!(lc.doc["InstanceMonitoring"], json!({"Enabled": true}));
        assert_eq!(lc.doc["CreatedTime"], "2026-01-02T03:04:05.000Z");
        assert_eq!(lc.doc["LaunchConfigurationARN"], "arn:x");
    }

    #[test]
    fn refuses_what_phantom_cannot_launch() {
        let t = crate::time::now();
        for input in [
            json!({"LaunchConfigurationName": "a", "InstanceType": "m1.small"}),
            json!({"LaunchConfigurationName": "a", "ImageId": "ami-1"}),
            json!({"LaunchConfigurationName": "a", "InstanceId": "i-1"}),
            json!({"LaunchConfigurationName": "a", "ImageId": "ami-1", "InstanceType": "t", "UserData": "not base64!"}),
        ] {
            let e = from_input(&input, "c".into(), "arn".into(), t).unwrap_err();
            assert_eq!(e.code, "ValidationError", "{input}");
        }
    }
}
