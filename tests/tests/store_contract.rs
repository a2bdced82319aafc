//! One contract, two stores: the same checks run against the in-memory store (in process) and
//! the DynamoDB store (against a moto server this test starts, with the table and the KMS key of
//! template.yaml; secrets sealed with moto's KMS).
//! What the in-process suite relies on of the memory store is what DynamoDB does.

use aws_sdk_dynamodb::types::AttributeValue;
use phantom_e2e::fixtures::{group, with_tags};
use phantom_e2e::moto::{sdk_for, DynamoDbLocal, Moto};
use phantom_model::group::LaunchTemplateSpecification;
use phantom_model::iam::{IamKey, IamRole, IamUser, ManagedPolicy, PolicyVersion};
use phantom_model::trail::{TrailEvent, Who};
use phantom_model::user::{AccessKey, KeyUse, Session};
use phantom_rules::activity::{self, Activity};
use phantom_rules::group::Group;
use phantom_rules::identity::User;
use phantom_rules::launch_config::LaunchConfig;
use phantom_rules::reconcile::{Lifecycle, Member};
use phantom_rules::schedule;
use phantom_rules::spread::{Hold, Holds};
use phantom_seams::store::{
    Backoff, Claim, CloudCredentials, CloudRecord, Directory, IamChange, Lease, MemoryStore,
    MetricAuth, MetricSource, Page, PolicySave, Record, RoleSave, Store, StoreError, Usage,
    UserSave, MAX_LAUNCH_CONFIGS,
};
use serde_json::{json, Value};
use std::collections::HashMap;

fn user(name: &str) -> User {
    User {
        name: name.into(),
        account_id: "123456789012".into(),
        access_key_id: format!("PKIA{name}"),
        created: "2026-11-22T00:00:00.000Z".into(),
        admin: false,
        disabled: false,
        limits: None,
        scrape_sha256: None,
        second_key: None,
    }
}

fn lc(name: &str) -> LaunchConfig {
    phantom_e2e::fixtures::launch_config(name)
}

fn member(id: &str) -> Member {
    Member {
        zone: "us-east-1a".into(),
        launched_ms: 1_000,
        launch_configuration: Some("web".into()),
        rev: 0,
        ..phantom_rules::fixtures::test_member(id, Lifecycle::Pending)
    }
}

fn activity_at(group: &str, ms: i64) -> Activity {
    let ctx = activity::Context {
        group,
        group_arn: "arn",
        now_ms: ms,
        audience: phantom_rules::notification::Audience::NONE,
    };
    activity::launched(&ctx, &member(&format!("i-{ms}")), 0, 1, None)
}

/// The contract. `u` prefixes every name, so runs never meet in a shared table.
async fn contract(s: &dyn Store, u: &str) {
    let alice = format!("{u}alice");
    let bob = format!("{u}bob");
    // Users and keys.
    s.create_user(&user(&alice), "secret").await.unwrap();
    assert_eq!(
        s.create_user(&user(&alice), "x").await,
        Err(StoreError::Exists)
    );
    let key = s
        .access_key(&format!("PKIA{alice}"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (key.user.as_str(), key.secret.as_str()),
        (alice.as_str(), "secret")
    );
    assert!(s.access_key("PKIAnobody").await.unwrap().is_none());
    s.create_user(&user(&bob), "s2").await.unwrap();
    // An administrator reads back as one.
    let dora = format!("{u}dora");
    s.create_user(
        &User {
            admin: true,
            ..user(&dora)
        },
        "s4",
    )
    .await
    .unwrap();
    assert!(s.user(&dora).await.unwrap().unwrap().admin);

    // Request limits: on the user and on its key together, carried to a rotated key, cleared.
    let lena = format!("{u}lena");
    let mine = phantom_rules::throttle::Limits {
        describe: phantom_rules::throttle::Rate {
            per_sec: 2.5,
            burst: 10.0,
        },
        ..phantom_rules::throttle::DEFAULT
    };
    let l = User {
        limits: Some(mine),
        ..user(&lena)
    };
    s.create_user(&l, "s5").await.unwrap();
    assert_eq!(s.user(&lena).await.unwrap().unwrap().limits, Some(mine));
    let key_of = |id: String| async move { s.access_key(&id).await.unwrap().unwrap().limits };
    assert_eq!(key_of(l.access_key_id.clone()).await, Some(mine));
    s.set_limits(&l, None).await.unwrap();
    assert_eq!(s.user(&lena).await.unwrap().unwrap().limits, None);
    assert_eq!(key_of(l.access_key_id.clone()).await, None);
    s.set_limits(&l, Some(&mine)).await.unwrap();
    s.rotate_access_key(&l, &format!("PKIA{u}lena2"), "s6")
        .await
        .unwrap();
    assert_eq!(key_of(format!("PKIA{u}lena2")).await, Some(mine));
    assert_eq!(
        s.set_limits(&l, None).await,
        Err(StoreError::Conflict),
        "set on the user as read before its key changed"
    );
    assert_eq!(
        s.set_limits(&user(&format!("{u}nobody")), None).await,
        Err(StoreError::NotFound)
    );
    assert!(!s.user(&bob).await.unwrap().unwrap().admin);
    assert_eq!(s.user(&format!("{u}nobody")).await.unwrap(), None);

    // A scrape password's digest: set, kept through a key rotation, replaced, removed.
    assert_eq!(s.user(&lena).await.unwrap().unwrap().scrape_sha256, None);
    s.set_scrape(&lena, Some("d1")).await.unwrap();
    let scrape_of = || async { s.user(&lena).await.unwrap().unwrap().scrape_sha256 };
    assert_eq!(scrape_of().await.as_deref(), Some("d1"));
    let now = s.user(&lena).await.unwrap().unwrap();
    s.rotate_access_key(&now, &format!("PKIA{u}lena3"), "s7")
        .await
        .unwrap();
    assert_eq!(scrape_of().await.as_deref(), Some("d1"));
    s.set_scrape(&lena, Some("d2")).await.unwrap();
    assert_eq!(scrape_of().await.as_deref(), Some("d2"));
    s.set_scrape(&lena, None).await.unwrap();
    assert_eq!(scrape_of().await, None);
    assert_eq!(
        s.set_scrape(&format!("{u}nobody"), Some("d")).await,
        Err(StoreError::NotFound)
    );
    assert_eq!(
        s.user(&format!("{u}nobody")).await.unwrap(),
        None,
        "no user made"
    );

    // Disabled: the key is gone, the user stays, marked; disabling it as read before a rotation
    // is a conflict, and a rotation enables it with a new key in place of the old.
    let carol = format!("{u}carol");
    s.create_user(&user(&carol), "s3").await.unwrap();
    let as_read = s.user(&carol).await.unwrap().unwrap();
    s.disable_user(&as_read).await.unwrap();
    let old_key = format!("PKIA{carol}");
    assert!(s.access_key(&old_key).await.unwrap().is_none());
    let disabled = s.user(&carol).await.unwrap().unwrap();
    assert!(disabled.disabled);
    let new_key = format!("PKIB{carol}");
    s.rotate_access_key(&disabled, &new_key, "s5")
        .await
        .unwrap();
    let rotated = s.user(&carol).await.unwrap().unwrap();
    assert_eq!(
        (rotated.access_key_id.as_str(), rotated.disabled),
        (new_key.as_str(), false)
    );
    let key = s.access_key(&new_key).await.unwrap().unwrap();
    assert_eq!(
        (key.user.as_str(), key.secret.as_str()),
        (carol.as_str(), "s5")
    );
    assert_eq!(s.disable_user(&disabled).await, Err(StoreError::Conflict));
    assert_eq!(
        s.rotate_access_key(&disabled, &format!("PKIC{carol}"), "s6")
            .await,
        Err(StoreError::Conflict)
    );
    // A new id that is taken (bob's key) is refused, and nothing changes.
    assert_eq!(
        s.rotate_access_key(&rotated, &format!("PKIA{bob}"), "s7")
            .await,
        Err(StoreError::Exists)
    );
    assert_eq!(s.access_key(&new_key).await.unwrap().unwrap().secret, "s5");
    assert_eq!(
        s.access_key(&format!("PKIA{bob}"))
            .await
            .unwrap()
            .unwrap()
            .user,
        bob
    );
    let ghost = user(&format!("{u}ghost"));
    assert_eq!(s.disable_user(&ghost).await, Err(StoreError::NotFound));
    assert_eq!(
        s.rotate_access_key(&ghost, &format!("PKIB{u}ghost"), "x")
            .await,
        Err(StoreError::NotFound)
    );

    // Clouds and credentials.
    let cloud = |name: &str| CloudRecord {
        name: name.into(),
        endpoint: format!("http://{name}"),
        region: "r".into(),
        zone: "z".into(),
        // One of each, so that both values make the round trip.
        launch_templates: name.ends_with("alpha"),
        load_balancers: true,
        events: name.ends_with("hotel"),
        status_checks: true,
    };
    s.put_cloud(&cloud(&format!("{u}hotel"))).await.unwrap();
    s.put_cloud(&cloud(&format!("{u}alpha"))).await.unwrap();
    let names: Vec<String> = s
        .clouds()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    let alpha = names
        .iter()
        .position(|n| *n == format!("{u}alpha"))
        .unwrap();
    let hotel = names
        .iter()
        .position(|n| *n == format!("{u}hotel"))
        .unwrap();
    assert!(alpha < hotel, "clouds come by name");
    for name in ["hotel", "alpha"] {
        let name = format!("{u}{name}");
        assert_eq!(s.cloud(&name).await.unwrap(), Some(cloud(&name)));
    }
    // A cloud found without status checks says so from then on, until it is put again; an
    // unknown one is not made.
    let alpha = format!("{u}alpha");
    s.no_status_checks(&alpha).await.unwrap();
    let without = CloudRecord {
        status_checks: false,
        ..cloud(&alpha)
    };
    assert_eq!(s.cloud(&alpha).await.unwrap(), Some(without));
    assert_eq!(
        s.no_status_checks(&format!("{u}nowhere")).await,
        Err(StoreError::NotFound)
    );
    assert_eq!(s.cloud(&format!("{u}nowhere")).await.unwrap(), None);
    s.put_cloud(&cloud(&alpha)).await.unwrap();
    assert_eq!(s.cloud(&alpha).await.unwrap(), Some(cloud(&alpha)));
    let creds = |c: &str| CloudCredentials {
        cloud: c.into(),
        access_key_id: "ak".into(),
        secret: "sk".into(),
    };
    assert_eq!(
        s.put_cloud_credentials(&alice, &creds("nowhere")).await,
        Err(StoreError::NotFound)
    );
    assert_eq!(
        s.put_cloud_credentials("nobody", &creds(&format!("{u}hotel")))
            .await,
        Err(StoreError::NotFound)
    );
    s.put_cloud_credentials(&alice, &creds(&format!("{u}hotel")))
        .await
        .unwrap();
    assert_eq!(s.all_cloud_credentials(&alice).await.unwrap().len(), 1);
    // Deleted once; a second delete finds nothing.
    let hotel = format!("{u}hotel");
    s.delete_cloud_credentials(&alice, &hotel).await.unwrap();
    assert_eq!(
        s.delete_cloud_credentials(&alice, &hotel).await,
        Err(StoreError::NotFound)
    );
    assert!(s.cloud_credentials(&alice, &hotel).await.unwrap().is_none());
    s.put_cloud_credentials(&alice, &creds(&hotel))
        .await
        .unwrap();
    assert!(s.all_cloud_credentials(&bob).await.unwrap().is_empty());

    // Launch configurations: uniqueness, order, paging, in use.
    for n in ["web", "api", "db"] {
        s.create_launch_config(&alice, &lc(n)).await.unwrap();
    }
    assert_eq!(
        s.create_launch_config(&alice, &lc("web")).await,
        Err(StoreError::Exists)
    );
    // Its cloud's registration is a condition of the write.
    let nowhere = LaunchConfig {
        cloud: format!("{u}nowhere"),
        ..lc("lost")
    };
    assert_eq!(
        s.create_launch_config(&alice, &nowhere).await,
        Err(StoreError::NotFound)
    );
    assert!(s.launch_config(&alice, "lost").await.unwrap().is_none());
    let page: Vec<String> = s
        .launch_configs(&alice, listing(None, Some("api"), 10))
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.name)
        .collect();
    assert_eq!(page, ["db", "web"]);
    let named = s
        .launch_configs(
            &alice,
            listing(Some(&["web".into(), "zz".into(), "api".into()]), None, 10),
        )
        .await
        .unwrap();
    assert_eq!(
        named.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
        ["api", "web"]
    );
    assert!(s
        .launch_configs(&bob, listing(None, None, 10))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        s.delete_launch_config(&alice, "zz").await,
        Err(StoreError::NotFound)
    );

    // Groups: the launch configuration must exist; names are unique; in use.
    assert_eq!(
        s.create_group(&alice, &group("g0", "missing", "id0"), None)
            .await,
        Err(StoreError::NotFound)
    );
    assert!(
        s.group(&alice, "g0").await.unwrap().is_none(),
        "nothing half-written"
    );
    s.create_group(&alice, &group("g2", "web", "id2"), None)
        .await
        .unwrap();
    s.create_group(&alice, &group("g1", "web", "id1"), None)
        .await
        .unwrap();
    assert_eq!(
        s.create_group(&alice, &group("g1", "web", "x"), None).await,
        Err(StoreError::Exists)
    );
    assert_eq!(
        s.delete_launch_config(&alice, "web").await,
        Err(StoreError::InUse(vec!["g1".into(), "g2".into()]))
    );
    // The health check's list counts the user's groups per cloud.
    let watched = || {
        let alice = alice.clone();
        async move {
            s.watched()
                .await
                .unwrap()
                .into_iter()
                .filter(|w| w.user == alice)
                .map(|w| (w.cloud, w.groups))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(watched().await, [("hotel".to_string(), 2)]);
    assert_eq!(s.unwatch(&alice, "hotel").await, Err(StoreError::Conflict));
    let gs = s
        .groups(&alice, listing(None, None, 10), &|g| g.name != "g2")
        .await
        .unwrap();
    assert_eq!(
        gs.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(),
        ["g1"]
    );

    // Compare-and-set on the version and the id.
    let read = s.group(&alice, "g1").await.unwrap().unwrap();
    let stale = Group {
        version: 0,
        ..read.clone()
    };
    assert_eq!(
        s.set_desired(&alice, &stale, 5, None).await,
        Err(StoreError::Conflict)
    );
    // Another group of the same name at the same version (made again after a delete) keeps its
    // size against a writer that read the first.
    let other = Group {
        id: "an-earlier-g1".into(),
        ..read.clone()
    };
    assert_eq!(
        s.set_desired(&alice, &other, 5, None).await,
        Err(StoreError::Conflict)
    );
    s.set_desired(&alice, &read, 5, None).await.unwrap();
    let g1 = s.group(&alice, "g1").await.unwrap().unwrap();
    assert_eq!((g1.desired, g1.version), (5, 2));
    // Another group of the same name at the same version (made again after a delete) is not
    // deleted by a writer that read the first.
    assert_eq!(
        s.delete_group(&alice, &group("g2", "web", "an-earlier-g2"))
            .await,
        Err(StoreError::Conflict)
    );
    let earlier = group("g2", "web", "an-earlier-g2");
    assert_eq!(
        s.update_group(&alice, &earlier, &earlier, None).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(
        s.begin_delete(&alice, &earlier, None).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(
        s.delete_group(&alice, &group("g2", "web", "id2")).await,
        Ok(())
    );
    assert_eq!(
        s.delete_group(&alice, &group("g2", "web", "id2")).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(watched().await, [("hotel".to_string(), 1)]);

    // The lease: one holder at a time, until it runs out; given back only at an unchanged version.
    assert!(matches!(
        s.take_lease(claim(&alice, "g1", "h1", 1_000, 60_000))
            .await
            .unwrap(),
        Lease::Taken(_)
    ));
    assert!(matches!(
        s.take_lease(claim(&alice, "g1", "h2", 2_000, 60_000))
            .await
            .unwrap(),
        // Until when the holder's lease runs, unless renewed.
        Lease::Busy { until_ms: 61_000 }
    ));
    assert!(matches!(
        s.take_lease(claim(&alice, "nope", "h2", 2_000, 60_000))
            .await
            .unwrap(),
        Lease::NoGroup
    ));
    let Lease::Taken(g) = s
        .take_lease(claim(&alice, "g1", "h2", 62_000, 60_000))
        .await
        .unwrap()
    else {
        panic!("an expired lease is taken over");
    };
    assert_eq!(
        s.release_lease(&alice, "g1", "h1", Some(&g)).await,
        Err(StoreError::Conflict)
    );
    s.set_desired(&alice, &g, 3, None).await.unwrap();
    assert_eq!(
        s.release_lease(&alice, "g1", "h2", Some(&g)).await,
        Err(StoreError::Conflict)
    );
    let moved = Group {
        version: g.version + 1,
        ..(*g).clone()
    };
    s.release_lease(&alice, "g1", "h2", Some(&moved))
        .await
        .unwrap();
    // Given up whatever the version, by its holder only.
    assert!(matches!(
        s.take_lease(claim(&alice, "g1", "h3", 70_000, 60_000))
            .await
            .unwrap(),
        Lease::Taken(_)
    ));
    assert_eq!(
        s.release_lease(&alice, "g1", "h2", None).await,
        Err(StoreError::Conflict)
    );
    s.release_lease(&alice, "g1", "h3", None).await.unwrap();
    assert!(matches!(
        s.take_lease(claim(&alice, "g1", "h4", 70_001, 60_000))
            .await
            .unwrap(),
        Lease::Taken(_)
    ));
    // Renewed by its holder only: past its first end, still the holder's.
    assert!(!s
        .renew_lease(claim(&alice, "g1", "h3", 80_000, 60_000))
        .await
        .unwrap());
    assert!(s
        .renew_lease(claim(&alice, "g1", "h4", 120_000, 60_000))
        .await
        .unwrap());
    assert!(matches!(
        s.take_lease(claim(&alice, "g1", "h5", 140_000, 60_000))
            .await
            .unwrap(),
        Lease::Busy { until_ms: 180_000 }
    ));
    s.release_lease(&alice, "g1", "h4", None).await.unwrap();
    // Given back, it is no one's to renew.
    assert!(!s
        .renew_lease(claim(&alice, "g1", "h4", 140_000, 60_000))
        .await
        .unwrap());
    assert!(!s
        .renew_lease(claim(&alice, "nope", "h4", 140_000, 60_000))
        .await
        .unwrap());

    // A round's record: all of it or nothing; the launch sequence is a compare-and-set.
    let g = s.group(&alice, "g1").await.unwrap().unwrap();
    // A group's instance records each keep their own cloud (a group may span clouds), and what
    // it was launched from: a launch configuration, or a template.
    let template = LaunchTemplateSpecification {
        launch_template_id: None,
        launch_template_name: Some("web@sierra".into()),
        version: Some("$Latest".into()),
    };
    // On another cloud, from a template, spot, weighing 2, joined from a warm pool, at risk:
    // each comes back as written.
    let elsewhere = Member {
        cloud: "sierra".into(),
        market: phantom_model::instance::Market::Spot,
        launch_configuration: None,
        launch_template: Some(template.clone()),
        launched_from: Some(LaunchTemplateSpecification {
            version: Some("3".into()),
            ..template.clone()
        }),
        subnet: Some("subnet-1".into()),
        joined_ms: Some(4_000),
        replaces_ms: Some(3_500),
        at_risk_ms: Some(3_800),
        probe_failed: Some("http://127.0.0.2:8080/ failed 3 probes in a row: HTTP 500".into()),
        unhealthy_check: Some("probe".into()),
        weight: Some(2),
        ..member("i-2")
    };
    let r = Record {
        put: vec![member("i-1"), elsewhere],
        launch_seq: Some(1),
        backoff: Some(Backoff {
            failures: 2,
            retry_at_ms: 9_000,
        }),
        // Deaths a failed launch left owed (`phantom_rules::replacement`).
        unreplaced: Some(vec![2_000, 3_000]),
        activities: vec![activity_at("g1", 5_000), activity_at("g1", 6_000)],
        ..Record::default()
    };
    assert!(g.unreplaced_ms.is_empty(), "none owed before");
    s.record(&alice, &g, &r).await.unwrap();
    let after = s.group(&alice, "g1").await.unwrap().unwrap();
    assert_eq!(
        (after.launch_seq, after.failures, after.retry_at_ms),
        (1, 2, 9_000)
    );
    assert_eq!(after.unreplaced_ms, [2_000, 3_000]);
    let failed: Vec<Option<(String, String)>> = s
        .instances(&alice, "g1")
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.probe_failed.zip(m.unhealthy_check))
        .collect();
    assert_eq!(
        failed,
        [
            None,
            Some((
                "http://127.0.0.2:8080/ failed 3 probes in a row: HTTP 500".into(),
                "probe".into()
            ))
        ],
        "what a probe saw comes back as written"
    );
    let mut clouds: Vec<_> = s
        .instances(&alice, "g1")
        .await
        .unwrap()
        .into_iter()
        .map(|m| {
            (
                m.id,
                m.cloud,
                m.launch_configuration,
                m.launch_template,
                m.joined_ms,
                m.replaces_ms,
                m.market,
            )
        })
        .collect();
    clouds.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        clouds,
        [
            (
                "i-1".into(),
                "hotel".into(),
                Some("web".into()),
                None,
                None,
                None,
                phantom_model::instance::Market::OnDemand
            ),
            (
                "i-2".into(),
                "sierra".into(),
                None,
                Some(template),
                Some(4_000),
                Some(3_500),
                phantom_model::instance::Market::Spot
            )
        ]
    );
    // What a group across clouds remembers of each comes back as written.
    let holds: Holds = [(
        "hotel".to_string(),
        Hold {
            failures: 3,
            retry_at_ms: 12_000,
            unreachable_since_ms: Some(7_000),
            last_error: Some("CloudUnreachable: no answer".into()),
            unanswered_seq: Some(4),
            unanswered_units: 3,
            unanswered_at_ms: 11_000,
        },
    )]
    .into();
    let with_holds = Record {
        holds: Some(holds.clone()),
        ..Record::default()
    };
    s.record(&alice, &after, &with_holds).await.unwrap();
    assert_eq!(s.group(&alice, "g1").await.unwrap().unwrap().holds, holds);
    let stale = Record {
        put: vec![member("i-3")],
        launch_seq: Some(1),
        ..Record::default()
    };
    assert_eq!(
        s.record(&alice, &g, &stale).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(
        s.instances(&alice, "g1").await.unwrap().len(),
        2,
        "nothing of it written"
    );
    let other = group("g1", "web", "another-id");
    assert_eq!(
        s.record(
            &alice,
            &other,
            &Record {
                forget: vec!["i-1".into()],
                ..Record::default()
            }
        )
        .await,
        Err(StoreError::NotFound)
    );
    // Two writes to one instance in one record are refused whole, as DynamoDB refuses them.
    // (A new instance, so that no condition fails first: DynamoDB Local checks conditions before
    // it looks for a second operation on an item.)
    let twice = Record {
        put: vec![member("i-7"), member("i-9")],
        forget: vec!["i-7".into()],
        ..Record::default()
    };
    let r = s.record(&alice, &after, &twice).await;
    assert!(matches!(r, Err(StoreError::Unavailable(_))), "{r:?}");
    assert_eq!(
        s.instances(&alice, "g1").await.unwrap().len(),
        2,
        "nothing of it written"
    );
    // More than one transaction's worth, then forgetting and changing records.
    let many = Record {
        put: (0..150).map(|i| member(&format!("i-m{i:03}"))).collect(),
        forget: vec!["i-1".into()],
        launch_seq: Some(2),
        ..Record::default()
    };
    s.record(&alice, &after, &many).await.unwrap();
    let ids: Vec<String> = s
        .instances(&alice, "g1")
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids.len(), 151);
    assert!(!ids.contains(&"i-1".to_string()) && ids.windows(2).all(|w| w[0] < w[1]));
    let all = s.all_instances(&alice).await.unwrap();
    assert!(all.iter().all(|(g, _)| g == "g1"));
    assert_eq!(all.len(), 151);

    // Instance records are written at the revision they were read at: a writer that read an
    // older one, or creates one that exists, loses (the whole record), and waits come back whole.
    let read = |id: &'static str| {
        let alice = alice.clone();
        async move {
            s.instances(&alice, "g1")
                .await
                .unwrap()
                .into_iter()
                .find(|m| m.id == id)
                .unwrap()
        }
    };
    let i2 = read("i-2").await;
    assert_eq!(i2.rev, 1);
    let hooks = phantom_rules::lifecycle::hooks(
        &phantom_rules::lifecycle::put(
            &[],
            "g",
            "arn:aws:autoscaling:us-east-1:1:autoScalingGroup:u:autoScalingGroupName/g",
            &phantom_wire::query::input(
                json!({"LifecycleHookName": "h", "LifecycleTransition": phantom_rules::lifecycle::LAUNCHING, "HeartbeatTimeout": 30}),
            )
            .unwrap(),
        )
        .unwrap(),
    );
    // A user's request that lets it go, InProgress until it has gone, kept on its record.
    let leaving = activity::in_progress(activity_at("g1", 1_500), "InProgress", 0, &member("i-2"));
    let waiting = Member {
        lifecycle: Lifecycle::PendingWait,
        waits: phantom_rules::lifecycle::waits(&hooks, true, 1_000),
        open: Some(phantom_rules::activity::OpenActivity {
            start_ms: leaving.start_ms,
            doc: leaving.doc,
        }),
        ..i2.clone()
    };
    let put = |m: Member| Record {
        put: vec![m],
        ..Record::default()
    };
    s.record(&alice, &after, &put(waiting.clone()))
        .await
        .unwrap();
    let stored = read("i-2").await;
    assert_eq!((stored.rev, stored.lifecycle), (2, Lifecycle::PendingWait));
    assert_eq!(stored.waits, waiting.waits);
    assert_eq!(stored.open, waiting.open);
    let stale = Record {
        put: vec![
            member("i-new"),
            Member {
                protected: true,
                ..i2.clone()
            },
        ],
        ..Record::default()
    };
    assert_eq!(
        s.record(&alice, &after, &stale).await,
        Err(StoreError::Conflict)
    );
    assert_eq!(
        s.record(&alice, &after, &put(member("i-2"))).await,
        Err(StoreError::Conflict),
        "a new record where one exists"
    );
    assert_eq!(read("i-2").await, stored, "nothing of it written");
    assert_eq!(s.instances(&alice, "g1").await.unwrap().len(), 151);
    // One activity twice in a record (an open one ended twice): refused, as DynamoDB refuses
    // two operations on one item in a transaction, nothing written.
    let once = activity_at("g1", 1_700);
    let twice = Record {
        put: vec![member("i-twice")],
        activities: vec![once.clone(), once],
        ..Record::default()
    };
    assert!(s.record(&alice, &after, &twice).await.is_err());
    assert_eq!(s.instances(&alice, "g1").await.unwrap().len(), 151);

    // Activities: newest first, paged by key, per group or all.
    let acts = s.activities(&alice, Some("g1"), None, 10).await.unwrap();
    assert_eq!(acts.len(), 2);
    assert!(acts[0].1.start_time > acts[1].1.start_time);
    let rest = s
        .activities(&alice, Some("g1"), Some(&acts[0].0), 10)
        .await
        .unwrap();
    assert_eq!(rest, acts[1..].to_vec());
    // A group whose name begins with g1's and a `#` (and digits, as a time would) is another.
    let other = Record {
        activities: vec![activity_at("g1#1234567890123", 7_000)],
        ..Record::default()
    };
    s.record(&alice, &after, &other).await.unwrap();
    assert_eq!(
        s.activities(&alice, Some("g1"), None, 10).await.unwrap(),
        acts
    );
    assert_eq!(
        s.activities(&alice, Some("g1#1234567890123"), None, 10)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(s.activities(&alice, None, None, 10).await.unwrap().len(), 3);
    assert!(s.activities(&bob, None, None, 10).await.unwrap().is_empty());

    // The instances of a range of groups by name, with names that sort differently from their
    // keys (a space sorts before the keys' `#`, a `#` inside a name).
    for (name, id) in [("g0", "i-g0"), ("g1 x", "i-sp"), ("g1#x", "i-hash")] {
        let g = group(name, "web", &format!("id-{name}"));
        s.create_group(&alice, &g, None).await.unwrap();
        let one = Record {
            put: vec![member(id)],
            ..Record::default()
        };
        s.record(&alice, &g, &one).await.unwrap();
    }
    let between = |first: &'static str, last: &'static str| {
        let alice = alice.clone();
        async move {
            let got = s.instances_between(&alice, first, last).await.unwrap();
            let mut groups: Vec<String> = got.iter().map(|(g, _)| g.clone()).collect();
            let n = groups.len();
            groups.dedup();
            (groups, n)
        }
    };
    assert_eq!(
        between("g0", "g1").await,
        (vec!["g0".into(), "g1".into()], 152)
    );
    assert_eq!(
        between("g1", "g1#x").await,
        (vec!["g1".into(), "g1 x".into(), "g1#x".into()], 153)
    );
    assert_eq!(
        between("g0", "g1 x").await,
        (vec!["g0".into(), "g1".into(), "g1 x".into()], 153)
    );
    assert_eq!(between("g1#x", "g1#x").await, (vec!["g1#x".into()], 1));
    assert_eq!(between("h", "z").await, (vec![], 0));
    assert_eq!(s.instances(&alice, "g1").await.unwrap().len(), 151);
    assert_eq!(s.instances(&alice, "g1#x").await.unwrap().len(), 1);
    for name in ["g0", "g1 x", "g1#x"] {
        let g = s.group(&alice, name).await.unwrap().unwrap();
        s.delete_group(&alice, &g).await.unwrap();
    }

    // A forced delete, then the delete itself frees the launch configuration.
    let g = s.group(&alice, "g1").await.unwrap().unwrap();
    s.begin_delete(&alice, &g, None).await.unwrap();
    let g = s.group(&alice, "g1").await.unwrap().unwrap();
    assert!(g.deleting() && g.desired == 0 && g.min == 0);
    s.delete_group(&alice, &g).await.unwrap();
    s.delete_launch_config(&alice, "web").await.unwrap();
    // No group left there: off the list (again is no error).
    assert_eq!(watched().await, [("hotel".to_string(), 0)]);
    s.unwatch(&alice, "hotel").await.unwrap();
    s.unwatch(&alice, "hotel").await.unwrap();
    assert!(watched().await.is_empty());

    // Account limits: the counts follow creations and deletions, and a creation past the limit
    // is refused with nothing written.
    let dave = format!("{u}dave");
    s.create_user(&user(&dave), "s4").await.unwrap();
    assert_eq!(s.usage(&dave).await.unwrap(), Usage::default());
    for i in 0..MAX_LAUNCH_CONFIGS {
        s.create_launch_config(&dave, &lc(&format!("lc{i:03}")))
            .await
            .unwrap();
    }
    assert_eq!(
        s.create_launch_config(&dave, &lc("one-more")).await,
        Err(StoreError::Limit)
    );
    assert!(s.launch_config(&dave, "one-more").await.unwrap().is_none());
    assert_eq!(
        s.create_launch_config(&dave, &lc("lc000")).await,
        Err(StoreError::Exists),
        "a taken name is Exists, whatever the count"
    );
    s.create_group(&dave, &group("g", "lc000", "dave-g"), None)
        .await
        .unwrap();
    assert_eq!(
        s.usage(&dave).await.unwrap(),
        Usage {
            groups: 1,
            launch_configs: MAX_LAUNCH_CONFIGS
        }
    );
    assert!(matches!(
        s.delete_launch_config(&dave, "lc000").await,
        Err(StoreError::InUse(_))
    ));
    s.delete_launch_config(&dave, "lc001").await.unwrap();
    assert_eq!(
        s.delete_launch_config(&dave, "lc001").await,
        Err(StoreError::NotFound)
    );
    s.create_launch_config(&dave, &lc("one-more"))
        .await
        .unwrap();
    let g = s.group(&dave, "g").await.unwrap().unwrap();
    s.delete_group(&dave, &g).await.unwrap();
    assert_eq!(
        s.usage(&dave).await.unwrap(),
        Usage {
            groups: 0,
            launch_configs: MAX_LAUNCH_CONFIGS
        }
    );

    // A group across clouds (phantom:clouds): every launch configuration it uses is marked in
    // use, and the health check's list counts it on every cloud; both follow its tags.
    let erin = format!("{u}erin");
    s.create_user(&user(&erin), "s5").await.unwrap();
    for name in ["app@hotel", "app@sierra"] {
        s.create_launch_config(&erin, &lc(name)).await.unwrap();
    }
    let plain = group("app", "app@hotel", "g-app");
    let across = with_tags(&plain, &[("phantom:clouds", "hotel:1,sierra:2")]);
    let missing = with_tags(&plain, &[("phantom:clouds", "hotel:1,tango:2")]);
    assert_eq!(
        s.create_group(&erin, &missing, None).await,
        Err(StoreError::NotFound),
        "app@tango does not exist"
    );
    // Clouds tags that cannot be read are refused with nothing written (they used to mean "its
    // own cloud only", marking and counting the group there alone).
    let unreadable = with_tags(&plain, &[("phantom:clouds", "hotel:1,sierra:lots")]);
    assert!(
        matches!(s.create_group(&erin, &unreadable, None).await, Err(StoreError::Corrupt(m)) if m.contains("phantom:clouds")),
        "an unreadable clouds tag is an error"
    );
    assert_eq!(s.group(&erin, "app").await.unwrap(), None);
    assert_eq!(s.usage(&erin).await.unwrap().groups, 0);
    s.create_group(&erin, &across, None).await.unwrap();
    let counts = || async {
        let mut w: Vec<(String, i64)> = s
            .watched()
            .await
            .unwrap()
            .into_iter()
            .filter(|w| w.user == erin && w.groups != 0)
            .map(|w| (w.cloud, w.groups))
            .collect();
        w.sort();
        w
    };
    assert_eq!(
        counts().await,
        [("hotel".to_string(), 1), ("sierra".to_string(), 1)]
    );
    assert_eq!(
        s.delete_launch_config(&erin, "app@sierra").await,
        Err(StoreError::InUse(vec!["app".into()]))
    );
    let stored = s.group(&erin, "app").await.unwrap().unwrap();
    assert_eq!(
        s.update_group(
            &erin,
            &stored,
            &Group {
                version: stored.version,
                ..missing.clone()
            },
            None
        )
        .await,
        Err(StoreError::NotFound),
        "moving to a cloud without the launch configuration"
    );
    s.update_group(
        &erin,
        &stored,
        &Group {
            settings: plain.settings.clone(),
            ..stored.clone()
        },
        None,
    )
    .await
    .unwrap();
    assert_eq!(counts().await, [("hotel".to_string(), 1)]);
    s.delete_launch_config(&erin, "app@sierra").await.unwrap();
    let stored = s.group(&erin, "app").await.unwrap().unwrap();
    s.update_group(
        &erin,
        &stored,
        &Group {
            settings: across.settings.clone(),
            ..stored.clone()
        },
        None,
    )
    .await
    .expect_err("app@sierra is gone");
    s.delete_group(&erin, &stored).await.unwrap();
    assert_eq!(counts().await, []);
    s.delete_launch_config(&erin, "app@hotel").await.unwrap();
}

/// The index of due groups: a group is listed from its first scheduled action's time, and not
/// once it has none left or is being deleted; a firing's activities are written with the group's
/// change or not at all.
async fn due_index(s: &dyn Store, u: &str) {
    let owner = format!("{u}dora");
    let listed = async |now: i64| -> Vec<String> {
        s.due(now)
            .await
            .unwrap()
            .into_iter()
            .filter(|(o, _)| *o == owner)
            .map(|(_, g)| g)
            .collect()
    };
    s.create_launch_config(&owner, &lc("sched")).await.unwrap();
    s.create_group(&owner, &group("sched", "sched", "g-sched"), None)
        .await
        .unwrap();
    assert!(listed(i64::MAX).await.is_empty(), "no actions: not listed");
    let action = |name: &str, secs: i64| {
        schedule::document(
            &phantom_wire::query::input(
                json!({"ScheduledActionName": name, "StartTime": secs.to_string(), "MinSize": 1}),
            )
            .unwrap(),
            "sched",
            "arn",
            0,
        )
        .unwrap()
    };
    let stored = s.group(&owner, "sched").await.unwrap().unwrap();
    let mut with = stored.clone();
    with.settings.scheduled_actions = vec![action("late", 5), action("early", 3)];
    s.update_group(&owner, &stored, &with, None).await.unwrap();
    assert!(
        listed(2_999).await.is_empty(),
        "not before its first action"
    );
    assert_eq!(listed(3_000).await, ["sched"]);
    assert_eq!(listed(i64::MAX).await, ["sched"]);

    // A firing that lost the race writes neither the group nor its activity.
    let fresh = s.group(&owner, "sched").await.unwrap().unwrap();
    let (fired, _) = schedule::fire(&fresh, 3_000).unwrap();
    let record = [activity_at("sched", 3_000)];
    assert_eq!(
        s.update_group_with(&owner, &stored, &fired, &record, None)
            .await,
        Err(StoreError::Conflict)
    );
    assert!(s
        .activities(&owner, Some("sched"), None, 10)
        .await
        .unwrap()
        .is_empty());
    s.update_group_with(&owner, &fresh, &fired, &record, None)
        .await
        .unwrap();
    assert_eq!(
        s.activities(&owner, Some("sched"), None, 10)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(listed(4_999).await.is_empty(), "the early one ran");
    assert_eq!(listed(5_000).await, ["sched"]);

    // Metrics enabled: listed at every run, until they are disabled.
    let fresh = s.group(&owner, "sched").await.unwrap().unwrap();
    let mut with = fresh.clone();
    with.settings.enabled_metrics = vec![phantom_model::group::EnabledMetric {
        metric: "GroupDesiredCapacity".into(),
        granularity: "1Minute".into(),
    }];
    s.update_group(&owner, &fresh, &with, None).await.unwrap();
    assert_eq!(listed(0).await, ["sched"]);
    let fresh = s.group(&owner, "sched").await.unwrap().unwrap();
    let mut without = fresh.clone();
    without.settings.enabled_metrics.clear();
    s.update_group(&owner, &fresh, &without, None)
        .await
        .unwrap();
    assert!(listed(4_999).await.is_empty(), "back to its next action");

    // Being deleted: off the list, with its actions still in the document.
    let fresh = s.group(&owner, "sched").await.unwrap().unwrap();
    s.begin_delete(&owner, &fresh, None).await.unwrap();
    assert!(listed(i64::MAX).await.is_empty());
    let fresh = s.group(&owner, "sched").await.unwrap().unwrap();
    s.delete_group(&owner, &fresh).await.unwrap();
    s.delete_launch_config(&owner, "sched").await.unwrap();
}

/// Asks for a round: kept on the group by the write that asks (the oldest's time, and how
/// many), listed once old enough, answered by a round that read them as it gives the lease back,
/// unless another came since, and by nothing else.
async fn asks(s: &dyn Store, u: &str) {
    let owner = format!("{u}abel");
    let listed = async |at: i64| -> Vec<String> {
        let mut groups: Vec<String> = s
            .asked(at)
            .await
            .unwrap()
            .into_iter()
            .filter(|(o, _)| *o == owner)
            .map(|(_, g)| g)
            .collect();
        groups.sort();
        groups
    };
    let read = async |name: &str| s.group(&owner, name).await.unwrap().unwrap();
    s.create_launch_config(&owner, &lc("ask")).await.unwrap();
    s.create_group(&owner, &group("a1", "ask", "g-a1"), Some(1_000))
        .await
        .unwrap();
    s.create_group(&owner, &group("a2", "ask", "g-a2"), None)
        .await
        .unwrap();
    assert!(listed(999).await.is_empty(), "not before it was asked");
    assert_eq!(listed(1_000).await, ["a1"]);
    assert_eq!((read("a1").await.asks, read("a2").await.asks), (1, 0));

    // Each write that asks counts; the oldest unanswered ask's time is the one kept.
    s.set_desired(&owner, &read("a2").await, 1, Some(2_000))
        .await
        .unwrap();
    let a1 = read("a1").await;
    let bigger = Group {
        max: 9,
        ..a1.clone()
    };
    s.update_group(&owner, &a1, &bigger, Some(5_000))
        .await
        .unwrap();
    assert_eq!(listed(2_000).await, ["a1", "a2"]);
    assert_eq!(read("a1").await.asks, 2);
    // A write that does not ask leaves the asks alone.
    s.set_desired(&owner, &read("a2").await, 2, None)
        .await
        .unwrap();
    assert_eq!(listed(2_000).await, ["a1", "a2"]);

    // Taking the lease answers nothing; giving it back as read answers what was read.
    let seen = taken(s, claim(&owner, "a1", "h1", 10_000, 30_000)).await;
    assert_eq!(listed(i64::MAX).await, ["a1", "a2"]);
    // An ask made under the lease (an instance action moves no version) fails the release.
    let record = Record {
        ask_ms: Some(11_000),
        ..Record::default()
    };
    s.record(&owner, &read("a1").await, &record).await.unwrap();
    assert_eq!(
        s.release_lease(&owner, "a1", "h1", Some(&seen)).await,
        Err(StoreError::Conflict),
        "an ask came since"
    );
    let seen = taken(s, claim(&owner, "a1", "h1", 12_000, 30_000)).await;
    assert_eq!(seen.asks, 3);
    let busy = s.take_lease(claim(&owner, "a1", "h2", 12_000, 30_000));
    assert!(matches!(busy.await.unwrap(), Lease::Busy { .. }));
    s.release_lease(&owner, "a1", "h1", Some(&seen))
        .await
        .unwrap();
    assert_eq!(listed(i64::MAX).await, ["a2"]);
    assert_eq!(read("a1").await.asks, 0);
    // Given up (nothing seen), the asks stay.
    taken(s, claim(&owner, "a2", "h3", 13_000, 30_000)).await;
    s.release_lease(&owner, "a2", "h3", None).await.unwrap();
    assert_eq!(listed(i64::MAX).await, ["a2"], "given up, not answered");

    // A round with nothing asked gives the lease back as before, unless an ask came.
    let quiet = taken(s, claim(&owner, "a1", "h4", 14_000, 30_000)).await;
    assert_eq!(quiet.asks, 0);
    s.release_lease(&owner, "a1", "h4", Some(&quiet))
        .await
        .unwrap();
    // An ask alone (a round whose next message the queue refused) changes nothing else, and
    // a round answers it as any other.
    let before = read("a1").await;
    s.ask(&owner, "a1", 14_500).await.unwrap();
    let after = read("a1").await;
    assert_eq!((after.asks, after.version), (1, before.version));
    assert_eq!(listed(14_500).await, ["a1", "a2"]);
    let seen = taken(s, claim(&owner, "a1", "h5", 14_600, 30_000)).await;
    s.release_lease(&owner, "a1", "h5", Some(&seen))
        .await
        .unwrap();
    assert_eq!(listed(i64::MAX).await, ["a2"]);
    assert_eq!(
        s.ask(&owner, "gone", 14_700).await,
        Err(StoreError::NotFound)
    );
    assert!(
        s.group(&owner, "gone").await.unwrap().is_none(),
        "none made"
    );

    // A forced delete asks; the group deleted takes its asks with it.
    s.begin_delete(&owner, &read("a1").await, Some(15_000))
        .await
        .unwrap();
    assert_eq!(listed(15_000).await, ["a1", "a2"]);
    for name in ["a1", "a2"] {
        s.delete_group(&owner, &read(name).await).await.unwrap();
    }
    assert!(listed(i64::MAX).await.is_empty());
    s.delete_launch_config(&owner, "ask").await.unwrap();
}

/// The metric source: none, set (with its secret), replaced, removed; and a group with a target
/// tracking policy is on the index of due groups at every run while the policy is enabled.
async fn metric_source(s: &dyn Store, u: &str) {
    assert_eq!(s.metric_source().await.unwrap(), None);
    assert_eq!(s.delete_metric_source().await, Err(StoreError::NotFound));
    let basic = MetricSource {
        url: "http://prom:9090".into(),
        instance_label: "instance_id".into(),
        auth: Some(MetricAuth::Basic {
            user: "phantom".into(),
            password: "Plain-Metric-Secret-77b1".into(),
        }),
    };
    s.put_metric_source(&basic).await.unwrap();
    assert_eq!(s.metric_source().await.unwrap(), Some(basic));
    let bearer = MetricSource {
        url: "https://prom".into(),
        instance_label: "id".into(),
        auth: Some(MetricAuth::Bearer("Plain-Metric-Token-1c9d".into())),
    };
    s.put_metric_source(&bearer).await.unwrap();
    assert_eq!(s.metric_source().await.unwrap(), Some(bearer));

    let owner = format!("{u}tess");
    s.create_launch_config(&owner, &lc("tt")).await.unwrap();
    s.create_group(&owner, &group("tt", "tt", "g-tt"), None)
        .await
        .unwrap();
    let listed = async || -> bool {
        s.due(1)
            .await
            .unwrap()
            .iter()
            .any(|(o, g)| *o == owner && g == "tt")
    };
    assert!(!listed().await);
    let put: phantom_model::request::PutScalingPolicy = phantom_wire::query::input(json!({
        "AutoScalingGroupName": "tt", "PolicyName": "cpu", "PolicyType": "TargetTrackingScaling",
        "TargetTrackingConfiguration": {"TargetValue": 50.0,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}}
    }))
    .unwrap();
    let policy = phantom_rules::policy::document(&put, "tt", "arn").unwrap();
    let stored = s.group(&owner, "tt").await.unwrap().unwrap();
    let mut with = stored.clone();
    with.settings.scaling_policies = vec![policy.clone()];
    s.update_group(&owner, &stored, &with, None).await.unwrap();
    assert!(listed().await, "due at every run");
    assert_eq!(
        s.group(&owner, "tt")
            .await
            .unwrap()
            .unwrap()
            .settings
            .scaling_policies,
        std::slice::from_ref(&policy),
        "the policy reads back as written"
    );
    let stored = s.group(&owner, "tt").await.unwrap().unwrap();
    let mut disabled = stored.clone();
    disabled.settings.scaling_policies[0].enabled = false;
    s.update_group(&owner, &stored, &disabled, None)
        .await
        .unwrap();
    assert!(!listed().await, "a disabled policy is not evaluated");
    let fresh = s.group(&owner, "tt").await.unwrap().unwrap();
    s.delete_group(&owner, &fresh).await.unwrap();
    s.delete_launch_config(&owner, "tt").await.unwrap();
}

/// Notices written with a record read back oldest first, the group's own only (not those of a
/// group whose name starts with its own), until each is forgotten as sent; a record that loses
/// its guard writes none.
async fn notices(s: &dyn Store, u: &str) {
    let owner = format!("{u}nora");
    s.create_launch_config(&owner, &lc("n")).await.unwrap();
    for name in ["web", "web#2"] {
        s.create_group(&owner, &group(name, "n", &format!("g-{name}")), None)
            .await
            .unwrap();
    }
    let notice = |id: &str, subject: Option<&str>| phantom_rules::notification::Notice {
        id: id.into(),
        at_ms: 1_700_000_000_000,
        target: "arn:aws:sqs:us-east-1:000000000000:drain".into(),
        subject: subject.map(str::to_string),
        body: format!(r#"{{"RequestId":"{id}"}}"#),
    };
    let web = s.group(&owner, "web").await.unwrap().unwrap();
    let r = Record {
        notices: vec![
            notice("0002-b", None),
            notice("0001-a", Some("Auto Scaling: launch")),
        ],
        ..Record::default()
    };
    s.record(&owner, &web, &r).await.unwrap();
    let other = s.group(&owner, "web#2").await.unwrap().unwrap();
    let r2 = Record {
        notices: vec![notice("0003-c", None)],
        ..Record::default()
    };
    s.record(&owner, &other, &r2).await.unwrap();
    assert_eq!(
        s.notices(&owner, "web").await.unwrap(),
        [
            notice("0001-a", Some("Auto Scaling: launch")),
            notice("0002-b", None)
        ]
    );
    s.sent(&owner, "web", "0001-a").await.unwrap();
    assert_eq!(
        s.notices(&owner, "web").await.unwrap(),
        [notice("0002-b", None)]
    );
    // A record for a group gone (another of the same name) writes nothing.
    let stale = Group {
        id: "g-gone".into(),
        ..web.clone()
    };
    let lost = Record {
        notices: vec![notice("0004-d", None)],
        launch_seq: Some(1),
        ..Record::default()
    };
    assert!(s.record(&owner, &stale, &lost).await.is_err());
    assert_eq!(
        s.notices(&owner, "web").await.unwrap(),
        [notice("0002-b", None)]
    );
    assert_eq!(
        s.notices(&owner, "web#2").await.unwrap(),
        [notice("0003-c", None)]
    );
}

/// LaunchInstances requests: put once per client token, finished by a record, a group's own.
async fn launches(s: &dyn Store, u: &str) {
    use phantom_model::sync_launch::{SyncLaunch, SyncResult};
    let owner = format!("{u}lana");
    s.create_launch_config(&owner, &lc("l")).await.unwrap();
    for name in ["web", "web#2"] {
        s.create_group(&owner, &group(name, "l", &format!("g-{name}")), None)
            .await
            .unwrap();
    }
    let asked = SyncLaunch {
        client_token: "t-1".into(),
        requested: 2,
        zone: Some("us-east-1a".into()),
        subnet: None,
        retry: false,
        asked_ms: 1_700_000_000_000,
        result: None,
    };
    s.put_launch(&owner, "web", &asked).await.unwrap();
    let again = SyncLaunch {
        requested: 3,
        ..asked.clone()
    };
    assert!(matches!(
        s.put_launch(&owner, "web", &again).await,
        Err(StoreError::Exists)
    ));
    assert_eq!(
        s.launches(&owner, "web").await.unwrap(),
        std::slice::from_ref(&asked)
    );
    assert!(s.launches(&owner, "web#2").await.unwrap().is_empty());
    let done = SyncLaunch {
        result: Some(SyncResult::default()),
        ..asked.clone()
    };
    let web = s.group(&owner, "web").await.unwrap().unwrap();
    let r = Record {
        launches: vec![done.clone()],
        desired: Some(web.desired + 2),
        ..Record::default()
    };
    s.record(&owner, &web, &r).await.unwrap();
    assert_eq!(s.launches(&owner, "web").await.unwrap(), [done]);
    assert_eq!(
        s.group(&owner, "web").await.unwrap().unwrap().desired,
        web.desired + 2
    );
    // Heartbeats: each VM's last one, by group (a group named `web#2` keeps its own).
    s.beat(&owner, "web", "i-1", 1_000).await.unwrap();
    s.beat(&owner, "web", "i-2", 1_500).await.unwrap();
    s.beat(&owner, "web", "i-1", 2_000).await.unwrap();
    s.beat(&owner, "web#2", "i-9", 3_000).await.unwrap();
    let mut beats = s.beats(&owner, "web").await.unwrap();
    beats.sort();
    assert_eq!(
        beats,
        [("i-1".to_string(), 2_000), ("i-2".to_string(), 1_500)]
    );
    assert_eq!(
        s.beats(&owner, "web#2").await.unwrap(),
        [("i-9".to_string(), 3_000)]
    );
    assert!(s.beats(&owner, "api").await.unwrap().is_empty());
}

/// The pulse's lease (taken only at the sequence expected) and a pair's view on the list (kept
/// only while the pair is listed).
async fn pulse(s: &dyn Store, u: &str) {
    use phantom_rules::pulse::{Lease, PairView};
    let at = |seq, until_ms| Lease { seq, until_ms };
    // The lease may already be someone's (a store shared by the suite): start from what it is.
    let held = s.pulse().await.unwrap().map_or(0, |l| l.seq);
    assert_eq!(
        s.put_pulse(held + 1, &at(held + 2, 5)).await,
        Err(StoreError::Conflict)
    );
    s.put_pulse(held, &at(held + 1, 10)).await.unwrap();
    assert_eq!(s.pulse().await.unwrap(), Some(at(held + 1, 10)));
    assert_eq!(
        s.put_pulse(held, &at(held + 1, 20)).await,
        Err(StoreError::Conflict)
    );
    s.put_pulse(held + 1, &at(held + 2, 30)).await.unwrap();
    assert_eq!(s.pulse().await.unwrap(), Some(at(held + 2, 30)));

    let owner = format!("{u}paul");
    let view = PairView {
        fingerprint: "3:00ff".into(),
        busy: true,
        empty_since_ms: Some(5_000),
    };
    assert_eq!(
        s.set_view(&owner, "hotel", &view).await,
        Err(StoreError::NotFound),
        "a pair not listed is not put back"
    );
    s.create_launch_config(&owner, &lc("p")).await.unwrap();
    s.create_group(&owner, &group("web", "p", "g-paul"), None)
        .await
        .unwrap();
    // The list is read eventually consistent: read until it shows what was written.
    let listed = async |want: Option<&PairView>| {
        for _ in 0..50 {
            let w = s.watched().await.unwrap();
            if let Some(w) = w.into_iter().find(|w| w.user == owner) {
                if w.view.as_ref() == want {
                    return w.view;
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("the list never showed {want:?} for {owner}");
    };
    assert_eq!(listed(None).await, None, "never swept");

    // Whose VM an event names: by the index of instance records (eventually consistent).
    let web = s.group(&owner, "web").await.unwrap().unwrap();
    let vm = format!("i-{u}paul-1");
    let put = Record {
        put: vec![member(&vm)],
        ..Record::default()
    };
    s.record(&owner, &web, &put).await.unwrap();
    let mut owners = Vec::new();
    for _ in 0..50 {
        owners = s.owners_of(&vm).await.unwrap();
        if !owners.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(owners, [(owner.clone(), "web".to_string())]);
    assert!(s.owners_of("i-nobody").await.unwrap().is_empty());
    let forget = Record {
        forget: vec![vm.clone()],
        ..Record::default()
    };
    s.record(&owner, &web, &forget).await.unwrap();
    for _ in 0..50 {
        owners = s.owners_of(&vm).await.unwrap();
        if owners.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(owners.is_empty(), "{owners:?}");
    s.set_view(&owner, "hotel", &view).await.unwrap();
    let seen = listed(Some(&view)).await;
    assert_eq!(seen, Some(view.clone()));
    // A view no longer empty forgets since when it was.
    let found = PairView {
        empty_since_ms: None,
        ..view
    };
    s.set_view(&owner, "hotel", &found).await.unwrap();
    assert_eq!(listed(Some(&found)).await, Some(found));
}

/// CloudWatch's data: datapoints by metric and time, the metrics listed by namespace, per user.
async fn watch(s: &dyn Store, u: &str) {
    use phantom_model::cloudwatch::{Datum, Dimension, MetricId, Stats};
    let (ann, ben) = (format!("{u}wann"), format!("{u}wben"));
    let now = phantom_model::time::now_ms() / 60_000 * 60_000;
    let dim = |v: &str| Dimension {
        name: "Group".into(),
        value: v.into(),
    };
    let load = MetricId::new("App", "Load", &[dim("web")]);
    let other = MetricId::new("App", "Load", &[dim("db")]);
    let queue = MetricId::new("App/Queue", "Depth", &[]);
    let datum = |m: &MetricId, at_ms: i64, v: f64| Datum {
        metric: m.clone(),
        at_ms,
        unit: Some("Percent".into()),
        stats: Stats::one(v),
        high_resolution: at_ms % 2 == 1,
    };
    // Two datapoints at one time (two VMs' minute) are both kept.
    let data = [
        datum(&load, now - 120_000, 1.5),
        datum(&load, now - 60_000, 2.0),
        datum(&load, now - 60_000, 4.0),
        datum(&load, now + 1, 1e-7),
        datum(&other, now, 9.0),
        datum(&queue, now, 3.0),
    ];
    s.put_data(&ann, &data, &[]).await.unwrap();
    // More than one BatchWriteItem's worth.
    let many: Vec<Datum> = (0..30)
        .map(|i| datum(&queue, now - i * 1000, 1.0))
        .collect();
    // Listed lately: the data is kept all the same.
    s.put_data(&ann, &many, std::slice::from_ref(&queue))
        .await
        .unwrap();
    let got = s
        .data(&ann, &load, now - 60_000, now + 60_000)
        .await
        .unwrap();
    let mut values: Vec<(i64, f64)> = got.iter().map(|d| (d.at_ms, d.stats.sum)).collect();
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(
        values,
        [(now - 60_000, 2.0), (now - 60_000, 4.0), (now + 1, 1e-7)]
    );
    assert!(got
        .iter()
        .all(|d| d.metric == load && d.unit.as_deref() == Some("Percent")));
    assert!(got.iter().any(|d| d.high_resolution));
    // The end is left out.
    assert_eq!(
        s.data(&ann, &load, now - 120_000, now - 60_000)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        s.data(&ann, &queue, now - 60_000, now + 1)
            .await
            .unwrap()
            .len(),
        31
    );
    let listed = s.metrics(&ann, None).await.unwrap();
    let names: Vec<(&str, &str, usize)> = listed
        .iter()
        .map(|(m, _)| (m.namespace.as_str(), m.name.as_str(), m.dimensions.len()))
        .collect();
    assert_eq!(
        names,
        [
            ("App", "Load", 1),
            ("App", "Load", 1),
            ("App/Queue", "Depth", 0)
        ]
    );
    assert_eq!(listed.iter().find(|(m, _)| *m == load).unwrap().1, now + 1);
    // A namespace is itself, not a prefix of another.
    let app = s.metrics(&ann, Some("App")).await.unwrap();
    assert_eq!(app.len(), 2);
    assert!(s.metrics(&ben, None).await.unwrap().is_empty());
    assert!(s
        .data(&ben, &load, 0, now + 60_000)
        .await
        .unwrap()
        .is_empty());

    // Alarms: made once, changed as a compare-and-set, their history newest first.
    use phantom_model::cloudwatch::{StoredAlarm, Tag};
    use phantom_rules::metric_alarm;
    let asked = serde_json::from_value(json!({"AlarmName": "high", "Namespace": "App",
        "MetricName": "Load", "Statistic": "Average", "Period": 60, "EvaluationPeriods": 1,
        "Threshold": 50.0, "ComparisonOperator": "GreaterThanThreshold"}))
    .unwrap();
    let arn = "arn:aws:cloudwatch:us-east-1:1:alarm:high";
    let alarm = metric_alarm::put(&asked, arn, "1", None, now).unwrap();
    let made = StoredAlarm {
        alarm: alarm.clone(),
        tags: vec![Tag {
            key: "team".into(),
            value: "shop".into(),
        }],
        version: 0,
        acted_ms: Some(now),
    };
    let created = metric_alarm::configured(&alarm, true, now);
    s.put_alarm(&ann, &made, std::slice::from_ref(&created))
        .await
        .unwrap();
    assert_eq!(s.put_alarm(&ann, &made, &[]).await, Err(StoreError::Exists));
    let got = s.alarm(&ann, "high").await.unwrap().unwrap();
    assert_eq!(
        (got.version, &got.tags, got.acted_ms),
        (1, &made.tags, Some(now))
    );
    assert_eq!(got.alarm, alarm);
    let (moved, item) = metric_alarm::transition(
        &alarm,
        metric_alarm::ALARM,
        "because",
        Some("{}"),
        now + 1000,
    )
    .unwrap();
    let acted = metric_alarm::acted(&got, "arn:p", Ok("scaled"), now + 1000);
    let next = StoredAlarm {
        alarm: moved,
        acted_ms: None,
        ..got.clone()
    };
    s.put_alarm(&ann, &next, &[item.clone(), acted.clone()])
        .await
        .unwrap();
    assert_eq!(
        s.put_alarm(&ann, &next, &[]).await,
        Err(StoreError::Conflict),
        "version 1 is gone"
    );
    let got = s.alarm(&ann, "high").await.unwrap().unwrap();
    assert_eq!(
        (got.version, got.alarm.state_value.as_str(), got.acted_ms),
        (2, "ALARM", None)
    );
    assert!(s.alarm(&ann, "low").await.unwrap().is_none());
    assert_eq!(s.alarms(&ann).await.unwrap().len(), 1);
    assert!(s.alarms(&ben).await.unwrap().is_empty());
    let listed = (ann.clone(), "high".to_string());
    assert!(s.due_alarms().await.unwrap().contains(&listed));
    // Of one time, the last written first.
    let history = s.alarm_history(&ann, Some("high")).await.unwrap();
    assert_eq!(history, [acted, item, created]);
    assert_eq!(s.alarm_history(&ann, None).await.unwrap().len(), 3);
    assert!(s.alarm_history(&ann, Some("hig")).await.unwrap().is_empty());
    s.delete_alarm(&ann, "high").await.unwrap();
    assert_eq!(
        s.delete_alarm(&ann, "high").await,
        Err(StoreError::NotFound)
    );
    assert!(s.alarm(&ann, "high").await.unwrap().is_none());
    assert!(!s.due_alarms().await.unwrap().contains(&listed));
    assert_eq!(
        s.alarm_history(&ann, Some("high")).await.unwrap().len(),
        3,
        "kept"
    );
}

/// IAM users: created once whatever their name's case, saved with their keys' records
/// together (each carrying the user's identity and policies), conditional on the version read.
async fn identities(s: &dyn Store, u: &str) {
    let account = format!("{u}acct");
    s.create_user(&user(&account), "root-secret").await.unwrap();
    let ca = IamUser {
        account: account.clone(),
        account_id: "123456789012".into(),
        name: "CA".into(),
        path: "/".into(),
        user_id: "AIDAEXAMPLE".into(),
        created: "2026-11-29T00:00:00.000Z".into(),
        tags: Vec::new(),
        policies: Default::default(),
        attached: Default::default(),
        keys: Vec::new(),
        version: 0,
    };
    s.create_iam_user(&ca).await.unwrap();
    let mut shout = ca.clone();
    shout.name = "ca".into();
    assert_eq!(s.create_iam_user(&shout).await, Err(StoreError::Exists));
    let read = s.iam_user(&account, "ca").await.unwrap().expect("any case");
    assert_eq!(read, ca);
    let mut with_key = read.clone();
    with_key
        .policies
        .insert("p".into(), "{\"Statement\":[]}".into());
    with_key.keys.push(IamKey {
        access_key_id: format!("PKIA{u}CA1"),
        active: true,
        created: "2026-11-29T00:00:00.000Z".into(),
    });
    let first = format!("PKIA{u}CA1");
    s.save_iam_user(&read, &with_key, Some((&first, "ca-secret")), None)
        .await
        .unwrap();
    let key = s.access_key(&first).await.unwrap().expect("its record");
    assert_eq!(key.secret, "ca-secret");
    assert_eq!(key.user, account);
    assert!(key.active);
    assert_eq!(key.identity, Some(with_key.identity()));
    // A write from a stale read loses.
    assert_eq!(
        s.save_iam_user(&read, &with_key, None, None).await,
        Err(StoreError::Conflict)
    );
    let saved = s.iam_user(&account, "CA").await.unwrap().unwrap();
    assert_eq!(saved.version, 1);
    let mut inactive = saved.clone();
    inactive.keys[0].active = false;
    inactive.policies.clear();
    let limits = phantom_rules::throttle::DEFAULT;
    s.save_iam_user(&saved, &inactive, None, Some(&limits))
        .await
        .unwrap();
    let key = s.access_key(&first).await.unwrap().unwrap();
    assert!(!key.active);
    assert_eq!(key.limits, Some(limits));
    assert!(
        key.identity.unwrap().policies.is_empty(),
        "the key carries the change"
    );
    assert_eq!(key.secret, "ca-secret", "its secret kept");
    let used = KeyUse {
        at: "2026-11-29T01:00:00.000Z".into(),
        service: "autoscaling".into(),
        region: "us-east-1".into(),
    };
    s.key_used(&first, &used).await.unwrap();
    assert_eq!(
        s.access_key(&first).await.unwrap().unwrap().last_used,
        Some(used)
    );
    assert_eq!(
        s.key_used(
            "PKIAnone",
            &KeyUse {
                at: "x".into(),
                service: "s".into(),
                region: "r".into()
            }
        )
        .await,
        Err(StoreError::NotFound)
    );
    // Its key gone with the save that drops it; then the user.
    let saved = s.iam_user(&account, "ca").await.unwrap().unwrap();
    let mut keyless = saved.clone();
    keyless.keys.clear();
    s.save_iam_user(&saved, &keyless, None, None).await.unwrap();
    assert!(s.access_key(&first).await.unwrap().is_none());
    assert_eq!(s.delete_iam_user(&saved).await, Err(StoreError::Conflict));
    let last = s.iam_user(&account, "ca").await.unwrap().unwrap();
    assert_eq!(s.iam_users(&account).await.unwrap(), vec![last.clone()]);
    s.delete_iam_user(&last).await.unwrap();
    assert_eq!(s.delete_iam_user(&last).await, Err(StoreError::NotFound));
    assert_eq!(
        s.save_iam_user(&last, &last, None, None).await,
        Err(StoreError::NotFound)
    );
    assert!(s.iam_users(&account).await.unwrap().is_empty());
    // The root's second key: added once, made Inactive, the first deleted (the second its
    // only one), both gone with the account's disabling.
    let root = s.user(&account).await.unwrap().unwrap();
    let second = format!("PKIA{u}ROOT2");
    s.add_root_key(&root, &second, "second-secret")
        .await
        .unwrap();
    assert_eq!(
        s.add_root_key(&root, "PKIAother", "x").await,
        Err(StoreError::Conflict),
        "the user as read had no second key"
    );
    let root = s.user(&account).await.unwrap().unwrap();
    assert_eq!(root.second_key.as_deref(), Some(second.as_str()));
    let key = s.access_key(&second).await.unwrap().unwrap();
    assert_eq!(
        (key.secret.as_str(), key.user.as_str(), key.active),
        ("second-secret", account.as_str(), true)
    );
    s.set_root_key_active(&root, &root.access_key_id, false)
        .await
        .unwrap();
    assert!(
        !s.access_key(&root.access_key_id)
            .await
            .unwrap()
            .unwrap()
            .active
    );
    assert_eq!(
        s.set_root_key_active(&root, "PKIAnone", false).await,
        Err(StoreError::NotFound)
    );
    s.delete_root_key(&root, &root.access_key_id).await.unwrap();
    let after = s.user(&account).await.unwrap().unwrap();
    assert_eq!(
        (after.access_key_id.as_str(), after.second_key.as_deref()),
        (second.as_str(), None)
    );
    assert!(s.access_key(&root.access_key_id).await.unwrap().is_none());
    let third = format!("PKIA{u}ROOT3");
    s.add_root_key(&after, &third, "third-secret")
        .await
        .unwrap();
    let before_disable = s.user(&account).await.unwrap().unwrap();
    s.disable_user(&before_disable).await.unwrap();
    assert!(s.access_key(&second).await.unwrap().is_none());
    assert!(s.access_key(&third).await.unwrap().is_none());
    // A managed policy and a user together, all or nothing.
    let policy = ManagedPolicy {
        account: account.clone(),
        account_id: "123456789012".into(),
        name: "Scaling".into(),
        path: "/".into(),
        policy_id: "ANPAEXAMPLE".into(),
        description: None,
        created: "2026-11-29T00:00:00.000Z".into(),
        updated: "2026-11-29T00:00:00.000Z".into(),
        versions: vec![PolicyVersion {
            id: "v1".into(),
            document: "{}".into(),
            created: "2026-11-29T00:00:00.000Z".into(),
        }],
        default_version: "v1".into(),
        next_version: 2,
        users: Vec::new(),
        roles: Vec::new(),
        tags: Vec::new(),
        version: 0,
    };
    let create = |p| IamChange {
        users: Vec::new(),
        policies: vec![PolicySave::Create(p)],
        roles: Vec::new(),
        limits: None,
    };
    s.save_iam(&create(&policy)).await.unwrap();
    let mut shouting = policy.clone();
    shouting.name = "SCALING".into();
    assert_eq!(
        s.save_iam(&create(&shouting)).await,
        Err(StoreError::Exists)
    );
    s.create_iam_user(&ca).await.unwrap();
    let user = s.iam_user(&account, "ca").await.unwrap().unwrap();
    let mut attached = user.clone();
    attached.attached.insert(policy.arn(), "{}".into());
    let mut used = policy.clone();
    used.users.push("CA".into());
    let stale = ManagedPolicy {
        version: 7,
        ..policy.clone()
    };
    assert_eq!(
        s.save_iam(&IamChange {
            users: vec![UserSave {
                before: &user,
                after: &attached,
                new_key: None
            }],
            policies: vec![PolicySave::Update {
                before: &stale,
                after: &used
            }],
            roles: Vec::new(),
            limits: None,
        })
        .await,
        Err(StoreError::Conflict)
    );
    assert_eq!(
        s.iam_user(&account, "ca").await.unwrap().unwrap(),
        user,
        "nothing written of a change refused"
    );
    s.save_iam(&IamChange {
        users: vec![UserSave {
            before: &user,
            after: &attached,
            new_key: None,
        }],
        policies: vec![PolicySave::Update {
            before: &policy,
            after: &used,
        }],
        roles: Vec::new(),
        limits: None,
    })
    .await
    .unwrap();
    let read = s
        .managed_policy(&account, "scaling")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (read.users.clone(), read.version),
        (vec!["CA".to_string()], 1)
    );
    assert_eq!(
        s.managed_policies(&account).await.unwrap(),
        vec![read.clone()]
    );
    s.save_iam(&IamChange {
        users: Vec::new(),
        policies: vec![PolicySave::Delete(&read)],
        roles: Vec::new(),
        limits: None,
    })
    .await
    .unwrap();
    assert!(s
        .managed_policy(&account, "Scaling")
        .await
        .unwrap()
        .is_none());
    // A role: created once whatever its name's case, changed as read, deleted.
    let role = IamRole {
        account: account.clone(),
        account_id: "123456789012".into(),
        name: "Deployer".into(),
        path: "/".into(),
        role_id: "AROAEXAMPLE".into(),
        created: "2026-11-29T00:00:00.000Z".into(),
        description: None,
        trust_policy: "{}".into(),
        max_session_secs: 3600,
        tags: Vec::new(),
        policies: Default::default(),
        attached: Default::default(),
        version: 0,
    };
    s.save_iam(&roles(vec![RoleSave::Create(&role)]))
        .await
        .unwrap();
    assert_eq!(
        s.save_iam(&roles(vec![RoleSave::Create(&role)])).await,
        Err(StoreError::Exists)
    );
    let mut changed = role.clone();
    changed.trust_policy = "{\"Statement\":[]}".into();
    s.save_iam(&roles(vec![RoleSave::Update {
        before: &role,
        after: &changed,
    }]))
    .await
    .unwrap();
    assert_eq!(
        s.save_iam(&roles(vec![RoleSave::Update {
            before: &role,
            after: &changed,
        }]))
        .await,
        Err(StoreError::Conflict)
    );
    let read = s.iam_role(&account, "deployer").await.unwrap().unwrap();
    assert_eq!(
        (read.trust_policy.as_str(), read.version),
        ("{\"Statement\":[]}", 1)
    );
    assert_eq!(s.iam_roles(&account).await.unwrap(), vec![read.clone()]);
    s.save_iam(&roles(vec![RoleSave::Delete(&read)]))
        .await
        .unwrap();
    assert!(s.iam_role(&account, "Deployer").await.unwrap().is_none());
    // A session's key, with its session.
    let session = AccessKey {
        access_key_id: format!("ASIA{u}S1"),
        secret: "session-secret".into(),
        user: account.clone(),
        account_id: "123456789012".into(),
        limits: None,
        identity: None,
        active: true,
        last_used: None,
        session: Some(Session {
            token_sha256: "ab".repeat(32),
            expires_ms: 1_800_000_000_000,
            parent: format!("PKIA{account}"),
            role: None,
        }),
    };
    s.create_session(&session).await.unwrap();
    assert_eq!(s.create_session(&session).await, Err(StoreError::Exists));
    let read = s.access_key(&session.access_key_id).await.unwrap();
    assert_eq!(
        read.map(|k| (k.secret, k.session)),
        Some((session.secret.clone(), session.session.clone()))
    );
}

/// A change of roles alone.
fn roles(r: Vec<RoleSave<'_>>) -> IamChange<'_> {
    IamChange {
        users: Vec::new(),
        policies: Vec::new(),
        roles: r,
        limits: None,
    }
}

/// The audit trail: an account's events newest first within a time range, a page at a time,
/// filtered; another account's apart.
async fn trail(s: &dyn Store, u: &str) {
    let account = format!("{u}trailed");
    let event = |ms: i64, name: &str| TrailEvent {
        event_id: format!("e{ms}"),
        at_ms: ms,
        event_source: "autoscaling.amazonaws.com".into(),
        event_name: name.into(),
        region: "us-east-1".into(),
        source_ip: None,
        user_agent: None,
        who: Who {
            kind: "Root".into(),
            principal_id: "1".into(),
            arn: "arn:aws:iam::1:root".into(),
            account_id: "1".into(),
            access_key_id: None,
            user_name: None,
            in_session: false,
        },
        request_parameters: json!({"AutoScalingGroupName": "web"}),
        error_code: None,
        error_message: None,
        request_id: "r".into(),
        read_only: false,
        resources: Vec::new(),
    };
    for (ms, name) in [(1_000, "A"), (2_000, "B"), (3_000, "A"), (4_000, "A")] {
        s.put_event(&account, &event(ms, name)).await.unwrap();
    }
    s.put_event(&format!("{u}other"), &event(2_500, "A"))
        .await
        .unwrap();
    let all = |_: &TrailEvent| true;
    let only_a = |e: &TrailEvent| e.event_name == "A";
    let (page, next) = s.events(&account, 0, 10_000, None, 10, &all).await.unwrap();
    let ms: Vec<i64> = page.iter().map(|e| e.at_ms).collect();
    assert_eq!(ms, [4_000, 3_000, 2_000, 1_000]);
    assert_eq!(page[0], event(4_000, "A"));
    assert_eq!(next, None);
    let (page, next) = s
        .events(&account, 1_000, 3_000, None, 1, &only_a)
        .await
        .unwrap();
    assert_eq!(page.iter().map(|e| e.at_ms).collect::<Vec<_>>(), [3_000]);
    let (page, next) = s
        .events(&account, 1_000, 3_000, next.as_deref(), 1, &only_a)
        .await
        .unwrap();
    assert_eq!(page.iter().map(|e| e.at_ms).collect::<Vec<_>>(), [1_000]);
    let (page, _) = s
        .events(&account, 1_000, 3_000, next.as_deref(), 1, &only_a)
        .await
        .unwrap();
    assert!(page.is_empty());
}

/// An account's shared request bucket (GCRA): its burst, then its rate, whichever case the
/// caller guesses first; another account's apart.
async fn buckets(s: &dyn Store, u: &str) {
    use phantom_rules::throttle::{take_of, Rate};
    let rate = Rate {
        per_sec: 2.0,
        burst: 5.0,
    };
    let one = take_of(rate, 1);
    let account = format!("{u}flood");
    for (i, idle) in [true, false, true, false, true].into_iter().enumerate() {
        assert!(
            s.take_tokens(&account, "Mutate", one, 0, idle)
                .await
                .unwrap(),
            "token {i}"
        );
    }
    for idle in [true, false] {
        assert!(!s
            .take_tokens(&account, "Mutate", one, 0, idle)
            .await
            .unwrap());
    }
    assert!(s
        .take_tokens(&format!("{u}calm"), "Mutate", one, 0, false)
        .await
        .unwrap());
    assert!(s
        .take_tokens(&account, "Describe", one, 0, false)
        .await
        .unwrap());
    // Half a second on, one more; a quiet minute, the burst again (several at once).
    assert!(s
        .take_tokens(&account, "Mutate", one, 500_000, false)
        .await
        .unwrap());
    assert!(!s
        .take_tokens(&account, "Mutate", one, 500_000, true)
        .await
        .unwrap());
    let five = take_of(rate, 5);
    assert!(s
        .take_tokens(&account, "Mutate", five, 60_000_000, false)
        .await
        .unwrap());
    assert!(!s
        .take_tokens(&account, "Mutate", one, 60_000_000, true)
        .await
        .unwrap());
}

#[tokio::test]
async fn the_memory_store_keeps_the_contract() {
    let store = MemoryStore::default();
    contract(&store, "").await;
    due_index(&store, "").await;
    asks(&store, "").await;
    metric_source(&store, "").await;
    notices(&store, "").await;
    launches(&store, "").await;
    pulse(&store, "").await;
    watch(&store, "").await;
    identities(&store, "").await;
    trail(&store, "").await;
    buckets(&store, "").await;
    side_by_side(&store, "").await;
}

#[tokio::test]
async fn the_dynamodb_store_keeps_the_contract_on_dynamodb_local() {
    let db = DynamoDbLocal::start();
    dynamodb_contract(Some(&db.url)).await;
}

#[tokio::test]
async fn the_dynamodb_store_keeps_the_contract_on_moto() {
    dynamodb_contract(None).await;
}

/// The contract on the DynamoDB store, its table on `dynamodb` (DynamoDB Local) or moto's, KMS in
/// moto.
async fn dynamodb_contract(dynamodb: Option<&str>) {
    let moto = Moto::start();
    let (store, table) = moto.state_store("contract", dynamodb).await;
    let sdk = sdk_for(dynamodb.unwrap_or(&moto.url)).await;
    contract(&store, "").await;
    due_index(&store, "").await;
    asks(&store, "").await;
    metric_source(&store, "").await;
    notices(&store, "").await;
    launches(&store, "").await;
    pulse(&store, "").await;
    watch(&store, "").await;
    identities(&store, "").await;
    trail(&store, "").await;
    buckets(&store, "").await;
    side_by_side(&store, "").await;

    // What a copy of the table shows: no secret in plain text, and the sealed ones open only
    // through KMS.
    let (key_secret, cloud_secret) = ("Plain-Key-Secret-4f1c", "Plain-Cloud-Secret-9a2e");
    let mut eve = user("eve");
    eve.access_key_id = "PKIAEVE".into();
    store.create_user(&eve, key_secret).await.unwrap();
    store
        .put_cloud(&CloudRecord {
            name: "vault".into(),
            endpoint: "http://vault".into(),
            region: "r".into(),
            zone: "r1".into(),
            launch_templates: true,
            load_balancers: true,
            events: false,
            status_checks: true,
        })
        .await
        .unwrap();
    let creds = CloudCredentials {
        cloud: "vault".into(),
        access_key_id: "AKIAEVE".into(),
        secret: cloud_secret.into(),
    };
    store.put_cloud_credentials("eve", &creds).await.unwrap();
    let db = aws_sdk_dynamodb::Client::new(&sdk);
    let items = db.scan().table_name(&table).send().await.unwrap();
    let dump = format!("{:?}", items.items());
    assert!(
        dump.contains("PKIAEVE") && dump.contains("AKIAEVE"),
        "the items are there"
    );
    assert!(!dump.contains(key_secret) && !dump.contains(cloud_secret));
    assert!(dump.contains("https://prom") && !dump.contains("Plain-Metric-Token-1c9d"));
    assert_eq!(
        store.access_key("PKIAEVE").await.unwrap().unwrap().secret,
        key_secret
    );
    assert_eq!(
        store.cloud_credentials("eve", "vault").await.unwrap(),
        Some(creds)
    );

    // A stored group whose settings lack a member, or hold one of the wrong type, reads as
    // Corrupt (naming it), never as a default (a grace period of 0, an ARN of "").
    let s: &dyn Store = &store;
    s.create_launch_config("fay", &lc("web")).await.unwrap();
    s.create_group("fay", &group("web", "web", "g-fay"), None)
        .await
        .unwrap();
    let items = db.scan().table_name(&table).send().await.unwrap();
    let item_of = |sk: &str| {
        items
            .items()
            .iter()
            .find(|i| {
                let key = |k: &str| i.get(k).and_then(|v| v.as_s().ok()).map(String::as_str);
                key("pk") == Some("OWNER#fay") && key("sk") == Some(sk)
            })
            .expect("fay's item")
            .clone()
    };
    // The item with its document's `member` removed (None) or replaced.
    let damaged = |stored: &HashMap<String, AttributeValue>, member: &str, value: Option<Value>| {
        let mut doc: Value = serde_json::from_str(stored["doc"].as_s().unwrap()).unwrap();
        match value {
            None => {
                doc.as_object_mut().unwrap().remove(member);
            }
            Some(v) => doc[member] = v,
        }
        let mut item = stored.clone();
        item.insert("doc".into(), AttributeValue::S(doc.to_string()));
        item
    };
    for (sk, member, value) in [
        ("ASG#web", "HealthCheckGracePeriod", None),
        ("ASG#web", "AutoScalingGroupARN", None),
        ("ASG#web", "DefaultCooldown", Some(json!("300"))),
        // The same for a launch configuration.
        ("LC#web", "ImageId", None),
        ("LC#web", "InstanceMonitoring", Some(json!(true))),
    ] {
        let item = damaged(&item_of(sk), member, value);
        db.put_item()
            .table_name(&table)
            .set_item(Some(item))
            .send()
            .await
            .unwrap();
        let refused = if sk.starts_with("ASG#") {
            s.group("fay", "web").await.err()
        } else {
            s.launch_config("fay", "web").await.err()
        };
        assert!(
            matches!(refused, Some(StoreError::Corrupt(m)) if m.contains(member)),
            "{sk} {member}"
        );
    }
}

/// A write made while another's transaction is refused stays written. moto's own DynamoDB put
/// back a whole table as it was when a refused transaction began, so the local stack on moto
/// lost what other requests wrote meanwhile (a launch configuration of the e2e `paging` test).
async fn side_by_side(s: &dyn Store, u: &str) {
    let (gus, hal) = (format!("{u}gus"), format!("{u}hal"));
    s.create_user(&user(&gus), "s6").await.unwrap();
    s.create_user(&user(&hal), "s7").await.unwrap();
    s.create_launch_config(&gus, &lc("taken")).await.unwrap();
    let refused = async {
        for _ in 0..40 {
            assert_eq!(
                s.create_launch_config(&gus, &lc("taken")).await,
                Err(StoreError::Exists)
            );
        }
    };
    let written = async {
        for i in 0..40 {
            s.create_launch_config(&hal, &lc(&format!("lc{i:02}")))
                .await
                .unwrap();
        }
    };
    tokio::join!(refused, written);
    let kept = s
        .launch_configs(&hal, listing(None, None, 100))
        .await
        .unwrap();
    let want: Vec<String> = (0..40).map(|i| format!("lc{i:02}")).collect();
    let names: Vec<&String> = kept.iter().map(|l| &l.name).collect();
    assert_eq!(names, want.iter().collect::<Vec<_>>());
    assert_eq!(s.usage(&hal).await.unwrap().launch_configs, 40);
}

/// The group as the claim's lease took it; the lease must be free (or the holder's own).
async fn taken(s: &dyn Store, c: Claim<'_>) -> Group {
    match s.take_lease(c).await.unwrap() {
        Lease::Taken(g) => *g,
        other => panic!("{} is not free: {other:?}", c.group),
    }
}

fn listing<'a>(names: Option<&'a [String]>, after: Option<&'a str>, want: usize) -> Page<'a> {
    Page { names, after, want }
}

fn claim<'a>(
    user: &'a str,
    group: &'a str,
    holder: &'a str,
    now_ms: i64,
    ttl_ms: i64,
) -> Claim<'a> {
    Claim {
        user,
        group,
        holder,
        now_ms,
        ttl_ms,
    }
}
