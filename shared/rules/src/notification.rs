//! Notifications, pure: PutNotificationConfiguration and DeleteNotificationConfiguration on a
//! group's settings, a target's ARN checked, and the messages AWS sends, in AWS's JSON: a group's
//! launch and termination events to its topics, a lifecycle action to its hook's target, and the
//! test notification sent when either is put.
//!
//! The provisioner writes a message (`Notice`) in the same store write as the transition it tells
//! of (`round::record`), then sends it and deletes it; one left behind by a crash is sent by the
//! group's next round. So a message is never lost once its transition is recorded, and never
//! sent for one that was not.

use phantom_model::activity::{Details, ScalingActivity};
use phantom_model::group::LifecycleHook;
pub use phantom_model::notification::{Notice, NotificationConfiguration, NotificationType};
use phantom_model::{Checked, Refusal};
use serde::Serialize;

/// AWS's bound on a group's topics (DescribeAccountLimits has no such member; AWS documents 10).
pub const MAX_TOPICS: usize = 10;
const SERVICE: &str = "AWS Auto Scaling";

/// Where a message goes: an SNS topic or an SQS queue, read from its ARN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub service: Service,
    pub region: String,
    pub account: String,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Sns,
    Sqs,
}

/// `arn` as a target in the group's region (AWS sends only within a region); `queues`: whether an
/// SQS queue will do (a lifecycle hook's target) or only a topic (a notification configuration).
pub fn target(arn: &str, group_arn: &str, queues: bool) -> Checked<Target> {
    let t = parse(arn, queues)?;
    let home = group_arn
        .split(':')
        .nth(3)
        .ok_or_else(|| Refusal::invalid(format!("{group_arn} is not a group's ARN.")))?;
    if t.region != home {
        return Err(Refusal::invalid(format!(
            "{arn} is in region {}: a notification target must be in the group's region, {home}.",
            t.region
        )));
    }
    Ok(t)
}

/// `arn` as a topic or (with `queues`) a queue, wherever it is.
pub fn parse(arn: &str, queues: bool) -> Checked<Target> {
    let wanted = if queues {
        "an SNS topic's or SQS queue's ARN (arn:aws:sns:<region>:<account>:<name> or arn:aws:sqs:...)"
    } else {
        "an SNS topic's ARN (arn:aws:sns:<region>:<account>:<name>)"
    };
    let bad = || Refusal::invalid(format!("{arn} is not {wanted}."));
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [scheme, _partition, service, region, account, name] = parts[..] else {
        return Err(bad());
    };
    let service = match service {
        "sns" => Service::Sns,
        "sqs" if queues => Service::Sqs,
        _ => return Err(bad()),
    };
    if scheme != "arn" || region.is_empty() || account.is_empty() || name.is_empty() {
        return Err(bad());
    }
    Ok(Target {
        service,
        region: region.to_string(),
        account: account.to_string(),
        name: name.to_string(),
    })
}

/// PutNotificationConfiguration: the group's topics with `topic` telling of `types` (replacing
/// what it told of before, as AWS does).
pub fn put(
    current: &[NotificationConfiguration],
    group_arn: &str,
    topic: &str,
    types: &[String],
) -> Checked<Vec<NotificationConfiguration>> {
    target(topic, group_arn, false)?;
    if types.is_empty() {
        return Err(Refusal::invalid(
            "NotificationTypes must name at least one notification type.",
        ));
    }
    let mut wanted = Vec::new();
    for t in types {
        let Some(kind) = NotificationType::parse(t) else {
            let all: Vec<&str> = NotificationType::ALL.iter().map(|t| t.as_str()).collect();
            return Err(Refusal::invalid(format!(
                "{t} is not a notification type: give any of {}.",
                all.join(", ")
            )));
        };
        if !wanted.contains(&kind) {
            wanted.push(kind);
        }
    }
    wanted.sort();
    let mut list = current.to_vec();
    let full = list.len() >= MAX_TOPICS;
    match list.iter_mut().find(|c| c.topic_arn == topic) {
        Some(c) => c.notification_types = wanted,
        None if full => {
            return Err(Refusal::over_limit(format!(
                "A group tells at most {MAX_TOPICS} topics."
            )))
        }
        None => list.push(NotificationConfiguration {
            topic_arn: topic.to_string(),
            notification_types: wanted,
        }),
    }
    Ok(list)
}

/// DeleteNotificationConfiguration: the group's topics without `topic`.
pub fn delete(
    current: &[NotificationConfiguration],
    group: &str,
    topic: &str,
) -> Checked<Vec<NotificationConfiguration>> {
    if !current.iter().any(|c| c.topic_arn == topic) {
        return Err(Refusal::invalid(format!(
            "The notification configuration for topic {topic} on group {group} doesn't exist."
        )));
    }
    Ok(current
        .iter()
        .filter(|c| c.topic_arn != topic)
        .cloned()
        .collect())
}

/// Who hears of a group: its topics, and its hooks' targets.
#[derive(Debug, Clone, Copy, Default)]
pub struct Audience<'a> {
    pub topics: &'a [NotificationConfiguration],
    pub hooks: &'a [LifecycleHook],
}

/// The reason of the round the api asks for when a group stops telling anyone: it sends what
/// earlier rounds wrote and could not send, which no later round would (found by the simulator,
/// seed 7183).
pub const LAST_WORDS: &str = "notifications-removed";

impl<'a> Audience<'a> {
    /// A group's topics and hooks.
    pub fn of(settings: &'a phantom_model::group::Settings) -> Self {
        Self {
            topics: &settings.notifications,
            hooks: &settings.lifecycle_hooks,
        }
    }

    /// Nobody: for the writes that tell no one (a policy's, a schedule's).
    pub const NONE: Audience<'static> = Audience {
        topics: &[],
        hooks: &[],
    };

    pub fn is_empty(&self) -> bool {
        self.topics.is_empty()
            && self
                .hooks
                .iter()
                .all(|h| h.notification_target_arn.is_none())
    }
}

/// The account in a group's ARN (its fifth part; the group's ARNs are Phantom's own, made by
/// `group::arn`, so it is there).
fn account_of(arn: &str) -> &str {
    arn.split(':')
        .nth(4)
        .expect("a group's ARN names its account")
}

fn time(ms: i64) -> String {
    phantom_model::time::format_timestamp(phantom_model::time::from_ms(ms))
}

fn notice(target: &str, subject: Option<String>, body: &impl Serialize, now_ms: i64) -> Notice {
    Notice {
        id: crate::ids::uuid(),
        at_ms: now_ms,
        target: target.to_string(),
        subject,
        body: serde_json::to_string(body).expect("a message serialises"),
    }
}

/// AWS's test notification, as sent to a topic when a configuration is put, and to a hook's target
/// when the hook is put.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct TestMessage<'a> {
    account_id: &'a str,
    request_id: &'a str,
    #[serde(rename = "AutoScalingGroupARN")]
    auto_scaling_group_arn: &'a str,
    auto_scaling_group_name: &'a str,
    service: &'a str,
    event: NotificationType,
    time: String,
}

/// The test notification to `target` (its subject only for a topic of a group's notifications).
pub fn test(group: &str, group_arn: &str, target: &str, hook: bool, now_ms: i64) -> Notice {
    let id = crate::ids::uuid();
    let subject = (!hook).then(|| format!("Auto Scaling: test notification for group \"{group}\""));
    notice(
        target,
        subject,
        &TestMessage {
            account_id: account_of(group_arn),
            request_id: &id,
            auto_scaling_group_arn: group_arn,
            auto_scaling_group_name: group,
            service: SERVICE,
            event: NotificationType::Test,
            time: time(now_ms),
        },
        now_ms,
    )
}

/// AWS's message of a launch or a termination (success or failure): the activity, with the event.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ActivityMessage<'a> {
    origin: &'a str,
    destination: &'a str,
    progress: i64,
    account_id: &'a str,
    description: &'a str,
    request_id: &'a str,
    end_time: String,
    #[serde(rename = "AutoScalingGroupARN")]
    auto_scaling_group_arn: &'a str,
    activity_id: &'a str,
    start_time: &'a str,
    service: &'a str,
    time: String,
    #[serde(rename = "EC2InstanceId")]
    ec2_instance_id: &'a str,
    status_code: &'a str,
    status_message: &'a str,
    details: &'a Details,
    auto_scaling_group_name: &'a str,
    cause: &'a str,
    event: NotificationType,
}

/// The messages telling the group's topics of `activity` (`kind`), one per topic that wants it.
pub fn of_activity(
    audience: &Audience<'_>,
    kind: NotificationType,
    passage: Passage,
    instance: &str,
    activity: &ScalingActivity,
    now_ms: i64,
) -> Vec<Notice> {
    let topics: Vec<&NotificationConfiguration> = audience
        .topics
        .iter()
        .filter(|c| c.notification_types.contains(&kind))
        .collect();
    if topics.is_empty() {
        return Vec::new();
    }
    let leaving = matches!(
        kind,
        NotificationType::Terminate | NotificationType::TerminateError
    );
    let (origin, destination) = match (leaving, passage) {
        (true, Passage::Group) => ("AutoScalingGroup", "EC2"),
        // A warm VM terminated leaves the pool.
        (true, _) => ("WarmPool", "EC2"),
        (false, Passage::Group) => ("EC2", "AutoScalingGroup"),
        (false, Passage::IntoPool) => ("EC2", "WarmPool"),
        (false, Passage::FromPool) => ("WarmPool", "AutoScalingGroup"),
    };
    let group = &activity.auto_scaling_group_name;
    let subject = match kind {
        NotificationType::Launch => "launch",
        NotificationType::LaunchError => "failed launch",
        NotificationType::Terminate => "termination",
        NotificationType::TerminateError => "failed termination",
        NotificationType::Test => "test notification",
    };
    let message = ActivityMessage {
        origin,
        destination,
        progress: activity.progress,
        account_id: account_of(&activity.auto_scaling_group_arn),
        description: &activity.description,
        request_id: &activity.activity_id,
        // An activity still open (a launch's, InProgress) is told with the message's time, as
        // AWS's launch notification carries an EndTime beside its Progress 50.
        end_time: activity.end_time.clone().unwrap_or_else(|| time(now_ms)),
        auto_scaling_group_arn: &activity.auto_scaling_group_arn,
        activity_id: &activity.activity_id,
        start_time: &activity.start_time,
        service: SERVICE,
        time: time(now_ms),
        ec2_instance_id: instance,
        status_code: &activity.status_code,
        // AWS gives an empty StatusMessage when there is none.
        status_message: activity.status_message.as_deref().unwrap_or(""),
        details: &activity.details,
        auto_scaling_group_name: group,
        cause: &activity.cause,
        event: kind,
    };
    topics
        .into_iter()
        .map(|c| {
            notice(
                &c.topic_arn,
                Some(format!("Auto Scaling: {subject} for group \"{group}\"")),
                &message,
                now_ms,
            )
        })
        .collect()
}

/// Before `r` is written: the messages of its activities marked as events (`Activity::tells`) are
/// added to the lifecycle messages already there, and every message's id is made to sort by when
/// and in what order it was made, so that messages left by a crash go out in order.
pub fn of_record(audience: &Audience<'_>, r: &mut phantom_model::record::Record, now_ms: i64) {
    for a in &r.activities {
        if let Some(t) = &a.tells {
            r.notices.extend(of_activity(
                audience,
                t.kind,
                t.passage,
                &t.instance,
                &a.doc,
                now_ms,
            ));
        }
    }
    for (i, n) in r.notices.iter_mut().enumerate() {
        n.id = format!("{now_ms:013}-{i:04}-{}", n.id);
    }
}

/// AWS's lifecycle action message: an instance waits on a hook.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct LifecycleMessage<'a> {
    origin: &'a str,
    lifecycle_hook_name: &'a str,
    destination: &'a str,
    account_id: &'a str,
    request_id: &'a str,
    lifecycle_transition: &'a str,
    auto_scaling_group_name: &'a str,
    service: &'a str,
    time: String,
    #[serde(rename = "EC2InstanceId")]
    ec2_instance_id: &'a str,
    lifecycle_action_token: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    notification_metadata: Option<&'a str>,
}

pub use phantom_model::notification::Passage;

/// The message to `hook`'s target, if it has one, of `instance` waiting on it with `token`.
pub struct Waiting<'a> {
    pub group: &'a str,
    pub group_arn: &'a str,
    pub hook: &'a str,
    pub instance: &'a str,
    pub token: &'a str,
    pub passage: Passage,
    pub now_ms: i64,
}

pub fn of_wait(audience: &Audience<'_>, w: &Waiting<'_>) -> Option<Notice> {
    let hook = audience
        .hooks
        .iter()
        .find(|h| h.lifecycle_hook_name == w.hook)?;
    let target = hook.notification_target_arn.as_deref()?;
    let launching = hook.lifecycle_transition == phantom_model::group::LAUNCHING;
    let (origin, destination) = match (launching, w.passage) {
        (false, Passage::FromPool) => ("WarmPool", "EC2"),
        (false, Passage::IntoPool) => ("AutoScalingGroup", "WarmPool"),
        (false, _) => ("AutoScalingGroup", "EC2"),
        (true, Passage::Group) => ("EC2", "AutoScalingGroup"),
        (true, Passage::IntoPool) => ("EC2", "WarmPool"),
        (true, Passage::FromPool) => ("WarmPool", "AutoScalingGroup"),
    };
    let id = crate::ids::uuid();
    Some(notice(
        target,
        None,
        &LifecycleMessage {
            origin,
            lifecycle_hook_name: w.hook,
            destination,
            account_id: account_of(w.group_arn),
            request_id: &id,
            lifecycle_transition: &hook.lifecycle_transition,
            auto_scaling_group_name: w.group,
            service: SERVICE,
            time: time(w.now_ms),
            ec2_instance_id: w.instance,
            lifecycle_action_token: w.token,
            notification_metadata: hook.notification_metadata.as_deref(),
        },
        w.now_ms,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use phantom_model::group::{LAUNCHING, TERMINATING};
    use phantom_model::instance::Outcome;
    use serde_json::Value;

    const GROUP_ARN: &str =
        "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:u:autoScalingGroupName/web";
    const TOPIC: &str = "arn:aws:sns:us-east-1:000000000000:events";

    fn types(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn targets_are_topics_or_queues_in_the_groups_region() {
        let t = target(TOPIC, GROUP_ARN, false).unwrap();
        assert_eq!((t.service, t.name.as_str()), (Service::Sns, "events"));
        let q = "arn:aws:sqs:us-east-1:000000000000:drain";
        assert_eq!(target(q, GROUP_ARN, true).unwrap().service, Service::Sqs);
        assert!(target(q, GROUP_ARN, false)
            .unwrap_err()
            .message()
            .contains("SNS topic's ARN"));
        assert!(target("arn:aws:sns:eu-west-1:0:events", GROUP_ARN, true)
            .unwrap_err()
            .message()
            .contains("the group's region, us-east-1"));
        for bad in [
            "events",
            "arn:aws:s3:us-east-1:0:b",
            "arn:aws:sns:us-east-1:0:",
        ] {
            assert!(target(bad, GROUP_ARN, true).is_err(), "{bad}");
        }
    }

    #[test]
    fn put_replaces_a_topics_types_and_delete_needs_the_topic() {
        let one = put(
            &[],
            GROUP_ARN,
            TOPIC,
            &types(&[
                "autoscaling:EC2_INSTANCE_TERMINATE",
                "autoscaling:EC2_INSTANCE_LAUNCH",
            ]),
        )
        .unwrap();
        assert_eq!(
            one[0].notification_types,
            [NotificationType::Launch, NotificationType::Terminate]
        );
        let again = put(
            &one,
            GROUP_ARN,
            TOPIC,
            &types(&["autoscaling:EC2_INSTANCE_LAUNCH_ERROR"]),
        )
        .unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].notification_types, [NotificationType::LaunchError]);
        assert!(put(
            &[],
            GROUP_ARN,
            TOPIC,
            &types(&["autoscaling:EC2_INSTANCE_REBOOT"])
        )
        .unwrap_err()
        .message()
        .contains("is not a notification type"));
        assert!(put(&[], GROUP_ARN, TOPIC, &[]).is_err());
        assert!(delete(&again, "web", "arn:aws:sns:us-east-1:0:other").is_err());
        assert!(delete(&again, "web", TOPIC).unwrap().is_empty());
    }

    #[test]
    fn an_activity_goes_to_the_topics_that_want_its_event_in_awss_fields() {
        let topics = put(
            &[],
            GROUP_ARN,
            TOPIC,
            &types(&["autoscaling:EC2_INSTANCE_LAUNCH"]),
        )
        .unwrap();
        let audience = Audience {
            topics: &topics,
            hooks: &[],
        };
        let ctx = crate::activity::Context {
            group: "web",
            group_arn: GROUP_ARN,
            now_ms: 1_700_000_000_000,
            audience,
        };
        let vm = phantom_model::instance::Member {
            zone: "us-east-1a".into(),
            subnet: Some("subnet-1".into()),
            ..crate::fixtures::test_member("i-1", phantom_model::instance::Lifecycle::Pending)
        };
        let a = crate::activity::launched(&ctx, &vm, 0, 1, None);
        let sent = of_activity(
            &audience,
            NotificationType::Launch,
            Passage::Group,
            "i-1",
            &a.doc,
            ctx.now_ms,
        );
        assert_eq!(sent.len(), 1);
        assert_eq!(
            sent[0].subject.as_deref(),
            Some("Auto Scaling: launch for group \"web\"")
        );
        let body: Value = serde_json::from_str(&sent[0].body).unwrap();
        assert_eq!(body["Event"], "autoscaling:EC2_INSTANCE_LAUNCH");
        assert_eq!(body["EC2InstanceId"], "i-1");
        assert_eq!(body["AccountId"], "123456789012");
        assert_eq!(body["ActivityId"], body["RequestId"]);
        assert_eq!(body["ActivityId"], a.doc.activity_id);
        assert_eq!(body["Details"]["Availability Zone"], "us-east-1a");
        assert_eq!(body["Details"]["Subnet ID"], "subnet-1");
        assert_eq!(body["Time"], "2023-11-14T22:13:20.000Z");
        assert_eq!(
            (body["Origin"].as_str(), body["Destination"].as_str()),
            (Some("EC2"), Some("AutoScalingGroup"))
        );
        // A VM launched into the warm pool, or joining the group from it.
        for (passage, route) in [
            (Passage::IntoPool, ("EC2", "WarmPool")),
            (Passage::FromPool, ("WarmPool", "AutoScalingGroup")),
        ] {
            let sent = of_activity(
                &audience,
                NotificationType::Launch,
                passage,
                "i-1",
                &a.doc,
                0,
            );
            let body: Value = serde_json::from_str(&sent[0].body).unwrap();
            assert_eq!(
                (body["Origin"].as_str(), body["Destination"].as_str()),
                (Some(route.0), Some(route.1))
            );
        }
        // Not wanted by the topic: nothing.
        let terminated = of_activity(
            &audience,
            NotificationType::Terminate,
            Passage::Group,
            "i-1",
            &a.doc,
            0,
        );
        assert!(terminated.is_empty());
    }

    fn hook(name: &str, transition: &str, target: Option<&str>) -> LifecycleHook {
        LifecycleHook {
            lifecycle_hook_name: name.into(),
            auto_scaling_group_name: "web".into(),
            lifecycle_transition: transition.into(),
            heartbeat_timeout: 60,
            global_timeout: 6000,
            default_result: Outcome::Continue,
            notification_metadata: Some("drain me".into()),
            notification_target_arn: target.map(str::to_string),
            role_arn: None,
        }
    }

    #[test]
    fn a_wait_goes_to_its_hooks_target_with_the_token() {
        let hooks = [
            hook("drain", TERMINATING, Some("arn:aws:sqs:us-east-1:0:drain")),
            hook("quiet", LAUNCHING, None),
        ];
        let audience = Audience {
            topics: &[],
            hooks: &hooks,
        };
        let waiting = |hook| Waiting {
            group: "web",
            group_arn: GROUP_ARN,
            hook,
            instance: "i-9",
            token: "tok",
            passage: Passage::Group,
            now_ms: 0,
        };
        assert!(of_wait(&audience, &waiting("quiet")).is_none());
        let n = of_wait(&audience, &waiting("drain")).unwrap();
        assert_eq!(n.target, "arn:aws:sqs:us-east-1:0:drain");
        assert_eq!(n.subject, None);
        let body: Value = serde_json::from_str(&n.body).unwrap();
        assert_eq!(body["LifecycleActionToken"], "tok");
        assert_eq!(body["LifecycleTransition"], TERMINATING);
        assert_eq!(body["LifecycleHookName"], "drain");
        assert_eq!(body["EC2InstanceId"], "i-9");
        assert_eq!(body["NotificationMetadata"], "drain me");
        assert_eq!(
            (body["Origin"].as_str(), body["Destination"].as_str()),
            (Some("AutoScalingGroup"), Some("EC2"))
        );
        assert!(!audience.is_empty());
        assert!(Audience::NONE.is_empty());
    }

    #[test]
    fn the_test_notification_is_awss() {
        let n = test("web", GROUP_ARN, TOPIC, false, 0);
        assert_eq!(
            n.subject.as_deref(),
            Some("Auto Scaling: test notification for group \"web\"")
        );
        let body: Value = serde_json::from_str(&n.body).unwrap();
        assert_eq!(body["Event"], "autoscaling:TEST_NOTIFICATION");
        assert_eq!(body["AutoScalingGroupName"], "web");
        assert_eq!(body["Service"], "AWS Auto Scaling");
        assert_eq!(test("web", GROUP_ARN, TOPIC, true, 0).subject, None);
    }
}
