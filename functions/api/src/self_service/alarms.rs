//! Each step policy's alarm of Phantom's own, put, listed and removed by its owner: a PromQL
//! condition on the metric source that the scheduled run evaluates (`phantom_rules::alarm`), for users
//! without an Alertmanager to call the policy's webhook. It lives on the policy in the group's
//! settings, and DescribePolicies lists it among the policy's `Alarms`.

use super::hooks::change_policy;
use super::shapes::{self, DescribeWebhooks, OfPolicy, PutPolicyAlarm};
use super::{answer, read, Failure, Json, Outcome};
use crate::actions::policies::{alarm_promql, check_promql};
use crate::App;
use phantom_model::group::Alarm;
use phantom_rules::alarm::{self, Asked};
use phantom_rules::identity::Caller;
use phantom_wire::ApiError;
use std::sync::Mutex;

/// Runs `operation` if it is one of these; `None` if it is not.
pub async fn run(app: &App, caller: &Caller, operation: &str, input: &Json) -> Option<Outcome> {
    Some(match operation {
        "PutPolicyAlarm" => answer(async { put(app, caller, read(input)?).await }.await),
        "DescribePolicyAlarms" => answer(async { describe(app, caller, read(input)?).await }.await),
        "DeletePolicyAlarm" => answer(async { delete(app, caller, read(input)?).await }.await),
        _ => return None,
    })
}

/// Sets the policy's alarm, or replaces it (keeping its name).
async fn put(
    app: &App,
    caller: &Caller,
    input: PutPolicyAlarm,
) -> Result<shapes::AlarmView, Failure> {
    let group: &str = &input.auto_scaling_group_name;
    let name: &str = &input.policy_name;
    let asked = Asked {
        expression: &input.expression,
        comparison_operator: &input.comparison_operator,
        threshold: input.threshold,
        evaluation_periods: input.evaluation_periods,
        datapoints_to_alarm: input.datapoints_to_alarm,
    };
    check_promql(app, |s| Some(alarm_promql(asked.expression, s))).await?;
    let alarm_name = format!("Phantom-{group}-{name}-{}", phantom_rules::ids::uuid());
    let made = Mutex::new(None);
    change_policy(app, caller, group, name, |p| {
        let alarm_name = p
            .alarm
            .as_ref()
            .map_or(alarm_name.clone(), |a| a.alarm_name.clone());
        let arn = format!(
            "arn:aws:cloudwatch:{}:{}:alarm:{alarm_name}",
            app.config.region, caller.account_id
        );
        let a = alarm::check(p, &asked, &alarm_name, &arn)?;
        p.alarms = vec![Alarm::from(&a)];
        p.alarm = Some(a.clone());
        *made.lock().expect("no panic while held") = Some((p.policy_name.clone(), a));
        Ok(())
    })
    .await?;
    let (policy_name, alarm) = made
        .into_inner()
        .expect("no panic while held")
        .expect("a change that succeeded ran its closure");
    Ok(shapes::AlarmView {
        auto_scaling_group_name: group.to_string(),
        policy_name,
        alarm,
    })
}

async fn describe(
    app: &App,
    caller: &Caller,
    input: DescribeWebhooks,
) -> Result<shapes::Alarms, Failure> {
    let groups =
        super::hooks::groups_of(app, caller, input.auto_scaling_group_name.as_deref()).await?;
    let alarms = groups
        .iter()
        .flat_map(|g| &g.settings.scaling_policies)
        .filter_map(|p| {
            Some(shapes::AlarmView {
                auto_scaling_group_name: p.auto_scaling_group_name.clone(),
                policy_name: p.policy_name.clone(),
                alarm: p.alarm.clone()?,
            })
        })
        .collect();
    Ok(shapes::Alarms { alarms })
}

/// Removes the policy's alarm: the runs no longer evaluate it.
async fn delete(app: &App, caller: &Caller, input: OfPolicy) -> Result<shapes::Done, Failure> {
    let group: &str = &input.auto_scaling_group_name;
    let name: &str = &input.policy_name;
    change_policy(app, caller, group, name, |p| {
        if p.alarm.take().is_none() {
            return Err(ApiError::validation(format!(
                "Policy {name} of group {group} has no alarm."
            )));
        }
        p.alarms.clear();
        Ok(())
    })
    .await?;
    Ok(shapes::Done {})
}
