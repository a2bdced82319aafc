//! Lifecycle hooks, pure: PutLifecycleHook and DeleteLifecycleHook on a group's document, and the
//! waits they put instances in. A launching VM waits in `Pending:Wait` and a leaving one in
//! `Terminating:Wait` until every hook of that transition is completed (CompleteLifecycleAction)
//! or its heartbeat timeout runs out (the hook's DefaultResult). `reconcile::decide` acts on the
//! outcome.
//!
//! Phantom sends no notifications (its clouds have no SNS or SQS of the user's), so a hook has no
//! NotificationTargetARN or RoleARN, and there are no action tokens to hand out: the waiting VM is
//! found with DescribeAutoScalingInstances and named by InstanceId.

use crate::error::{ApiError, ApiResult};
pub use crate::model::instance::{Outcome, Wait};
use serde_json::{json, Value};

pub const LAUNCHING: &str = "autoscaling:EC2_INSTANCE_LAUNCHING";
pub const TERMINATING: &str = "autoscaling:EC2_INSTANCE_TERMINATING";
/// DescribeLifecycleHookTypes.
pub const TRANSITIONS: [&str; 2] = [LAUNCHING, TERMINATING];

/// AWS's bounds and defaults (seconds).
const MIN_HEARTBEAT: i64 = 30;
const MAX_HEARTBEAT: i64 = 7200;
const DEFAULT_HEARTBEAT: i64 = 3600;
const MAX_GLOBAL_TIMEOUT: i64 = 172_800;
pub const MAX_HOOKS: usize = 50;

/// A hook as the provisioner needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    pub name: String,
    pub launching: bool,
    pub heartbeat_ms: i64,
    pub default_result: Outcome,
}

/// The hooks in a group's document (the botocore `LifecycleHook` shape, as Describe returns them).
pub fn stored(doc: &Value) -> &[Value] {
    doc["LifecycleHooks"].as_array().map_or(&[], Vec::as_slice)
}

/// The group's hooks, typed.
pub fn hooks(doc: &Value) -> Vec<Hook> {
    stored(doc)
        .iter()
        .map(|h| Hook {
            name: h["LifecycleHookName"].as_str().unwrap_or_default().into(),
            launching: h["LifecycleTransition"] == LAUNCHING,
            heartbeat_ms: h["HeartbeatTimeout"].as_i64().unwrap_or(DEFAULT_HEARTBEAT) * 1000,
            default_result: if h["DefaultResult"] == "CONTINUE" {
                Outcome::Continue
            } else {
                Outcome::Abandon
            },
        })
        .collect()
}

/// The waits an instance starts on a transition at `now_ms`: one per hook of that transition.
pub fn waits(hooks: &[Hook], launching: bool, now_ms: i64) -> Vec<Wait> {
    hooks
        .iter()
        .filter(|h| h.launching == launching)
        .map(|h| Wait {
            hook: h.name.clone(),
            deadline_ms: now_ms + h.heartbeat_ms,
            heartbeat_ms: h.heartbeat_ms,
            default_result: h.default_result,
            result: None,
        })
        .collect()
}

/// How an instance's waits end at `now_ms`, or `None` while one is still open. A wait ends with
/// its answer, or its default once the deadline passed, or (its hook deleted) as AWS ends the
/// outstanding actions of a deleted hook: ABANDON for a launch, CONTINUE for a termination. One
/// ABANDON decides a launch.
pub fn outcome(waits: &[Wait], hooks: &[Hook], launching: bool, now_ms: i64) -> Option<Outcome> {
    let mut all = Outcome::Continue;
    for w in waits {
        let ended = w.result.or_else(|| {
            if !hooks.iter().any(|h| h.name == w.hook) {
                Some(if launching {
                    Outcome::Abandon
                } else {
                    Outcome::Continue
                })
            } else {
                (now_ms >= w.deadline_ms).then_some(w.default_result)
            }
        })?;
        if ended == Outcome::Abandon {
            all = Outcome::Abandon;
        }
    }
    Some(all)
}

/// The earliest deadline among the open waits: when the provisioner should look again.
pub fn next_deadline(waits: &[Wait]) -> Option<i64> {
    waits
        .iter()
        .filter(|w| w.result.is_none())
        .map(|w| w.deadline_ms)
        .min()
}

fn no_action(instance: &str, hook: &str) -> ApiError {
    ApiError::validation(format!(
        "No active Lifecycle Action found with instance ID {instance} for lifecycle hook {hook}."
    ))
}

/// CompleteLifecycleAction: the waits with `hook`'s answered.
pub fn complete(
    waits: &[Wait],
    instance: &str,
    hook: &str,
    result: Outcome,
) -> ApiResult<Vec<Wait>> {
    change_open(waits, instance, hook, |w| w.result = Some(result))
}

/// RecordLifecycleActionHeartbeat: `hook`'s wait starts over from `now_ms`.
pub fn heartbeat(waits: &[Wait], instance: &str, hook: &str, now_ms: i64) -> ApiResult<Vec<Wait>> {
    change_open(waits, instance, hook, |w| {
        w.deadline_ms = now_ms + w.heartbeat_ms
    })
}

fn change_open(
    waits: &[Wait],
    instance: &str,
    hook: &str,
    f: impl Fn(&mut Wait),
) -> ApiResult<Vec<Wait>> {
    let mut out = waits.to_vec();
    let w = out
        .iter_mut()
        .find(|w| w.hook == hook && w.result.is_none())
        .ok_or_else(|| no_action(instance, hook))?;
    f(w);
    Ok(out)
}

fn refuse_notifications(input: &Value) -> ApiResult<()> {
    for member in ["NotificationTargetARN", "RoleARN"] {
        if input.get(member).is_some() {
            return Err(ApiError::validation(format!(
                "Phantom sends no lifecycle notifications, so {member} cannot be set: leave it out, and find waiting instances with DescribeAutoScalingInstances (LifecycleState Pending:Wait or Terminating:Wait)."
            )));
        }
    }
    Ok(())
}

/// A hook from PutLifecycleHook's input (or a LifecycleHookSpecification), over `old` if the hook
/// exists: members not given keep their values.
fn hook_from(group: &str, input: &Value, old: Option<&Value>) -> ApiResult<Value> {
    refuse_notifications(input)?;
    let name = input["LifecycleHookName"].as_str().unwrap_or_default();
    if name.is_empty() {
        return Err(ApiError::validation("LifecycleHookName is required."));
    }
    let pick = |member: &str| {
        input
            .get(member)
            .or_else(|| old.and_then(|o| o.get(member)))
            .cloned()
    };
    let transition = pick("LifecycleTransition").ok_or_else(|| {
        ApiError::validation(format!(
            "LifecycleTransition is required to create lifecycle hook {name}: give {LAUNCHING} or {TERMINATING}."
        ))
    })?;
    if !TRANSITIONS.iter().any(|t| transition == *t) {
        return Err(ApiError::validation(format!(
            "Invalid Lifecycle Transition: {}. Give {LAUNCHING} or {TERMINATING}.",
            transition.as_str().unwrap_or_default()
        )));
    }
    let heartbeat = match pick("HeartbeatTimeout") {
        Some(v) => v.as_i64().ok_or_else(|| {
            ApiError::validation("HeartbeatTimeout must be a whole number of seconds.")
        })?,
        None => DEFAULT_HEARTBEAT,
    };
    if !(MIN_HEARTBEAT..=MAX_HEARTBEAT).contains(&heartbeat) {
        return Err(ApiError::validation(format!(
            "Heartbeat timeout {heartbeat} is out of range: it must be between {MIN_HEARTBEAT} and {MAX_HEARTBEAT} seconds."
        )));
    }
    let default = match pick("DefaultResult") {
        Some(v) => Outcome::parse(v.as_str().unwrap_or_default())?,
        None => Outcome::Abandon,
    };
    let mut hook = json!({
        "LifecycleHookName": name,
        "AutoScalingGroupName": group,
        "LifecycleTransition": transition,
        "HeartbeatTimeout": heartbeat,
        "GlobalTimeout": (heartbeat * 100).min(MAX_GLOBAL_TIMEOUT),
        "DefaultResult": default.as_str(),
    });
    if let Some(m) = pick("NotificationMetadata") {
        hook["NotificationMetadata"] = m;
    }
    Ok(hook)
}

/// PutLifecycleHook: the document's hooks with this one created or changed.
pub fn put(doc: &Value, group: &str, input: &Value) -> ApiResult<Value> {
    let mut list = stored(doc).to_vec();
    let name = &input["LifecycleHookName"];
    let at = list.iter().position(|h| h["LifecycleHookName"] == *name);
    let hook = hook_from(group, input, at.map(|i| &list[i]))?;
    match at {
        Some(i) => list[i] = hook,
        None if list.len() >= MAX_HOOKS => {
            return Err(ApiError::limit_exceeded(format!(
                "Exceeded maximum number of lifecycle hooks ({MAX_HOOKS}) for group {group}."
            )))
        }
        None => list.push(hook),
    }
    Ok(Value::Array(list))
}

/// CreateAutoScalingGroup's LifecycleHookSpecificationList, as the document's hooks.
pub fn from_specifications(group: &str, specs: &Value) -> ApiResult<Option<Value>> {
    let Some(specs) = specs.as_array() else {
        return Ok(None);
    };
    let mut doc = json!({});
    for spec in specs {
        let name = &spec["LifecycleHookName"];
        if stored(&doc).iter().any(|h| h["LifecycleHookName"] == *name) {
            return Err(ApiError::validation(format!(
                "Lifecycle hook {} is given twice.",
                name.as_str().unwrap_or_default()
            )));
        }
        if spec.get("LifecycleTransition").is_none() {
            return Err(ApiError::validation(
                "Each LifecycleHookSpecification needs a LifecycleTransition.",
            ));
        }
        doc["LifecycleHooks"] = put(&doc, group, spec)?;
    }
    Ok(Some(doc["LifecycleHooks"].take()))
}

/// DeleteLifecycleHook: the document's hooks without `name`.
pub fn delete(doc: &Value, group: &str, name: &str) -> ApiResult<Value> {
    let list = stored(doc);
    if !list.iter().any(|h| h["LifecycleHookName"] == name) {
        return Err(ApiError::validation(format!(
            "No Lifecycle Hook found with name {name} for group {group}."
        )));
    }
    Ok(Value::Array(
        list.iter()
            .filter(|h| h["LifecycleHookName"] != name)
            .cloned()
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_with(hooks: &[Value]) -> Value {
        let mut doc = json!({});
        for h in hooks {
            doc["LifecycleHooks"] = put(&doc, "g", h).unwrap();
        }
        doc
    }

    #[test]
    fn put_fills_aws_defaults_and_updates_in_place() {
        let doc = doc_with(&[json!({"LifecycleHookName": "h", "LifecycleTransition": LAUNCHING})]);
        let h = &stored(&doc)[0];
        assert_eq!(h["HeartbeatTimeout"], 3600);
        assert_eq!(h["GlobalTimeout"], 172_800);
        assert_eq!(h["DefaultResult"], "ABANDON");
        // A second put without the transition changes what it names and keeps the rest.
        let list = put(
            &doc,
            "g",
            &json!({"LifecycleHookName": "h", "HeartbeatTimeout": 60, "DefaultResult": "CONTINUE"}),
        )
        .unwrap();
        assert_eq!(list.as_array().unwrap().len(), 1);
        assert_eq!(list[0]["LifecycleTransition"], LAUNCHING);
        assert_eq!(list[0]["HeartbeatTimeout"], 60);
        assert_eq!(list[0]["GlobalTimeout"], 6000);
        assert_eq!(list[0]["DefaultResult"], "CONTINUE");
    }

    #[test]
    fn bad_hooks_are_refused() {
        let doc = json!({});
        let refused = |input: Value| put(&doc, "g", &input).unwrap_err().message;
        assert!(
            refused(json!({"LifecycleHookName": "h"})).contains("LifecycleTransition is required")
        );
        assert!(
            refused(json!({"LifecycleHookName": "h", "LifecycleTransition": "x"}))
                .contains("Invalid Lifecycle Transition")
        );
        assert!(refused(json!({"LifecycleHookName": "h", "LifecycleTransition": LAUNCHING, "HeartbeatTimeout": 10}))
            .contains("between 30 and 7200"));
        assert!(refused(json!({"LifecycleHookName": "h", "LifecycleTransition": LAUNCHING, "DefaultResult": "MAYBE"}))
            .contains("CONTINUE or ABANDON"));
        assert!(refused(json!({"LifecycleHookName": "h", "LifecycleTransition": LAUNCHING, "NotificationTargetARN": "arn:aws:sqs:x"}))
            .contains("no lifecycle notifications"));
        let full = doc_with(
            &(0..MAX_HOOKS)
                .map(|i| json!({"LifecycleHookName": format!("h{i}"), "LifecycleTransition": TERMINATING}))
                .collect::<Vec<_>>(),
        );
        let e = put(
            &full,
            "g",
            &json!({"LifecycleHookName": "one-more", "LifecycleTransition": LAUNCHING}),
        )
        .unwrap_err();
        assert_eq!(e.code, "LimitExceeded");
        assert!(delete(&full, "g", "nope")
            .unwrap_err()
            .message
            .contains("No Lifecycle Hook"));
        assert_eq!(
            delete(&full, "g", "h3").unwrap().as_array().unwrap().len(),
            MAX_HOOKS - 1
        );
    }

    #[test]
    fn waits_end_by_answer_timeout_or_deletion() {
        let doc = doc_with(&[
            json!({"LifecycleHookName": "a", "LifecycleTransition": LAUNCHING, "HeartbeatTimeout": 30, "DefaultResult": "CONTINUE"}),
            json!({"LifecycleHookName": "b", "LifecycleTransition": LAUNCHING, "HeartbeatTimeout": 60}),
            json!({"LifecycleHookName": "t", "LifecycleTransition": TERMINATING}),
        ]);
        let hooks = hooks(&doc);
        let w = waits(&hooks, true, 1_000);
        assert_eq!(w.len(), 2);
        assert_eq!(outcome(&w, &hooks, true, 1_000), None);
        assert_eq!(next_deadline(&w), Some(31_000));
        // a answered, b still open; then b times out to its default, ABANDON.
        let w = complete(&w, "i-1", "a", Outcome::Continue).unwrap();
        assert_eq!(outcome(&w, &hooks, true, 40_000), None);
        assert_eq!(outcome(&w, &hooks, true, 61_000), Some(Outcome::Abandon));
        // A heartbeat moves b's deadline; answering twice is refused.
        let w = heartbeat(&w, "i-1", "b", 50_000).unwrap();
        assert_eq!(next_deadline(&w), Some(110_000));
        assert!(complete(&w, "i-1", "a", Outcome::Continue).is_err());
        assert!(complete(&w, "i-1", "t", Outcome::Continue).is_err());
        let w = complete(&w, "i-1", "b", Outcome::Continue).unwrap();
        assert_eq!(outcome(&w, &hooks, true, 50_000), Some(Outcome::Continue));
        // A deleted hook ends its waits: ABANDON for a launch, CONTINUE for a termination.
        let t = waits(&hooks, false, 0);
        assert_eq!(outcome(&t, &hooks, false, 1), None);
        assert_eq!(outcome(&t, &[], false, 1), Some(Outcome::Continue));
        assert_eq!(
            outcome(&waits(&hooks, true, 0), &[], true, 1),
            Some(Outcome::Abandon)
        );
    }
}
