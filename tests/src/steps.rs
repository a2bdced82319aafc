//! The calls most tests make and expect to succeed, as one line each on the SDK's client.

use std::future::Future;

use aws_sdk_autoscaling::operation::describe_lifecycle_hooks::DescribeLifecycleHooksOutput;
use aws_sdk_autoscaling::operation::describe_scaling_activities::DescribeScalingActivitiesOutput;
use aws_sdk_autoscaling::operation::describe_warm_pool::DescribeWarmPoolOutput;
use aws_sdk_autoscaling::operation::update_auto_scaling_group::builders::UpdateAutoScalingGroupFluentBuilder;
use aws_sdk_autoscaling::types::AutoScalingGroup;
use aws_sdk_autoscaling::Client;

pub trait Steps {
    /// CreateLaunchConfiguration `name` (`<name>@<cloud>`) of the worlds' image on t2.micro.
    fn create_lc(&self, name: &str) -> impl Future<Output = ()> + Send;
    /// CreateAutoScalingGroup `name` from launch configuration `lc`, of these sizes.
    fn create_group(
        &self,
        name: &str,
        lc: &str,
        sizes: (i32, i32, i32),
    ) -> impl Future<Output = ()> + Send;
    /// SetDesiredCapacity.
    fn desire(&self, group: &str, n: i32) -> impl Future<Output = ()> + Send;
    /// UpdateAutoScalingGroup with what `set` sets.
    fn update(
        &self,
        group: &str,
        set: impl FnOnce(UpdateAutoScalingGroupFluentBuilder) -> UpdateAutoScalingGroupFluentBuilder
            + Send,
    ) -> impl Future<Output = ()> + Send;
    /// DeleteAutoScalingGroup (of a group without VMs).
    fn delete_group(&self, group: &str) -> impl Future<Output = ()> + Send;
    /// DeleteAutoScalingGroup with ForceDelete.
    fn force_delete(&self, group: &str) -> impl Future<Output = ()> + Send;
    /// The group as DescribeAutoScalingGroups shows it, if there is one.
    fn group(&self, group: &str) -> impl Future<Output = Option<AutoScalingGroup>> + Send;
    /// DescribeLifecycleHooks of the group.
    fn hooks(&self, group: &str) -> impl Future<Output = DescribeLifecycleHooksOutput> + Send;
    /// DescribeWarmPool of the group (its first page).
    fn warm_pool(&self, group: &str) -> impl Future<Output = DescribeWarmPoolOutput> + Send;
    /// DescribeScalingActivities of the group, newest first.
    fn activities(
        &self,
        group: &str,
    ) -> impl Future<Output = DescribeScalingActivitiesOutput> + Send;
}

impl Steps for Client {
    async fn create_lc(&self, name: &str) {
        self.create_launch_configuration()
            .launch_configuration_name(name)
            .image_id(crate::world::IMAGE)
            .instance_type("t2.micro")
            .send()
            .await
            .expect("create-launch-configuration");
    }

    async fn create_group(&self, name: &str, lc: &str, (min, max, desired): (i32, i32, i32)) {
        self.create_auto_scaling_group()
            .auto_scaling_group_name(name)
            .launch_configuration_name(lc)
            .min_size(min)
            .max_size(max)
            .desired_capacity(desired)
            .send()
            .await
            .expect("create-auto-scaling-group");
    }

    async fn desire(&self, group: &str, n: i32) {
        self.set_desired_capacity()
            .auto_scaling_group_name(group)
            .desired_capacity(n)
            .send()
            .await
            .expect("set-desired-capacity");
    }

    async fn update(
        &self,
        group: &str,
        set: impl FnOnce(UpdateAutoScalingGroupFluentBuilder) -> UpdateAutoScalingGroupFluentBuilder
            + Send,
    ) {
        set(self
            .update_auto_scaling_group()
            .auto_scaling_group_name(group))
        .send()
        .await
        .expect("update-auto-scaling-group");
    }

    async fn delete_group(&self, group: &str) {
        self.delete_auto_scaling_group()
            .auto_scaling_group_name(group)
            .send()
            .await
            .expect("delete-auto-scaling-group");
    }

    async fn force_delete(&self, group: &str) {
        self.delete_auto_scaling_group()
            .auto_scaling_group_name(group)
            .force_delete(true)
            .send()
            .await
            .expect("delete-auto-scaling-group");
    }

    async fn group(&self, group: &str) -> Option<AutoScalingGroup> {
        self.describe_auto_scaling_groups()
            .auto_scaling_group_names(group)
            .send()
            .await
            .expect("describe-auto-scaling-groups")
            .auto_scaling_groups()
            .first()
            .cloned()
    }

    async fn hooks(&self, group: &str) -> DescribeLifecycleHooksOutput {
        self.describe_lifecycle_hooks()
            .auto_scaling_group_name(group)
            .send()
            .await
            .expect("describe-lifecycle-hooks")
    }

    async fn activities(&self, group: &str) -> DescribeScalingActivitiesOutput {
        self.describe_scaling_activities()
            .auto_scaling_group_name(group)
            .send()
            .await
            .expect("describe-scaling-activities")
    }

    async fn warm_pool(&self, group: &str) -> DescribeWarmPoolOutput {
        self.describe_warm_pool()
            .auto_scaling_group_name(group)
            .send()
            .await
            .expect("describe-warm-pool")
    }
}

/// A tag of group `group` (not propagated at launch).
pub fn group_tag(group: &str, key: &str, value: &str) -> aws_sdk_autoscaling::types::Tag {
    aws_sdk_autoscaling::types::Tag::builder()
        .resource_id(group)
        .resource_type("auto-scaling-group")
        .key(key)
        .value(value)
        .propagate_at_launch(false)
        .build()
}

/// A predictive policy's metric: the predefined CPU pair (ASGCPUUtilization) at `target` %.
pub fn cpu_forecast(
    target: f64,
) -> aws_sdk_autoscaling::types::PredictiveScalingMetricSpecification {
    use aws_sdk_autoscaling::types::{
        PredefinedMetricPairType, PredictiveScalingMetricSpecification,
        PredictiveScalingPredefinedMetricPair,
    };
    PredictiveScalingMetricSpecification::builder()
        .target_value(target)
        .predefined_metric_pair_specification(
            PredictiveScalingPredefinedMetricPair::builder()
                .predefined_metric_type(PredefinedMetricPairType::AsgcpuUtilization)
                .build(),
        )
        .build()
}
