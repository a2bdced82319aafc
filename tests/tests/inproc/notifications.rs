//! Notifications: a group's SNS topics told of its launches and terminations, and a lifecycle
//! hook's queue told of each instance that waits on it, in AWS's JSON, through
//! aws-sdk-autoscaling; the messages as the deployment's SNS and SQS (the memory publisher) got
//! them, also when the provisioner is killed at any step.

use crate::provisioning::{converges, in_service};
use crate::{create_group, create_lc, invalid, Given};
use aws_sdk_autoscaling::types::LifecycleHookSpecification;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_seams::queue::Reconcile;
use serde_json::Value;
use std::collections::BTreeMap;

const TOPIC: &str = "arn:aws:sns:us-east-1:000000000000:web-events";
const QUEUE: &str = "arn:aws:sqs:us-east-1:000000000000:drain";
const LAUNCH: &str = "autoscaling:EC2_INSTANCE_LAUNCH";
const TERMINATE: &str = "autoscaling:EC2_INSTANCE_TERMINATE";
const TEST: &str = "autoscaling:TEST_NOTIFICATION";

/// The bodies `arn` got, in order.
fn bodies(w: &World, arn: &str) -> Vec<Value> {
    w.publisher
        .sent(arn)
        .iter()
        .map(|n| serde_json::from_str(&n.body).expect("a JSON message"))
        .collect()
}

/// The instances each event was told of, as (event, instance) -> times.
fn told(w: &World, arn: &str) -> BTreeMap<(String, String), usize> {
    let mut out = BTreeMap::new();
    for b in bodies(w, arn) {
        let event = b["Event"].as_str().unwrap_or_default().to_string();
        let id = b["EC2InstanceId"].as_str().unwrap_or_default().to_string();
        *out.entry((event, id)).or_default() += 1;
    }
    out
}

async fn notify(w: &World, u: &User, topic: &str, types: &[&str]) {
    w.sdk(u)
        .put_notification_configuration()
        .auto_scaling_group_name("web")
        .topic_arn(topic)
        .set_notification_types(Some(types.iter().map(|t| t.to_string()).collect()))
        .send()
        .await
        .expect("put-notification-configuration");
}

async fn resize(w: &World, u: &User, n: i32) {
    w.sdk(u).desire("web", n).await;
}

#[tokio::test]
async fn a_groups_topic_hears_each_launch_and_termination_once_in_awss_words() {
    let Given { w, u, c } = Given::group("notify", 0, 5, 0).await;
    let types = c
        .describe_auto_scaling_notification_types()
        .send()
        .await
        .unwrap();
    assert_eq!(types.auto_scaling_notification_types().len(), 5);

    // A topic that does not exist, one in another region, a type AWS does not have: refused,
    // nothing kept.
    let message = invalid(
        c.put_notification_configuration()
            .auto_scaling_group_name("web")
            .topic_arn(TOPIC)
            .notification_types(LAUNCH)
            .send()
            .await,
    );
    assert!(message.contains("test notification"), "{message}");
    w.publisher.create(TOPIC);
    for (topic, kind, says) in [
        ("arn:aws:sns:eu-west-1:0:web-events", LAUNCH, "region"),
        (
            TOPIC,
            "autoscaling:EC2_INSTANCE_REBOOT",
            "not a notification type",
        ),
    ] {
        let message = invalid(
            c.put_notification_configuration()
                .auto_scaling_group_name("web")
                .topic_arn(topic)
                .notification_types(kind)
                .send()
                .await,
        );
        assert!(message.contains(says), "{message}");
    }
    let none = c
        .describe_notification_configurations()
        .send()
        .await
        .unwrap();
    assert!(none.notification_configurations().is_empty());

    notify(&w, &u, TOPIC, &[LAUNCH, TERMINATE]).await;
    let sent = w.publisher.sent(TOPIC);
    assert_eq!(sent.len(), 1, "the test notification, first");
    assert_eq!(
        sent[0].subject.as_deref(),
        Some("Auto Scaling: test notification for group \"web\"")
    );
    assert_eq!(bodies(&w, TOPIC)[0]["Event"], TEST);
    let rows = c
        .describe_notification_configurations()
        .auto_scaling_group_names("web")
        .send()
        .await
        .unwrap();
    let rows: Vec<(&str, &str)> = rows
        .notification_configurations()
        .iter()
        .map(|r| (r.topic_arn().unwrap(), r.notification_type().unwrap()))
        .collect();
    assert_eq!(rows, [(TOPIC, LAUNCH), (TOPIC, TERMINATE)]);

    // Two launches, a scale-in, a VM killed and replaced: each told once.
    resize(&w, &u, 2).await;
    let two = converges(&w, &u, "hotel", "web", 2).await;
    resize(&w, &u, 1).await;
    let one = converges(&w, &u, "hotel", "web", 1).await;
    let gone_by_scale_in = two.iter().find(|i| !one.contains(i)).unwrap().clone();
    w.hotel.terminate_outside(&one[0]);
    let replaced = w
        .until(30, "a replacement InService", async || {
            let now = in_service(&w, &u, "web").await;
            (now.len() == 1 && now[0] != one[0]).then(|| now[0].clone())
        })
        .await;
    w.run_for(5).await;
    let mut want = BTreeMap::new();
    for id in two.iter().chain([&replaced]) {
        want.insert((LAUNCH.to_string(), id.clone()), 1);
    }
    want.insert((TERMINATE.to_string(), gone_by_scale_in.clone()), 1);
    want.insert((TERMINATE.to_string(), one[0].clone()), 1);
    want.insert((TEST.to_string(), String::new()), 1);
    assert_eq!(told(&w, TOPIC), want);

    // AWS's fields, and the activity DescribeScalingActivities shows.
    let launch = bodies(&w, TOPIC)
        .into_iter()
        .find(|b| b["Event"] == LAUNCH)
        .unwrap();
    for field in [
        "AccountId",
        "ActivityId",
        "AutoScalingGroupARN",
        "Cause",
        "Description",
        "Details",
        "EndTime",
        "Progress",
        "RequestId",
        "StartTime",
        "StatusCode",
        "Time",
    ] {
        assert!(!launch[field].is_null(), "{field} in {launch}");
    }
    assert_eq!(launch["Service"], "AWS Auto Scaling");
    assert_eq!(launch["AutoScalingGroupName"], "web");
    // Told as it launches, InProgress at 50, as AWS tells it; the activity is Successful once
    // the instance is InService.
    assert_eq!(
        (launch["StatusCode"].as_str(), launch["Progress"].as_i64()),
        (Some("InProgress"), Some(50))
    );
    let activities = c.activities("web").await;
    let shown = activities
        .activities()
        .iter()
        .find(|a| Some(a.activity_id()) == Some(launch["ActivityId"].as_str()))
        .expect("the launch's activity");
    assert_eq!(
        (shown.status_code().map(|s| s.as_str()), shown.progress()),
        (Some("Successful"), Some(100))
    );

    // Deleted: nothing more is told; deleting it again is refused.
    c.delete_notification_configuration()
        .auto_scaling_group_name("web")
        .topic_arn(TOPIC)
        .send()
        .await
        .unwrap();
    let before = w.publisher.sent(TOPIC).len();
    resize(&w, &u, 2).await;
    converges(&w, &u, "hotel", "web", 2).await;
    assert_eq!(w.publisher.sent(TOPIC).len(), before);
    invalid(
        c.delete_notification_configuration()
            .auto_scaling_group_name("web")
            .topic_arn(TOPIC)
            .send()
            .await,
    );
}

#[tokio::test]
async fn a_crash_at_any_step_loses_no_notification_and_repeats_none_but_the_one_in_flight() {
    for k in 1.. {
        let Given { w, u, .. } = Given::user("crash-notify").await;
        w.publisher.create(TOPIC);
        create_lc(&w, &u, "web@hotel").await;
        create_group(&w, &u, "web", "web@hotel", 0, 5, 0).await;
        notify(&w, &u, TOPIC, &[LAUNCH]).await;
        resize(&w, &u, 3).await;
        // The messages the api queued are this test's to deliver.
        w.queue.purge();
        let msg = Reconcile::new(&u.name, "web", "crash test");
        let crashed = w.reconcile_crashing_at(&msg, k).await;
        w.clock.advance_ms(provisioner::LEASE_MS + 1_000);
        let ids = converges(&w, &u, "hotel", "web", 3).await;
        w.run_for(3).await;
        let told = told(&w, TOPIC);
        let mut launches: Vec<&String> = told
            .keys()
            .filter(|(e, _)| e == LAUNCH)
            .map(|(_, id)| id)
            .collect();
        launches.sort();
        // Every launch told, none that did not happen (a VM of the group, recorded).
        assert_eq!(
            launches,
            ids.iter().collect::<Vec<_>>(),
            "crash at step {k}"
        );
        // Once each, but for the one sent when the crash came, before it was forgotten: sent
        // again with the same ActivityId.
        let repeats: usize = told.values().map(|n| n - 1).sum();
        assert!(repeats <= 1, "crash at step {k}: {told:?}");
        let mut activity_ids: Vec<String> = bodies(&w, TOPIC)
            .iter()
            .filter(|b| b["Event"] == LAUNCH)
            .map(|b| b["ActivityId"].as_str().unwrap().to_string())
            .collect();
        activity_ids.sort();
        activity_ids.dedup();
        assert_eq!(activity_ids.len(), 3, "crash at step {k}");
        if !crashed {
            assert!(k > 3, "the reconcile took only {k} steps");
            return;
        }
    }
}

#[tokio::test]
async fn a_termination_hooks_queue_gets_awss_message_and_the_token_releases_the_vm() {
    let Given { w, u, c } = Given::lc("nth").await;
    // A hook's target that does not exist: refused at creation, as at PutLifecycleHook.
    let spec = LifecycleHookSpecification::builder()
        .lifecycle_hook_name("drain")
        .lifecycle_transition("autoscaling:EC2_INSTANCE_TERMINATING")
        .notification_target_arn(QUEUE)
        .role_arn("arn:aws:iam::000000000000:role/phantom-hooks")
        .notification_metadata("drain-me")
        .heartbeat_timeout(300)
        .default_result("ABANDON")
        .build();
    let create = || {
        c.create_auto_scaling_group()
            .auto_scaling_group_name("web")
            .launch_configuration_name("web@hotel")
            .min_size(0)
            .max_size(5)
            .desired_capacity(2)
            .lifecycle_hook_specification_list(spec.clone())
    };
    let message = invalid(create().send().await);
    assert!(message.contains(QUEUE), "{message}");
    w.publisher.create(QUEUE);
    create().send().await.expect("create-auto-scaling-group");
    assert_eq!(
        bodies(&w, QUEUE)[0]["Event"],
        TEST,
        "the hook's test message"
    );
    let hooks = c.hooks("web").await;
    let h = &hooks.lifecycle_hooks()[0];
    assert_eq!(h.notification_target_arn(), Some(QUEUE));
    assert_eq!(
        h.role_arn(),
        Some("arn:aws:iam::000000000000:role/phantom-hooks")
    );
    let two = converges(&w, &u, "hotel", "web", 2).await;

    // Scale in: the leaving VM waits, and the queue is told, once, with a token.
    resize(&w, &u, 1).await;
    let message = w
        .until(10, "the hook's message", async || {
            bodies(&w, QUEUE)
                .into_iter()
                .find(|b| b["LifecycleTransition"] == "autoscaling:EC2_INSTANCE_TERMINATING")
        })
        .await;
    let id = message["EC2InstanceId"].as_str().unwrap().to_string();
    assert!(two.contains(&id));
    assert_eq!(message["LifecycleHookName"], "drain");
    assert_eq!(message["AutoScalingGroupName"], "web");
    assert_eq!(message["NotificationMetadata"], "drain-me");
    assert_eq!(
        (message["Origin"].as_str(), message["Destination"].as_str()),
        (Some("AutoScalingGroup"), Some("EC2"))
    );
    let token = message["LifecycleActionToken"]
        .as_str()
        .unwrap()
        .to_string();
    w.run_for(20).await;
    assert!(
        w.hotel.alive().contains(&id),
        "held until the consumer answers"
    );
    assert_eq!(w.publisher.sent(QUEUE).len(), 2, "told once");

    // A wrong token names no action; the token alone (no InstanceId) heartbeats and completes.
    invalid(
        c.complete_lifecycle_action()
            .auto_scaling_group_name("web")
            .lifecycle_hook_name("drain")
            .lifecycle_action_token("not-a-token")
            .lifecycle_action_result("CONTINUE")
            .send()
            .await,
    );
    c.record_lifecycle_action_heartbeat()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("drain")
        .lifecycle_action_token(&token)
        .send()
        .await
        .expect("heartbeat by token");
    c.complete_lifecycle_action()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("drain")
        .lifecycle_action_token(&token)
        .lifecycle_action_result("CONTINUE")
        .send()
        .await
        .expect("complete by token");
    w.until(10, "the drained VM terminated", async || {
        (!w.hotel.alive().contains(&id)).then_some(())
    })
    .await;
    converges(&w, &u, "hotel", "web", 1).await;
}

/// A group's topic hears of its warm pool's VMs too, as AWS tells them: launched into the pool
/// (EC2 to WarmPool), joining the group from it (WarmPool to AutoScalingGroup), and terminated
/// from it (WarmPool to EC2).
#[tokio::test]
async fn a_groups_topic_hears_of_its_warm_pool_vms() {
    use aws_sdk_autoscaling::types::{LifecycleState, WarmPoolState};
    let Given { w, u, c } = Given::group("notify-warm", 0, 3, 1).await;
    w.publisher.create(TOPIC);
    notify(&w, &u, TOPIC, &[LAUNCH, TERMINATE]).await;
    converges(&w, &u, "hotel", "web", 1).await;
    c.put_warm_pool()
        .auto_scaling_group_name("web")
        .pool_state(WarmPoolState::Stopped)
        .send()
        .await
        .expect("put-warm-pool");
    let routes = |w: &World| -> Vec<(String, String, String)> {
        bodies(w, TOPIC)
            .iter()
            .map(|b| {
                let s = |k: &str| b[k].as_str().unwrap_or_default().to_string();
                (s("Event"), s("Origin"), s("Destination"))
            })
            .collect()
    };
    let into = |w: &World| {
        routes(w)
            .iter()
            .filter(|r| r.0 == LAUNCH && r.1 == "EC2" && r.2 == "WarmPool")
            .count()
    };
    w.until(30, "two VMs launched into the pool, told", async || {
        (into(&w) == 2).then_some(())
    })
    .await;
    w.until(30, "the pool stopped", async || {
        let g = crate::group(&w, &u, "web").await.unwrap();
        let warm = c
            .describe_warm_pool()
            .auto_scaling_group_name("web")
            .send()
            .await
            .unwrap();
        let stopped = warm
            .instances()
            .iter()
            .filter(|i| i.lifecycle_state() == Some(&LifecycleState::WarmedStopped))
            .count();
        (stopped == 2 && g.instances().len() == 1).then_some(())
    })
    .await;
    // Each told InProgress as it launched; its activity Successful once in the pool's state.
    let statuses = |prefix: &'static str| {
        let (w, u) = (&w, &u);
        async move {
            crate::provisioning::activities(w, u, "web")
                .await
                .into_iter()
                .filter(|a| a.description().is_some_and(|d| d.starts_with(prefix)))
                .map(|a| a.status_code().unwrap().as_str().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        statuses("Launching a new EC2 instance into warm pool").await,
        ["Successful", "Successful"]
    );
    assert!(bodies(&w, TOPIC)
        .iter()
        .filter(|b| b["Destination"] == "WarmPool")
        .all(|b| b["StatusCode"] == "InProgress"));
    // Scale-out takes one from the pool; the pool's deletion terminates the other.
    resize(&w, &u, 2).await;
    w.until(30, "a VM joined from the pool, told", async || {
        routes(&w)
            .iter()
            .any(|r| r.0 == LAUNCH && r.1 == "WarmPool" && r.2 == "AutoScalingGroup")
            .then_some(())
    })
    .await;
    w.until(30, "its join Successful once InService", async || {
        (statuses("Launching a new EC2 instance from warm pool").await == ["Successful"])
            .then_some(())
    })
    .await;
    c.delete_warm_pool()
        .auto_scaling_group_name("web")
        .force_delete(true)
        .send()
        .await
        .expect("delete-warm-pool");
    w.until(30, "a VM terminated from the pool, told", async || {
        routes(&w)
            .iter()
            .any(|r| r.0 == TERMINATE && r.1 == "WarmPool" && r.2 == "EC2")
            .then_some(())
    })
    .await;
}

/// TerminateInstanceInAutoScalingGroup and DetachInstances answer as AWS does: the activity
/// InProgress (progress 0 and 50), no EndTime, the instance's zone in its Details; it ends
/// Successful under the same id once the instance has gone, and the termination is told once,
/// with that activity.
#[tokio::test]
async fn a_users_termination_is_in_progress_until_its_vm_has_gone() {
    let Given { w, u, c } = Given::group("in-progress", 0, 5, 3).await;
    w.publisher.create(TOPIC);
    notify(&w, &u, TOPIC, &[TERMINATE]).await;
    let ids = converges(&w, &u, "hotel", "web", 3).await;
    let out = c
        .terminate_instance_in_auto_scaling_group()
        .instance_id(&ids[0])
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .unwrap();
    let act = out.activity().unwrap();
    assert_eq!(act.status_code().map(|s| s.as_str()), Some("InProgress"));
    assert_eq!(act.progress(), Some(0));
    assert!(act.end_time().is_none());
    assert!(
        act.details().unwrap().contains("Availability Zone"),
        "{act:?}"
    );
    let id = act.activity_id().unwrap().to_string();
    let detached = c
        .detach_instances()
        .auto_scaling_group_name("web")
        .instance_ids(&ids[1])
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .unwrap();
    let d = &detached.activities()[0];
    assert_eq!(d.status_code().map(|s| s.as_str()), Some("InProgress"));
    assert_eq!(d.progress(), Some(50));
    let detach_id = d.activity_id().unwrap().to_string();
    let ended = w
        .until(30, "both activities Successful", async || {
            let acts = c
                .describe_scaling_activities()
                .activity_ids(&id)
                .activity_ids(&detach_id)
                .send()
                .await
                .unwrap();
            let all = acts.activities();
            let done = all.len() == 2
                && all.iter().all(|a| {
                    a.status_code().map(|s| s.as_str()) == Some("Successful")
                        && a.progress() == Some(100)
                        && a.end_time().is_some()
                });
            done.then(|| all.to_vec())
        })
        .await;
    assert!(ended.iter().any(|a| a.activity_id() == Some(id.as_str())));
    assert!(!w.hotel.alive().contains(&ids[0]));
    // Told once, with the activity the call answered.
    let told: Vec<Value> = bodies(&w, TOPIC)
        .into_iter()
        .filter(|b| b["EC2InstanceId"] == ids[0].as_str())
        .collect();
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["ActivityId"], id.as_str());
    assert_eq!(told[0]["StatusCode"], "Successful");
}

#[tokio::test]
async fn a_termination_its_hook_holds_is_one_activity_mid_lifecycle_action_until_it_has_gone() {
    use aws_sdk_autoscaling::types::ScalingActivityStatusCode as Status;
    let Given { w, u, c } = Given::group("held-activity", 0, 5, 2).await;
    w.publisher.create(TOPIC);
    notify(&w, &u, TOPIC, &[TERMINATE]).await;
    converges(&w, &u, "hotel", "web", 2).await;
    crate::warm::drain_hook(&c).await;
    resize(&w, &u, 1).await;
    // Held: its activity MidLifecycleAction at 50, no EndTime, as AWS shows it.
    let held = w
        .until(10, "a termination held", async || {
            crate::provisioning::activities(&w, &u, "web")
                .await
                .into_iter()
                .find(|a| {
                    a.description()
                        .is_some_and(|d| d.starts_with("Terminating EC2 instance"))
                })
        })
        .await;
    assert_eq!(
        (held.status_code(), held.progress(), held.end_time()),
        (Some(&Status::MidLifecycleAction), Some(50), None)
    );
    let id = held.activity_id().unwrap().to_string();
    let vm = held
        .description()
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();
    c.complete_lifecycle_action()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("drain")
        .instance_id(&vm)
        .lifecycle_action_result("CONTINUE")
        .send()
        .await
        .unwrap();
    // Gone: the same activity Successful, and the topic told with its id, once.
    let done = w
        .until(10, "the held activity Successful", async || {
            crate::provisioning::activities(&w, &u, "web")
                .await
                .into_iter()
                .find(|a| {
                    a.activity_id() == Some(id.as_str())
                        && a.status_code() == Some(&Status::Successful)
                })
        })
        .await;
    assert!(done.end_time().is_some());
    let terminations: Vec<Value> = bodies(&w, TOPIC)
        .into_iter()
        .filter(|b| b["Event"] == TERMINATE)
        .collect();
    assert_eq!(terminations.len(), 1, "{terminations:?}");
    assert_eq!(terminations[0]["EC2InstanceId"], vm.as_str());
    assert_eq!(terminations[0]["ActivityId"], id.as_str());
    assert_eq!(terminations[0]["StatusCode"], "Successful");
}
