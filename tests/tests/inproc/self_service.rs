//! Phantom's own API (`POST /phantom/v1/<Operation>`, JSON, SigV4 with the user's key): a user
//! sets, replaces and removes their own cloud credentials, and a group launches with them.

use super::{create_group, create_lc, group};
use crate::Given;
use phantom_e2e::world::World;
use phantom_e2e::User;
use serde_json::{json, Value};

pub async fn call(w: &World, u: &User, op: &str, body: Value) -> (u16, Value) {
    let (status, text) = w.phantom_api(u, op, &body).await;
    let v: Value = serde_json::from_str(&text).expect("a JSON answer");
    assert!(v["RequestId"].is_string(), "{v}");
    (status, v)
}

fn cloud<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["Clouds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["Name"] == name)
        .expect("the cloud is listed")
}

#[tokio::test]
async fn a_user_manages_their_own_cloud_credentials() {
    let Given { w, u, .. } = Given::user("self").await;
    let (status, list) = call(&w, &u, "ListClouds", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(cloud(&list, "hotel")["HasCredentials"], true);
    assert_eq!(cloud(&list, "hotel")["Region"], "us-east-1");

    // Removed: the cloud shows no credentials, and a group there cannot launch.
    let (status, _) = call(&w, &u, "DeleteCloudCredentials", json!({"Cloud": "hotel"})).await;
    assert_eq!(status, 200);
    let (_, list) = call(&w, &u, "ListClouds", json!({})).await;
    assert_eq!(cloud(&list, "hotel")["HasCredentials"], false);
    assert!(cloud(&list, "hotel").get("AccessKeyId").is_none());
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 0, 2, 1).await;
    w.run_for(3).await;
    assert!(w.hotel.alive().is_empty(), "no credentials, no launch");

    // Set again through the API: the group launches with them; the secret never comes back.
    let (status, _) = call(
        &w,
        &u,
        "PutCloudCredentials",
        json!({"Cloud": "hotel", "AccessKeyId": "AKIAMINE", "SecretAccessKey": "s3cret-value"}),
    )
    .await;
    assert_eq!(status, 200);
    let (_, list) = call(&w, &u, "ListClouds", json!({})).await;
    assert_eq!(cloud(&list, "hotel")["AccessKeyId"], "AKIAMINE");
    assert!(!list.to_string().contains("s3cret-value"));
    w.until(30, "the group's VM InService", async || {
        let g = group(&w, &u, "web").await?;
        (g.instances().first()?.lifecycle_state()?.as_str() == "InService").then_some(())
    })
    .await;
}

#[tokio::test]
async fn bad_calls_get_aws_style_errors() {
    let Given { w, u, .. } = Given::user("selfbad").await;
    for (op, body, status, code) in [
        (
            "PutCloudCredentials",
            json!({"Cloud": "nowhere", "AccessKeyId": "a", "SecretAccessKey": "b"}),
            400,
            "ValidationError",
        ),
        (
            "PutCloudCredentials",
            json!({"Cloud": "hotel", "AccessKeyId": "a"}),
            400,
            "ValidationError",
        ),
        (
            "PutCloudCredentials",
            json!({"Cloud": "hotel", "AccessKeyId": 7, "SecretAccessKey": "b"}),
            400,
            "ValidationError",
        ),
        (
            "DeleteCloudCredentials",
            json!({"Cloud": "nowhere"}),
            400,
            "ValidationError",
        ),
        ("Shutdown", json!({}), 400, "InvalidAction"),
        ("ListClouds", json!([1]), 400, "SerializationException"),
    ] {
        let (s, v) = call(&w, &u, op, body).await;
        assert_eq!(
            (s, v["Error"]["Code"].as_str()),
            (status, Some(code)),
            "{op}: {v}"
        );
        assert!(v["Error"]["Message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }
    // Not JSON at all, and a wrong secret: refused before anything is read.
    let (status, text) = w
        .raw(
            &u.access_key_id,
            &u.secret,
            "POST",
            "/phantom/v1/ListClouds",
            "{",
            None,
            |_| {},
        )
        .await;
    assert_eq!(status, 400, "{text}");
    let (status, text) = w
        .raw(
            &u.access_key_id,
            "wrong",
            "POST",
            "/phantom/v1/ListClouds",
            "{}",
            None,
            |_| {},
        )
        .await;
    assert_eq!(status, 403, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["Error"]["Code"], "SignatureDoesNotMatch");
    // Another user's credentials are theirs: deleting mine leaves theirs.
    let other = w.user("other").await;
    call(&w, &u, "DeleteCloudCredentials", json!({"Cloud": "sierra"})).await;
    let (_, list) = call(&w, &other, "ListClouds", json!({})).await;
    assert_eq!(cloud(&list, "sierra")["HasCredentials"], true);
}

const PUBLIC_KEY: &str = phantom_e2e::PUBLIC_KEY;

#[tokio::test]
async fn a_user_sees_a_clouds_images_and_imports_a_key_into_every_cloud() {
    let Given { w, u, .. } = Given::user("keys").await;
    let (status, images) = call(&w, &u, "DescribeCloudImages", json!({"Cloud": "hotel"})).await;
    assert_eq!(status, 200, "{images}");
    assert_eq!(images["Images"][0]["ImageId"], phantom_e2e::world::IMAGE);

    // Into every cloud the user has credentials for, by default.
    let (status, out) = call(
        &w,
        &u,
        "ImportKeyPair",
        json!({"KeyName": "laptop", "PublicKeyMaterial": PUBLIC_KEY}),
    )
    .await;
    assert_eq!(status, 200, "{out}");
    let clouds: Vec<&str> = out["Results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(r["KeyFingerprint"].is_string(), "{r}");
            r["Cloud"].as_str().unwrap()
        })
        .collect();
    assert_eq!(clouds, ["hotel", "sierra"]);
    let (_, pairs) = call(&w, &u, "DescribeCloudKeyPairs", json!({"Cloud": "sierra"})).await;
    assert_eq!(pairs["KeyPairs"][0]["KeyName"], "laptop");

    // Again, on one cloud: that cloud's refusal is its result, with the cloud's code.
    let (status, out) = call(
        &w,
        &u,
        "ImportKeyPair",
        json!({"KeyName": "laptop", "PublicKeyMaterial": PUBLIC_KEY, "Clouds": ["hotel"]}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        out["Results"][0]["Error"]["Code"],
        "InvalidKeyPair.Duplicate"
    );
    assert!(out["Results"][0]["Error"]["Message"]
        .as_str()
        .unwrap()
        .starts_with("hotel: "));

    // A cloud that cannot be asked, one without the user's credentials, a bad key.
    w.hotel.set_unreachable(true);
    let (status, out) = call(&w, &u, "DescribeCloudKeyPairs", json!({"Cloud": "hotel"})).await;
    assert_eq!(
        (status, out["Error"]["Code"].as_str()),
        (503, Some("CloudUnavailable"))
    );
    w.hotel.set_unreachable(false);
    call(&w, &u, "DeleteCloudCredentials", json!({"Cloud": "sierra"})).await;
    let (status, out) = call(&w, &u, "DescribeCloudImages", json!({"Cloud": "sierra"})).await;
    assert_eq!(
        (status, out["Error"]["Code"].as_str()),
        (400, Some("ValidationError"))
    );
    let (status, out) = call(
        &w,
        &u,
        "ImportKeyPair",
        json!({"KeyName": "bad", "PublicKeyMaterial": "not a key"}),
    )
    .await;
    assert_eq!(
        (status, out["Error"]["Code"].as_str()),
        (400, Some("ValidationError")),
        "{out}"
    );
    let (_, out) = call(
        &w,
        &u,
        "ImportKeyPair",
        json!({"KeyName": "second", "PublicKeyMaterial": PUBLIC_KEY}),
    )
    .await;
    let clouds: Vec<&str> = out["Results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["Cloud"].as_str().unwrap())
        .collect();
    assert_eq!(
        clouds,
        ["hotel"],
        "only where the user still has credentials"
    );
}
