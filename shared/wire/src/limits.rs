//! AWS's per-request limits on lists that botocore's model does not carry (AWS's API reference
//! states them: "You can specify up to 20 instances"), each refused in AWS's words where they are
//! known. Checked with the model's constraints, before any action runs.

use crate::ApiError;
use serde_json::Value;

/// One limit: the operation, the top-level list member, its most items, and the refusal.
struct Limit {
    operation: &'static str,
    member: &'static str,
    max: usize,
    message: &'static str,
}

/// AWS's words where a client or an issue has quoted them (docs/aws-parity.md names each
/// source); the others follow the nearest known sentence.
const LIMITS: &[Limit] = &[
    Limit {
        operation: "AttachInstances",
        member: "InstanceIds",
        max: 20,
        message: "List exceeds the maximum number of instances to attach. Please retry your request with fewer instances.",
    },
    Limit {
        operation: "DetachInstances",
        member: "InstanceIds",
        max: 20,
        message: "List exceeds the maximum number of instances to detach. Please retry your request with fewer instances.",
    },
    Limit {
        operation: "EnterStandby",
        member: "InstanceIds",
        max: 20,
        message: "List exceeds the maximum number of instances to place into standby. Please retry your request with fewer instances.",
    },
    Limit {
        operation: "ExitStandby",
        member: "InstanceIds",
        max: 20,
        message: "List exceeds the maximum number of instances to move out of standby. Please retry your request with fewer instances.",
    },
    Limit {
        operation: "SetInstanceProtection",
        member: "InstanceIds",
        max: 50,
        message: "The number of instance ids that may be passed in is limited to 50",
    },
    Limit {
        operation: "DescribeAutoScalingInstances",
        member: "InstanceIds",
        max: 50,
        message: "The number of instance ids that may be passed in is limited to 50",
    },
    Limit {
        operation: "DescribeAutoScalingGroups",
        member: "AutoScalingGroupNames",
        max: 50,
        message: "The number of group names that may be passed in is limited to 50.",
    },
    Limit {
        operation: "DescribeLaunchConfigurations",
        member: "LaunchConfigurationNames",
        max: 50,
        message: "The number of launch configuration names that may be passed in is limited to 50.",
    },
    Limit {
        operation: "DescribePolicies",
        member: "PolicyNames",
        max: 50,
        message: "The number of policy names that may be passed in is limited to 50.",
    },
    Limit {
        operation: "DescribeScheduledActions",
        member: "ScheduledActionNames",
        max: 50,
        message: "The number of scheduled action names that may be passed in is limited to 50.",
    },
    Limit {
        operation: "DescribeScalingActivities",
        member: "ActivityIds",
        max: 50,
        message: "The number of activity ids that may be passed in is limited to 50.",
    },
    Limit {
        operation: "BatchPutScheduledUpdateGroupAction",
        member: "ScheduledUpdateGroupActions",
        max: 50,
        message: "The number of scheduled actions that may be passed in is limited to 50.",
    },
    Limit {
        operation: "BatchDeleteScheduledAction",
        member: "ScheduledActionNames",
        max: 50,
        message: "The number of scheduled actions that may be passed in is limited to 50.",
    },
    Limit {
        operation: "AttachLoadBalancers",
        member: "LoadBalancerNames",
        max: 10,
        message: "Trying to update too many Load Balancers/Target Groups at once. The limit is 10",
    },
    Limit {
        operation: "DetachLoadBalancers",
        member: "LoadBalancerNames",
        max: 10,
        message: "Trying to update too many Load Balancers/Target Groups at once. The limit is 10",
    },
    Limit {
        operation: "AttachLoadBalancerTargetGroups",
        member: "TargetGroupARNs",
        max: 10,
        message: "Trying to update too many Load Balancers/Target Groups at once. The limit is 10",
    },
    Limit {
        operation: "DetachLoadBalancerTargetGroups",
        member: "TargetGroupARNs",
        max: 10,
        message: "Trying to update too many Load Balancers/Target Groups at once. The limit is 10",
    },
    Limit {
        operation: "AttachTrafficSources",
        member: "TrafficSources",
        max: 10,
        message: "Trying to update too many Load Balancers/Target Groups at once. The limit is 10",
    },
    Limit {
        operation: "DetachTrafficSources",
        member: "TrafficSources",
        max: 10,
        message: "Trying to update too many Load Balancers/Target Groups at once. The limit is 10",
    },
];

/// The decoded input of `operation` within AWS's per-request limits, or its ValidationError.
pub fn check(operation: &str, input: &Value) -> Result<(), ApiError> {
    for l in LIMITS.iter().filter(|l| l.operation == operation) {
        let n = input[l.member].as_array().map_or(0, Vec::len);
        if n > l.max {
            return Err(ApiError::validation(l.message));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_limit_takes_its_most_and_refuses_one_more() {
        for l in LIMITS {
            let ids = |n: usize| json!({ l.member: (0..n).map(|i| format!("x-{i}")).collect::<Vec<_>>() });
            check(l.operation, &ids(l.max)).unwrap();
            let e = check(l.operation, &ids(l.max + 1)).unwrap_err();
            assert_eq!(e.code, "ValidationError", "{}", l.operation);
            assert_eq!(e.message, l.message);
        }
        // Each names a list member of its operation in the model.
        let model = crate::shapes::model();
        for l in LIMITS {
            let op = &model.operations[l.operation];
            let crate::shapes::Shape::Structure { members, .. } =
                &model.shapes[&op.input.as_ref().unwrap().shape]
            else {
                panic!("{}: its input is a structure", l.operation);
            };
            assert!(
                members.contains_key(l.member),
                "{}.{}",
                l.operation,
                l.member
            );
        }
    }
}
