//! Alert webhooks: a policy's unguessable URL scales its group when Alertmanager (or curl) POSTs
//! to it, with no AWS credentials; a burst is absorbed by the cooldown and never passes MaxSize;
//! resolved alerts do nothing; a wrong, revoked or replaced URL gets 403.

use super::self_service::call;
use super::{causes, create_group, create_lc, group};
use crate::Given;
use phantom_e2e::world::World;
use phantom_e2e::User;
use serde_json::{json, Value};

const FIRING: &str = r#"{"receiver":"phantom","status":"firing","alerts":[{"status":"firing",
  "labels":{"alertname":"HighCPU","severity":"page"},"annotations":{},"startsAt":"2026-11-23T03:00:00Z",
  "endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prometheus/graph","fingerprint":"1a2b"}],
  "groupLabels":{"alertname":"HighCPU"},"commonLabels":{"alertname":"HighCPU","severity":"page"},
  "commonAnnotations":{},"externalURL":"http://alertmanager:9093","version":"4","groupKey":"{}:{alertname=\"HighCPU\"}","truncatedAlerts":0}"#;
const RESOLVED: &str = r#"{"receiver":"phantom","status":"resolved","alerts":[{"status":"resolved",
  "labels":{"alertname":"HighCPU"}}],"commonLabels":{"alertname":"HighCPU"},"version":"4"}"#;

/// POSTs `body` to a webhook's path with no signature at all, as Alertmanager does.
async fn hook(w: &World, u: &User, path: &str, body: &str) -> (u16, Value) {
    let (status, text) = w
        .raw(&u.access_key_id, &u.secret, "POST", path, body, None, |r| {
            r.headers
                .retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
        })
        .await;
    (status, serde_json::from_str(&text).expect("a JSON answer"))
}

async fn desired(w: &World, u: &User) -> i32 {
    group(w, u, "web")
        .await
        .unwrap()
        .desired_capacity()
        .unwrap()
}

/// A group of 1 (max 4) with policy `up` (+1, cooldown 60 s) and its webhook's path.
async fn setup(w: &World, u: &User) -> String {
    create_lc(w, u, "web@hotel").await;
    create_group(w, u, "web", "web@hotel", 1, 4, 1).await;
    w.sdk(u)
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("up")
        .adjustment_type("ChangeInCapacity")
        .scaling_adjustment(1)
        .cooldown(60)
        .send()
        .await
        .unwrap();
    let (status, made) = call(
        w,
        u,
        "CreatePolicyWebhook",
        json!({"AutoScalingGroupName": "web", "PolicyName": "up"}),
    )
    .await;
    assert_eq!(status, 200, "{made}");
    let url = made["Webhook"]["Url"].as_str().unwrap();
    let path = &url[url.find("/phantom/v1/webhooks/").expect("a webhook path")..];
    path.to_string()
}

#[tokio::test]
async fn alertmanager_scales_a_group_out_and_the_cooldown_absorbs_a_burst() {
    let Given { w, u, .. } = Given::user("hook").await;
    let path = setup(&w, &u).await;

    let (status, v) = hook(&w, &u, &path, FIRING).await;
    assert_eq!((status, v["Executed"].as_bool()), (200, Some(true)), "{v}");
    assert_eq!(desired(&w, &u).await, 2);
    let cause = &causes(&w, &u, "web").await[0];
    assert!(
        cause.contains("an alert webhook for HighCPU triggered policy up changing the desired capacity from 1 to 2"),
        "{cause}"
    );

    // A burst of 50 inside the cooldown: all answered, none executed.
    for _ in 0..50 {
        let (status, v) = hook(&w, &u, &path, FIRING).await;
        assert_eq!((status, v["Executed"].as_bool()), (200, Some(false)), "{v}");
    }
    assert_eq!(desired(&w, &u).await, 2);
    // Resolved: nothing, even after the cooldown.
    w.clock.advance_ms(60_000);
    let (_, v) = hook(&w, &u, &path, RESOLVED).await;
    assert_eq!(v["Reason"], "resolved");
    assert_eq!(desired(&w, &u).await, 2);
    // Each cooldown lets one through; never past MaxSize (4).
    for _ in 0..5 {
        for _ in 0..10 {
            hook(&w, &u, &path, FIRING).await;
        }
        w.clock.advance_ms(60_000);
    }
    assert_eq!(desired(&w, &u).await, 4);
    // And the provisioner follows.
    w.run_for(5).await;
    assert_eq!(w.hotel.alive().len(), 4);
}

#[tokio::test]
async fn wrong_revoked_and_replaced_webhooks_get_403() {
    let Given { w, u, .. } = Given::user("hookdeny").await;
    let path = setup(&w, &u).await;
    let id_and_secret = path.rsplit('/').next().unwrap();
    let (id, secret) = id_and_secret.split_once('.').unwrap();
    // The last character changed (to another one: a secret may end in 'x').
    let last = if path.ends_with('x') { 'y' } else { 'x' };
    let wrong_secret = format!("{}{last}", &path[..path.len() - 1]);
    // The right id and secret under another user (who has a group of that name too).
    let other = w.user("intruder").await;
    create_lc(&w, &other, "web@hotel").await;
    create_group(&w, &other, "web", "web@hotel", 1, 4, 1).await;
    let other_user = phantom_rules::webhook::path(&other.name, "web", id, secret);
    for bad in [
        wrong_secret.as_str(),
        other_user.as_str(),
        "/phantom/v1/webhooks/x",
    ] {
        let (status, v) = hook(&w, &u, bad, FIRING).await;
        assert_eq!(
            (status, v["Error"]["Code"].as_str()),
            (403, Some("AccessDenied")),
            "{bad}"
        );
    }
    assert_eq!(desired(&w, &u).await, 1, "nothing ran");

    // Listed without its secret.
    let (_, list) = call(&w, &u, "DescribePolicyWebhooks", json!({})).await;
    assert_eq!(list["Webhooks"][0]["PolicyName"], "up");
    assert!(!list.to_string().contains(secret));

    // Replaced: the old URL stops working, the new one works.
    let (_, made) = call(
        &w,
        &u,
        "CreatePolicyWebhook",
        json!({"AutoScalingGroupName": "web", "PolicyName": "up"}),
    )
    .await;
    let (status, _) = hook(&w, &u, &path, FIRING).await;
    assert_eq!(status, 403);
    let url = made["Webhook"]["Url"].as_str().unwrap();
    let new_path = &url[url.find("/phantom/v1/webhooks/").unwrap()..];
    assert_eq!(hook(&w, &u, new_path, FIRING).await.0, 200);
    // Revoked: 403.
    let (status, _) = call(
        &w,
        &u,
        "DeletePolicyWebhook",
        json!({"AutoScalingGroupName": "web", "PolicyName": "up"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(hook(&w, &u, new_path, FIRING).await.0, 403);
    let (status, v) = call(
        &w,
        &u,
        "DeletePolicyWebhook",
        json!({"AutoScalingGroupName": "web", "PolicyName": "up"}),
    )
    .await;
    assert_eq!(
        (status, v["Error"]["Code"].as_str()),
        (400, Some("ValidationError"))
    );
}
