//! Lifecycle hooks, pure: PutLifecycleHook and DeleteLifecycleHook on a group's settings, and the
//! waits they put instances in. A launching VM waits in `Pending:Wait` and a leaving one in
//! `Terminating:Wait` until every hook of that transition is completed (CompleteLifecycleAction)
//! or its heartbeat timeout runs out (the hook's DefaultResult). `reconcile::decide` acts on the
//! outcome.
//!
//! A hook with a NotificationTargetARN (an SQS queue or SNS topic of the deployment's region) is
//! told of each instance that starts waiting on it, with a LifecycleActionToken of that wait
//! (`crate::notification`); CompleteLifecycleAction takes the token or the instance's id.

use phantom_model::group::LifecycleHook;
pub use phantom_model::instance::{Outcome, Wait, DRAIN};
use phantom_model::request::PutLifecycleHook;
use phantom_model::{Checked, Refusal};

pub use phantom_model::group::{LAUNCHING, TERMINATING};
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
    /// Its GlobalTimeout: how long a wait may last, heartbeats or not.
    pub global_ms: i64,
    pub default_result: Outcome,
}

/// The group's hooks, as the provisioner needs them.
pub fn hooks(stored: &[LifecycleHook]) -> Vec<Hook> {
    stored
        .iter()
        .map(|h| Hook {
            name: h.lifecycle_hook_name.clone(),
            launching: h.lifecycle_transition == LAUNCHING,
            heartbeat_ms: h.heartbeat_timeout * 1000,
            global_ms: h.global_timeout * 1000,
            default_result: h.default_result,
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
            global_deadline_ms: Some(now_ms + h.global_ms),
            default_result: h.default_result,
            result: None,
            token: None,
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
            if w.hook == DRAIN {
                (now_ms >= w.deadline_ms).then_some(Outcome::Continue)
            } else if !hooks.iter().any(|h| h.name == w.hook) {
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

/// A leaving VM's wait while its load balancers drain it.
pub fn drain(until_ms: i64, drain_ms: i64) -> Wait {
    Wait {
        hook: DRAIN.to_string(),
        deadline_ms: until_ms,
        heartbeat_ms: drain_ms,
        global_deadline_ms: None,
        default_result: Outcome::Continue,
        result: None,
        token: None,
    }
}

/// The earliest deadline among the open waits: when the provisioner should look again.
pub fn next_deadline(waits: &[Wait]) -> Option<i64> {
    waits
        .iter()
        .filter(|w| w.result.is_none())
        .map(|w| w.deadline_ms)
        .min()
}

/// AWS's words for an instance that waits on no such hook (or is not in the group).
pub fn no_action(instance: &str) -> Refusal {
    Refusal::invalid(format!(
        "No active Lifecycle Action found with instance ID {instance}"
    ))
}

/// CompleteLifecycleAction: the waits with `hook`'s answered.
pub fn complete(waits: &[Wait], instance: &str, hook: &str, result: Outcome) -> Checked<Vec<Wait>> {
    change_open(waits, instance, hook, |w| w.result = Some(result))
}

/// RecordLifecycleActionHeartbeat: `hook`'s wait starts over from `now_ms`.
/// A heartbeat restarts the wait's heartbeat timeout, never past its GlobalTimeout: there the
/// wait ends with its default result whatever the heartbeats, as AWS ends it.
pub fn heartbeat(waits: &[Wait], instance: &str, hook: &str, now_ms: i64) -> Checked<Vec<Wait>> {
    change_open(waits, instance, hook, |w| {
        let restarted = now_ms + w.heartbeat_ms;
        w.deadline_ms = w.global_deadline_ms.map_or(restarted, |g| restarted.min(g));
    })
}

fn change_open(
    waits: &[Wait],
    instance: &str,
    hook: &str,
    f: impl Fn(&mut Wait),
) -> Checked<Vec<Wait>> {
    let mut out = waits.to_vec();
    let w = out
        .iter_mut()
        .find(|w| w.hook == hook && w.result.is_none())
        .ok_or_else(|| no_action(instance))?;
    f(w);
    Ok(out)
}

/// The hook's target and role: as given (an empty target removes it), else as they were. A role
/// without a target is refused, as AWS refuses it; the role must look like an IAM role's ARN.
fn target_and_role(
    group_arn: &str,
    input: &PutLifecycleHook,
    old: Option<&LifecycleHook>,
) -> Checked<(Option<String>, Option<String>)> {
    let target = match input.notification_target_arn.as_deref() {
        Some("") => None,
        Some(arn) => {
            crate::notification::target(arn, group_arn, true)?;
            Some(arn.to_string())
        }
        None => old.and_then(|o| o.notification_target_arn.clone()),
    };
    let role = match input.role_arn.as_deref() {
        Some("") => None,
        Some(r) if !r.starts_with("arn:") || !r.contains(":role/") => {
            return Err(Refusal::invalid(format!(
                "RoleARN {r} is not an IAM role's ARN (arn:aws:iam::<account>:role/<name>)."
            )))
        }
        Some(r) => Some(r.to_string()),
        None => old.and_then(|o| o.role_arn.clone()),
    };
    if role.is_some() && target.is_none() {
        return Err(Refusal::invalid(
            "RoleARN is given without a NotificationTargetARN: give both, or neither.",
        ));
    }
    Ok((target, role))
}

/// A hook from PutLifecycleHook's request (or a LifecycleHookSpecification), over `old` if the
/// hook exists: members not given keep their values.
fn hook_from(
    group: &str,
    group_arn: &str,
    input: &PutLifecycleHook,
    old: Option<&LifecycleHook>,
) -> Checked<LifecycleHook> {
    let (notification_target_arn, role_arn) = target_and_role(group_arn, input, old)?;
    let name = &input.lifecycle_hook_name;
    if name.is_empty() {
        return Err(Refusal::invalid("LifecycleHookName is required."));
    }
    let transition = match (&input.lifecycle_transition, old) {
        (Some(t), _) => t.clone(),
        (None, Some(o)) => o.lifecycle_transition.clone(),
        (None, None) => {
            return Err(Refusal::invalid(format!(
                "LifecycleTransition is required to create lifecycle hook {name}: give {LAUNCHING} or {TERMINATING}."
            )))
        }
    };
    if !TRANSITIONS.contains(&transition.as_str()) {
        return Err(Refusal::invalid(format!(
            "Invalid Lifecycle Transition: {transition}. Give {LAUNCHING} or {TERMINATING}."
        )));
    }
    let heartbeat = match (input.heartbeat_timeout, old) {
        (Some(h), _) => h,
        (None, Some(o)) => o.heartbeat_timeout,
        (None, None) => DEFAULT_HEARTBEAT,
    };
    if !(MIN_HEARTBEAT..=MAX_HEARTBEAT).contains(&heartbeat) {
        return Err(Refusal::invalid(format!(
            "Heartbeat timeout {heartbeat} is out of range: it must be between {MIN_HEARTBEAT} and {MAX_HEARTBEAT} seconds."
        )));
    }
    let default_result = match (&input.default_result, old) {
        (Some(r), _) => Outcome::parse(r)?,
        (None, Some(o)) => o.default_result,
        (None, None) => Outcome::Abandon,
    };
    let notification_metadata = match &input.notification_metadata {
        Some(m) => Some(m.clone()),
        None => old.and_then(|o| o.notification_metadata.clone()),
    };
    Ok(LifecycleHook {
        lifecycle_hook_name: name.to_string(),
        auto_scaling_group_name: group.to_string(),
        lifecycle_transition: transition,
        heartbeat_timeout: heartbeat,
        global_timeout: (heartbeat * 100).min(MAX_GLOBAL_TIMEOUT),
        default_result,
        notification_metadata,
        notification_target_arn,
        role_arn,
    })
}

/// PutLifecycleHook: the group's hooks with this one created or changed.
pub fn put(
    current: &[LifecycleHook],
    group: &str,
    group_arn: &str,
    input: &PutLifecycleHook,
) -> Checked<Vec<LifecycleHook>> {
    let mut list = current.to_vec();
    let at = list
        .iter()
        .position(|h| h.lifecycle_hook_name == input.lifecycle_hook_name);
    let hook = hook_from(group, group_arn, input, at.map(|i| &list[i]))?;
    match at {
        Some(i) => list[i] = hook,
        None if list.len() >= MAX_HOOKS => {
            return Err(Refusal::over_limit(format!(
                "Exceeded maximum number of lifecycle hooks ({MAX_HOOKS}) for group {group}."
            )))
        }
        None => list.push(hook),
    }
    Ok(list)
}

/// CreateAutoScalingGroup's LifecycleHookSpecificationList, as the group's hooks.
pub fn from_specifications(
    group: &str,
    group_arn: &str,
    specs: &[PutLifecycleHook],
) -> Checked<Vec<LifecycleHook>> {
    let mut list: Vec<LifecycleHook> = Vec::new();
    for spec in specs {
        let name = &spec.lifecycle_hook_name;
        if list.iter().any(|h| &h.lifecycle_hook_name == name) {
            return Err(Refusal::invalid(format!(
                "Lifecycle hook {name} is given twice."
            )));
        }
        if spec.lifecycle_transition.is_none() {
            return Err(Refusal::invalid(
                "Each LifecycleHookSpecification needs a LifecycleTransition.",
            ));
        }
        list = put(&list, group, group_arn, spec)?;
    }
    Ok(list)
}

/// DeleteLifecycleHook: the group's hooks without `name`.
pub fn delete(current: &[LifecycleHook], group: &str, name: &str) -> Checked<Vec<LifecycleHook>> {
    if !current.iter().any(|h| h.lifecycle_hook_name == name) {
        return Err(Refusal::invalid(format!(
            "No Lifecycle Hook found with name {name} for group {group}."
        )));
    }
    Ok(current
        .iter()
        .filter(|h| h.lifecycle_hook_name != name)
        .cloned()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::{json, Value};

    const ARN: &str = "arn:aws:autoscaling:us-east-1:1:autoScalingGroup:u:autoScalingGroupName/g";

    #[test]
    fn a_target_is_kept_until_removed_with_an_empty_one() {
        let q = "arn:aws:sqs:us-east-1:0:drain";
        let doc = doc_with(&[
            json!({"LifecycleHookName": "h", "LifecycleTransition": TERMINATING, "NotificationTargetARN": q, "RoleARN": "arn:aws:iam::1:role/r"}),
        ]);
        assert_eq!(doc[0].notification_target_arn.as_deref(), Some(q));
        let kept = put(
            &doc,
            "g",
            ARN,
            &request(&json!({"LifecycleHookName": "h", "HeartbeatTimeout": 60})),
        )
        .unwrap();
        assert_eq!(kept[0].notification_target_arn.as_deref(), Some(q));
        assert_eq!(kept[0].role_arn.as_deref(), Some("arn:aws:iam::1:role/r"));
        // Without its target, the role must go too.
        assert!(put(
            &kept,
            "g",
            ARN,
            &request(&json!({"LifecycleHookName": "h", "NotificationTargetARN": ""}))
        )
        .is_err());
        let gone = put(
            &kept,
            "g",
            ARN,
            &request(
                &json!({"LifecycleHookName": "h", "NotificationTargetARN": "", "RoleARN": ""}),
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(gone[0].notification_target_arn, None);
    }

    /// A PutLifecycleHook request, as the decoder gives it.
    fn request(input: &Value) -> PutLifecycleHook {
        serde_json::from_value(input.clone()).unwrap()
    }

    fn doc_with(hooks: &[Value]) -> Vec<LifecycleHook> {
        let mut list = Vec::new();
        for h in hooks {
            list = put(&list, "g", ARN, &request(h)).unwrap();
        }
        list
    }

    #[test]
    fn put_fills_aws_defaults_and_updates_in_place() {
        let doc = doc_with(&[json!({"LifecycleHookName": "h", "LifecycleTransition": LAUNCHING})]);
        let h = &doc[0];
        assert_eq!(h.heartbeat_timeout, 3600);
        assert_eq!(h.global_timeout, 172_800);
        assert_eq!(h.default_result, Outcome::Abandon);
        // A second put without the transition changes what it names and keeps the rest.
        let list = put(
            &doc,
            "g",
            ARN,
            &request(
                &json!({"LifecycleHookName": "h", "HeartbeatTimeout": 60, "DefaultResult": "CONTINUE"}),
            ),
        )
        .unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].lifecycle_transition, LAUNCHING);
        assert_eq!(list[0].heartbeat_timeout, 60);
        assert_eq!(list[0].global_timeout, 6000);
        assert_eq!(list[0].default_result, Outcome::Continue);
    }

    #[test]
    fn bad_hooks_are_refused() {
        let refused = |input: Value| {
            put(&[], "g", ARN, &request(&input))
                .unwrap_err()
                .message()
                .to_string()
        };
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
            .contains("is not an SNS topic's or SQS queue's ARN"));
        assert!(refused(json!({"LifecycleHookName": "h", "LifecycleTransition": LAUNCHING, "RoleARN": "arn:aws:iam::1:role/r"}))
            .contains("without a NotificationTargetARN"));
        let full = doc_with(
            &(0..MAX_HOOKS)
                .map(|i| json!({"LifecycleHookName": format!("h{i}"), "LifecycleTransition": TERMINATING}))
                .collect::<Vec<_>>(),
        );
        let e = put(
            &full,
            "g",
            ARN,
            &request(&json!({"LifecycleHookName": "one-more", "LifecycleTransition": LAUNCHING})),
        )
        .unwrap_err();
        assert!(matches!(e, Refusal::OverLimit(_)));
        assert!(delete(&full, "g", "nope")
            .unwrap_err()
            .message()
            .contains("No Lifecycle Hook"));
        assert_eq!(delete(&full, "g", "h3").unwrap().len(), MAX_HOOKS - 1);
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

    #[test]
    fn heartbeats_never_keep_a_wait_past_its_global_timeout() {
        // Heartbeat 30 s: GlobalTimeout 3000 s (100 times), from the wait's start.
        let doc = doc_with(&[
            json!({"LifecycleHookName": "a", "LifecycleTransition": LAUNCHING,
            "HeartbeatTimeout": 30, "DefaultResult": "ABANDON"}),
        ]);
        let hooks = hooks(&doc);
        let mut w = waits(&hooks, true, 0);
        let global = 3_000_000;
        for now in (0..global).step_by(20_000) {
            w = heartbeat(&w, "i-1", "a", now).unwrap();
        }
        assert_eq!(
            next_deadline(&w),
            Some(global),
            "capped at the GlobalTimeout"
        );
        assert_eq!(outcome(&w, &hooks, true, global - 1), None);
        assert_eq!(outcome(&w, &hooks, true, global), Some(Outcome::Abandon));
        // A record written before the GlobalTimeout was kept: heartbeats as before.
        let old: Vec<Wait> = waits(&hooks, true, 0)
            .into_iter()
            .map(|w| Wait {
                global_deadline_ms: None,
                ..w
            })
            .collect();
        let old = heartbeat(&old, "i-1", "a", global).unwrap();
        assert_eq!(next_deadline(&old), Some(global + 30_000));
    }
}
