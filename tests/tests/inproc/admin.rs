//! The administrators' operations of Phantom's own API: only administrators reach them; clouds
//! registered, described and removed; users created, listed, disabled and given new keys; the
//! metric source set, shown without its secret, and removed.

use super::self_service::call;
use super::{create_group, create_lc, failure};
use crate::Given;
use phantom_e2e::world::World;
use phantom_e2e::User;
use serde_json::{json, Value};

/// Every administrators' operation, named here apart from the api's own list.
const OPERATIONS: &str = "DescribeClouds PutCloud DeleteCloud CreateUser ListUsers DisableUser \
    PutUserLimits RotateAccessKey DescribeUserGroups PutMetricSource DescribeMetricSource \
    DeleteMetricSource GetOperatingMetrics";

/// The user whose new key an answer (CreateUser, RotateAccessKey) shows.
fn keyed(name: &str, answer: &Value) -> User {
    let key = |k: &str| {
        answer["AccessKey"][k]
            .as_str()
            .expect("a key in the answer")
            .to_string()
    };
    User {
        name: name.into(),
        access_key_id: key("AccessKeyId"),
        secret: key("SecretAccessKey"),
    }
}

fn named<'a>(list: &'a Value, key: &str, name: &str) -> &'a Value {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["Name"] == name || c["UserName"] == name)
        .unwrap_or_else(|| panic!("{name} in {list}"))
}

#[tokio::test]
async fn only_administrators_reach_the_admin_operations() {
    let Given { w, u, .. } = Given::user("plain").await;
    let admin = w.admin("boss").await;
    for op in OPERATIONS.split_whitespace() {
        let (status, v) = call(&w, &u, op, json!({"UserName": admin.name, "Name": "x"})).await;
        assert_eq!(
            (status, v["Error"]["Code"].as_str()),
            (403, Some("AccessDenied")),
            "{op}"
        );
        assert!(v["Error"]["Message"].as_str().unwrap().contains(op));
    }
    let (_, me) = call(&w, &u, "GetCallerIdentity", json!({})).await;
    assert_eq!(
        (me["UserName"].as_str(), me["Admin"].as_bool()),
        (Some(u.name.as_str()), Some(false))
    );
    let (status, me) = call(&w, &admin, "GetCallerIdentity", json!({})).await;
    assert_eq!((status, me["Admin"].as_bool()), (200, Some(true)));
    // Nothing the plain user asked for happened.
    let (_, users) = call(&w, &admin, "ListUsers", json!({})).await;
    assert_eq!(named(&users, "Users", &admin.name)["Disabled"], false);
}

#[tokio::test]
async fn an_administrator_registers_describes_and_removes_clouds() {
    let w = World::new().await;
    let admin = w.admin("clouds").await;
    let u = w.user("runs").await;
    create_lc(&w, &u, "web@hotel").await;
    create_group(&w, &u, "web", "web@hotel", 0, 4, 2).await;
    w.run_for(3).await;

    let put = json!({"Name": "tango", "Endpoint": "http://tango.invalid", "Region": "eu-west-1"});
    let (status, v) = call(&w, &admin, "PutCloud", put).await;
    assert_eq!(status, 200, "{v}");
    let (_, clouds) = call(&w, &admin, "DescribeClouds", json!({})).await;
    let hotel = named(&clouds, "Clouds", "hotel");
    assert_eq!(
        (
            hotel["Reachable"].as_bool(),
            hotel["Groups"].as_i64(),
            hotel["Instances"].as_i64()
        ),
        (Some(true), Some(1), Some(2)),
        "{hotel}"
    );
    let tango = named(&clouds, "Clouds", "tango");
    assert_eq!(tango["Reachable"], false, "nothing answers there");
    assert_eq!(
        (tango["Zone"].as_str(), tango["LaunchTemplates"].as_bool()),
        (Some("eu-west-1a"), Some(true))
    );
    // A user sees it (without credentials there).
    let (_, mine) = call(&w, &u, "ListClouds", json!({})).await;
    assert_eq!(named(&mine, "Clouds", "tango")["HasCredentials"], false);

    // In use: refused, and still there. Unused: removed.
    let (status, v) = call(&w, &admin, "DeleteCloud", json!({"Name": "hotel"})).await;
    assert_eq!(
        (status, v["Error"]["Code"].as_str()),
        (400, Some("ResourceInUse")),
        "{v}"
    );
    assert!(v["Error"]["Message"].as_str().unwrap().contains(&u.name));
    let (status, _) = call(&w, &admin, "DeleteCloud", json!({"Name": "tango"})).await;
    assert_eq!(status, 200);
    let (_, clouds) = call(&w, &admin, "DescribeClouds", json!({})).await;
    let names: Vec<&str> = clouds["Clouds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["Name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["hotel", "sierra"]);

    for (body, why) in [
        (
            json!({"Name": "tango", "Endpoint": "ftp://x", "Region": "r"}),
            "not http",
        ),
        (
            json!({"Name": "tango", "Endpoint": "not a url", "Region": "r"}),
            "not a URL",
        ),
        (
            json!({"Name": "a b", "Endpoint": "http://x", "Region": "r"}),
            "bad name",
        ),
        (
            json!({"Name": "tango", "Endpoint": "http://x"}),
            "no region",
        ),
        (
            json!({"Name": "tango", "Endpoint": "http://x", "Region": "r", "LaunchTemplates": "yes"}),
            "not a boolean",
        ),
    ] {
        let (status, v) = call(&w, &admin, "PutCloud", body).await;
        assert_eq!(
            (status, v["Error"]["Code"].as_str()),
            (400, Some("ValidationError")),
            "{why}"
        );
    }
    let (status, v) = call(&w, &admin, "DeleteCloud", json!({"Name": "tango"})).await;
    assert_eq!(
        (status, v["Error"]["Code"].as_str()),
        (400, Some("ValidationError")),
        "gone already"
    );
}

#[tokio::test]
async fn an_administrator_creates_disables_and_rekeys_users() {
    let w = World::new().await;
    let admin = w.admin("keys").await;
    let (status, made) = call(&w, &admin, "CreateUser", json!({"UserName": "newcomer"})).await;
    assert_eq!(status, 200, "{made}");
    let first = keyed("newcomer", &made);
    assert_eq!(made["User"]["Admin"], false);
    w.sdk(&first)
        .describe_auto_scaling_groups()
        .send()
        .await
        .expect("the new key works");
    let (status, v) = call(&w, &admin, "CreateUser", json!({"UserName": "newcomer"})).await;
    assert_eq!(
        (status, v["Error"]["Code"].as_str()),
        (400, Some("AlreadyExists"))
    );
    let (status, v) = call(&w, &admin, "CreateUser", json!({"UserName": "no way"})).await;
    assert_eq!(
        (status, v["Error"]["Code"].as_str()),
        (400, Some("ValidationError"))
    );

    // The list never shows a secret, and counts each user's groups.
    let creds =
        json!({"Cloud": "hotel", "AccessKeyId": "AKIANEW", "SecretAccessKey": "cloud-secret"});
    assert_eq!(call(&w, &first, "PutCloudCredentials", creds).await.0, 200);
    create_lc(&w, &first, "web@hotel").await;
    create_group(&w, &first, "web", "web@hotel", 0, 3, 1).await;
    w.run_for(3).await;
    let (_, users) = call(&w, &admin, "ListUsers", json!({})).await;
    assert!(!users.to_string().contains(&first.secret));
    assert_eq!(named(&users, "Users", "newcomer")["Groups"], 1);
    let (_, groups) = call(
        &w,
        &admin,
        "DescribeUserGroups",
        json!({"UserName": "newcomer"}),
    )
    .await;
    assert_eq!(groups["Groups"][0]["Name"], "web");
    assert_eq!(
        (
            groups["Groups"][0]["DesiredCapacity"].as_i64(),
            groups["Groups"][0]["InService"].as_i64()
        ),
        (Some(1), Some(1)),
        "{groups}"
    );

    // Disabled: refused at once by this api (it forgets the key it had cached), listed as such.
    let (status, _) = call(&w, &admin, "DisableUser", json!({"UserName": "newcomer"})).await;
    assert_eq!(status, 200);
    let (code, _) = failure(w.sdk(&first).describe_auto_scaling_groups().send().await);
    assert_eq!(code, "InvalidClientTokenId");
    let (_, users) = call(&w, &admin, "ListUsers", json!({})).await;
    assert_eq!(named(&users, "Users", "newcomer")["Disabled"], true);
    // A new key enables the user again; the old one stays refused.
    let (status, rotated) = call(
        &w,
        &admin,
        "RotateAccessKey",
        json!({"UserName": "newcomer"}),
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    let second = keyed("newcomer", &rotated);
    assert_ne!(second.access_key_id, first.access_key_id);
    let out = w
        .sdk(&second)
        .describe_auto_scaling_groups()
        .send()
        .await
        .expect("the new key works");
    assert_eq!(
        out.auto_scaling_groups().len(),
        1,
        "the user's group is still there"
    );
    let (code, _) = failure(w.sdk(&first).describe_auto_scaling_groups().send().await);
    assert_eq!(code, "InvalidClientTokenId");

    let (status, v) = call(&w, &admin, "DisableUser", json!({"UserName": admin.name})).await;
    assert_eq!(
        (status, v["Error"]["Code"].as_str()),
        (400, Some("ValidationError")),
        "not yourself"
    );
    let (status, v) = call(&w, &admin, "RotateAccessKey", json!({"UserName": "nobody"})).await;
    assert_eq!(
        (status, v["Error"]["Code"].as_str()),
        (400, Some("ValidationError"))
    );
    // An administrator made by an administrator is one.
    let (_, made) = call(
        &w,
        &admin,
        "CreateUser",
        json!({"UserName": "deputy", "Admin": true}),
    )
    .await;
    let deputy = keyed("deputy", &made);
    let (status, _) = call(&w, &deputy, "ListUsers", json!({})).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn an_administrator_sets_the_metric_source_and_its_secret_is_never_shown() {
    let w = World::new().await;
    let admin = w.admin("metrics").await;
    let (_, none) = call(&w, &admin, "DescribeMetricSource", json!({})).await;
    assert!(none.get("MetricSource").is_none(), "{none}");
    for (bad, says) in [
        (
            json!({"Url": "prom:9090", "InstanceLabel": "id"}),
            "not an http(s) URL",
        ),
        (
            json!({"Url": "http://p", "InstanceLabel": "instance-id"}),
            "not a Prometheus label",
        ),
        (
            json!({"Url": "http://p", "InstanceLabel": "id", "BasicAuthUser": "u"}),
            "user and password",
        ),
        (json!({"Url": "http://p"}), "InstanceLabel"),
    ] {
        let (status, v) = call(&w, &admin, "PutMetricSource", bad.clone()).await;
        assert_eq!(status, 400, "{bad}");
        let msg = v["Error"]["Message"].as_str().unwrap();
        assert!(msg.contains(says), "{bad}: {msg}");
    }
    let put = json!({"Url": "http://prom:9090/", "InstanceLabel": "instance_id",
        "BasicAuthUser": "phantom", "BasicAuthPassword": "s3cret-9d"});
    assert_eq!(call(&w, &admin, "PutMetricSource", put).await.0, 200);
    let (_, shown) = call(&w, &admin, "DescribeMetricSource", json!({})).await;
    assert_eq!(
        shown["MetricSource"],
        json!({"Url": "http://prom:9090", "InstanceLabel": "instance_id", "Auth": "basic",
            "BasicAuthUser": "phantom"})
    );
    assert!(!shown.to_string().contains("s3cret-9d"));
    assert_eq!(
        call(&w, &admin, "DeleteMetricSource", json!({})).await.0,
        200
    );
    let (status, v) = call(&w, &admin, "DeleteMetricSource", json!({})).await;
    assert_eq!(
        (status, v["Error"]["Code"].as_str()),
        (400, Some("ValidationError"))
    );
}
