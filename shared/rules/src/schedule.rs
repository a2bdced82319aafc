//! Scheduled actions, pure: what ScheduledUpdateGroupActionRequest stores (validated as AWS validates
//! it), when each action next runs, and what firing the due ones does to a group.
//!
//! A group's scheduled actions live in its settings (`ScheduledAction`: botocore's
//! `ScheduledUpdateGroupAction` shape plus its next firing time, Unix ms). The earliest of
//! those is the group's due time (`next_due`), which the store keeps in a sparse index so that the
//! scheduler reads only the groups with something due. A one-off action (StartTime) runs once and
//! is removed; a recurring one (Recurrence, a five-field Unix cron expression in TimeZone, UTC by
//! default) moves to its next occurrence after each run and is removed after its EndTime, as AWS
//! removes them. A run that was missed (the scheduler was down) happens late, once.

use chrono::TimeZone as _;
use chrono_tz::Tz;
use croner::Cron;
use phantom_model::group::Group;
pub use phantom_model::group::ScheduledAction;
use phantom_model::request::ScheduledUpdateGroupActionRequest;
use phantom_model::response::ScheduledUpdateGroupAction;
use phantom_model::{Checked, Refusal};
use std::str::FromStr;

/// AWS's quota of scheduled actions per group.
pub const MAX_ACTIONS: usize = 125;
/// The scaling process whose suspension holds scheduled actions back.
pub const PROCESS: &str = "ScheduledActions";

/// When the group's first action is due (Unix ms): what the store indexes. `None` when it has none.
pub fn next_due(actions: &[ScheduledAction]) -> Option<i64> {
    actions.iter().map(|a| a.next_ms).min()
}

/// A timestamp member as Unix ms (`None` when absent).
pub fn ms_of(member: &str, v: Option<&str>) -> Checked<Option<i64>> {
    v.map(|s| {
        unix_ms(s).ok_or_else(|| Refusal::invalid(format!("{member} is not a timestamp: {s}")))
    })
    .transpose()
}

/// An ISO 8601 timestamp as Unix ms.
fn unix_ms(s: &str) -> Option<i64> {
    phantom_model::time::parse_timestamp(s).map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
}

fn timestamp(ms: i64) -> String {
    phantom_model::time::format_timestamp(phantom_model::time::from_ms(ms))
}

/// A Unix cron expression of five fields (minute, hour, day of month, month, day of week), as AWS
/// takes them; seconds, years and `@` aliases are not part of it.
fn recurrence(expr: &str) -> Checked<Cron> {
    let fields = expr.split_whitespace().count();
    if fields != 5 || expr.starts_with('@') {
        return Err(Refusal::invalid(format!(
            "Given recurrence string '{expr}' is not a cron expression of five fields: [Minute] [Hour] [Day_of_Month] [Month_of_Year] [Day_of_Week]."
        )));
    }
    Cron::from_str(expr)
        .map_err(|e| Refusal::invalid(format!("Given recurrence string '{expr}' is invalid: {e}.")))
}

fn zone(name: Option<&str>) -> Checked<Tz> {
    match name {
        None => Ok(Tz::UTC),
        Some(n) => n.parse().map_err(|_| {
            Refusal::invalid(format!(
                "TimeZone '{n}' is not a time zone of the IANA database (such as Etc/GMT+9 or Pacific/Tahiti)."
            ))
        }),
    }
}

/// The first occurrence of `cron` in `tz` after `after_ms` (at it, if `inclusive`); `None` if it
/// never occurs (February 31st).
fn occurrence(cron: &Cron, tz: Tz, after_ms: i64, inclusive: bool) -> Option<i64> {
    let from = chrono::Utc
        .timestamp_millis_opt(after_ms)
        .single()?
        .with_timezone(&tz);
    cron.find_next_occurrence(&from, inclusive)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// The stored action a request puts (ScheduledUpdateGroupActionRequest, or an entry of
/// BatchPutScheduledUpdateGroupAction), with its first firing, or the ValidationError AWS gives.
pub fn document(
    input: &ScheduledUpdateGroupActionRequest,
    group: &str,
    arn: &str,
    now_ms: i64,
) -> Checked<ScheduledAction> {
    let name = &input.scheduled_action_name;
    let (min, max, desired) = (input.min_size, input.max_size, input.desired_capacity);
    if min.is_none() && max.is_none() && desired.is_none() {
        return Err(Refusal::invalid(format!(
            "Scheduled action {name} must set at least one of MinSize, MaxSize and DesiredCapacity."
        )));
    }
    if let (Some(min), Some(max)) = (min, max) {
        if min > max {
            return Err(Refusal::invalid(format!(
                "The scheduled action's MinSize {min} must not be above its MaxSize {max}."
            )));
        }
    }
    if let Some(d) = desired {
        if min.is_some_and(|m| d < m) || max.is_some_and(|m| d > m) {
            return Err(Refusal::invalid(format!(
                "The scheduled action's DesiredCapacity {d} must be within its MinSize and MaxSize."
            )));
        }
    }
    // Time is the older name of StartTime.
    let start = match (
        ms_of("StartTime", input.start_time.as_deref())?,
        ms_of("Time", input.time.as_deref())?,
    ) {
        (Some(s), Some(t)) if s != t => {
            return Err(Refusal::invalid(
                "Time and StartTime are the same member (Time is its older name): give one.",
            ))
        }
        (s, t) => s.or(t),
    };
    let end = ms_of("EndTime", input.end_time.as_deref())?;
    if start.is_some_and(|s| s < now_ms) {
        return Err(Refusal::invalid("Given start time is in the past"));
    }
    if end.is_some_and(|e| e < now_ms) {
        return Err(Refusal::invalid("Given end time is in the past"));
    }
    if let (Some(s), Some(e)) = (start, end) {
        if e <= s {
            return Err(Refusal::invalid("Given end time is before the start time"));
        }
    }
    let first = match &input.recurrence {
        Some(expr) => {
            let cron = recurrence(expr)?;
            let tz = zone(input.time_zone.as_deref())?;
            let first = occurrence(&cron, tz, start.unwrap_or(now_ms), start.is_some());
            match (first, start) {
                // Given a StartTime, AWS runs the action then, and by its recurrence after.
                (Some(t), _) if end.is_none_or(|e| t <= e) => start.unwrap_or(t),
                // Even when the recurrence never falls before the EndTime: it runs once, at the
                // StartTime (AWS takes it; the Ansible collection's test asserts so).
                (Some(_), Some(s)) => s,
                _ => {
                    return Err(Refusal::invalid(format!(
                        "Recurrence '{expr}' never occurs{}.",
                        if end.is_some() {
                            " before the EndTime"
                        } else {
                            ""
                        }
                    )))
                }
            }
        }
        None => {
            if input.time_zone.is_some() || end.is_some() {
                return Err(Refusal::invalid(
                    "TimeZone and EndTime are for a recurring action: give Recurrence too.",
                ));
            }
            start.ok_or_else(|| {
                Refusal::invalid(
                    "Give StartTime (an action that runs once) or Recurrence (one that repeats).",
                )
            })?
        }
    };
    Ok(ScheduledAction {
        auto_scaling_group_name: group.to_string(),
        scheduled_action_name: name.to_string(),
        arn: arn.to_string(),
        recurrence: input.recurrence.clone(),
        time_zone: input.time_zone.clone(),
        end_time: input.end_time.clone(),
        min_size: min,
        max_size: max,
        desired_capacity: desired,
        start_time: start.map(timestamp),
        next_ms: first,
    })
}

/// An action as DescribeScheduledActions returns it: the StartTime it was given, or else its next
/// run, as StartTime (and Time, its older name), as AWS shows them.
pub fn described(action: &ScheduledAction) -> ScheduledUpdateGroupAction {
    let start = (action.start_time.clone()).unwrap_or_else(|| timestamp(action.next_ms));
    ScheduledUpdateGroupAction {
        auto_scaling_group_name: action.auto_scaling_group_name.clone(),
        scheduled_action_name: action.scheduled_action_name.clone(),
        arn: action.arn.clone(),
        recurrence: action.recurrence.clone(),
        time_zone: action.time_zone.clone(),
        end_time: action.end_time.clone(),
        min_size: action.min_size,
        max_size: action.max_size,
        desired_capacity: action.desired_capacity,
        time: start.clone(),
        start_time: start,
    }
}

pub use phantom_model::group::Sizes;

/// What one due action did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The group's sizes changed (or stayed, if they were already so).
    Applied { from: Sizes, to: Sizes },
    /// The ScheduledActions process is suspended: the run is skipped, as AWS skips it.
    Held,
    /// The sizes it sets do not fit the group as it is now; nothing changed.
    Failed(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    pub action: String,
    pub due_ms: i64,
    pub outcome: Outcome,
}

/// A stored action whose `what` cannot be read (the scheduler logs it and fires nothing).
fn corrupt(what: &str) -> Refusal {
    Refusal::invalid(format!(
        "a stored scheduled action's {what} cannot be read; put the action again"
    ))
}

/// The sizes `action` sets on a group at `from`: min and max as given (else kept), the desired
/// capacity as given, else kept within the new bounds (AWS raises it to a new MinSize).
fn apply(g: &Group, action: &ScheduledAction) -> Result<Group, String> {
    let min = action.min_size.unwrap_or(g.min);
    let max = action.max_size.unwrap_or(g.max);
    if min > max {
        return Err(format!(
            "the group's MinSize would be {min}, above its MaxSize {max}"
        ));
    }
    let desired = match action.desired_capacity {
        Some(d) if d < min || d > max => {
            return Err(format!(
                "DesiredCapacity {d} is outside the group's MinSize {min} and MaxSize {max}"
            ))
        }
        Some(d) => d,
        None => g.desired.clamp(min, max),
    };
    let mut next = g.clone();
    (next.min, next.max, next.desired) = (min, max, desired);
    crate::spread::settled(Some(g), next).map_err(|e| e.message().to_string())
}

/// When a recurring action runs after a run at `now_ms`: its next occurrence after now (runs
/// missed meanwhile are not made up), `None` past its EndTime or for a one-off action.
fn following(action: &ScheduledAction, now_ms: i64) -> Checked<Option<i64>> {
    let Some(expr) = &action.recurrence else {
        return Ok(None);
    };
    let cron = recurrence(expr).map_err(|_| corrupt("Recurrence"))?;
    let tz = zone(action.time_zone.as_deref()).map_err(|_| corrupt("TimeZone"))?;
    let end = match &action.end_time {
        None => None,
        Some(t) => Some(unix_ms(t).ok_or_else(|| corrupt("EndTime"))?),
    };
    Ok(occurrence(&cron, tz, now_ms, false).filter(|t| end.is_none_or(|e| *t <= e)))
}

/// Fires the group's actions that are due at `now_ms`, earliest first: the group as they leave it
/// (sizes changed, each action moved to its next occurrence or removed) and what each did. A group
/// being deleted, or with nothing due, comes back unchanged with no firings.
pub fn fire(g: &Group, now_ms: i64) -> Checked<(Group, Vec<Firing>)> {
    let actions = &g.settings.scheduled_actions;
    let mut due: Vec<(i64, &str, usize)> = actions
        .iter()
        .enumerate()
        .filter(|(_, a)| a.next_ms <= now_ms)
        .map(|(i, a)| (a.next_ms, a.scheduled_action_name.as_str(), i))
        .collect();
    if due.is_empty() || g.deleting() {
        return Ok((g.clone(), Vec::new()));
    }
    due.sort();
    let held = g
        .settings
        .suspended_processes
        .iter()
        .any(|p| p.process_name == PROCESS);
    let mut next = g.clone();
    let mut kept: Vec<Option<ScheduledAction>> = actions.iter().cloned().map(Some).collect();
    let mut firings = Vec::new();
    for (due_ms, name, i) in due {
        let outcome = if held {
            Outcome::Held
        } else {
            match apply(&next, &actions[i]) {
                Ok(after) => {
                    let from = Sizes::of(&next);
                    next = after;
                    Outcome::Applied {
                        from,
                        to: Sizes::of(&next),
                    }
                }
                Err(why) => Outcome::Failed(why),
            }
        };
        match following(&actions[i], now_ms)? {
            Some(t) => {
                kept[i]
                    .as_mut()
                    .expect("each action is advanced once")
                    .next_ms = t
            }
            None => kept[i] = None,
        }
        firings.push(Firing {
            action: name.to_string(),
            due_ms,
            outcome,
        });
    }
    next.settings.scheduled_actions = kept.into_iter().flatten().collect();
    Ok((next, firings))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-23T04:00:00Z, a Monday.
    const NOW: i64 = 1_795_406_400_000;
    const MINUTE: i64 = 60_000;

    use serde_json::{json, Value};

    fn group(actions: Vec<ScheduledAction>) -> Group {
        let ctx = crate::fixtures::test_context("g1", NOW);
        let input = json!({"AutoScalingGroupName": "web", "LaunchConfigurationName": "web@hotel",
            "MinSize": 1, "MaxSize": 5, "DesiredCapacity": 2});
        let mut g = crate::group::from_input(&serde_json::from_value(input).unwrap(), ctx).unwrap();
        g.settings.scheduled_actions = actions;
        g
    }

    fn put(input: Value) -> Checked<ScheduledAction> {
        document(
            &serde_json::from_value(input).expect("a request"),
            "web",
            "arn:x",
            NOW,
        )
    }

    #[test]
    fn the_clock_is_what_the_tests_say() {
        assert_eq!(timestamp(NOW), "2026-11-23T04:00:00.000Z");
    }

    #[test]
    fn a_one_off_action_is_due_at_its_start_time_and_runs_once() {
        let a = put(json!({"ScheduledActionName": "once", "StartTime": timestamp(NOW + MINUTE), "DesiredCapacity": 4})).unwrap();
        assert_eq!(Some(a.next_ms), Some(NOW + MINUTE));
        assert_eq!(
            serde_json::to_value(described(&a)).unwrap()["StartTime"],
            "2026-11-23T04:01:00.000Z"
        );
        assert!(serde_json::to_value(described(&a))
            .unwrap()
            .get("PhantomNextMs")
            .is_none());
        let g = group(vec![a]);
        assert_eq!(next_due(&g.settings.scheduled_actions), Some(NOW + MINUTE));
        // Not yet due: nothing.
        let (same, none) = fire(&g, NOW + MINUTE - 1).unwrap();
        assert_eq!((same, none.len()), (g.clone(), 0));
        // Due (late is fine): applied and removed.
        let (after, fired) = fire(&g, NOW + 5 * MINUTE).unwrap();
        assert_eq!(after.desired, 4);
        assert_eq!(after.settings.scheduled_actions.len(), 0);
        assert_eq!(next_due(&after.settings.scheduled_actions), None);
        assert_eq!(
            fired[0].outcome,
            Outcome::Applied {
                from: Sizes {
                    min: 1,
                    max: 5,
                    desired: 2
                },
                to: Sizes {
                    min: 1,
                    max: 5,
                    desired: 4
                }
            }
        );
        // Fired again from the group as it now is: nothing.
        assert!(fire(&after, NOW + 6 * MINUTE).unwrap().1.is_empty());
    }

    #[test]
    fn a_recurring_action_moves_to_its_next_occurrence_and_makes_up_a_missed_run_once() {
        let a = put(
            json!({"ScheduledActionName": "every5", "Recurrence": "*/5 * * * *", "MinSize": 3}),
        )
        .unwrap();
        assert_eq!(Some(a.next_ms), Some(NOW + 5 * MINUTE));
        let g = group(vec![a]);
        // The scheduler was down for 22 minutes: one late run, then the next occurrence after now.
        let (after, fired) = fire(&g, NOW + 22 * MINUTE).unwrap();
        assert_eq!(fired.len(), 1);
        assert_eq!(
            (after.min, after.desired),
            (3, 3),
            "desired raised to the new minimum"
        );
        assert_eq!(
            next_due(&after.settings.scheduled_actions),
            Some(NOW + 25 * MINUTE)
        );
    }

    #[test]
    fn a_recurring_action_runs_at_its_start_then_in_its_time_zone_and_ends_at_its_end_time() {
        // 09:00 on weekdays in New York (UTC-5 in November): 14:00Z. Given a StartTime, AWS runs
        // the action then, and by its recurrence after; the StartTime is shown as given.
        let start = NOW + 2 * 86_400_000;
        let a = put(json!({
            "ScheduledActionName": "morning", "Recurrence": "0 9 * * 1-5",
            "TimeZone": "America/New_York", "DesiredCapacity": 5,
            "StartTime": timestamp(start),
            "EndTime": timestamp(NOW + 3 * 86_400_000),
        }))
        .unwrap();
        assert_eq!(a.next_ms, start);
        assert_eq!(described(&a).start_time, timestamp(start));
        let (after, fired) = fire(&group(vec![a]), start).unwrap();
        assert_eq!((fired.len(), after.desired), (1, 5));
        let morning = start + 10 * 3_600_000;
        assert_eq!(timestamp(morning), "2026-11-25T14:00:00.000Z");
        let next = &after.settings.scheduled_actions[0];
        assert_eq!(next.next_ms, morning);
        assert_eq!(
            described(next).start_time,
            timestamp(start),
            "still as given"
        );
        // The next occurrence (Thursday) is past the EndTime: the action is done.
        let (after, fired) = fire(&after, morning).unwrap();
        assert_eq!(fired.len(), 1);
        assert!(after.settings.scheduled_actions.is_empty());
    }

    #[test]
    fn a_recurrence_that_never_falls_before_its_end_time_runs_once_at_its_start() {
        // Weekends only, from a Monday to the Tuesday after: AWS takes it (the Ansible
        // collection's test), and it runs at its StartTime, then is done.
        let start = NOW + 2 * 86_400_000;
        let a = put(json!({
            "ScheduledActionName": "weekend", "Recurrence": "0 9 * * 6,0",
            "DesiredCapacity": 4, "StartTime": timestamp(start),
            "EndTime": timestamp(start + 86_400_000),
        }))
        .unwrap();
        assert_eq!(a.next_ms, start);
        let (after, fired) = fire(&group(vec![a]), start).unwrap();
        assert_eq!((fired.len(), after.desired), (1, 4));
        assert!(after.settings.scheduled_actions.is_empty());
    }

    #[test]
    fn the_scheduled_actions_process_suspended_skips_the_run() {
        let a = put(json!({"ScheduledActionName": "hourly", "Recurrence": "0 * * * *", "DesiredCapacity": 5})).unwrap();
        let mut g = group(vec![a]);
        g.settings.suspended_processes = vec![phantom_model::group::SuspendedProcess {
            process_name: "ScheduledActions".into(),
            suspension_reason: "User suspended".into(),
        }];
        let (after, fired) = fire(&g, NOW + 60 * MINUTE).unwrap();
        assert_eq!(fired[0].outcome, Outcome::Held);
        assert_eq!(after.desired, 2);
        assert_eq!(
            next_due(&after.settings.scheduled_actions),
            Some(NOW + 120 * MINUTE)
        );
    }

    #[test]
    fn due_actions_run_in_time_order_and_one_that_does_not_fit_fails_alone() {
        let t = |m: i64| timestamp(NOW + m * MINUTE);
        let first = put(json!({"ScheduledActionName": "b-first", "StartTime": t(1), "MaxSize": 2}))
            .unwrap();
        let misfit = put(
            json!({"ScheduledActionName": "a-second", "StartTime": t(2), "DesiredCapacity": 4}),
        )
        .unwrap();
        let third = put(json!({"ScheduledActionName": "c-third", "StartTime": t(3), "MinSize": 0}))
            .unwrap();
        let (after, fired) = fire(&group(vec![misfit, third, first]), NOW + 3 * MINUTE).unwrap();
        let order: Vec<&str> = fired.iter().map(|f| f.action.as_str()).collect();
        assert_eq!(order, ["b-first", "a-second", "c-third"]);
        assert!(matches!(&fired[1].outcome, Outcome::Failed(why) if why.contains("outside")));
        assert_eq!((after.min, after.max, after.desired), (0, 2, 2));
        assert!(after.settings.scheduled_actions.is_empty());
    }

    #[test]
    fn a_group_being_deleted_fires_nothing() {
        let a = put(
            json!({"ScheduledActionName": "x", "StartTime": timestamp(NOW), "DesiredCapacity": 4}),
        )
        .unwrap();
        let mut g = group(vec![a]);
        g.status = Some(crate::group::DELETING.into());
        assert!(fire(&g, NOW).unwrap().1.is_empty());
    }

    #[test]
    fn requests_are_checked_as_aws_checks_them() {
        let refused = |input: Value, says: &str| {
            let e = put(input).unwrap_err();
            assert!(matches!(e, Refusal::Invalid(_)));
            assert!(
                e.message().contains(says),
                "{} does not say {says}",
                e.message()
            );
        };
        let n = "ScheduledActionName";
        for (input, says) in [
            (
                json!({n: "x", "StartTime": timestamp(NOW + MINUTE)}),
                "at least one of",
            ),
            (
                json!({n: "x", "StartTime": timestamp(NOW - MINUTE), "MinSize": 1}),
                "in the past",
            ),
            (json!({n: "x", "DesiredCapacity": 1}), "Give StartTime"),
            (
                json!({n: "x", "Recurrence": "* * * * * *", "MinSize": 1}),
                "five fields",
            ),
            (
                json!({n: "x", "Recurrence": "@hourly", "MinSize": 1}),
                "five fields",
            ),
            (
                json!({n: "x", "Recurrence": "61 * * * *", "MinSize": 1}),
                "invalid",
            ),
            (
                json!({n: "x", "Recurrence": "0 0 31 2 *", "MinSize": 1}),
                "never occurs",
            ),
            (
                json!({n: "x", "Recurrence": "0 * * * *", "TimeZone": "Mars/Olympus", "MinSize": 1}),
                "IANA",
            ),
            (
                json!({n: "x", "StartTime": timestamp(NOW + MINUTE), "TimeZone": "UTC", "MinSize": 1}),
                "recurring",
            ),
            (
                json!({n: "x", "Recurrence": "0 * * * *", "MinSize": 3, "MaxSize": 2}),
                "MinSize 3",
            ),
            (
                json!({n: "x", "Recurrence": "0 * * * *", "MinSize": 1, "MaxSize": 2, "DesiredCapacity": 3}),
                "within",
            ),
            (
                json!({n: "x", "Recurrence": "0 * * * *", "MinSize": 1, "StartTime": timestamp(NOW + 2 * MINUTE), "EndTime": timestamp(NOW + MINUTE)}),
                "before the start",
            ),
            (
                json!({n: "x", "Recurrence": "0 * * * *", "MinSize": 1, "EndTime": timestamp(NOW + MINUTE)}),
                "before the EndTime",
            ),
            (
                json!({n: "x", "StartTime": timestamp(NOW + MINUTE), "Time": timestamp(NOW + 2 * MINUTE), "MinSize": 1}),
                "older name",
            ),
        ] {
            refused(input, says);
        }
        // Time alone is StartTime.
        let a = put(json!({n: "x", "Time": timestamp(NOW + MINUTE), "MinSize": 1})).unwrap();
        assert_eq!(Some(a.next_ms), Some(NOW + MINUTE));
    }
}
