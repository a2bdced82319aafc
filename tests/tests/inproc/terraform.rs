//! Terraform's aws_autoscaling_group calls for the settings of issue 48, replayed through
//! aws-sdk-autoscaling as its provider (internal/service/autoscaling/group.go) makes them, and
//! read back as its state holds them: a plan after the apply finds no change.

use crate::provisioning::converges;
use crate::{failure, group, invalid, Given};
use aws_sdk_autoscaling::types::{
    AvailabilityZoneDistribution, CapacityDistributionStrategy, CapacityReservationPreference,
    CapacityReservationSpecification, CapacityReservationTarget, DesiredConfiguration,
    InstanceRefreshStatus, LaunchTemplateSpecification, RefreshPreferences,
    ScaleInProtectedInstances, StandbyInstances,
};
use phantom_e2e::world::IMAGE;

/// A group created without the blocks reads back AWS's defaults (the provider's computed
/// values); each block set reads back as sent, and a placement group removed (sent as "") is
/// gone.
#[tokio::test]
async fn terraforms_group_blocks_read_back_as_its_state_holds_them() {
    let Given { w, u, c } = Given::lc("tf-blocks").await;
    w.hotel.add_placement_group("pg-1");
    w.hotel.add_capacity_reservation("cr-1", "us-east-1a", 2);
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(0)
        .max_size(2)
        .desired_capacity(0)
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(
        g.availability_zone_distribution()
            .and_then(|d| d.capacity_distribution_strategy()),
        Some(&CapacityDistributionStrategy::BalancedBestEffort),
        "AWS's default, shown"
    );
    let reservations = g.capacity_reservation_specification().unwrap();
    assert_eq!(
        reservations.capacity_reservation_preference(),
        Some(&CapacityReservationPreference::Default)
    );
    assert!(
        reservations.capacity_reservation_target().is_none(),
        "an empty target would read as a block Terraform's configuration does not have"
    );
    assert_eq!(g.placement_group(), None);

    // The blocks added (UpdateAutoScalingGroup with only what changed).
    let target = CapacityReservationTarget::builder()
        .capacity_reservation_ids("cr-1")
        .build();
    let spec = CapacityReservationSpecification::builder()
        .capacity_reservation_preference(CapacityReservationPreference::CapacityReservationsFirst)
        .capacity_reservation_target(target.clone())
        .build();
    let balanced_only = AvailabilityZoneDistribution::builder()
        .capacity_distribution_strategy(CapacityDistributionStrategy::BalancedOnly)
        .build();
    c.update_auto_scaling_group()
        .auto_scaling_group_name("web")
        .availability_zone_distribution(balanced_only.clone())
        .capacity_reservation_specification(spec.clone())
        .placement_group("pg-1")
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.availability_zone_distribution(), Some(&balanced_only));
    assert_eq!(g.capacity_reservation_specification(), Some(&spec));
    assert_eq!(g.placement_group(), Some("pg-1"));

    // The target removed: the whole structure is sent again, and replaces what was there.
    let first = CapacityReservationSpecification::builder()
        .capacity_reservation_preference(CapacityReservationPreference::CapacityReservationsFirst)
        .build();
    c.update_auto_scaling_group()
        .auto_scaling_group_name("web")
        .capacity_reservation_specification(first.clone())
        .placement_group("")
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.capacity_reservation_specification(), Some(&first));
    assert_eq!(g.placement_group(), None, "an empty name takes it off");
    assert_eq!(
        g.availability_zone_distribution(),
        Some(&balanced_only),
        "left as it was when not sent"
    );
}

/// Terraform's instance refresh on a change of template: UpdateAutoScalingGroup, then
/// StartInstanceRefresh with its preferences block as the provider fills it in (AutoRollback
/// with the group's template as the DesiredConfiguration); the next apply's Start finds one in
/// progress, cancels it, waits for Cancelled and starts again; a Cancel with none in progress
/// is the error it ignores.
#[tokio::test]
async fn terraforms_instance_refresh_starts_cancels_and_starts_again() {
    let Given { w, u, c } = Given::user("tf-refresh").await;
    w.hotel.add_template("web", IMAGE, "m5.large");
    w.hotel.add_template("big", IMAGE, "m5.xlarge");
    let spec = |name: &str| {
        LaunchTemplateSpecification::builder()
            .launch_template_name(name)
            .version("1")
            .build()
    };
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_template(spec("web@hotel"))
        .min_size(0)
        .max_size(4)
        .desired_capacity(2)
        .send()
        .await
        .unwrap();
    converges(&w, &u, "hotel", "web", 2).await;

    // The provider's preferences block with only `auto_rollback = true` set.
    let prefs = || {
        RefreshPreferences::builder()
            .min_healthy_percentage(90)
            .max_healthy_percentage(100)
            .skip_matching(false)
            .auto_rollback(true)
            .scale_in_protected_instances(ScaleInProtectedInstances::Ignore)
            .standby_instances(StandbyInstances::Ignore)
            .build()
    };
    let start = |to: &str| {
        c.start_instance_refresh()
            .auto_scaling_group_name("web")
            .strategy(aws_sdk_autoscaling::types::RefreshStrategy::Rolling)
            .preferences(prefs())
            .desired_configuration(
                DesiredConfiguration::builder()
                    .launch_template(spec(to))
                    .build(),
            )
            .send()
    };
    c.update_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_template(spec("big@hotel"))
        .send()
        .await
        .unwrap();
    let first = start("big@hotel").await.unwrap();
    let first = first.instance_refresh_id().unwrap().to_string();

    // The next apply: in progress, so cancelled and waited for, then started again.
    let (code, _) = failure(start("big@hotel").await);
    assert_eq!(code, "InstanceRefreshInProgress");
    let cancelled = c
        .cancel_instance_refresh()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    assert_eq!(cancelled.instance_refresh_id(), Some(first.as_str()));
    w.until(120, "the refresh cancelled", async || {
        let found = c
            .describe_instance_refreshes()
            .auto_scaling_group_name("web")
            .instance_refresh_ids(&first)
            .send()
            .await
            .unwrap();
        let [r] = found.instance_refreshes() else {
            panic!("exactly one refresh by its id: {found:?}")
        };
        match r.status().unwrap() {
            InstanceRefreshStatus::Cancelled => Some(()),
            // Terraform's waiter: anything but these is an unexpected state.
            InstanceRefreshStatus::Pending
            | InstanceRefreshStatus::InProgress
            | InstanceRefreshStatus::Cancelling => None,
            other => panic!("Terraform fails on {other:?}"),
        }
    })
    .await;
    let second = start("big@hotel").await.unwrap();
    assert_ne!(second.instance_refresh_id(), Some(first.as_str()));
    let listed = c
        .describe_instance_refreshes()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    let statuses: Vec<_> = listed
        .instance_refreshes()
        .iter()
        .map(|r| r.status().unwrap().clone())
        .collect();
    assert_eq!(
        statuses[1],
        InstanceRefreshStatus::Cancelled,
        "newest first"
    );

    // Done: a Cancel finds nothing, in the code Terraform ignores.
    w.until(300, "the second refresh done", async || {
        let r = c
            .describe_instance_refreshes()
            .auto_scaling_group_name("web")
            .send()
            .await
            .unwrap();
        (r.instance_refreshes()[0].status() == Some(&InstanceRefreshStatus::Successful))
            .then_some(())
    })
    .await;
    let (code, _) = failure(
        c.cancel_instance_refresh()
            .auto_scaling_group_name("web")
            .send()
            .await,
    );
    assert_eq!(code, "ActiveInstanceRefreshNotFound");
}

/// With a launch configuration the provider sends AutoRollback without a DesiredConfiguration:
/// refused in AWS's words (terraform-provider-aws#29830).
#[tokio::test]
async fn terraforms_auto_rollback_without_a_template_is_refused_in_aws_words() {
    let Given { c, .. } = Given::group("tf-rollback", 0, 2, 0).await;
    let message = invalid(
        c.start_instance_refresh()
            .auto_scaling_group_name("web")
            .preferences(
                RefreshPreferences::builder()
                    .min_healthy_percentage(90)
                    .auto_rollback(true)
                    .build(),
            )
            .send()
            .await,
    );
    assert!(
        message.contains("The AutoRollback parameter cannot be set to true when the DesiredConfiguration parameter is empty."),
        "{message}"
    );
}
