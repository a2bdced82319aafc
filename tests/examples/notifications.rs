//! Benchmark (not a test): what notifications add to the provisioner's work.
//!
//!   cargo run -p phantom-e2e --example notifications
//!
//! In process (the memory store counts the DynamoDB calls it stands for): a group scaled 0 -> 10
//! -> 0, once without a notification configuration and once with a topic told of launches and
//! terminations and a termination hook with a queue (CONTINUE after 30 s); the store calls, the
//! messages sent and the provisioner's CPU time, and the difference per message.

use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use std::time::Instant;

const TOPIC: &str = "arn:aws:sns:us-east-1:000000000000:bench";
const QUEUE: &str = "arn:aws:sqs:us-east-1:000000000000:bench";
const N: i32 = 10;

struct Run {
    store_calls: u64,
    messages: usize,
    secs: f64,
}

async fn run(tell: bool) -> Run {
    let w = World::new().await;
    let u = w.user("bench").await;
    let c = w.sdk(&u);
    w.publisher.create(TOPIC);
    w.publisher.create(QUEUE);
    c.create_lc("web@hotel").await;
    c.create_group("web", "web@hotel", (0, N, 0)).await;
    let mut hook = c
        .put_lifecycle_hook()
        .auto_scaling_group_name("web")
        .lifecycle_hook_name("drain")
        .lifecycle_transition("autoscaling:EC2_INSTANCE_TERMINATING")
        .heartbeat_timeout(30)
        .default_result("CONTINUE");
    if tell {
        c.put_notification_configuration()
            .auto_scaling_group_name("web")
            .topic_arn(TOPIC)
            .notification_types("autoscaling:EC2_INSTANCE_LAUNCH")
            .notification_types("autoscaling:EC2_INSTANCE_TERMINATE")
            .send()
            .await
            .unwrap();
        hook = hook.notification_target_arn(QUEUE);
    }
    hook.send().await.unwrap();
    w.settle().await;
    let before = (
        w.store.calls(),
        w.publisher.sent(TOPIC).len() + w.publisher.sent(QUEUE).len(),
    );
    let started = Instant::now();
    for desired in [N, 0] {
        c.desire("web", desired).await;
        // Past the VMs' boot and the hook's timeout, without the health sweeps (their reads are
        // the same either way).
        w.run_without_sweeps(120).await;
    }
    let secs = started.elapsed().as_secs_f64();
    let group = c
        .describe_auto_scaling_groups()
        .auto_scaling_group_names("web")
        .send()
        .await
        .unwrap();
    assert!(
        group.auto_scaling_groups()[0].instances().is_empty(),
        "scaled back to 0"
    );
    Run {
        store_calls: w.store.calls() - before.0,
        messages: w.publisher.sent(TOPIC).len() + w.publisher.sent(QUEUE).len() - before.1,
        secs,
    }
}

#[tokio::main]
async fn main() {
    let quiet = run(false).await;
    let told = run(true).await;
    println!("group 0 -> {N} -> 0, termination hook CONTINUE after 30 s, in process");
    for (name, r) in [("no notifications", &quiet), ("topic + hook queue", &told)] {
        println!(
            "{name:>20}: {} store calls, {} messages, {:.1} ms of the world's work",
            r.store_calls,
            r.messages,
            r.secs * 1000.0
        );
    }
    let extra = told.store_calls as f64 - quiet.store_calls as f64;
    println!(
        "per message: {:.2} store calls more (a DeleteItem once it is sent, and a Query of leftovers per round of a group that tells someone; its Put rides in the round's transaction)",
        extra / told.messages.max(1) as f64
    );
}
