//! Mix 14's requests: least privilege (issue 63). Each user has an IAM user `ca` with the
//! Kubernetes cluster-autoscaler's documented policy (its writes only on groups tagged
//! `k8s.io/cluster-autoscaler/enabled`), made with IAM's API on first use; the user tags and
//! untags its groups, and `ca` sets their sizes. The invariant `least-privilege`: `ca` is
//! refused (AccessDenied) exactly where the group, as read just before, lacks the tag; a refused
//! request changes nothing (its size as read).

use super::rng::Rng;
use super::work::{judge, Answer, Drawn, Scene};
use aws_sdk_autoscaling::Client;
use std::collections::HashMap;
use std::sync::Mutex;

/// How many rolls mix `mix` adds after mix 13's (`work::request` draws them last).
pub fn rolls(mix: u32) -> u64 {
    match mix {
        ..=13 => 0,
        _ => 4,
    }
}

/// The tag that lets the cluster-autoscaler act on a group.
pub const TAG: &str = "k8s.io/cluster-autoscaler/enabled";

const POLICY: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["autoscaling:SetDesiredCapacity","autoscaling:TerminateInstanceInAutoScalingGroup"],"Resource":"*","Condition":{"StringEquals":{"aws:ResourceTag/k8s.io/cluster-autoscaler/enabled":"true"}}},{"Effect":"Allow","Action":["autoscaling:Describe*"],"Resource":"*"}]}"#;

/// Each user's `ca` key (by the user's own key id, unique to a world): made once.
static KEYS: Mutex<Option<HashMap<String, (String, String)>>> = Mutex::new(None);

/// The text of the first `<tag>` element of an XML answer.
fn element(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(xml[start..end].to_string())
}

/// The user's `ca`, made with IAM's API the first time: its key, or why it could not be made
/// (a fault struck; the request is then not made).
async fn ca(scene: &Scene<'_>) -> Result<(String, String), String> {
    let u = scene.user;
    if let Some(k) = KEYS
        .lock()
        .expect("no chaos user panics")
        .get_or_insert_with(HashMap::new)
        .get(&u.access_key_id)
    {
        return Ok(k.clone());
    }
    let root = (u.access_key_id.as_str(), u.secret.as_str());
    let w = scene.world;
    let (status, body) = w.iam(root, "CreateUser", &[("UserName", "ca")]).await;
    if status != 200 && !body.contains("EntityAlreadyExists") {
        return Err(format!("CreateUser: {status}"));
    }
    let put = [
        ("UserName", "ca"),
        ("PolicyName", "cluster-autoscaler"),
        ("PolicyDocument", POLICY),
    ];
    let (status, _) = w.iam(root, "PutUserPolicy", &put).await;
    if status != 200 {
        return Err(format!("PutUserPolicy: {status}"));
    }
    let (status, body) = w.iam(root, "CreateAccessKey", &[("UserName", "ca")]).await;
    let key = element(&body, "AccessKeyId").zip(element(&body, "SecretAccessKey"));
    let Some(key) = key.filter(|_| status == 200) else {
        return Err(format!("CreateAccessKey: {status}"));
    };
    KEYS.lock()
        .expect("no chaos user panics")
        .get_or_insert_with(HashMap::new)
        .insert(u.access_key_id.clone(), key.clone());
    Ok(key)
}

/// Draws and sends one of mix 14's requests (`roll` below `rolls(mix)`).
pub async fn request(c: &Client, rng: &mut Rng, scene: &Scene<'_>, roll: u64) -> (Drawn, Answer) {
    let group = scene.group;
    let drawn = |action, what: String| Drawn {
        action,
        what,
        vm: None,
    };
    if roll < 2 {
        let tag = crate::steps::group_tag(group, TAG, "true");
        let answer = match rng.chance(0.7) {
            true => judge(c.create_or_update_tags().tags(tag).send().await),
            false => judge(c.delete_tags().tags(tag).send().await),
        };
        return (drawn("TagForClusterAutoscaler", group.to_string()), answer);
    }
    let key = match ca(scene).await {
        Ok(k) => k,
        Err(why) => {
            return (
                drawn("CaSetDesiredCapacity", why),
                Answer::Code("setup".into()),
            )
        }
    };
    // The group as it is just before (the user's own read).
    let read = c
        .describe_auto_scaling_groups()
        .auto_scaling_group_names(group)
        .send()
        .await;
    let Ok(read) = read else {
        return (drawn("CaSetDesiredCapacity", group.into()), judge(read));
    };
    let found = read.auto_scaling_groups().first();
    let tagged = found.is_some_and(|g| {
        g.tags()
            .iter()
            .any(|t| t.key() == Some(TAG) && t.value() == Some("true"))
    });
    let before = found.and_then(|g| g.desired_capacity());
    // Mostly within the group's bounds, as the cluster-autoscaler sets them.
    let bounds = found.and_then(|g| g.min_size().zip(g.max_size()));
    let n = match bounds {
        Some((lo, hi)) if rng.chance(0.8) => rng.between(lo as i64, hi as i64) as i32,
        _ => rng.between(0, 4) as i32,
    };
    let ca = scene.world.sdk_with_keys(&key.0, &key.1);
    let r = ca
        .set_desired_capacity()
        .auto_scaling_group_name(group)
        .desired_capacity(n)
        .send()
        .await;
    let what = format!(
        "{group} {n} as ca ({})",
        if tagged { "tagged" } else { "untagged" }
    );
    let answer = judge(r);
    let denied = matches!(&answer, Answer::Code(c) if c.starts_with("AccessDenied"));
    let allowed = matches!(&answer, Answer::Code(c) if c == "OK");
    if (denied && tagged) || (allowed && !tagged) {
        let why = format!("{what}: {answer:?}");
        return (
            drawn("CaSetDesiredCapacity", what),
            Answer::Broken("least-privilege", why),
        );
    }
    if denied {
        let after = c
            .describe_auto_scaling_groups()
            .auto_scaling_group_names(group)
            .send()
            .await
            .ok()
            .and_then(|o| {
                o.auto_scaling_groups()
                    .first()
                    .and_then(|g| g.desired_capacity())
            });
        // Another writer (a policy, the schedule) may move it; a refusal must not set it to n.
        if after.is_some() && after != before && after == Some(n) {
            let why = format!("{what}: refused, yet the size went {before:?} -> {after:?}");
            return (
                drawn("CaSetDesiredCapacity", what),
                Answer::Broken("least-privilege", why),
            );
        }
    }
    (drawn("CaSetDesiredCapacity", what), answer)
}
