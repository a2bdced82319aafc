//! Property tests over the query parser and the validators: whatever arrives, decoding and the
//! group and launch configuration rules return a value or a 4xx error, and never panic; what
//! decodes reads as the action's request type. The actions are the api's own dispatch table.

use phantom_model::request::{CreateLaunchConfiguration, DescribeAutoScalingGroups};
use phantom_rules::group::{self, NewGroupContext};
use phantom_rules::launch_config;
use phantom_wire::query::{self, decode_input, Params};
use phantom_wire::ApiError;
use proptest::prelude::*;

fn client_error(e: &ApiError) -> bool {
    e.status == 400
}

/// Whatever the decoder accepts reads as the action's request type (a failure would be a request
/// type out of step with the model), and the group and launch configuration rules answer it
/// without a panic (their refusals are client errors by type).
fn check_rules(action: &str, input: &query::Document) {
    let found = api::actions::action(action).expect("a supported action");
    if let Err(e) = (found.read)(input.clone()) {
        panic!("{action}: the decoded input {input:?} does not read as its request type: {e}");
    }
    let now = phantom_model::time::now();
    match action {
        "CreateAutoScalingGroup" => {
            let ctx = NewGroupContext {
                id: "id".into(),
                region: "us-east-1",
                account: "123456789012",
                cloud: "c".into(),
                default_zone: "z",
                now,
            };
            let request = query::input(input.clone()).expect("read above");
            let _ = group::from_input(&request, ctx);
        }
        "DescribeAutoScalingGroups" => {
            let request: DescribeAutoScalingGroups =
                query::input(input.clone()).expect("read above");
            let _ = group::parse_filters(&request.filters);
        }
        "CreateLaunchConfiguration" => {
            let request: CreateLaunchConfiguration =
                query::input(input.clone()).expect("read above");
            let _ = launch_config::cloud_of(&request.launch_configuration_name, Some("d"));
            let _ = launch_config::from_input(&request, "c".into(), "arn".into(), now);
        }
        _ => {}
    }
}

/// Keys the model knows, with list indices and nesting, and some it does not.
fn key() -> impl Strategy<Value = String> {
    let base = prop::sample::select(vec![
        "AutoScalingGroupName",
        "LaunchConfigurationName",
        "MinSize",
        "MaxSize",
        "DesiredCapacity",
        "ImageId",
        "InstanceType",
        "UserData",
        "HealthCheckType",
        "HealthCheckGracePeriod",
        "MaxInstanceLifetime",
        "VPCZoneIdentifier",
        "NextToken",
        "MaxRecords",
        "ForceDelete",
        "Tags.member.{}.Key",
        "Tags.member.{}.Value",
        "Tags.member.{}.PropagateAtLaunch",
        "AvailabilityZones.member.{}",
        "TerminationPolicies.member.{}",
        "SecurityGroups.member.{}",
        "BlockDeviceMappings.member.{}.DeviceName",
        "BlockDeviceMappings.member.{}.Ebs.VolumeSize",
        "Filters.member.{}.Name",
        "Filters.member.{}.Values.member.{}",
        "AutoScalingGroupNames.member.{}",
        "MetadataOptions.HttpTokens",
        "LaunchTemplate.LaunchTemplateName",
        "InstanceIds.member.{}",
        "Bogus.member.{}.X",
    ]);
    (base, 0u64..5, prop::option::of(any::<u64>())).prop_map(|(b, small, big)| {
        let n = big
            .map(|b| b.to_string())
            .unwrap_or_else(|| small.to_string());
        b.replace("{}", &n)
    })
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (0i64..20).prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "true",
            "false",
            "EC2",
            "Default",
            "",
            "a@b",
            "@",
            "x@",
            "aws:x",
            "tag:env",
            "tag-key",
            "tag-value",
            "auto-scaling-group"
        ])
        .prop_map(str::to_string),
        ".{0,40}",
        "[\\x00-\\x1f]{1,3}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(body in prop::collection::vec(any::<u8>(), 0..400)) {
        match Params::parse(&body) {
            Ok(params) => {
                for action in api::actions::supported() {
                    match decode_input(action, &params) {
                        Ok(input) => check_rules(action, &input),
                        Err(e) => prop_assert!(client_error(&e), "{}", e),
                    }
                }
            }
            Err(e) => prop_assert!(client_error(&e), "{}", e),
        }
    }

    #[test]
    fn model_shaped_parameters_never_panic(pairs in prop::collection::vec((key(), value()), 0..12)) {
        let params = Params::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        for action in api::actions::supported() {
            match decode_input(action, &params) {
                Ok(input) => check_rules(action, &input),
                Err(e) => prop_assert!(client_error(&e), "{}", e),
            }
        }
    }
}
