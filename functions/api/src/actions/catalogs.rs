//! The read-only catalogues tools ask for: what Phantom supports, from the lists its checks use.

use crate::App;
use phantom_model::request::Nothing;
use phantom_model::response::{
    AdjustmentType, DescribeAccountLimits, DescribeAdjustmentTypes,
    DescribeAutoScalingNotificationTypes, DescribeMetricCollectionTypes,
    DescribeScalingProcessTypes, DescribeTerminationPolicyTypes, MetricCollectionType,
    MetricGranularityType, ProcessType,
};
use phantom_rules::identity::Caller;
use phantom_rules::{group, processes};
use phantom_seams::store;
use phantom_wire::ApiResult;

pub async fn scaling_process_types(
    _app: &App,
    _caller: &Caller,
    _input: Nothing,
) -> ApiResult<DescribeScalingProcessTypes> {
    Ok(DescribeScalingProcessTypes {
        processes: processes::PROCESSES
            .iter()
            .map(|&process_name| ProcessType { process_name })
            .collect(),
    })
}

pub async fn termination_policy_types(
    _app: &App,
    _caller: &Caller,
    _input: Nothing,
) -> ApiResult<DescribeTerminationPolicyTypes> {
    Ok(DescribeTerminationPolicyTypes {
        termination_policy_types: group::TERMINATION_POLICIES.to_vec(),
    })
}

pub async fn metric_collection_types(
    _app: &App,
    _caller: &Caller,
    _input: Nothing,
) -> ApiResult<DescribeMetricCollectionTypes> {
    Ok(DescribeMetricCollectionTypes {
        metrics: processes::METRICS
            .iter()
            .map(|&metric| MetricCollectionType { metric })
            .collect(),
        granularities: vec![MetricGranularityType {
            granularity: processes::GRANULARITY,
        }],
    })
}

/// AWS's adjustment types, the ones scaling policies take (`phantom_rules::policy`).
pub async fn adjustment_types(
    _app: &App,
    _caller: &Caller,
    _input: Nothing,
) -> ApiResult<DescribeAdjustmentTypes> {
    Ok(DescribeAdjustmentTypes {
        adjustment_types: phantom_rules::policy::AdjustmentType::ALL
            .iter()
            .map(|t| AdjustmentType {
                adjustment_type: t.as_str(),
            })
            .collect(),
    })
}

/// AWS's five, each of which Phantom sends (`phantom_rules::notification`).
pub async fn notification_types(
    _app: &App,
    _caller: &Caller,
    _input: Nothing,
) -> ApiResult<DescribeAutoScalingNotificationTypes> {
    Ok(DescribeAutoScalingNotificationTypes {
        auto_scaling_notification_types: phantom_rules::notification::NotificationType::ALL
            .iter()
            .map(|t| t.as_str())
            .collect(),
    })
}

/// The limits Phantom enforces (as conditions on the writes that create groups and launch
/// configurations) and the caller's counts against them.
pub async fn account_limits(
    app: &App,
    caller: &Caller,
    _input: Nothing,
) -> ApiResult<DescribeAccountLimits> {
    let usage = app.store.usage(&caller.user).await?;
    Ok(DescribeAccountLimits {
        max_number_of_auto_scaling_groups: store::MAX_GROUPS,
        max_number_of_launch_configurations: store::MAX_LAUNCH_CONFIGS,
        number_of_auto_scaling_groups: usage.groups,
        number_of_launch_configurations: usage.launch_configs,
    })
}
