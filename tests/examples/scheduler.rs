//! Benchmark (not a test): what one run of the scheduler costs with many scheduled actions of
//! which a few are due, on the DynamoDB store (against a moto server of its own, with
//! template.yaml's table and its sparse `due` index).
//!
//!   cargo run --release -p phantom-e2e --example scheduler -- [ACTIONS ...]
//!
//! For each ACTIONS (default: 10 1000 100000) it writes groups of scheduled actions through the
//! store (`per_group`), all due tomorrow except one action in each of 3 groups, due now. Then it times one scheduler run (`health_check::scheduler::fire_due`) and
//! counts its DynamoDB calls, then a second run, with nothing left due. It prints the size of a
//! due group's item, which sets what its read and its write cost in capacity units.

use health_check::scheduler::fire_due;
use phantom_e2e::moto::Moto;
use phantom_model::time::{Clock, SystemClock};
use phantom_rules::group::Group;
use phantom_rules::schedule;
use phantom_seams::metrics;
use phantom_seams::queue::MemoryQueue;
use phantom_seams::store::Store;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

/// Actions per group: a tenth of them, between 1 and 100 (AWS allows 125), so that there are at
/// least 10 groups.
fn per_group(actions: usize) -> usize {
    (actions / 10).clamp(1, 100)
}
const DUE_GROUPS: usize = 3;
const DAY_MS: i64 = 86_400_000;

fn group(name: &str) -> Group {
    Group {
        desired: 1,
        ..phantom_e2e::fixtures::group(name, "web@hotel", &format!("id-{name}"))
    }
}

/// A stored action as PutScheduledUpdateGroupAction writes it, due at `at_ms`.
fn action(group: &str, name: &str, at_ms: i64, now_ms: i64) -> schedule::ScheduledAction {
    let start = phantom_model::time::format_timestamp(phantom_model::time::from_ms(at_ms));
    schedule::document(
        &phantom_wire::query::input(
            json!({"ScheduledActionName": name, "StartTime": start, "DesiredCapacity": 2, "MaxSize": 10}),
        )
        .expect("an entry of BatchPutScheduledUpdateGroupAction"),
        group,
        &format!("arn:aws:autoscaling:us-east-1:123456789012:scheduledUpdateGroupAction:{name}"),
        now_ms,
    )
    .expect("a valid action")
}

/// Writes the groups and their actions, 400 groups a user (a user may have 500); returns the
/// size of the largest group's document.
async fn seed(store: &dyn Store, actions: usize, now: i64) -> usize {
    let per = per_group(actions);
    let groups = actions.div_ceil(per);
    let mut largest = 0;
    for i in 0..groups {
        let user = &format!("bench-{}", i / 400);
        if i % 400 == 0 {
            store
                .create_launch_config(user, &phantom_e2e::fixtures::launch_config("web@hotel"))
                .await
                .expect("a launch configuration");
        }
        let name = format!("g{i:05}");
        let g = group(&name);
        store
            .create_group(user, &g, None)
            .await
            .expect("create the group");
        let n = per.min(actions - i * per);
        let mut list: Vec<_> = (0..n)
            .map(|k| {
                action(
                    &name,
                    &format!("a{k:03}"),
                    now + DAY_MS + k as i64 * 60_000,
                    now,
                )
            })
            .collect();
        if i < DUE_GROUPS {
            // One action of this group is due in a second.
            list[0] = action(&name, "a000", now + 1_000, now);
        }
        let mut next = g.clone();
        next.settings.scheduled_actions = list;
        largest = largest.max(serde_json::to_string(&next.settings).unwrap().len());
        store
            .update_group(user, &g, &next, None)
            .await
            .expect("store the actions");
    }
    largest
}

#[tokio::main]
async fn main() {
    let sizes = phantom_e2e::sizes_from_args("ACTIONS", &[10, 1_000, 100_000]);
    println!("| scheduled actions | groups | due | run | DynamoDB calls | second run (nothing due) | calls | largest group item |");
    println!("|---|---|---|---|---|---|---|---|");
    for actions in sizes {
        // A server of its own per size, so each table holds only its own.
        let moto = Moto::start();
        let (store, _) = moto.state_store("bench", None).await;
        let store: Arc<dyn Store> = Arc::new(store);
        let now = SystemClock.now_ms();
        let seeding = Instant::now();
        let largest = seed(store.as_ref(), actions, now).await;
        eprintln!("{actions} actions written in {:.1?}", seeding.elapsed());
        let queue = MemoryQueue::new(Arc::new(SystemClock), phantom_seams::fault::none());
        tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
        let mut runs = Vec::new();
        for _ in 0..2 {
            let before = metrics::calls();
            let t = Instant::now();
            let fired = fire_due(store.as_ref(), &queue, SystemClock.now_ms())
                .await
                .expect("the scheduler runs");
            runs.push((t.elapsed(), (metrics::calls() - before).dynamodb, fired));
        }
        let (first, second) = (&runs[0], &runs[1]);
        let groups = actions.div_ceil(per_group(actions));
        assert_eq!(first.2.applied, DUE_GROUPS.min(groups));
        assert_eq!(second.2.groups_due, 0);
        println!(
            "| {actions} | {} | {} | {:.0?} | {} | {:.0?} | {} | {:.1} KB |",
            groups,
            first.2.applied,
            first.0,
            first.1,
            second.0,
            second.1,
            largest as f64 / 1024.0
        );
    }
}
