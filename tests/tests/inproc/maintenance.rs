//! A group's InstanceMaintenancePolicy acted on: an unhealthy VM replaced launch-first, and an
//! instance refresh's percentages taken from it.

use crate::provisioning::converges;
use crate::{group, Given};
use aws_sdk_autoscaling::types::InstanceMaintenancePolicy;
use phantom_e2e::steps::Steps;

fn policy(min: i32, max: i32) -> InstanceMaintenancePolicy {
    InstanceMaintenancePolicy::builder()
        .min_healthy_percentage(min)
        .max_healthy_percentage(max)
        .build()
}

/// Launch before terminating (100 to 110): the unhealthy VM keeps running, shown Unhealthy,
/// until its replacement is InService; the group never has fewer than two VMs serving or
/// about to be replaced, and runs a third meanwhile.
#[tokio::test]
async fn an_unhealthy_vm_runs_until_its_replacement_serves_under_launch_before_terminating() {
    let (Given { w, u, c }, ids) = Given::converged("maintain", 0, 4, 2).await;
    c.update("web", |g| g.instance_maintenance_policy(policy(100, 110)))
        .await;
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(
        g.instance_maintenance_policy(),
        Some(&policy(100, 110)),
        "shown as given"
    );
    c.set_instance_health()
        .instance_id(&ids[0])
        .health_status("Unhealthy")
        .send()
        .await
        .unwrap();
    let mut most = 0;
    let replacement = w
        .until(60, "the unhealthy VM replaced", async || {
            let g = group(&w, &u, "web").await.unwrap();
            let is = g.instances();
            most = most.max(is.len());
            let sick = is.iter().find(|i| i.instance_id() == Some(ids[0].as_str()));
            let serving: Vec<&str> = is
                .iter()
                .filter(|i| {
                    i.lifecycle_state().map(|l| l.as_str()) == Some("InService")
                        && i.health_status() == Some("Healthy")
                })
                .filter_map(|i| i.instance_id())
                .collect();
            match sick {
                Some(i) => {
                    assert_eq!(i.health_status(), Some("Unhealthy"));
                    assert!(serving.len() <= 2, "at most one more than desired");
                    None
                }
                None => {
                    assert_eq!(serving.len(), 2, "it went only once its replacement served");
                    serving
                        .iter()
                        .find(|id| **id != ids[1])
                        .map(|id| id.to_string())
                }
            }
        })
        .await;
    assert_eq!(most, 3, "the replacement launched first");
    assert_ne!(replacement, ids[0]);
    let after = converges(&w, &u, "hotel", "web", 2).await;
    assert!(!after.contains(&ids[0]));
    let activities = c.activities("web").await;
    assert!(activities
        .activities()
        .iter()
        .any(|a| a.cause().unwrap().contains("set unhealthy")));
}

/// Terminate and launch (0 to 100): the unhealthy VM goes at once, as without a policy; an
/// instance refresh without percentages takes the policy's.
#[tokio::test]
async fn terminate_and_launch_goes_first_and_a_refresh_takes_the_policys_percentages() {
    let (Given { w, u, c }, ids) = Given::converged("maintain-tl", 0, 4, 2).await;
    c.update("web", |g| g.instance_maintenance_policy(policy(0, 100)))
        .await;
    c.set_instance_health()
        .instance_id(&ids[0])
        .health_status("Unhealthy")
        .send()
        .await
        .unwrap();
    w.until(10, "the unhealthy VM terminated first", async || {
        let g = group(&w, &u, "web").await.unwrap();
        let is = g.instances();
        assert!(is.len() <= 2, "never more than desired");
        is.iter()
            .all(|i| i.instance_id() != Some(ids[0].as_str()))
            .then_some(())
    })
    .await;
    converges(&w, &u, "hotel", "web", 2).await;

    let id = c
        .start_instance_refresh()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap()
        .instance_refresh_id()
        .unwrap()
        .to_string();
    let r = c
        .describe_instance_refreshes()
        .auto_scaling_group_name("web")
        .instance_refresh_ids(&id)
        .send()
        .await
        .unwrap();
    let prefs = r.instance_refreshes()[0].preferences().unwrap();
    assert_eq!(
        (
            prefs.min_healthy_percentage(),
            prefs.max_healthy_percentage()
        ),
        (Some(0), Some(100))
    );
    // Refused as AWS documents: both, in range, at most 100 apart.
    for (min, max) in [(101, 110), (90, 99), (0, 150), (100, 100), (-1, 110)] {
        let e = c
            .update_auto_scaling_group()
            .auto_scaling_group_name("web")
            .instance_maintenance_policy(policy(min, max))
            .send()
            .await
            .unwrap_err();
        assert_eq!(
            aws_sdk_autoscaling::error::ProvideErrorMetadata::code(&e),
            Some("ValidationError"),
            "{min} {max}"
        );
    }
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.instance_maintenance_policy(), Some(&policy(0, 100)));
}

/// Terraform's calls for `instance_maintenance_policy`: the block at creation, read back as
/// sent; the block removed, sent as -1 and -1, read back as none (the provider's state is then
/// empty, so its plan shows no change).
#[tokio::test]
async fn terraforms_instance_maintenance_policy_calls_read_back_as_sent() {
    let Given { w, u, c } = Given::lc("maintain-tf").await;
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(0)
        .max_size(2)
        .desired_capacity(0)
        .instance_maintenance_policy(policy(90, 120))
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.instance_maintenance_policy(), Some(&policy(90, 120)));
    c.update_auto_scaling_group()
        .auto_scaling_group_name("web")
        .instance_maintenance_policy(policy(-1, -1))
        .send()
        .await
        .unwrap();
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.instance_maintenance_policy(), None);
}
