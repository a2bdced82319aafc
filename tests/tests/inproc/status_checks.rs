//! EC2's status checks and scheduled events, every group's default health check (issue 60): a VM
//! whose system or instance check turns impaired is replaced once the impairment has lasted the
//! group's confirmation period (2 minutes, or its tag's), one with a scheduled event at once, one
//! whose attached EBS volume is impaired under HealthCheckType EBS; insufficient data is never
//! acted on, suspended processes hold it back, a cloud without DescribeInstanceStatus falls back
//! to its VMs' states once, and a crash at any step of the replacement leaks and doubles nothing.

use crate::provisioning::{activities, converges, in_service};
use crate::{create_group, create_lc, Given};
use aws_sdk_autoscaling::types::Tag;
use health_check::HealthCheck;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_model::status::{CheckStatus, EventCode};
use phantom_model::time::Clock;
use phantom_rules::pulse::Cadence;
use phantom_seams::cloud::memory::Which;
use phantom_seams::store::Directory;

/// Sets the group's confirmation period (tag `phantom:status-check-confirm-seconds`).
async fn confirm_after(c: &aws_sdk_autoscaling::Client, secs: &str) {
    crate::tag_web(c, "phantom:status-check-confirm-seconds", secs).await;
}

/// Group `web`'s confirmation period tag.
fn confirm_tag(secs: &str) -> Tag {
    crate::group_tag("web", "phantom:status-check-confirm-seconds", secs)
}

/// The causes of the group's activities that name `words`.
async fn causes_with(w: &World, u: &User, words: &str) -> Vec<String> {
    activities(w, u, "web")
        .await
        .iter()
        .filter_map(|a| a.cause())
        .filter(|c| c.contains(words))
        .map(str::to_string)
        .collect()
}

/// Runs until `gone` is no longer among the group's VMs and it has `n` InService again: the
/// seconds that took.
async fn replaced(w: &World, u: &User, gone: &str, n: usize, secs: u64) -> u64 {
    let start = w.clock.now_ms();
    w.until(secs, "the VM replaced", async || {
        let serving = in_service(w, u, "web").await;
        (serving.len() == n && !serving.iter().any(|id| id == gone)).then_some(())
    })
    .await;
    converges(w, u, "hotel", "web", n).await;
    ((w.clock.now_ms() - start) / 1000) as u64
}

#[tokio::test]
async fn an_impaired_system_check_is_replaced_once_it_has_lasted_two_minutes() {
    let (Given { w, u, .. }, ids) = Given::converged("impaired", 0, 5, 2).await;
    w.hotel.impair(&ids[0], Which::System);
    // Within the confirmation period the VM stays, InService and healthy: EC2 may mend it.
    w.run_for(100).await;
    assert_eq!(in_service(&w, &u, "web").await, ids);
    let c = w.sdk(&u);
    let i = c
        .describe_auto_scaling_instances()
        .instance_ids(&ids[0])
        .send()
        .await
        .unwrap();
    assert_eq!(
        i.auto_scaling_instances()[0].health_status(),
        Some("HEALTHY")
    );
    // Two minutes after it turned impaired, it is replaced.
    let took = replaced(&w, &u, &ids[0], 2, 40).await;
    assert!(took <= 25, "replaced {took} s after the first check");
    let causes = causes_with(
        &w,
        &u,
        "in response to an EC2 instance status check failure",
    )
    .await;
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert!(
        causes[0].contains("its system status check is impaired since"),
        "{}",
        causes[0]
    );
    assert!(
        !w.hotel.alive().contains(&ids[0]),
        "the impaired VM was terminated"
    );
}

#[tokio::test]
async fn the_confirmation_is_kept_by_a_delayed_look_without_any_sweep() {
    let (Given { w, u, .. }, ids) = Given::converged("delayed", 0, 5, 2).await;
    w.hotel.impair(&ids[1], Which::Instance);
    // One sweep sees it and queues a round; from then on only the queue runs.
    w.run_for(1).await;
    w.run_without_sweeps(118).await;
    assert_eq!(in_service(&w, &u, "web").await, ids);
    w.run_without_sweeps(5).await;
    let serving = in_service(&w, &u, "web").await;
    assert!(
        !serving.contains(&ids[1]),
        "replaced by the delayed look: {serving:?}"
    );
}

#[tokio::test]
async fn a_confirmation_of_zero_replaces_at_the_first_look_and_a_bad_tag_is_refused() {
    let (Given { w, u, c }, ids) = Given::converged("confirm0", 0, 5, 2).await;
    let message = crate::invalid(
        c.create_or_update_tags()
            .tags(confirm_tag("soon"))
            .send()
            .await,
    );
    assert!(message.contains("from 0 to 3600"), "{message}");
    confirm_after(&c, "0").await;
    w.hotel.impair(&ids[0], Which::Instance);
    let took = replaced(&w, &u, &ids[0], 2, 10).await;
    assert!(took <= 3, "{took} s");
}

#[tokio::test]
async fn insufficient_data_is_never_acted_on() {
    let (Given { w, u, c }, ids) = Given::converged("nodata", 0, 5, 1).await;
    confirm_after(&c, "0").await;
    w.hotel
        .set_check(&ids[0], Which::System, CheckStatus::InsufficientData, None);
    w.hotel
        .set_check(&ids[0], Which::Instance, CheckStatus::Initializing, None);
    w.run_for(200).await;
    assert_eq!(in_service(&w, &u, "web").await, ids);
}

#[tokio::test]
async fn a_scheduled_retirement_replaces_the_vm_launch_first_naming_the_event() {
    let (Given { w, u, .. }, ids) = Given::converged("retire", 0, 5, 2).await;
    w.hotel.set_boot_time(std::time::Duration::from_secs(5));
    let in_a_week = w.clock.now_ms() + 7 * 24 * 3600 * 1000;
    w.hotel
        .schedule_event(&ids[0], EventCode::InstanceRetirement, in_a_week);
    // Launch-first: the retiring VM serves until its replacement does (3 VMs meanwhile).
    let mut most = 0;
    for _ in 0..20 {
        w.run_for(1).await;
        let serving = in_service(&w, &u, "web").await;
        assert!(serving.len() >= 2, "the group kept 2 serving: {serving:?}");
        most = most.max(w.hotel.alive().len());
        if !serving.contains(&ids[0]) {
            break;
        }
    }
    assert_eq!(
        most, 3,
        "the replacement launched before the retiring VM went"
    );
    converges(&w, &u, "hotel", "web", 2).await;
    assert!(!w.hotel.alive().contains(&ids[0]));
    let causes = causes_with(&w, &u, "in response to an EC2 scheduled event").await;
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert!(
        causes[0].contains("instance-retirement scheduled, not before"),
        "{}",
        causes[0]
    );
    // A scheduled reboot is replaced as AWS replaces an unhealthy VM: terminated, then launched.
    let now = in_service(&w, &u, "web").await;
    w.hotel.set_boot_time(std::time::Duration::ZERO);
    w.hotel
        .schedule_event(&now[1], EventCode::SystemReboot, in_a_week);
    replaced(&w, &u, &now[1], 2, 10).await;
}

#[tokio::test]
async fn an_impaired_ebs_volume_counts_only_under_health_check_type_ebs() {
    let (Given { w, u, c }, ids) = Given::converged("ebs", 0, 5, 1).await;
    confirm_after(&c, "0").await;
    w.hotel.impair(&ids[0], Which::Ebs);
    // Under EC2 (the group's type) the volume's check is not the group's.
    w.run_for(10).await;
    assert_eq!(in_service(&w, &u, "web").await, ids);
    c.update_auto_scaling_group()
        .auto_scaling_group_name("web")
        .health_check_type("EBS")
        .send()
        .await
        .unwrap();
    let g = w.sdk(&u).group("web").await.unwrap();
    assert_eq!(g.health_check_type(), Some("EBS"));
    replaced(&w, &u, &ids[0], 1, 10).await;
    let causes = causes_with(&w, &u, "in response to an EBS volume health check failure").await;
    assert!(
        causes[0].contains("attached EBS status check is impaired"),
        "{}",
        causes[0]
    );
    // Several checks at once, in AWS's comma-separated list; a word AWS has not is refused.
    c.update_auto_scaling_group()
        .auto_scaling_group_name("web")
        .health_check_type("EBS,VPC_LATTICE")
        .send()
        .await
        .unwrap();
    let g = w.sdk(&u).group("web").await.unwrap();
    assert_eq!(g.health_check_type(), Some("EBS,VPC_LATTICE"));
    let message = crate::invalid(
        c.update_auto_scaling_group()
            .auto_scaling_group_name("web")
            .health_check_type("EBS,HTTP")
            .send()
            .await,
    );
    assert!(message.contains("'HTTP'"), "{message}");
}

#[tokio::test]
async fn suspended_processes_hold_a_status_check_replacement_back() {
    let (Given { w, u, c }, ids) = Given::converged("suspend", 0, 5, 1).await;
    confirm_after(&c, "0").await;
    c.suspend_processes()
        .auto_scaling_group_name("web")
        .scaling_processes("HealthCheck")
        .send()
        .await
        .unwrap();
    w.hotel.impair(&ids[0], Which::System);
    w.run_for(10).await;
    assert_eq!(
        in_service(&w, &u, "web").await,
        ids,
        "no health check, no verdict"
    );
    c.resume_processes()
        .auto_scaling_group_name("web")
        .scaling_processes("HealthCheck")
        .send()
        .await
        .unwrap();
    crate::suspend_web(&c, "ReplaceUnhealthy").await;
    let health = async || {
        c.describe_auto_scaling_instances()
            .instance_ids(&ids[0])
            .send()
            .await
            .unwrap()
            .auto_scaling_instances()[0]
            .health_status()
            .map(str::to_string)
    };
    w.until(10, "marked unhealthy and kept", async || {
        (health().await.as_deref() == Some("UNHEALTHY")).then_some(())
    })
    .await;
    // Phantom's own API says why, as the console shows it.
    let (status, v) = crate::self_service::call(
        &w,
        &u,
        "DescribeInstanceHealth",
        serde_json::json!({"AutoScalingGroupName": "web"}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let vm = &v["Instances"][0];
    assert_eq!(
        (vm["InstanceId"].as_str(), vm["HealthStatus"].as_str()),
        (Some(ids[0].as_str()), Some("Unhealthy"))
    );
    let why = vm["Why"].as_str().unwrap_or_default();
    assert!(
        why.starts_with(
            "an EC2 instance status check failure (its system status check is impaired since"
        ),
        "{why}"
    );
    w.run_for(10).await;
    assert_eq!(
        in_service(&w, &u, "web").await,
        ids,
        "kept while replacing is suspended"
    );
    c.resume_processes()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    replaced(&w, &u, &ids[0], 1, 10).await;
    let causes = causes_with(
        &w,
        &u,
        "in response to an EC2 instance status check failure",
    )
    .await;
    assert_eq!(causes.len(), 1, "the replacement names the check");
}

#[tokio::test]
async fn a_cloud_without_status_checks_falls_back_to_states_once() {
    let (Given { w, u, .. }, ids) = Given::converged("nocheck", 0, 5, 2).await;
    w.hotel.without_status_checks();
    let before = w.hotel.status_calls();
    w.run_for(30).await;
    assert_eq!(
        w.hotel.status_calls() - before,
        1,
        "asked once, then never again"
    );
    let hotel = w.store.cloud("hotel").await.unwrap().unwrap();
    assert!(!hotel.status_checks, "recorded on the cloud");
    // Its VMs are still judged by their state.
    w.hotel.terminate_outside(&ids[0]);
    replaced(&w, &u, &ids[0], 2, 10).await;
}

#[tokio::test]
async fn a_look_sees_an_impairment_and_the_pulse_replaces_it() {
    let w = World::new().await;
    let u = w.user("pulsed").await;
    create_lc(&w, &u, "web").await;
    create_group(&w, &u, "web", "web", 0, 5, 2).await;
    confirm_after(&w.sdk(&u), "0").await;
    let h: HealthCheck = w.pulsed(Cadence::of_secs(5, 10, 60, 60, 3600).expect("whole periods"));
    h.run().await.expect("the schedule starts the pulse");
    w.pulse_for(&h, 60).await;
    let ids = in_service(&w, &u, "web").await;
    assert_eq!(ids.len(), 2);
    let launched = w.hotel.launched_total();
    w.hotel.impair(&ids[0], Which::System);
    let mut secs = 0;
    while w.hotel.launched_total() == launched {
        w.pulse_for(&h, 1).await;
        secs += 1;
        assert!(secs <= 11, "no replacement within 11 s of the impairment");
    }
}

#[tokio::test]
async fn aws_health_tells_of_a_retirement_and_the_group_acts_within_seconds() {
    let (Given { w, u, .. }, ids) = Given::converged("health", 0, 5, 2).await;
    let next_week = w.clock.now_ms() + 7 * 24 * 3600 * 1000;
    w.hotel
        .schedule_event(&ids[1], EventCode::InstanceRetirement, next_week);
    // No sweep, no look: the event alone brings the group's round, which launches the
    // replacement at once; its follow-ups let the retiring VM go once the replacement serves.
    assert_eq!(w.deliver_events(&w.hotel).await, 1);
    w.run_without_sweeps(1).await;
    assert_eq!(
        w.hotel.alive().len(),
        3,
        "the replacement launched within a second"
    );
    w.run_without_sweeps(10).await;
    let serving = in_service(&w, &u, "web").await;
    assert!(
        !serving.contains(&ids[1]) && serving.len() == 2,
        "{serving:?}"
    );
    assert!(!w.hotel.alive().contains(&ids[1]));
}

#[tokio::test]
async fn a_warm_pools_running_vm_that_fails_its_status_check_is_replaced_in_the_pool() {
    let (Given { w, u, c }, _) = Given::converged("warmcheck", 0, 3, 1).await;
    confirm_after(&c, "0").await;
    c.put_warm_pool()
        .auto_scaling_group_name("web")
        .pool_state(aws_sdk_autoscaling::types::WarmPoolState::Running)
        .send()
        .await
        .unwrap();
    let pooled = async || -> Vec<String> {
        w.sdk(&u)
            .warm_pool("web")
            .await
            .instances()
            .iter()
            .filter(|i| {
                i.lifecycle_state()
                    == Some(&aws_sdk_autoscaling::types::LifecycleState::WarmedRunning)
            })
            .map(|i| i.instance_id().unwrap().to_string())
            .collect()
    };
    let warm = w
        .until(60, "2 VMs running in the pool", async || {
            let p = pooled().await;
            (p.len() == 2).then_some(p)
        })
        .await;
    w.hotel.impair(&warm[0], Which::System);
    w.until(
        30,
        "the impaired pool VM replaced in the pool",
        async || {
            let p = pooled().await;
            (p.len() == 2 && !p.contains(&warm[0])).then_some(())
        },
    )
    .await;
    assert!(!w.hotel.alive().contains(&warm[0]));
    let found = causes_with(&w, &u, "taken out of the warm pool").await;
    assert!(
        found
            .iter()
            .any(|c| c.contains("an EC2 instance status check failure")),
        "{found:?}"
    );
}
