//! Launch configurations: the name's cloud, and the record CreateLaunchConfiguration stores, which is
//! exactly what DescribeLaunchConfigurations returns.

use phantom_model::instance::LaunchedWith;
pub use phantom_model::launch_config::LaunchConfig;
use phantom_model::launch_config::{InstanceMonitoring, LaunchConfiguration};
use phantom_model::request::CreateLaunchConfiguration;
use phantom_model::{Checked, Refusal};
use time::OffsetDateTime;

/// `web@hotel` runs on `hotel`; a name without `@` runs on the default cloud. The last `@` counts,
/// so a base name may itself hold one.
pub fn cloud_of(name: &str, default_cloud: Option<&str>) -> Checked<String> {
    match name.rsplit_once('@') {
        Some((base, cloud)) if !base.is_empty() && !cloud.is_empty() => Ok(cloud.to_string()),
        Some(_) => Err(Refusal::invalid(format!(
            "Launch configuration name '{name}' must be <name>@<cloud>, both parts non-empty."
        ))),
        None => default_cloud.map(str::to_string).ok_or_else(|| {
            Refusal::invalid(format!(
                "Launch configuration name '{name}' names no cloud and no default cloud is set: use <name>@<cloud>."
            ))
        }),
    }
}

/// The error for a cloud that is not registered, naming those that are.
pub fn unknown_cloud(cloud: &str, known: &[String]) -> Refusal {
    let known = if known.is_empty() {
        "none are registered".to_string()
    } else {
        format!("known clouds: {}", known.join(", "))
    };
    Refusal::invalid(format!("Cloud '{cloud}' is not registered ({known})."))
}

pub fn arn(region: &str, account: &str, id: &str, name: &str) -> String {
    format!("arn:aws:autoscaling:{region}:{account}:launchConfiguration:{id}:launchConfigurationName/{name}")
}

/// A CreateLaunchConfiguration with `InstanceId`: what the request leaves out is taken from what
/// the instance was launched with, as AWS does (the block devices stay the image's; user data
/// is not copied). What the request gives wins.
pub fn from_instance(input: &mut CreateLaunchConfiguration, vm: &LaunchedWith) {
    let fill = |given: &mut Option<String>, from: &Option<String>| {
        if given.is_none() {
            given.clone_from(from);
        }
    };
    fill(&mut input.image_id, &Some(vm.image_id.clone()));
    fill(&mut input.instance_type, &Some(vm.instance_type.clone()));
    fill(&mut input.key_name, &vm.key_name);
    fill(&mut input.kernel_id, &vm.kernel_id);
    fill(&mut input.ramdisk_id, &vm.ramdisk_id);
    fill(&mut input.iam_instance_profile, &vm.iam_instance_profile);
    fill(&mut input.placement_tenancy, &vm.tenancy);
    if input.security_groups.is_empty() {
        input.security_groups.clone_from(&vm.security_groups);
    }
    if input.instance_monitoring.is_none() {
        input.instance_monitoring = Some(InstanceMonitoring {
            enabled: vm.monitoring,
        });
    }
    if input.ebs_optimized.is_none() {
        input.ebs_optimized = Some(vm.ebs_optimized);
    }
}

/// The refusal of an `InstanceId` the cloud does not have: EC2's own words.
pub fn instance_not_found(id: &str) -> Refusal {
    Refusal::invalid(format!("The instance ID '{id}' does not exist"))
}

/// Builds the stored record from a CreateLaunchConfiguration request (one with `InstanceId`
/// first filled by `from_instance`).
pub fn from_input(
    input: &CreateLaunchConfiguration,
    cloud: String,
    arn: String,
    now: OffsetDateTime,
) -> Checked<LaunchConfig> {
    let classic_link =
        input.classic_link_vpc_id.is_some() || !input.classic_link_vpc_security_groups.is_empty();
    if classic_link {
        return Err(Refusal::invalid(
            "ClassicLinkVPCId and ClassicLinkVPCSecurityGroups are not supported: ClassicLink belongs to EC2-Classic, which no cloud has any more. Leave them out.",
        ));
    }
    let (Some(image_id), Some(instance_type)) = (&input.image_id, &input.instance_type) else {
        return Err(Refusal::invalid(
            "Valid requests must contain either the InstanceID parameter or both the ImageId and InstanceType parameters.",
        ));
    };
    if let Some(ud) = &input.user_data {
        check_base64(ud)?;
    }
    let name = input.launch_configuration_name.clone();
    Ok(LaunchConfig {
        name: name.clone(),
        cloud,
        settings: LaunchConfiguration {
            key_name: input.key_name.clone(),
            security_groups: input.security_groups.clone(),
            user_data: input.user_data.clone(),
            kernel_id: input.kernel_id.clone(),
            ramdisk_id: input.ramdisk_id.clone(),
            block_device_mappings: input.block_device_mappings.clone(),
            // AWS's default: detailed monitoring on.
            instance_monitoring: input
                .instance_monitoring
                .unwrap_or(InstanceMonitoring { enabled: true }),
            spot_price: input.spot_price.clone(),
            iam_instance_profile: input.iam_instance_profile.clone(),
            ebs_optimized: input.ebs_optimized.unwrap_or(false),
            associate_public_ip_address: input.associate_public_ip_address,
            placement_tenancy: input.placement_tenancy.clone(),
            metadata_options: input.metadata_options.clone(),
            ..LaunchConfiguration::new(
                &name,
                &arn,
                image_id,
                instance_type,
                &phantom_model::time::format_timestamp(now),
            )
        },
    })
}

/// UserData travels base64-encoded (the AWS CLI encodes it); refuse what no VM could decode.
fn check_base64(s: &str) -> Checked<()> {
    use base64::Engine;
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map(|_| ())
        .map_err(|_| Refusal::invalid("Invalid base64 encoding of UserData."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn create(input: Value, cloud: &str, arn: &str, now: OffsetDateTime) -> Checked<LaunchConfig> {
        from_input(
            &serde_json::from_value(input).expect("a request"),
            cloud.into(),
            arn.into(),
            now,
        )
    }

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
        let t = phantom_model::time::parse_timestamp("2026-01-02T03:04:05Z").unwrap();
        let lc = create(input, "hotel", "arn:x", t).unwrap();
        let doc = serde_json::to_value(&lc.settings).unwrap();
        assert_eq!(lc.name, "web@hotel");
        assert_eq!(doc["SecurityGroups"], json!(["sg-1"]));
        assert_eq!(doc["InstanceMonitoring"], json!({"Enabled": true}));
        assert_eq!(doc["CreatedTime"], "2026-01-02T03:04:05.000Z");
        assert_eq!(doc["LaunchConfigurationARN"], "arn:x");
    }

    #[test]
    fn from_an_instance_takes_what_the_request_leaves_out() {
        let vm = LaunchedWith {
            image_id: "ami-vm".into(),
            instance_type: "t3.small".into(),
            key_name: Some("ops".into()),
            security_groups: vec!["sg-1".into(), "sg-2".into()],
            kernel_id: None,
            ramdisk_id: None,
            monitoring: false,
            ebs_optimized: true,
            iam_instance_profile: Some("arn:aws:iam::1:instance-profile/web".into()),
            tenancy: Some("default".into()),
            zone: "us-east-1a".into(),
            subnet: Some("subnet-1".into()),
        };
        let mut input: CreateLaunchConfiguration = serde_json::from_value(json!({
            "LaunchConfigurationName": "copy@hotel", "InstanceId": "i-1", "InstanceType": "t3.large"
        }))
        .unwrap();
        from_instance(&mut input, &vm);
        let t = phantom_model::time::now();
        let lc = from_input(&input, "hotel".into(), "arn".into(), t).unwrap();
        let doc = serde_json::to_value(&lc.settings).unwrap();
        assert_eq!(doc["ImageId"], "ami-vm");
        assert_eq!(doc["InstanceType"], "t3.large", "the request's own wins");
        assert_eq!(doc["KeyName"], "ops");
        assert_eq!(doc["SecurityGroups"], json!(["sg-1", "sg-2"]));
        assert_eq!(doc["InstanceMonitoring"], json!({"Enabled": false}));
        assert_eq!(doc["EbsOptimized"], true);
        assert_eq!(
            doc["IamInstanceProfile"],
            "arn:aws:iam::1:instance-profile/web"
        );
        assert_eq!(doc["PlacementTenancy"], "default");
    }

    #[test]
    fn refuses_what_phantom_cannot_launch() {
        let t = phantom_model::time::now();
        for input in [
            json!({"LaunchConfigurationName": "a", "InstanceType": "m1.small"}),
            json!({"LaunchConfigurationName": "a", "ImageId": "ami-1"}),
            json!({"LaunchConfigurationName": "a", "InstanceId": "i-1"}),
            json!({"LaunchConfigurationName": "a", "ImageId": "ami-1", "InstanceType": "t", "UserData": "not base64!"}),
            json!({"LaunchConfigurationName": "a", "ImageId": "ami-1", "InstanceType": "t", "ClassicLinkVPCId": "vpc-1"}),
        ] {
            let e = create(input.clone(), "c", "arn", t).unwrap_err();
            assert!(matches!(e, Refusal::Invalid(_)), "{input}");
        }
    }
}
