//! Concurrency: many clients at once calling CreateAutoScalingGroup, SetDesiredCapacity and
//! DeleteAutoScalingGroup on the same names. Every call gets an answer a client expects (never an
//! internal error), the records stay within their rules, and once the calls stop the cloud agrees
//! with DynamoDB: each group has exactly its desired VMs, and no VM is left for a group that is gone.

use aws_sdk_autoscaling::error::ProvideErrorMetadata;
use phantom_e2e::argv;
use phantom_e2e::steps::Steps;
use phantom_e2e::{eventually, stack};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

const NAMES: [&str; 3] = ["race-a", "race-b", "race-c"];
const CLIENTS: usize = 8;
const CALLS: usize = 30;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_clients_leave_a_state_the_cloud_agrees_with() {
    let s = stack();
    let u = s.new_user("race");
    let setup = s.sdk(&u);
    setup
        .create_launch_configuration()
        .launch_configuration_name("race@sierra")
        .image_id("ami-1e749f67")
        .instance_type("t2.micro")
        .send()
        .await
        .unwrap();

    let outcomes: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let c = s.sdk(&u);
        let outcomes = outcomes.clone();
        tasks.push(tokio::spawn(async move {
            // A fixed pseudo-random walk per client, so a failure can be replayed.
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ (client as u64 + 1);
            for _ in 0..CALLS {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let name = NAMES[(x % 3) as usize];
                let n = ((x >> 8) % 4) as i32;
                let result = match (x >> 16) % 4 {
                    0 => c
                        .create_auto_scaling_group()
                        .auto_scaling_group_name(name)
                        .launch_configuration_name("race@sierra")
                        .min_size(0)
                        .max_size(3)
                        .desired_capacity(n)
                        .send()
                        .await
                        .map(|_| ())
                        .map_err(|e| e.code().unwrap_or("?").to_string()),
                    1 => c
                        .delete_auto_scaling_group()
                        .auto_scaling_group_name(name)
                        .force_delete(true)
                        .send()
                        .await
                        .map(|_| ())
                        .map_err(|e| e.code().unwrap_or("?").to_string()),
                    _ => c
                        .set_desired_capacity()
                        .auto_scaling_group_name(name)
                        .desired_capacity(n)
                        .send()
                        .await
                        .map(|_| ())
                        .map_err(|e| e.code().unwrap_or("?").to_string()),
                };
                let key = match result {
                    Ok(()) => "ok".to_string(),
                    Err(code) => code,
                };
                *outcomes.lock().unwrap().entry(key).or_default() += 1;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let outcomes = outcomes.lock().unwrap().clone();
    eprintln!("outcomes: {outcomes:?}");
    for code in outcomes.keys() {
        assert!(
            [
                "ok",
                "AlreadyExists",
                "ValidationError",
                "ResourceContention",
                // 240 changes by one user in a few seconds: past its rate even after the SDK's
                // retries, as against AWS.
                "Throttling"
            ]
            .contains(&code.as_str()),
            "unexpected answer {code}: {outcomes:?}"
        );
    }
    assert!(
        outcomes.get("ok").copied().unwrap_or(0) > CLIENTS,
        "{outcomes:?}"
    );

    // Once the calls stop, the cloud and DynamoDB agree.
    eventually(60, "the cloud agrees with the groups", || {
        let groups = s.aws(&u, &["describe-auto-scaling-groups"]).json();
        let mut ok = true;
        for name in NAMES {
            let g = groups["AutoScalingGroups"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["AutoScalingGroupName"] == name);
            let vms = s
                .vms("sierra", &u.name, name)
                .into_iter()
                .filter(|v| v["State"]["Name"] == "running" || v["State"]["Name"] == "pending")
                .count();
            match g {
                Some(g) => {
                    let desired = g["DesiredCapacity"].as_u64().unwrap() as usize;
                    assert!(desired <= 3);
                    let in_service = g["Instances"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|i| i["LifecycleState"] == "InService")
                        .count();
                    ok &= g.get("Status").is_none() && vms == desired && in_service == desired;
                }
                None => ok &= vms == 0,
            }
        }
        ok.then_some(())
    });
}

/// Two schedulers of our own and the stack's, all running through the moment a one-off action
/// is due, against the stack's DynamoDB: the action fires once (one activity, whoever won).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_one_off_action_fires_once_under_concurrent_scheduler_runs() {
    let s = stack();
    let u = s.new_user("sched-race");
    let c = s.sdk(&u);
    c.create_launch_configuration()
        .launch_configuration_name("sched@sierra")
        .image_id("ami-1e749f67")
        .instance_type("t2.micro")
        .send()
        .await
        .unwrap();
    c.create_group("sched", "sched@sierra", (0, 3, 0)).await;
    let (a, b) = (s.health_check().await, s.health_check().await);
    for round in 0..3 {
        let name = format!("once-{round}");
        let due = phantom_model::time::now_ms() + 2_000;
        c.put_scheduled_update_group_action()
            .auto_scaling_group_name("sched")
            .scheduled_action_name(&name)
            .start_time(aws_smithy_types::DateTime::from_millis(due))
            .desired_capacity(1 + round % 2)
            .send()
            .await
            .unwrap();
        let run = async |h: &health_check::HealthCheck| {
            let mut applied = 0;
            while phantom_model::time::now_ms() < due + 1_500 {
                let now = phantom_model::time::now_ms();
                applied +=
                    health_check::scheduler::fire_due(h.store.as_ref(), h.queue.as_ref(), now)
                        .await
                        .expect("the scheduler reads the table")
                        .applied;
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            applied
        };
        let (x, y) = tokio::join!(run(&a), run(&b));
        assert!(x + y <= 1, "round {round}: ours fired {x} and {y} times");
        let left = c
            .describe_scheduled_actions()
            .auto_scaling_group_name("sched")
            .send()
            .await
            .unwrap();
        assert!(
            left.scheduled_update_group_actions().is_empty(),
            "round {round}: it ran"
        );
        let activities = c.activities("sched").await;
        let fired = activities
            .activities()
            .iter()
            .filter(|a| {
                a.cause()
                    .unwrap_or_default()
                    .contains(&format!("scheduled action {name} "))
            })
            .count();
        assert_eq!(fired, 1, "round {round}: one firing, one activity");
    }
}

/// One user floods the API (20 clients at once, retries off) while another makes its usual calls
/// a few times a second: the flooder is answered Throttling ("Rate exceeded"), the other user gets
/// no error, and the other user's VM killed during the flood is replaced. (Latencies under the
/// flood are measured in docs/benchmarks.md, "Request limits", not asserted here.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flooding_user_is_throttled_and_another_is_served() {
    let s = stack();
    let (flood, calm) = (s.new_user("flood"), s.new_user("calm"));
    let c = s.sdk(&calm);
    c.create_launch_configuration()
        .launch_configuration_name("steady@hotel")
        .image_id("ami-1e749f67")
        .instance_type("t2.micro")
        .send()
        .await
        .unwrap();
    c.create_group("steady", "steady@hotel", (1, 1, 1)).await;
    let in_service = || {
        let g = s.aws(
            &calm,
            &argv!("describe-auto-scaling-groups --auto-scaling-group-names steady"),
        );
        let g = g.json();
        g["AutoScalingGroups"][0]["Instances"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["LifecycleState"] == "InService")
            .map(|i| i["InstanceId"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let first = eventually(60, "calm's VM InService", || {
        let ids = in_service();
        (ids.len() == 1).then(|| ids[0].clone())
    });

    let flood = phantom_e2e::stack::Flood::start(&s.url, &flood, 20);
    // The calm user's usual calls, and its VM killed meanwhile.
    s.ec2("hotel", &["terminate-instances", "--instance-ids", &first]);
    let mut calls = 0;
    let replaced = loop {
        c.describe_auto_scaling_groups()
            .auto_scaling_group_names("steady")
            .send()
            .await
            .expect("the calm user is served during the flood");
        calls += 1;
        let ids = tokio::task::block_in_place(in_service);
        if ids.len() == 1 && ids[0] != first {
            break ids[0].clone();
        }
        assert!(calls < 600, "calm's VM not replaced during the flood");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let outcomes = flood.stop().await;
    assert!(
        outcomes.get("Throttling").copied().unwrap_or(0) > 0,
        "{outcomes:?}"
    );
    assert!(
        outcomes.keys().all(|k| k == "ok" || k == "Throttling"),
        "{outcomes:?}"
    );
    assert_ne!(replaced, first);
}
