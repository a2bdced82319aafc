//! Per-user request limits in process (`phantom_rules::throttle`, `api::throttle`): a user past their
//! burst gets AWS's Throttling while another user is served; describing and changing draw from
//! their own buckets; the SDK's standard retry mode rides it out, as against AWS.

use super::self_service::call;
use crate::failure;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;
use phantom_rules::throttle::DEFAULT;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn a_user_past_their_burst_is_throttled_and_another_is_served() {
    let w = World::new().await;
    let (flood, calm) = (w.user("flood").await, w.user("calm").await);
    let sdk = w.sdk(&flood);
    // The clock stands still: the burst, then Throttling.
    let burst = DEFAULT.describe.burst as usize;
    for i in 0..burst {
        sdk.describe_auto_scaling_groups()
            .send()
            .await
            .unwrap_or_else(|e| panic!("call {i} within the burst: {e:?}"));
    }
    let refused = sdk.describe_auto_scaling_groups().send().await;
    assert_eq!(
        failure(refused),
        ("Throttling".to_string(), "Rate exceeded".to_string())
    );
    // Its own changing calls have their own bucket; another user is untouched.
    sdk.create_lc("web").await;
    w.sdk(&calm)
        .describe_auto_scaling_groups()
        .send()
        .await
        .expect("another user is served");
    // A tenth of a second later, two more (20 a second).
    w.clock.advance_ms(100);
    for _ in 0..2 {
        sdk.describe_auto_scaling_groups()
            .send()
            .await
            .expect("refilled");
    }
    assert!(sdk.describe_auto_scaling_groups().send().await.is_err());
}

#[tokio::test]
async fn the_sdks_standard_retry_mode_rides_it_out() {
    let w = Arc::new(World::new().await);
    let u = w.user("retry").await;
    let raw = w.sdk(&u);
    for i in 0..DEFAULT.mutate.burst as usize {
        raw.create_lc(&format!("lc-{i}")).await;
    }
    // Time moves while the SDK backs off (its backoff sleeps on the real clock, a random time
    // under a second, then two): a second of the world's every 10 ms refills the bucket during
    // any but the shortest sleeps (slower ticks let all three attempts fail now and then).
    let stop = Arc::new(AtomicBool::new(false));
    let ticker = {
        let (w, stop) = (w.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(10)).await;
                w.clock.advance_ms(1_000);
            }
        })
    };
    w.sdk_retrying(&u).create_lc("after").await;
    stop.store(true, Ordering::SeqCst);
    ticker.await.unwrap();
}

#[tokio::test]
async fn an_administrator_sets_a_users_own_limits_and_takes_them_back() {
    let w = World::new().await;
    let (admin, u) = (w.admin("boss").await, w.user("slow").await);
    let limits = json!({
        "UserName": u.name,
        "Describe": {"Rate": 1.0, "Burst": 3.0},
        "Mutate": {"Rate": 1.0, "Burst": 2.0},
    });
    let (status, _) = call(&w, &admin, "PutUserLimits", limits).await;
    assert_eq!(status, 200);
    let (_, users) = call(&w, &admin, "ListUsers", json!({})).await;
    let shown = users["Users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["UserName"] == u.name.as_str())
        .unwrap()["Limits"]
        .clone();
    assert_eq!(
        shown,
        json!({"Describe": {"Rate": 1.0, "Burst": 3.0}, "Mutate": {"Rate": 1.0, "Burst": 2.0}, "Own": true})
    );
    let sdk = w.sdk(&u);
    for _ in 0..3 {
        sdk.describe_auto_scaling_groups()
            .send()
            .await
            .expect("within its burst");
    }
    assert_eq!(
        failure(sdk.describe_auto_scaling_groups().send().await).0,
        "Throttling"
    );
    // Back to the deployment's: the burst of 100.
    let (status, _) = call(&w, &admin, "PutUserLimits", json!({"UserName": u.name})).await;
    assert_eq!(status, 200);
    w.clock.advance_ms(5_000);
    for _ in 0..50 {
        sdk.describe_auto_scaling_groups()
            .send()
            .await
            .expect("the deployment's limits");
    }
    // Refused: a rate of 0, one class alone, a user who does not exist.
    for (input, word) in [
        (
            json!({"UserName": u.name, "Describe": {"Rate": 0.0, "Burst": 3.0}, "Mutate": {"Rate": 1.0, "Burst": 2.0}}),
            "rate",
        ),
        (
            json!({"UserName": u.name, "Describe": {"Rate": 1.0, "Burst": 3.0}}),
            "both",
        ),
        (json!({"UserName": "nobody"}), "does not exist"),
    ] {
        let (status, v) = call(&w, &admin, "PutUserLimits", input).await;
        assert_eq!(status, 400);
        assert_eq!(v["Error"]["Code"], "ValidationError");
        assert!(
            v["Error"]["Message"].as_str().unwrap().contains(word),
            "{v}"
        );
    }
}

/// 400 DescribeTags through `clients` in turn: how many were admitted.
async fn flood(clients: &[aws_sdk_autoscaling::Client]) -> usize {
    let mut admitted = 0;
    for i in 0..400 {
        if clients[i % clients.len()]
            .describe_tags()
            .send()
            .await
            .is_ok()
        {
            admitted += 1;
        }
    }
    admitted
}

#[tokio::test]
async fn a_flood_spread_over_four_api_instances_is_held_to_one_accounts_rate() {
    let w = World::new().await;
    let u = w.user("spread").await;
    let instances: Vec<_> = (0..4).map(|_| w.api_instance()).collect();
    let clients: Vec<_> = instances.iter().map(|a| w.sdk_on(a, &u)).collect();
    // The clock stands still: the account's burst, whatever the instances (less what the
    // other instances hold unused, a lease each).
    let admitted = flood(&clients).await;
    let burst = DEFAULT.describe.burst as usize;
    assert!(
        (burst - 4 * 4..=burst).contains(&admitted),
        "{admitted} admitted of 400 over four instances (burst {burst})"
    );
    // A second on: a second's rate more, at most.
    w.clock.advance_ms(1_000);
    let more = flood(&clients).await;
    let rate = DEFAULT.describe.per_sec as usize;
    assert!(
        (1..=rate).contains(&more),
        "{more} more in a second (rate {rate})"
    );
    // Another account's bucket is its own.
    let calm = w.user("calm").await;
    w.sdk_on(&instances[0], &calm)
        .describe_tags()
        .send()
        .await
        .expect("another account is served");
}
