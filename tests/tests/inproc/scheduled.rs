//! Scheduled actions through aws-sdk-autoscaling, fired by the scheduler as the world's clock
//! moves: one-off and recurring actions change the group's sizes when due (and the VMs follow),
//! a missed run fires late, a suspended ScheduledActions process holds them, two scheduler runs
//! at once or a crash half-way still fire each action once, and requests are checked as AWS
//! checks them.

use super::{causes, create_group, create_lc, failure, group};
use aws_sdk_autoscaling::types::ScheduledUpdateGroupActionRequest;
use aws_smithy_types::DateTime;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_model::time::Clock;

const MINUTE: i64 = 60_000;

async fn setup(prefix: &str) -> (World, User) {
    let w = World::new().await;
    let u = w.user(prefix).await;
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 1, 10, 2).await;
    (w, u)
}

/// (min, max, desired) of group web.
async fn sizes(w: &World, u: &User) -> (i32, i32, i32) {
    let g = group(w, u, "web").await.expect("the group");
    (
        g.min_size().unwrap(),
        g.max_size().unwrap(),
        g.desired_capacity().unwrap(),
    )
}

/// The scheduled actions of group web: (name, next run in ms).
async fn actions(w: &World, u: &User) -> Vec<(String, i64)> {
    w.sdk(u)
        .describe_scheduled_actions()
        .auto_scaling_group_name("web")
        .send()
        .await
        .expect("describe-scheduled-actions")
        .scheduled_update_group_actions()
        .iter()
        .map(|a| {
            (
                a.scheduled_action_name().unwrap().to_string(),
                a.start_time().unwrap().to_millis().unwrap(),
            )
        })
        .collect()
}

fn at(ms: i64) -> DateTime {
    DateTime::from_millis(ms)
}

/// The next whole minute after `ms` (cron's granularity).
fn next_minute(ms: i64) -> i64 {
    (ms / MINUTE + 1) * MINUTE
}

#[tokio::test]
async fn a_one_off_action_runs_once_at_its_time_and_the_vms_follow() {
    let (w, u) = setup("once").await;
    let when = w.clock.now_ms() + 30_000;
    w.sdk(&u)
        .put_scheduled_update_group_action()
        .auto_scaling_group_name("web")
        .scheduled_action_name("peak")
        .start_time(at(when))
        .desired_capacity(5)
        .max_size(8)
        .send()
        .await
        .expect("put-scheduled-update-group-action");
    let listed = actions(&w, &u).await;
    assert_eq!(listed, vec![("peak".to_string(), when)]);
    let described = w.sdk(&u).describe_scheduled_actions().send().await.unwrap();
    let a = &described.scheduled_update_group_actions()[0];
    assert_eq!(a.auto_scaling_group_name(), Some("web"));
    assert_eq!(
        (a.desired_capacity(), a.max_size(), a.min_size()),
        (Some(5), Some(8), None)
    );
    let arn = a.scheduled_action_arn().unwrap();
    assert!(
        arn.starts_with("arn:aws:autoscaling:us-east-1:")
            && arn.contains(":scheduledUpdateGroupAction:")
            && arn.ends_with(":autoScalingGroupName/web:scheduledActionName/peak"),
        "{arn}"
    );

    w.run_for(29).await;
    assert_eq!(sizes(&w, &u).await, (1, 10, 2), "not yet due");
    w.run_for(2).await;
    assert_eq!(sizes(&w, &u).await, (1, 8, 5));
    assert!(
        actions(&w, &u).await.is_empty(),
        "a one-off action is gone once run"
    );
    let cause = &causes(&w, &u, "web").await;
    assert!(
        cause.iter().any(|c| c.contains(
            "a scheduled action peak update of AutoScalingGroup constraints to min: 1, max: 8, desired: 5 changing the desired capacity from 2 to 5"
        )),
        "{cause:?}"
    );
    w.until(30, "five VMs in service", async || {
        (w.hotel.alive().len() == 5).then_some(())
    })
    .await;
    // Nothing more happens: it ran once.
    w.sdk(&u).desire("web", 3).await;
    w.run_for(120).await;
    assert_eq!(sizes(&w, &u).await, (1, 8, 3));
}

#[tokio::test]
async fn a_recurring_action_runs_every_time_and_a_missed_run_happens_late_once() {
    let (w, u) = setup("recur").await;
    w.sdk(&u)
        .put_scheduled_update_group_action()
        .auto_scaling_group_name("web")
        .scheduled_action_name("every-minute")
        .recurrence("* * * * *")
        .desired_capacity(4)
        .send()
        .await
        .unwrap();
    let first = next_minute(w.clock.now_ms());
    assert_eq!(actions(&w, &u).await[0].1, first);
    let runs = async |w: &World| {
        causes(w, &u, "web")
            .await
            .iter()
            .filter(|c| c.contains("scheduled action every-minute"))
            .count()
    };
    for n in 1..=2 {
        w.until(61, "the recurring action runs", async || {
            (sizes(&w, &u).await.2 == 4).then_some(())
        })
        .await;
        assert_eq!(runs(&w).await, n);
        // Set back; the next run sets it again.
        w.sdk(&u).desire("web", 2).await;
        assert_eq!(actions(&w, &u).await[0].1, first + n as i64 * MINUTE);
    }
    // The scheduler is down for five minutes: one late run, then on schedule again.
    w.clock.advance_ms(5 * MINUTE);
    w.health().run().await.unwrap();
    assert_eq!(sizes(&w, &u).await.2, 4);
    assert_eq!(
        runs(&w).await,
        3,
        "the missed runs are made up once, not five times"
    );
    assert!(actions(&w, &u).await[0].1 > w.clock.now_ms());
}

#[tokio::test]
async fn a_suspended_scheduled_actions_process_holds_them_until_resumed() {
    let (w, u) = setup("held").await;
    w.sdk(&u)
        .put_scheduled_update_group_action()
        .auto_scaling_group_name("web")
        .scheduled_action_name("grow")
        .recurrence("* * * * *")
        .min_size(3)
        .send()
        .await
        .unwrap();
    w.sdk(&u)
        .suspend_processes()
        .auto_scaling_group_name("web")
        .scaling_processes("ScheduledActions")
        .send()
        .await
        .unwrap();
    w.run_for(125).await;
    assert_eq!(sizes(&w, &u).await, (1, 10, 2), "held while suspended");
    assert!(
        actions(&w, &u).await[0].1 > w.clock.now_ms(),
        "runs passed while suspended are skipped, as AWS skips them"
    );
    w.sdk(&u)
        .resume_processes()
        .auto_scaling_group_name("web")
        .scaling_processes("ScheduledActions")
        .send()
        .await
        .unwrap();
    w.until(61, "the next run after the resume", async || {
        (sizes(&w, &u).await == (3, 10, 3)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn two_scheduler_runs_at_once_fire_a_one_off_action_once() {
    let (w, u) = setup("twice").await;
    w.store.set_latency(std::time::Duration::from_micros(300));
    for round in 0..10 {
        let name = format!("once-{round}");
        let desired = 3 + round % 2;
        w.sdk(&u)
            .put_scheduled_update_group_action()
            .auto_scaling_group_name("web")
            .scheduled_action_name(&name)
            .start_time(at(w.clock.now_ms() + 1_000))
            .desired_capacity(desired)
            .send()
            .await
            .unwrap();
        w.clock.advance_ms(1_000);
        let now = w.clock.now_ms();
        let (a, b) = (w.health(), w.health());
        let (a, b) = tokio::join!(
            health_check::scheduler::fire_due(a.store.as_ref(), a.queue.as_ref(), now),
            health_check::scheduler::fire_due(b.store.as_ref(), b.queue.as_ref(), now),
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a.applied + b.applied, 1, "round {round}: {a:?} {b:?}");
        let runs = causes(&w, &u, "web")
            .await
            .iter()
            .filter(|c| c.contains(&format!("scheduled action {name} ")))
            .count();
        assert_eq!(runs, 1, "round {round}");
        assert_eq!(sizes(&w, &u).await.2, desired);
    }
}

#[tokio::test]
async fn a_scheduler_crashing_at_any_step_fires_the_action_once_on_the_next_run() {
    let (w, u) = setup("crash").await;
    let mut k = 1;
    loop {
        let name = format!("crash-{k}");
        w.sdk(&u)
            .put_scheduled_update_group_action()
            .auto_scaling_group_name("web")
            .scheduled_action_name(&name)
            .start_time(at(w.clock.now_ms() + 1_000))
            .desired_capacity(2 + (k as i32 % 2) * 3)
            .send()
            .await
            .unwrap();
        w.clock.advance_ms(1_000);
        let crashed = w.scheduler_crashing_at(k).await;
        w.health().run().await.unwrap();
        let runs = causes(&w, &u, "web")
            .await
            .iter()
            .filter(|c| c.contains(&format!("scheduled action {name} ")))
            .count();
        assert_eq!(runs, 1, "crashed at step {k}: fired {runs} times");
        assert!(actions(&w, &u).await.is_empty());
        if !crashed {
            break;
        }
        k += 1;
    }
    assert!(k > 2, "the run has steps to crash at");
}

#[tokio::test]
async fn requests_are_checked_listed_and_deleted_as_aws_does() {
    let (w, u) = setup("checks").await;
    let now = w.clock.now_ms();
    let put = |name: &str| {
        w.sdk(&u)
            .put_scheduled_update_group_action()
            .auto_scaling_group_name("web")
            .scheduled_action_name(name)
    };
    let (code, message) = failure(
        put("past")
            .start_time(at(now - MINUTE))
            .min_size(1)
            .send()
            .await,
    );
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("ValidationError", "Given start time is in the past")
    );
    let (code, message) = failure(put("cron").recurrence("0 9 * *").min_size(1).send().await);
    assert_eq!(code, "ValidationError");
    assert!(message.contains("five fields"), "{message}");
    let (code, message) = failure(
        put("tz")
            .recurrence("0 9 * * *")
            .time_zone("Moon/Base")
            .min_size(1)
            .send()
            .await,
    );
    assert!(
        code == "ValidationError" && message.contains("IANA"),
        "{message}"
    );
    let (code, _) = failure(put("nothing").start_time(at(now + MINUTE)).send().await);
    assert_eq!(code, "ValidationError");
    let (code, message) = failure(
        w.sdk(&u)
            .put_scheduled_update_group_action()
            .auto_scaling_group_name("nope")
            .scheduled_action_name("x")
            .recurrence("0 9 * * *")
            .min_size(1)
            .send()
            .await,
    );
    assert!(
        code == "ValidationError" && message.contains("nope not found"),
        "{message}"
    );
    assert!(
        actions(&w, &u).await.is_empty(),
        "nothing refused was stored"
    );

    // A batch: each entry on its own.
    let entry = |name: &str, cron: &str| {
        ScheduledUpdateGroupActionRequest::builder()
            .scheduled_action_name(name)
            .recurrence(cron)
            .desired_capacity(3)
            .build()
    };
    let out = w
        .sdk(&u)
        .batch_put_scheduled_update_group_action()
        .auto_scaling_group_name("web")
        .scheduled_update_group_actions(entry("a-morning", "0 8 * * *"))
        .scheduled_update_group_actions(entry("b-broken", "0 25 * * *"))
        .scheduled_update_group_actions(entry("c-evening", "0 20 * * *"))
        .send()
        .await
        .unwrap();
    let failed = out.failed_scheduled_update_group_actions();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].scheduled_action_name(), Some("b-broken"));
    assert_eq!(failed[0].error_code(), Some("ValidationError"));
    let names: Vec<String> = actions(&w, &u).await.into_iter().map(|a| a.0).collect();
    assert_eq!(names, ["a-morning", "c-evening"]);

    // Put again: replaced, ARN kept.
    let arn_of = async || {
        w.sdk(&u)
            .describe_scheduled_actions()
            .auto_scaling_group_name("web")
            .scheduled_action_names("a-morning")
            .send()
            .await
            .unwrap()
            .scheduled_update_group_actions()[0]
            .clone()
    };
    let before = arn_of().await;
    put("a-morning")
        .recurrence("30 7 * * *")
        .min_size(2)
        .send()
        .await
        .unwrap();
    let after = arn_of().await;
    assert_eq!(before.scheduled_action_arn(), after.scheduled_action_arn());
    assert_eq!(
        (
            after.recurrence(),
            after.min_size(),
            after.desired_capacity()
        ),
        (Some("30 7 * * *"), Some(2), None)
    );

    // Paged, and filtered by when they run next (past every daily run above).
    let later = now + 400 * 24 * 3_600_000;
    for i in 0..7 {
        put(&format!("d-{i}"))
            .start_time(at(later + (i + 1) * 3_600_000))
            .desired_capacity(2)
            .send()
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut token = None;
    loop {
        let page = w
            .sdk(&u)
            .describe_scheduled_actions()
            .max_records(4)
            .set_next_token(token)
            .send()
            .await
            .unwrap();
        seen.extend(
            page.scheduled_update_group_actions()
                .iter()
                .map(|a| a.scheduled_action_name().unwrap().to_string()),
        );
        token = page.next_token().map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    assert_eq!(seen.len(), 9);
    let window = w
        .sdk(&u)
        .describe_scheduled_actions()
        .start_time(at(later + 2 * 3_600_000))
        .end_time(at(later + 4 * 3_600_000))
        .send()
        .await
        .unwrap();
    let names: Vec<&str> = window
        .scheduled_update_group_actions()
        .iter()
        .filter_map(|a| a.scheduled_action_name())
        .collect();
    assert_eq!(names, ["d-1", "d-2", "d-3"]);

    // Deleted, one and in a batch (a name it does not have is listed as failed).
    w.sdk(&u)
        .delete_scheduled_action()
        .auto_scaling_group_name("web")
        .scheduled_action_name("d-0")
        .send()
        .await
        .unwrap();
    let (code, message) = failure(
        w.sdk(&u)
            .delete_scheduled_action()
            .auto_scaling_group_name("web")
            .scheduled_action_name("d-0")
            .send()
            .await,
    );
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("ValidationError", "Scheduled action name not found")
    );
    let out = w
        .sdk(&u)
        .batch_delete_scheduled_action()
        .auto_scaling_group_name("web")
        .scheduled_action_names("d-1")
        .scheduled_action_names("missing")
        .send()
        .await
        .unwrap();
    let failed: Vec<_> = out
        .failed_scheduled_actions()
        .iter()
        .filter_map(|f| f.scheduled_action_name())
        .collect();
    assert_eq!(failed, ["missing"]);
    assert_eq!(actions(&w, &u).await.len(), 7);

    // A group deleted takes its actions with it.
    w.sdk(&u).force_delete("web").await;
    w.run_for(30).await;
    create_group(&w, &u, "web", "web@hotel", 1, 10, 2).await;
    assert!(actions(&w, &u).await.is_empty());
}

#[tokio::test]
async fn at_most_125_actions_a_group() {
    let (w, u) = setup("limit").await;
    let entries: Vec<ScheduledUpdateGroupActionRequest> = (0..50)
        .map(|i| {
            ScheduledUpdateGroupActionRequest::builder()
                .scheduled_action_name(format!("a{i:03}"))
                .recurrence("0 3 * * *")
                .min_size(1)
                .build()
        })
        .collect();
    for chunk in 0..2 {
        let renamed: Vec<_> = entries
            .iter()
            .map(|e| {
                ScheduledUpdateGroupActionRequest::builder()
                    .scheduled_action_name(format!(
                        "{}-{chunk}",
                        e.scheduled_action_name().unwrap()
                    ))
                    .recurrence("0 3 * * *")
                    .min_size(1)
                    .build()
            })
            .collect();
        let out = w
            .sdk(&u)
            .batch_put_scheduled_update_group_action()
            .auto_scaling_group_name("web")
            .set_scheduled_update_group_actions(Some(renamed))
            .send()
            .await
            .unwrap();
        assert!(out.failed_scheduled_update_group_actions().is_empty());
    }
    let out = w
        .sdk(&u)
        .batch_put_scheduled_update_group_action()
        .auto_scaling_group_name("web")
        .set_scheduled_update_group_actions(Some(entries))
        .send()
        .await
        .unwrap();
    let failed = out.failed_scheduled_update_group_actions();
    assert_eq!(failed.len(), 25);
    assert!(failed
        .iter()
        .all(|f| f.error_code() == Some("LimitExceeded")));
    let (code, _) = failure(
        w.sdk(&u)
            .put_scheduled_update_group_action()
            .auto_scaling_group_name("web")
            .scheduled_action_name("one-more")
            .recurrence("0 3 * * *")
            .min_size(1)
            .send()
            .await,
    );
    assert_eq!(code, "LimitExceeded");
}
