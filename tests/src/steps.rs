//! The calls most tests make and expect to succeed, as one line each on the SDK's client.

use std::future::Future;

use aws_sdk_autoscaling::operation::update_auto_scaling_group::builders::UpdateAutoScalingGroupFluentBuilder;
use aws_sdk_autoscaling::types::AutoScalingGroup;
use aws_sdk_autoscaling::Client;

pub trait Steps {
    /// SetDesiredCapacity.
    fn desire(&self, group: &str, n: i32) -> impl Future<Output = ()> + Send;
    /// UpdateAutoScalingGroup with what `set` sets.
    fn update(
        &self,
        group: &str,
        set: impl FnOnce(UpdateAutoScalingGroupFluentBuilder) -> UpdateAutoScalingGroupFluentBuilder
            + Send,
    ) -> impl Future<Output = ()> + Send;
    /// DeleteAutoScalingGroup with ForceDelete.
    fn force_delete(&self, group: &str) -> impl Future<Output = ()> + Send;
    /// The group as DescribeAutoScalingGroups shows it, if there is one.
    fn group(&self, group: &str) -> impl Future<Output = Option<AutoScalingGroup>> + Send;
}

impl Steps for Client {
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
}
