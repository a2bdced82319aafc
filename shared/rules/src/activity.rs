//! Scaling activities: what the provisioner did to a group and why, in the botocore `Activity`
//! shape that DescribeScalingActivities returns.

use crate::reconcile::Cause;
pub use phantom_model::activity::{Activity, Details, OpenActivity, ScalingActivity, Told};
use phantom_model::group::Sizes;
use phantom_model::instance::Member;
use phantom_model::{Checked, Refusal};

pub struct Context<'a> {
    pub group: &'a str,
    pub group_arn: &'a str,
    pub now_ms: i64,
    /// Who is told of what the round records (`crate::notification`).
    pub audience: crate::notification::Audience<'a>,
}

/// A time inside a message: whole seconds, as AWS writes them there.
fn at(ms: i64) -> String {
    phantom_model::time::format_seconds(phantom_model::time::from_ms(ms))
}

/// A timestamp member (StartTime, EndTime): milliseconds.
fn stamp(ms: i64) -> String {
    phantom_model::time::format_timestamp(phantom_model::time::from_ms(ms))
}

fn activity(
    ctx: &Context<'_>,
    description: String,
    cause: String,
    status: &str,
    message: Option<&str>,
    details: Details,
) -> Activity {
    Activity {
        group: ctx.group.to_string(),
        start_ms: ctx.now_ms,
        doc: ScalingActivity {
            activity_id: crate::ids::uuid(),
            auto_scaling_group_name: ctx.group.to_string(),
            auto_scaling_group_arn: ctx.group_arn.to_string(),
            description,
            cause,
            start_time: stamp(ctx.now_ms),
            end_time: Some(stamp(ctx.now_ms)),
            status_code: status.to_string(),
            status_message: message.map(str::to_string),
            progress: 100,
            details,
        },
        tells: None,
    }
}

/// `a` as it starts, at `status` (`InProgress`, or ExitStandby's `PreInService`) and `progress`
/// percent (no EndTime), with where its instance `m` is; `finished` ends it once it is done.
pub fn in_progress(a: Activity, status: &str, progress: i64, m: &Member) -> Activity {
    Activity {
        doc: ScalingActivity {
            status_code: status.into(),
            progress,
            end_time: None,
            details: where_is(m),
            ..a.doc
        },
        ..a
    }
}

/// The open activity `open`, Successful at `now_ms`: written again under its own key.
pub fn finished(group: &str, open: &OpenActivity, now_ms: i64) -> Activity {
    Activity {
        group: group.to_string(),
        start_ms: open.start_ms,
        doc: ScalingActivity {
            status_code: "Successful".into(),
            progress: 100,
            end_time: Some(stamp(now_ms)),
            ..open.doc.clone()
        },
        tells: None,
    }
}

/// The open activity `open` of `m`, its StatusCode now `status`: written again under its own key.
pub fn restated(group: &str, open: &OpenActivity, status: &str, m: &Member) -> Activity {
    let a = Activity {
        group: group.to_string(),
        start_ms: open.start_ms,
        doc: open.doc.clone(),
        tells: None,
    };
    in_progress(a, status, open.doc.progress, m)
}

/// The desired capacity changed by a policy (or, later, a schedule): `by` says who, in AWS's words
/// ("a user request executed policy up").
pub fn desired_changed(ctx: &Context<'_>, by: &str, from: i64, to: i64) -> Activity {
    activity(
        ctx,
        format!("Changing the desired capacity from {from} to {to}"),
        format!(
            "At {} {by} changing the desired capacity from {from} to {to}.",
            at(ctx.now_ms)
        ),
        "Successful",
        None,
        Details::default(),
    )
}

/// A policy run by an alarm (a target tracking policy's, or a step policy's alarm of Phantom's
/// own) changed the desired capacity: AWS's words, then `reading` (the metric against its target
/// or threshold).
pub fn alarmed(
    ctx: &Context<'_>,
    alarm: &str,
    policy: &str,
    from: i64,
    to: i64,
    reading: &str,
) -> Activity {
    let by = format!("a monitor alarm {alarm} in state ALARM triggered policy {policy}");
    let mut a = desired_changed(ctx, &by, from, to);
    a.doc.cause = format!("{}  {reading}", a.doc.cause);
    a
}

/// A ForecastAndScale policy put an hour's forecast capacity in place and raised the desired
/// capacity to it.
pub fn predicted(ctx: &Context<'_>, policy: &str, hour_ms: i64, from: i64, to: i64) -> Activity {
    let by = format!(
        "predictive scaling policy {policy} set the minimum capacity for the hour from {} to {to},",
        at(hour_ms)
    );
    desired_changed(ctx, &by, from, to)
}

/// The VM a successful activity brought into the group (a launch, from the warm pool or not, or
/// an attachment), as its description names it.
pub fn joined(doc: &ScalingActivity) -> Option<&str> {
    if doc.status_code != "Successful" {
        return None;
    }
    [
        "Launching a new EC2 instance: ",
        "Launching a new EC2 instance from warm pool: ",
        "Attaching an existing EC2 instance: ",
    ]
    .iter()
    .find_map(|p| doc.description.strip_prefix(p))
    .and_then(|rest| rest.split_whitespace().next())
    .filter(|id| !id.is_empty())
}

/// A scheduled action changed the group's sizes and with them its desired capacity.
pub fn scheduled(ctx: &Context<'_>, action: &str, from: &Sizes, to: &Sizes) -> Activity {
    let by = format!(
        "a scheduled action {action} update of AutoScalingGroup constraints to min: {}, max: {}, desired: {}",
        to.min, to.max, to.desired
    );
    desired_changed(ctx, &by, from.desired, to.desired)
}

/// A scheduled action that could not run: what it sets does not fit the group as it is.
pub fn scheduled_failed(ctx: &Context<'_>, action: &str, why: &str) -> Activity {
    activity(
        ctx,
        format!("Updating the group's sizes by scheduled action {action}"),
        format!(
            "At {} a scheduled action {action} could not run: {why}.",
            at(ctx.now_ms)
        ),
        "Failed",
        Some(why),
        Details::default(),
    )
}

/// Where instance `m` is, as AWS's activities say: its subnet (if it was launched into one) and
/// its zone.
fn where_is(m: &Member) -> Details {
    Details {
        subnet: m.subnet.clone(),
        zone: Some(m.zone.clone()),
        cloud: None,
    }
}

fn increase_cause(ctx: &Context<'_>, from: i64, to: i64) -> String {
    format!(
        "At {} an instance was started in response to a difference between desired and actual capacity, increasing the capacity from {from} to {to}.",
        at(ctx.now_ms)
    )
}

/// A VM launched; `moved_on` says which instance types the cloud refused first, and why.
pub fn launched(
    ctx: &Context<'_>,
    m: &Member,
    from: i64,
    to: i64,
    moved_on: Option<&str>,
) -> Activity {
    activity(
        ctx,
        format!("Launching a new EC2 instance: {}", m.id),
        increase_cause(ctx, from, to),
        "Successful",
        moved_on,
        where_is(m),
    )
}

/// A VM launched by a round that stopped before recording it, found on the cloud and recorded.
pub fn adopted(ctx: &Context<'_>, m: &Member) -> Activity {
    let (into, difference, place) = if m.lifecycle.is_warm() {
        (
            " into warm pool",
            "the warm pool's size and its instances",
            "warm pool",
        )
    } else {
        ("", "desired and actual capacity", "group")
    };
    activity(
        ctx,
        format!("Launching a new EC2 instance{into}: {}", m.id),
        format!(
            "At {} an instance launched in response to a difference between {difference} was found running and recorded in the {place}.",
            at(ctx.now_ms)
        ),
        "Successful",
        None,
        where_is(m),
    )
}

/// A ready VM of the warm pool joined the group (started, if it was stopped).
pub fn from_pool(ctx: &Context<'_>, m: &Member, from: i64, to: i64) -> Activity {
    let mut a = launched(ctx, m, from, to, None);
    a.doc.description = format!("Launching a new EC2 instance from warm pool: {}", m.id);
    a
}

/// A new VM launched into the warm pool.
pub fn into_pool(ctx: &Context<'_>, m: &Member, from: i64, to: i64) -> Activity {
    activity(
        ctx,
        format!("Launching a new EC2 instance into warm pool: {}", m.id),
        format!(
            "At {} an instance was launched into the warm pool in response to a difference between the warm pool's size and its instances, increasing the warm pool from {from} to {to}.",
            at(ctx.now_ms)
        ),
        "Successful",
        None,
        where_is(m),
    )
}

/// A VM the group let go on scale-in went back to the warm pool (ReuseOnScaleIn).
pub fn to_pool(ctx: &Context<'_>, instance: &str, from: i64, to: i64) -> Activity {
    activity(
        ctx,
        format!("Moving EC2 instance to warm pool: {instance}"),
        format!(
            "At {} an instance was moved to the warm pool in response to a difference between desired and actual capacity, shrinking the capacity from {from} to {to}.",
            at(ctx.now_ms)
        ),
        "Successful",
        None,
        Details::default(),
    )
}

pub fn launch_failed(ctx: &Context<'_>, message: &str, from: i64, to: i64) -> Activity {
    activity(
        ctx,
        format!("Launching a new EC2 instance.  Status Reason: {message}. Launching EC2 instance failed."),
        increase_cause(ctx, from, to),
        "Failed",
        Some(message),
        Details::default(),
    )
}

/// A leaving VM whose termination hooks ended with ABANDON, retained by the group's
/// InstanceLifecyclePolicy: it runs on, outside the group's count.
pub fn retained(ctx: &Context<'_>, instance: &str) -> Activity {
    activity(
        ctx,
        format!("Retaining EC2 instance: {instance}"),
        format!(
            "At {} a termination lifecycle action for instance {instance} ended with ABANDON and the group's instance lifecycle policy retains it (TerminateHookAbandon retain): it keeps running in Terminating:Retained, not counted toward the desired capacity, until TerminateInstanceInAutoScalingGroup terminates it.",
            at(ctx.now_ms)
        ),
        "Successful",
        None,
        Details::default(),
    )
}

pub fn terminated(ctx: &Context<'_>, instance: &str, cause: &Cause) -> Activity {
    let when = at(ctx.now_ms);
    let why = match cause {
        Cause::Unhealthy(check, reason) => format!(
            "At {when} an instance was taken out of service in response to {} ({reason}).",
            check.in_response_to()
        ),
        Cause::ScaleIn { from, to } => format!(
            "At {when} an instance was taken out of service in response to a difference between desired and actual capacity, shrinking the capacity from {from} to {to}."
        ),
        Cause::Deleting => format!(
            "At {when} the group is being deleted and its instances are terminated."
        ),
        Cause::UserRequest { shrink } => format!(
            "At {when} instance {instance} was taken out of service in response to a user request{}.",
            shrink.map_or(String::new(), |(from, to)| format!(
                ", shrinking the capacity from {from} to {to}"
            ))
        ),
        Cause::Retry => format!("At {when} Phantom asked again to terminate the instance."),
        Cause::Released => format!(
            "At {when} the instance's termination lifecycle hooks completed and it was terminated."
        ),
        Cause::Abandoned => format!(
            "At {when} an instance was taken out of service in response to a launch lifecycle hook that ended with ABANDON."
        ),
        Cause::Expired => format!(
            "At {when} an instance was taken out of service in response to the group's maximum instance lifetime being reached.  At {when} instance {instance} was selected for termination."
        ),
        Cause::Rebalance => format!(
            "At {when} an instance was taken out of service in response to an EC2 instance rebalance recommendation, its replacement being InService.  At {when} instance {instance} was selected for termination."
        ),
        Cause::Refresh => format!(
            "At {when} an instance was taken out of service in response to an instance refresh.  At {when} instance {instance} was selected for termination."
        ),
        Cause::Warm(why) => format!("At {when} an instance was taken out of the warm pool: {why}."),
    };
    activity(
        ctx,
        format!("Terminating EC2 instance: {instance}"),
        why,
        "Successful",
        None,
        Details::default(),
    )
}

/// EnterStandby (`to`: true) or ExitStandby, changing the capacity as `change` says.
pub fn standby(
    ctx: &Context<'_>,
    instance: &str,
    to: bool,
    change: Option<(i64, i64)>,
) -> Activity {
    let (description, moved, verb) = if to {
        (
            "Moving EC2 instance to Standby",
            "moved to standby",
            "shrinking",
        )
    } else {
        (
            "Moving EC2 instance out of Standby",
            "moved out of standby",
            "increasing",
        )
    };
    activity(
        ctx,
        format!("{description}: {instance}"),
        format!(
            "At {} instance {instance} was {moved} in response to a user request{}.",
            at(ctx.now_ms),
            change.map_or(String::new(), |(from, to)| format!(
                ", {verb} the capacity from {from} to {to}"
            ))
        ),
        "Successful",
        None,
        Details::default(),
    )
}

/// AttachInstances, when asked: the capacity grows from `from` to `to`.
pub fn attaching(ctx: &Context<'_>, instance: &str, from: i64, to: i64) -> Activity {
    activity(
        ctx,
        format!("Attaching an existing EC2 instance: {instance}"),
        format!(
            "At {} an instance was added in response to a user request, increasing the capacity from {from} to {to}.",
            at(ctx.now_ms)
        ),
        "Successful",
        None,
        Details::default(),
    )
}

/// An instance AttachInstances named that could not join: why, and the capacity given back.
pub fn attach_failed(ctx: &Context<'_>, instance: &str, why: &str, from: i64, to: i64) -> Activity {
    activity(
        ctx,
        format!("Attaching an existing EC2 instance: {instance}.  Status Reason: {why}. Attaching EC2 instance failed."),
        format!(
            "At {} the instance could not be attached, shrinking the capacity from {from} to {to}.",
            at(ctx.now_ms)
        ),
        "Failed",
        Some(why),
        Details::default(),
    )
}

/// DetachInstances, changing the capacity as `shrink` says.
pub fn detaching(ctx: &Context<'_>, instance: &str, shrink: Option<(i64, i64)>) -> Activity {
    activity(
        ctx,
        format!("Detaching EC2 instance: {instance}"),
        format!(
            "At {} instance {instance} was detached in response to a user request{}.",
            at(ctx.now_ms),
            shrink.map_or(String::new(), |(from, to)| format!(
                ", shrinking the capacity from {from} to {to}"
            ))
        ),
        "Successful",
        None,
        Details::default(),
    )
}

pub fn terminate_failed(ctx: &Context<'_>, instance: &str, message: &str) -> Activity {
    activity(
        ctx,
        format!("Terminating EC2 instance: {instance}.  Status Reason: {message}"),
        format!(
            "At {} Phantom could not terminate the instance.",
            at(ctx.now_ms)
        ),
        "Failed",
        Some(message),
        Details::default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_in_awss_words() {
        let ctx = Context {
            group: "g",
            group_arn: "arn:g",
            now_ms: 1_700_000_000_000,
            audience: crate::notification::Audience::NONE,
        };
        // As DescribeScalingActivities shows them.
        let shown = |a: &Activity| serde_json::to_value(&a.doc).unwrap();
        let vm = Member {
            zone: "us-east-1a".into(),
            subnet: Some("subnet-1".into()),
            ..crate::fixtures::test_member("i-1", phantom_model::instance::Lifecycle::Pending)
        };
        let a = shown(&launched(&ctx, &vm, 0, 3, None));
        assert_eq!(a["Description"], "Launching a new EC2 instance: i-1");
        assert_eq!(
            a["Details"],
            r#"{"Subnet ID":"subnet-1","Availability Zone":"us-east-1a"}"#
        );
        // Launched into no subnet: the zone alone.
        let plain = Member { subnet: None, ..vm };
        let found = shown(&adopted(&ctx, &plain));
        assert_eq!(found["Details"], r#"{"Availability Zone":"us-east-1a"}"#);
        assert!(a["Cause"]
            .as_str()
            .unwrap()
            .contains("increasing the capacity from 0 to 3"));
        // Whole seconds inside the message, as AWS writes them there.
        assert!(a["Cause"]
            .as_str()
            .unwrap()
            .starts_with("At 2023-11-14T22:13:20Z an instance was started"));
        assert_eq!(a["StartTime"], "2023-11-14T22:13:20.000Z");
        let f = shown(&launch_failed(
            &ctx,
            "InvalidAMIID.NotFound: no such image",
            0,
            1,
        ));
        assert_eq!(f["StatusCode"], "Failed");
        assert_eq!(f["StatusMessage"], "InvalidAMIID.NotFound: no such image");
        let t = shown(&terminated(
            &ctx,
            "i-2",
            &Cause::Unhealthy(crate::health::Failed::State, "terminated".into()),
        ));
        assert!(t["Cause"].as_str().unwrap().contains("EC2 health check"));
    }
}

/// The StatusCode values an activity can have (botocore's `ScalingActivityStatusCode`).
const STATUS_CODES: [&str; 16] = [
    "PendingSpotBidPlacement",
    "WaitingForSpotInstanceRequestId",
    "WaitingForSpotInstanceId",
    "WaitingForInstanceId",
    "PreInService",
    "InProgress",
    "WaitingForELBConnectionDraining",
    "MidLifecycleAction",
    "WaitingForInstanceWarmup",
    "Successful",
    "Failed",
    "Cancelled",
    "WaitingForConnectionDraining",
    "WaitingForInPlaceUpdateToStart",
    "WaitingForInPlaceUpdateToFinalize",
    "InPlaceUpdateInProgress",
];

/// DescribeScalingActivities' `Filters`, as AWS documents them: `StartTimeLowerBound`,
/// `StartTimeUpperBound` (ISO 8601; no offset is UTC) and `Status` (with a group's name only).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    pub from_ms: Option<i64>,
    pub to_ms: Option<i64>,
    pub status: Option<Vec<String>>,
}

impl Filters {
    pub fn parse(given: &[phantom_model::request::Filter], group_given: bool) -> Checked<Self> {
        let mut out = Self::default();
        for f in given {
            let name = f.name.as_deref().unwrap_or_default();
            let one = || match f.values.as_slice() {
                [v] => Ok(v.as_str()),
                _ => Err(Refusal::invalid(format!(
                    "Filter {name} takes exactly one value."
                ))),
            };
            match name {
                "StartTimeLowerBound" => out.from_ms = Some(bound(name, one()?)?),
                "StartTimeUpperBound" => out.to_ms = Some(bound(name, one()?)?),
                "Status" => {
                    if !group_given {
                        return Err(Refusal::invalid(
                            "The Status filter can only be used in combination with the AutoScalingGroupName parameter.",
                        ));
                    }
                    if let Some(bad) = f.values.iter().find(|v| !STATUS_CODES.contains(&v.as_str())) {
                        return Err(Refusal::invalid(format!(
                            "Status {bad} is not one of {}.",
                            STATUS_CODES.join(", ")
                        )));
                    }
                    out.status = Some(f.values.clone());
                }
                other => {
                    return Err(Refusal::invalid(format!(
                        "Filter name '{other}' is not one of StartTimeLowerBound, StartTimeUpperBound, Status."
                    )))
                }
            }
        }
        Ok(out)
    }

    /// Whether `a` (started at `start_ms`) is one the filters keep.
    pub fn keeps(&self, a: &ScalingActivity, start_ms: i64) -> bool {
        self.from_ms.is_none_or(|from| start_ms >= from)
            && self.to_ms.is_none_or(|to| start_ms <= to)
            && self
                .status
                .as_ref()
                .is_none_or(|s| s.contains(&a.status_code))
    }
}

/// A bound's time: ISO 8601 with an offset, or without one (UTC).
fn bound(name: &str, v: &str) -> Checked<i64> {
    let utc = || {
        time::PrimitiveDateTime::parse(v, &time::format_description::well_known::Iso8601::DEFAULT)
            .ok()
            .map(|t| t.assume_utc())
    };
    phantom_model::time::parse_timestamp(v)
        .or_else(utc)
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
        .ok_or_else(|| Refusal::invalid(format!("{name} {v} is not an ISO 8601 time.")))
}

#[cfg(test)]
mod filter_tests {
    use super::*;
    use phantom_model::request::Filter;

    fn f(name: &str, values: &[&str]) -> Filter {
        Filter {
            name: Some(name.into()),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn filters_bound_the_start_and_pick_statuses_as_aws_documents_them() {
        let given = [
            f("StartTimeLowerBound", &["2026-01-18T08:15:00Z"]),
            f("StartTimeUpperBound", &["2026-01-18T16:15:00+08:00"]),
            f("Status", &["Failed", "Cancelled"]),
        ];
        let fs = Filters::parse(&given, true).unwrap();
        let at = |s: &str| bound("t", s).unwrap();
        assert_eq!(fs.from_ms, Some(at("2026-01-18T08:15:00Z")));
        assert_eq!(
            fs.to_ms,
            Some(at("2026-01-18T08:15:00Z")),
            "+08:00 is 08:15 UTC"
        );
        // No offset: UTC.
        assert_eq!(at("2026-01-18T08:15:00"), at("2026-01-18T08:15:00Z"));
        for (bad, group) in [
            (f("Status", &["Failed"]), false),
            (f("Status", &["Broken"]), true),
            (f("StartTimeLowerBound", &["yesterday"]), true),
            (
                f(
                    "StartTimeLowerBound",
                    &["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"],
                ),
                true,
            ),
            (f("ActivityType", &["x"]), true),
        ] {
            assert!(
                Filters::parse(std::slice::from_ref(&bad), group).is_err(),
                "{bad:?}"
            );
        }
    }
}
