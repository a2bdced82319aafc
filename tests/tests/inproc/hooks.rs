//! Lifecycle hooks and standby, with their effect: VMs held in Pending:Wait and Terminating:Wait
//! until CompleteLifecycleAction or the heartbeat timeout releases them, and instances moved in
//! and out of Standby.

use crate::provisioning::{activities, converges, in_service};
use crate::{failure, group, invalid, Given};
use aws_sdk_autoscaling::types::{
    LifecycleHookSpecification, LifecycleState, ScalingActivityStatusCode,
};
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;

const LAUNCHING: &str = "autoscaling:EC2_INSTANCE_LAUNCHING";
const TERMINATING: &str = "autoscaling:EC2_INSTANCE_TERMINATING";

/// The group's instances in `state`, by id.
pub async fn in_state(w: &World, u: &User, name: &str, state: LifecycleState) -> Vec<String> {
    let Some(g) = group(w, u, name).await else {
        return Vec::new();
    };
    let mut ids: Vec<String> = g
        .instances()
        .iter()
        .filter(|i| i.lifecycle_state() == Some(&state))
        .map(|i| i.instance_id().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

async fn put_hook(w: &World, u: &User, name: &str, transition: &str, timeout: i32, default: &str) {
    w.sdk(u)
        .put_lifecycle_hook()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name(name)
        .lifecycle_transition(transition)
        .heartbeat_timeout(timeout)
        .default_result(default)
        .send()
        .await
        .expect("put-lifecycle-hook");
}

async fn complete(w: &World, u: &User, hook: &str, id: &str, result: &str) {
    w.sdk(u)
        .complete_lifecycle_action()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name(hook)
        .instance_id(id)
        .lifecycle_action_result(result)
        .send()
        .await
        .expect("complete-lifecycle-action");
}

async fn waiting(w: &World, u: &User, state: LifecycleState, n: usize) -> Vec<String> {
    w.until(10, &format!("{n} instances {state}"), async || {
        let ids = in_state(w, u, "web", state.clone()).await;
        (ids.len() == n).then_some(ids)
    })
    .await
}

#[tokio::test]
async fn a_launch_hook_holds_new_vms_until_continued_abandoned_or_timed_out() {
    let Given { w, u, c } = Given::group("launch-hook", 0, 5, 0).await;
    put_hook(&w, &u, "setup", LAUNCHING, 60, "ABANDON").await;
    let hooks = c.hooks("web").await;
    let h = &hooks.lifecycle_hooks()[0];
    assert_eq!(
        (h.lifecycle_hook_name(), h.lifecycle_transition()),
        (Some("setup"), Some(LAUNCHING))
    );
    assert_eq!(
        (h.heartbeat_timeout(), h.global_timeout()),
        (Some(60), Some(6000))
    );
    assert_eq!(h.default_result(), Some("ABANDON"));

    c.desire("web", 3).await;
    let held = waiting(&w, &u, LifecycleState::PendingWait, 3).await;
    // Running on the cloud, still held after 30 s: nothing InService, nothing more launched.
    w.run_for(30).await;
    assert_eq!(
        in_state(&w, &u, "web", LifecycleState::PendingWait).await,
        held
    );
    assert_eq!(w.hotel.alive().len(), 3);
    let instances = c.describe_auto_scaling_instances().send().await.unwrap();
    assert!(instances
        .auto_scaling_instances()
        .iter()
        .all(|i| i.lifecycle_state() == Some("Pending:Wait")));
    // Their launches' activities: MidLifecycleAction while the hook holds them, as AWS shows.
    let launching = |id: &str| {
        let id = id.to_string();
        let (w, u) = (&w, &u);
        async move {
            activities(w, u, "web")
                .await
                .into_iter()
                .find(|a| a.description() == Some(&format!("Launching a new EC2 instance: {id}")))
                .expect("its launch's activity")
        }
    };
    for id in &held {
        let a = launching(id).await;
        assert_eq!(
            (a.status_code(), a.progress(), a.end_time()),
            (
                Some(&ScalingActivityStatusCode::MidLifecycleAction),
                Some(50),
                None
            )
        );
    }

    // CONTINUE: InService at once. ABANDON: terminated and replaced. A heartbeat keeps the third
    // past its first deadline; then the timeout gives the default, ABANDON.
    complete(&w, &u, "setup", &held[0], "CONTINUE").await;
    complete(&w, &u, "setup", &held[1], "ABANDON").await;
    c.record_lifecycle_action_heartbeat()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("setup")
        .instance_id(&held[2])
        .send()
        .await
        .unwrap();
    w.run_for(2).await;
    assert_eq!(in_service(&w, &u, "web").await, [held[0].clone()]);
    assert_eq!(
        launching(&held[0]).await.status_code(),
        Some(&ScalingActivityStatusCode::Successful)
    );
    assert!(!w.hotel.alive().contains(&held[1]), "abandoned: terminated");
    let pending = in_state(&w, &u, "web", LifecycleState::PendingWait).await;
    assert_eq!(
        pending.len(),
        2,
        "the third, and the replacement: {pending:?}"
    );
    assert!(pending.contains(&held[2]));
    w.run_for(35).await;
    assert!(
        in_state(&w, &u, "web", LifecycleState::PendingWait)
            .await
            .contains(&held[2]),
        "the heartbeat moved the deadline"
    );
    w.until(40, "the third abandoned by its timeout", async || {
        (!w.hotel.alive().contains(&held[2])).then_some(())
    })
    .await;

    // Answering a VM that is not waiting, or one that has left the group, is refused in AWS's
    // words (drain scripts take them for "done").
    for id in [&held[0], &held[2]] {
        let (code, message) = failure(
            c.complete_lifecycle_action()
                .auto_scaling_group_name("web")
                .lifecycle_hook_name("setup")
                .instance_id(id)
                .lifecycle_action_result("CONTINUE")
                .send()
                .await,
        );
        assert_eq!(
            (code.as_str(), message),
            (
                "ValidationError",
                format!("No active Lifecycle Action found with instance ID {id}")
            )
        );
    }
    let (code, message) = failure(
        c.complete_lifecycle_action()
            .auto_scaling_group_name("web")
            .lifecycle_hook_name("setup")
            .lifecycle_action_token("8c6ee3cc-2ec1-4c1d-a1aa-8ef2c0ab8c4c")
            .lifecycle_action_result("CONTINUE")
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
    assert!(message.contains("with token 8c6ee3cc"), "{message}");

    // Deleting the hook ends the waits of a launch with ABANDON (as AWS does); without a hook
    // the group fills with InService VMs.
    let pending = waiting(&w, &u, LifecycleState::PendingWait, 2).await;
    c.delete_lifecycle_hook()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("setup")
        .send()
        .await
        .unwrap();
    let ids = converges(&w, &u, "hotel", "web", 3).await;
    assert!(pending.iter().all(|p| !ids.contains(p)));
    let (code, _) = failure(
        c.delete_lifecycle_hook()
            .auto_scaling_group_name("web")
            .lifecycle_hook_name("setup")
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError");
}

/// A launch its launch hook ABANDONs leaves as any leaving VM does: through the group's
/// termination hooks (Terminating:Wait) before it is terminated, as AWS has it.
#[tokio::test]
async fn an_abandoned_launch_passes_through_the_termination_hooks() {
    let Given { w, u, c } = Given::group("abandon-hold", 0, 5, 0).await;
    put_hook(&w, &u, "setup", LAUNCHING, 60, "CONTINUE").await;
    put_hook(&w, &u, "drain", TERMINATING, 60, "CONTINUE").await;
    c.desire("web", 1).await;
    let held = waiting(&w, &u, LifecycleState::PendingWait, 1).await;
    complete(&w, &u, "setup", &held[0], "ABANDON").await;
    let leaving = waiting(&w, &u, LifecycleState::TerminatingWait, 1).await;
    assert_eq!(leaving, held, "held by the termination hook");
    assert!(w.hotel.alive().contains(&held[0]), "not terminated yet");
    complete(&w, &u, "drain", &held[0], "CONTINUE").await;
    w.until(10, "the abandoned VM terminated", async || {
        (!w.hotel.alive().contains(&held[0])).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_termination_hook_holds_leaving_vms_until_released() {
    let (Given { w, u, c }, ids) = Given::converged("term-hook", 0, 5, 3).await;
    put_hook(&w, &u, "drain", TERMINATING, 30, "CONTINUE").await;

    // Scale-in: the victim waits, still running, not counted; released by CompleteLifecycleAction.
    c.desire("web", 2).await;
    let leaving = waiting(&w, &u, LifecycleState::TerminatingWait, 1).await;
    w.run_for(10).await;
    assert!(
        w.hotel.alive().contains(&leaving[0]),
        "held, not terminated"
    );
    assert_eq!(in_service(&w, &u, "web").await.len(), 2);
    complete(&w, &u, "drain", &leaving[0], "CONTINUE").await;
    w.run_for(2).await;
    assert!(
        !w.hotel.alive().contains(&leaving[0]),
        "released: terminated"
    );

    // TerminateInstanceInAutoScalingGroup: held too; released by the heartbeat timeout.
    let victim = in_service(&w, &u, "web").await[0].clone();
    let out = c
        .terminate_instance_in_auto_scaling_group()
        .instance_id(&victim)
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .unwrap();
    assert!(out.activity().is_some());
    let held = waiting(&w, &u, LifecycleState::TerminatingWait, 1).await;
    assert_eq!(held, std::slice::from_ref(&victim));
    w.run_for(20).await;
    assert!(w.hotel.alive().contains(&victim));
    w.until(15, "released by the timeout", async || {
        (!w.hotel.alive().contains(&victim)).then_some(())
    })
    .await;
    converges(&w, &u, "hotel", "web", 1).await;

    // A VM that dies while held is simply gone (nothing to release, nothing replaced at
    // desired 0); a forced delete skips the hooks.
    c.desire("web", 0).await;
    let held = waiting(&w, &u, LifecycleState::TerminatingWait, 1).await;
    w.hotel.terminate_outside(&held[0]);
    w.until(10, "the dead held VM forgotten", async || {
        let g = group(&w, &u, "web").await.unwrap();
        g.instances().is_empty().then_some(())
    })
    .await;
    assert!(w.hotel.alive().is_empty(), "nothing launched in its place");
    let (code, _) = failure(
        c.terminate_instance_in_auto_scaling_group()
            .instance_id(&ids[0])
            .should_decrement_desired_capacity(false)
            .send()
            .await,
    );
    assert_eq!(code, "ValidationError", "already gone from the group");
    c.update("web", |g| g.desired_capacity(1)).await;
    converges(&w, &u, "hotel", "web", 1).await;
    c.force_delete("web").await;
    w.until(10, "the forced delete", async || {
        (group(&w, &u, "web").await.is_none() && w.hotel.alive().is_empty()).then_some(())
    })
    .await;
}

#[tokio::test]
async fn hooks_given_at_creation_hold_the_first_vms_and_bad_hooks_are_refused() {
    let Given { w, u, c } = Given::lc("spec-hook").await;
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(1)
        .max_size(2)
        .lifecycle_hook_specification_list(
            LifecycleHookSpecification::builder()
                .lifecycle_hook_name("boot")
                .lifecycle_transition(LAUNCHING)
                .heartbeat_timeout(300)
                .default_result("CONTINUE")
                .notification_metadata("ready?")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let held = waiting(&w, &u, LifecycleState::PendingWait, 1).await;
    complete(&w, &u, "boot", &held[0], "CONTINUE").await;
    assert_eq!(converges(&w, &u, "hotel", "web", 1).await, held);
    let hooks = c
        .describe_lifecycle_hooks()
        .auto_scaling_group_name("web")
        .lifecycle_hook_names("boot")
        .send()
        .await
        .unwrap();
    assert_eq!(
        hooks.lifecycle_hooks()[0].notification_metadata(),
        Some("ready?")
    );
    let types = c.describe_lifecycle_hook_types().send().await.unwrap();
    assert_eq!(types.lifecycle_hook_types(), [LAUNCHING, TERMINATING]);

    for (transition, timeout, default, target, want) in [
        (
            Some("autoscaling:EC2_INSTANCE_REBOOTING"),
            60,
            "CONTINUE",
            None,
            "Invalid Lifecycle Transition",
        ),
        (Some(LAUNCHING), 10, "CONTINUE", None, "between 30 and 7200"),
        (Some(LAUNCHING), 60, "MAYBE", None, "CONTINUE or ABANDON"),
        (
            None,
            60,
            "CONTINUE",
            None,
            "LifecycleTransition is required",
        ),
        (
            Some(LAUNCHING),
            60,
            "CONTINUE",
            Some("arn:aws:sqs:us-east-1:1:q"),
            "Failed to publish a test notification",
        ),
    ] {
        let (code, message) = failure(
            c.put_lifecycle_hook()
                .auto_scaling_group_name("web")
                .lifecycle_hook_name("bad")
                .set_lifecycle_transition(transition.map(str::to_string))
                .heartbeat_timeout(timeout)
                .default_result(default)
                .set_notification_target_arn(target.map(str::to_string))
                .send()
                .await,
        );
        assert_eq!(code, "ValidationError");
        assert!(message.contains(want), "{message}");
    }
    invalid(
        c.put_lifecycle_hook()
            .auto_scaling_group_name("nope")
            .lifecycle_hook_name("h")
            .lifecycle_transition(LAUNCHING)
            .send()
            .await,
    );
    let hooks = c.hooks("web").await;
    assert_eq!(
        hooks.lifecycle_hooks().len(),
        1,
        "nothing of the refused written"
    );
}

#[tokio::test]
async fn standby_takes_instances_out_of_service_and_back() {
    let (Given { w, u, c }, ids) = Given::converged("standby", 1, 4, 3).await;

    // With a decrement: out of the count, kept running, not replaced.
    let out = c
        .enter_standby()
        .auto_scaling_group_name("web")
        .instance_ids(&ids[0])
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .unwrap();
    let cause = out.activities()[0].cause().unwrap();
    assert!(
        cause.contains("shrinking the capacity from 3 to 2"),
        "{cause}"
    );
    // InProgress at 50, as AWS answers, until a round has it out of service: then Successful,
    // under the same id.
    let entered = &out.activities()[0];
    assert_eq!(
        (
            entered.status_code(),
            entered.progress(),
            entered.end_time()
        ),
        (Some(&ScalingActivityStatusCode::InProgress), Some(50), None)
    );
    let id = entered.activity_id().unwrap().to_string();
    w.until(10, "the standby activity Successful", async || {
        activities(&w, &u, "web").await.into_iter().find(|a| {
            a.activity_id() == Some(id.as_str())
                && a.status_code() == Some(&ScalingActivityStatusCode::Successful)
                && a.end_time().is_some()
        })
    })
    .await;
    w.run_for(5).await;
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(g.desired_capacity(), Some(2));
    assert_eq!(
        in_state(&w, &u, "web", LifecycleState::Standby).await,
        [ids[0].clone()]
    );
    assert_eq!(w.hotel.alive().len(), 3, "kept running, nothing launched");
    // Not health-checked in standby: stopping it does not get it replaced.
    w.hotel.stop_outside(&ids[0]);
    w.run_for(5).await;
    assert_eq!(
        in_state(&w, &u, "web", LifecycleState::Standby).await,
        [ids[0].clone()]
    );

    // Without a decrement: a replacement is launched.
    c.enter_standby()
        .auto_scaling_group_name("web")
        .instance_ids(&ids[1])
        .should_decrement_desired_capacity(false)
        .send()
        .await
        .unwrap();
    w.until(10, "a replacement InService", async || {
        (in_service(&w, &u, "web").await.len() == 2).then_some(())
    })
    .await;
    assert_eq!(
        w.hotel.alive().len(),
        3,
        "two InService and one in standby running"
    );

    // Back: desired grows with it; beyond MaxSize is refused.
    let out = c
        .exit_standby()
        .auto_scaling_group_name("web")
        .instance_ids(&ids[1])
        .send()
        .await
        .unwrap();
    assert!(out.activities()[0]
        .cause()
        .unwrap()
        .contains("increasing the capacity from 2 to 3"));
    // PreInService at 30 until the instance is InService again.
    let back = &out.activities()[0];
    assert_eq!(
        (back.status_code(), back.progress()),
        (Some(&ScalingActivityStatusCode::PreInService), Some(30))
    );
    let id = back.activity_id().unwrap().to_string();
    w.until(10, "back InService, its activity Successful", async || {
        let done = activities(&w, &u, "web").await.into_iter().any(|a| {
            a.activity_id() == Some(id.as_str())
                && a.status_code() == Some(&ScalingActivityStatusCode::Successful)
        });
        (done && in_service(&w, &u, "web").await.contains(&ids[1])).then_some(())
    })
    .await;
    assert_eq!(
        group(&w, &u, "web").await.unwrap().desired_capacity(),
        Some(3)
    );
    c.update("web", |g| g.max_size(3)).await;
    let message = invalid(
        c.exit_standby()
            .auto_scaling_group_name("web")
            .instance_ids(&ids[0])
            .send()
            .await,
    );
    assert!(message.contains("max-size=3"), "{message}");
    // Not InService, not in the group, below MinSize: refused, nothing written.
    let message = invalid(
        c.enter_standby()
            .auto_scaling_group_name("web")
            .instance_ids(&ids[0])
            .should_decrement_desired_capacity(true)
            .send()
            .await,
    );
    assert!(message.contains("not in InService"), "{message}");
    invalid(
        c.enter_standby()
            .auto_scaling_group_name("web")
            .instance_ids("i-nope")
            .should_decrement_desired_capacity(true)
            .send()
            .await,
    );
    c.update("web", |g| g.min_size(3)).await;
    let serving = in_service(&w, &u, "web").await;
    let message = invalid(
        c.enter_standby()
            .auto_scaling_group_name("web")
            .instance_ids(&serving[0])
            .should_decrement_desired_capacity(true)
            .send()
            .await,
    );
    assert!(
        message.contains("To place into standby 1 instance"),
        "{message}"
    );
    assert_eq!(
        in_state(&w, &u, "web", LifecycleState::Standby).await,
        [ids[0].clone()]
    );

    // The catalogues that go with these actions.
    let adj = c.describe_adjustment_types().send().await.unwrap();
    assert_eq!(adj.adjustment_types().len(), 3);
    let notes = c
        .describe_auto_scaling_notification_types()
        .send()
        .await
        .unwrap();
    assert_eq!(notes.auto_scaling_notification_types().len(), 5);
}

/// With an InstanceLifecyclePolicy that retains (`TerminateHookAbandon` `retain`), a VM whose
/// termination hook is abandoned keeps running in Terminating:Retained, outside the desired
/// capacity (its replacement launched), until TerminateInstanceInAutoScalingGroup.
#[tokio::test]
async fn an_abandoned_termination_is_retained_until_the_user_terminates_it() {
    use aws_sdk_autoscaling::types::{InstanceLifecyclePolicy, RetentionAction, RetentionTriggers};
    let (Given { w, u, c }, _) = Given::converged("retain", 0, 5, 2).await;
    put_hook(&w, &u, "drain", TERMINATING, 300, "CONTINUE").await;
    let retain = InstanceLifecyclePolicy::builder()
        .retention_triggers(
            RetentionTriggers::builder()
                .terminate_hook_abandon(RetentionAction::Retain)
                .build(),
        )
        .build();
    c.update("web", |g| g.instance_lifecycle_policy(retain.clone()))
        .await;
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(
        g.instance_lifecycle_policy(),
        Some(&retain),
        "shown as given"
    );

    let victim = in_service(&w, &u, "web").await[0].clone();
    c.terminate_instance_in_auto_scaling_group()
        .instance_id(&victim)
        .should_decrement_desired_capacity(false)
        .send()
        .await
        .unwrap();
    waiting(&w, &u, LifecycleState::TerminatingWait, 1).await;
    complete(&w, &u, "drain", &victim, "ABANDON").await;
    let retained = waiting(&w, &u, LifecycleState::TerminatingRetained, 1).await;
    assert_eq!(retained, std::slice::from_ref(&victim));
    // Not counted: the group launches its replacement; the retained VM runs on.
    let serving = w
        .until(60, "two InService beside the retained VM", async || {
            let ids = in_service(&w, &u, "web").await;
            (ids.len() == 2 && w.hotel.alive().len() == 3).then_some(ids)
        })
        .await;
    assert!(!serving.contains(&victim));
    w.run_for(30).await;
    assert!(
        w.hotel.alive().contains(&victim),
        "retained, not terminated"
    );
    let info = c
        .describe_auto_scaling_instances()
        .instance_ids(&victim)
        .send()
        .await
        .unwrap();
    assert_eq!(
        info.auto_scaling_instances()[0].lifecycle_state(),
        Some("Terminating:Retained")
    );
    let activities = c.activities("web").await;
    assert!(activities
        .activities()
        .iter()
        .any(|a| a.description() == Some(&format!("Retaining EC2 instance: {victim}"))));

    // The user terminates it: it goes, through no hook again, and the group stays at 2.
    c.terminate_instance_in_auto_scaling_group()
        .instance_id(&victim)
        .should_decrement_desired_capacity(false)
        .send()
        .await
        .unwrap();
    w.until(10, "the retained VM terminated", async || {
        let g = group(&w, &u, "web").await.unwrap();
        let listed = g
            .instances()
            .iter()
            .any(|i| i.instance_id() == Some(&victim));
        (!listed && !w.hotel.alive().contains(&victim)).then_some(())
    })
    .await;
    assert_eq!(converges(&w, &u, "hotel", "web", 2).await, serving);
}

/// A VM its termination hook held, whose hook was deleted while it waited, goes, and its
/// activity ends with it.
#[tokio::test]
async fn a_held_termination_whose_hook_is_deleted_ends_its_activity() {
    let (Given { w, u, c }, _) = Given::converged("hook-gone", 0, 5, 2).await;
    put_hook(&w, &u, "out", TERMINATING, 115, "CONTINUE").await;
    c.desire("web", 1).await;
    let held = waiting(&w, &u, LifecycleState::TerminatingWait, 1).await;
    c.delete_lifecycle_hook()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("out")
        .send()
        .await
        .unwrap();
    w.until(10, "the held VM gone", async || {
        (!w.hotel.alive().contains(&held[0])).then_some(())
    })
    .await;
    w.run_for(5).await;
    let open: Vec<String> = activities(&w, &u, "web")
        .await
        .iter()
        .filter(|a| {
            !matches!(
                a.status_code().map(|s| s.as_str()),
                Some("Successful" | "Failed" | "Cancelled")
            )
        })
        .map(|a| format!("{:?} {:?}", a.description(), a.status_code()))
        .collect();
    assert!(open.is_empty(), "{open:?}");
}
