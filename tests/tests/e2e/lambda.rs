//! The functions as Lambda runs them (`PHANTOM_RUNTIME=lambda`, a stack of this file's own): a
//! provisioner instance killed while it works, as Lambda ends one that times out or runs out of
//! memory mid-round, holds its group back no longer than a replacement takes; an invocation that
//! outlives its Timeout mid-batch is ended and its batch comes back; nothing is launched twice or
//! left behind.

use phantom_e2e::{argv, eventually, lambda_stack_with, Stack};
use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// This file's stack: the provisioner's Timeout short (template.yaml's parameter, as a deployment
/// may set it), so an invocation times out within a test. The work queue's visibility timeout is
/// longer than a test waits: a batch whose invocation died comes back because the provisioner hid
/// it for a lease's length only.
fn here() -> &'static Stack {
    lambda_stack_with("ProvisionerTimeout=5 WorkVisibilityTimeout=40")
}

/// The work queue's visibility timeout in this file's stack.
const VISIBILITY_SECS: u64 = 40;

/// One test at a time: one kills every provisioner instance, the other waits for a timeout.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A VM's replacement takes this long on the local stack at most; a dead worker's group must
/// reach its size within it (issue 47).
const WITHIN_SECS: u64 = 15;

#[test]
fn a_provisioner_killed_at_work_holds_its_group_back_no_longer_than_a_replacement_takes() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = here();
    let _tell = s.tell_on_panic();
    let u = s.new_user("lambda-kill");
    s.lc_and_group(&u, "web", 0, 6, 1);
    s.serving(&u, "web", 1);
    // Killed once its batch has begun (and hidden its message): a kill before that leaves the
    // message to the queue's visibility timeout.
    for (round, (desired, wait_ms)) in [(4, 200u64), (2, 300), (5, 600)].into_iter().enumerate() {
        let changed = Instant::now();
        s.aws(
            &u,
            &argv!(
                "set-desired-capacity --auto-scaling-group-name web --desired-capacity",
                &desired.to_string()
            ),
        )
        .json();
        std::thread::sleep(Duration::from_millis(wait_ms));
        let killed = s.processes("provisioner");
        assert!(
            !killed.is_empty(),
            "round {round}: no provisioner instance to kill"
        );
        for pid in &killed {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        let n = usize::try_from(desired).expect("a size");
        let ids = s.serving(&u, "web", n);
        let took = changed.elapsed();
        assert!(
            took <= Duration::from_secs(WITHIN_SECS),
            "round {round}: {n} VMs serving {took:?} after the change ({} instances killed)",
            killed.len()
        );
        // Nothing launched twice nor left: the cloud runs exactly the group's VMs.
        eventually(30, "the cloud runs the group's VMs only", || {
            let mut live: Vec<String> = s
                .vms("hotel", &u.name, "web")
                .into_iter()
                .filter(|v| v["State"]["Name"] == "running" || v["State"]["Name"] == "pending")
                .filter_map(|v| v["InstanceId"].as_str().map(str::to_string))
                .collect();
            live.sort();
            let mut want = ids.clone();
            want.sort();
            (live == want).then_some(())
        });
    }
}

/// The runner's log lines about the provisioner's invocations from line `from` on: (index, line).
fn provisioner_lines(s: &Stack, from: usize) -> Vec<(usize, Value)> {
    s.api_log()
        .into_iter()
        .enumerate()
        .skip(from)
        .filter(|(_, l)| l["function"] == "provisioner")
        .collect()
}

#[test]
fn a_provisioner_invocation_that_times_out_mid_batch_loses_nothing_and_launches_nothing_twice() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = here();
    let _tell = s.tell_on_panic();
    let u = s.new_user("lambda-timeout");
    let (cloud, proxy) = s.proxied_cloud(&u, "slow");
    s.aws(&u, &argv!("create-launch-configuration --launch-configuration-name web@slow --image-id ami-1e749f67 --instance-type t2.micro")).json();
    s.aws(&u, &argv!("create-auto-scaling-group --auto-scaling-group-name web --launch-configuration-name web@slow --min-size 0 --max-size 6 --desired-capacity 1")).json();
    s.serving(&u, "web", 1);

    // Every call to the cloud now takes 3 s: a round's second call outlives the provisioner's 5 s.
    let from = s.api_log().len();
    proxy.set(json!({"mode": "slow", "rate": 1.0, "delay": 3}));
    s.aws(
        &u,
        &argv!("set-desired-capacity --auto-scaling-group-name web --desired-capacity 3"),
    )
    .json();
    let timed_out = eventually(60, "a provisioner invocation timed out", || {
        provisioner_lines(s, from).into_iter().find(|(_, l)| {
            l["message"] == "invocation failed"
                && l["error"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("Task timed out after 5.00 seconds"))
        })
    });
    proxy.set(json!({"mode": "none", "rate": 0.0}));

    // The batch comes back when the leases it took run out, long before the queue's visibility
    // timeout, and its invocation succeeds.
    let back = eventually(60, "the timed-out batch redelivered and done", || {
        provisioner_lines(s, timed_out.0 + 1)
            .into_iter()
            .find(|(_, l)| {
                l["message"] == "invocation"
                    && l["what"]
                        .as_str()
                        .is_some_and(|w| w.contains("redelivered"))
            })
    });
    let at = |l: &Value| {
        phantom_model::time::parse_timestamp(l["timestamp"].as_str().expect("a timestamp"))
            .expect("an RFC 3339 timestamp")
    };
    let after = (at(&back.1) - at(&timed_out.1)).whole_seconds();
    assert!(
        after < VISIBILITY_SECS as i64 - 10,
        "the batch came back {after} s after its invocation timed out"
    );
    let mut ids = s.serving(&u, "web", 3);
    ids.sort();
    // Every VM the cloud ever ran for this user (any state) is one of the group's three: the
    // launch the timed-out round asked for was found again, not made twice, and nothing leaked.
    let mut ever: Vec<String> = cloud.aws(&["ec2", "describe-instances"])["Reservations"]
        .as_array()
        .expect("reservations")
        .iter()
        .flat_map(|r| r["Instances"].as_array().expect("instances").clone())
        .filter_map(|i| i["InstanceId"].as_str().map(str::to_string))
        .collect();
    ever.sort();
    assert_eq!(ever, ids, "the cloud ran other VMs than the group's");
}
