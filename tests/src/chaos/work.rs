//! The users' work: a random request of the Auto Scaling API through aws-sdk-autoscaling, valid or
//! not, on groups whose names the users share (so requests meet: a create of a group that
//! exists, a delete during a hook's wait, two changes of one group in one second), and how its
//! answer is judged.

use super::rng::Rng;
use crate::steps::group_tag;
use aws_sdk_autoscaling::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_autoscaling::types::InstanceMaintenancePolicy;
use aws_sdk_autoscaling::Client;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;

/// The group names every user's requests draw from.
pub const GROUPS: [&str; 3] = ["web", "api", "batch"];
/// The launch configurations each user has from the start, one on each cloud.
pub const LCS: [&str; 2] = ["lc@hotel", "lc@sierra"];
/// The processes a user suspends and resumes.
const PROCESSES: [&str; 6] = [
    "Launch",
    "Terminate",
    "HealthCheck",
    "ReplaceUnhealthy",
    "AZRebalance",
    "AddToLoadBalancer",
];

/// What became of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Answered: `OK`, or the error code and message.
    Code(String),
    /// The api instance crashed mid-request: the client saw no answer.
    Crashed,
    /// An answer that breaks an invariant: a 5xx that no fault explains, or one the SDK cannot
    /// read (not in the model's shapes).
    Broken(&'static str, String),
}

/// Judges an SDK call's outcome.
pub fn judge<O, E>(r: Result<O, SdkError<E, HttpResponse>>) -> Answer
where
    E: ProvideErrorMetadata + std::fmt::Debug,
{
    match r {
        Ok(_) => Answer::Code("OK".into()),
        Err(SdkError::ServiceError(e)) => {
            let status = e.raw().status().as_u16();
            let code = e.err().code().unwrap_or("(no code)").to_string();
            // 503 is a cloud that could not be asked (a fault injected); any other 5xx is ours.
            if status >= 500 && status != 503 {
                Answer::Broken(
                    "no-5xx",
                    format!("HTTP {status} {code}: {:?}", e.err().message()),
                )
            } else {
                let message = e.err().message().unwrap_or_default();
                Answer::Code(format!("{code}: {message}"))
            }
        }
        Err(other) => Answer::Broken("answers-in-shape", format!("{other:?}")),
    }
}

/// A request, drawn, and what it names (for the trace; `vm`, the VM it acts on, if any).
pub struct Drawn {
    pub action: &'static str,
    pub what: String,
    pub vm: Option<String>,
}

/// What a user's request is drawn from: the group it names, that group's VMs as recorded, whether
/// the user has any group, and the VMs the user detached that still run.
pub struct Scene<'a> {
    pub group: &'a str,
    pub members: &'a Members,
    pub none: bool,
    pub detached: &'a [String],
    /// The world's time (Unix ms): scheduled actions start after it.
    pub now_ms: i64,
    /// The user's target group on the group's cloud.
    pub target_group: &'a str,
    /// The mix drawn from (`chaos::MIX`).
    pub mix: u32,
    /// The user's SNS topic for its groups' notifications, and SQS queue for its hooks' (mix 3).
    pub topic: &'a str,
    pub hook_queue: &'a str,
    /// The user's classic load balancer on every cloud (mix 5).
    pub classic: &'a str,
    /// The world and the user, for the requests of Phantom's own API and for LaunchInstances
    /// (whose answer waits on the provisioner).
    pub world: &'a crate::world::World,
    pub user: &'a crate::User,
}

/// The notification types a user's groups tell its topic of.
pub const TOLD: [&str; 4] = [
    "autoscaling:EC2_INSTANCE_LAUNCH",
    "autoscaling:EC2_INSTANCE_LAUNCH_ERROR",
    "autoscaling:EC2_INSTANCE_TERMINATE",
    "autoscaling:EC2_INSTANCE_TERMINATE_ERROR",
];

/// The VMs a user's group has now (id, lifecycle), for requests that name one.
pub type Members = Vec<(String, String)>;

/// Draws and sends one request of a user's; a user with no group mostly creates one.
pub async fn request(c: &Client, rng: &mut Rng, scene: &Scene<'_>) -> (Drawn, Answer) {
    let (group, members) = (scene.group, scene.members);
    let vm = rng.pick(members).map(|(id, _)| id.clone());
    let in_state = |state: &str| -> Vec<String> {
        members
            .iter()
            .filter(|(_, l)| l.as_str() == state)
            .map(|(id, _)| id.clone())
            .collect()
    };
    let waiting = members
        .iter()
        .filter(|(_, l)| l.ends_with(":Wait"))
        .map(|(id, _)| id.clone())
        .collect::<Vec<_>>();
    let drawn = |action, what: String| Drawn {
        action,
        what,
        vm: None,
    };
    let on = |action, id: &str, what: String| Drawn {
        action,
        what,
        vm: Some(id.to_string()),
    };
    let roll = match scene.none && rng.chance(0.6) {
        true => 0,
        false => rng.below(match scene.mix {
            1 => 130,
            2 => 145,
            3 => 160,
            4 => 180,
            5..=9 => 180 + super::rest::ROLLS,
            mix => {
                180 + super::rest::ROLLS + super::cloudwatch::rolls(mix) + super::iam::rolls(mix)
            }
        }),
    };
    match roll {
        0..=14 => {
            let lc = *rng.pick(&LCS).expect("two");
            let min = rng.between(0, 2) as i32;
            // Now and then an invalid one: max below min.
            let max = min + rng.between(-1, 4) as i32;
            let desired = rng.between(i64::from(min), i64::from(max.max(min))) as i32;
            let mut create = c
                .create_auto_scaling_group()
                .auto_scaling_group_name(group)
                .launch_configuration_name(lc)
                .min_size(min)
                .max_size(max)
                .desired_capacity(desired)
                .health_check_grace_period(rng.between(0, 30) as i32);
            // From mix 5 on, half the groups in both zones (else the cloud's default zone).
            let zones = scene.mix >= 5 && rng.chance(0.5);
            if zones {
                create = create.set_availability_zones(Some(
                    crate::world::ZONES.iter().map(|z| z.to_string()).collect(),
                ));
            }
            (
                drawn(
                    "CreateAutoScalingGroup",
                    format!(
                        "{group} {lc} {min}/{max}/{desired}{}",
                        if zones { " in both zones" } else { "" }
                    ),
                ),
                judge(create.send().await),
            )
        }
        15..=32 => {
            let n = rng.between(0, 7) as i32;
            let r = c
                .set_desired_capacity()
                .auto_scaling_group_name(group)
                .desired_capacity(n)
                .honor_cooldown(rng.chance(0.2))
                .send()
                .await;
            (
                drawn("SetDesiredCapacity", format!("{group} {n}")),
                judge(r),
            )
        }
        33..=42 => {
            let min = rng.between(0, 3) as i32;
            let max = min + rng.between(0, 4) as i32;
            let mut u = c
                .update_auto_scaling_group()
                .auto_scaling_group_name(group)
                .min_size(min)
                .max_size(max);
            if rng.chance(0.5) {
                u = u.desired_capacity(rng.between(i64::from(min), i64::from(max)) as i32);
            }
            (
                drawn("UpdateAutoScalingGroup", format!("{group} {min}/{max}")),
                judge(u.send().await),
            )
        }
        43..=49 => {
            let Some(id) = vm else {
                return describe(c, group).await;
            };
            let decrement = rng.chance(0.5);
            let r = c
                .terminate_instance_in_auto_scaling_group()
                .instance_id(&id)
                .should_decrement_desired_capacity(decrement)
                .send()
                .await;
            (
                drawn(
                    "TerminateInstanceInAutoScalingGroup",
                    format!("{id} decrement={decrement}"),
                ),
                judge(r),
            )
        }
        50..=54 => {
            let Some(id) = vm else {
                return describe(c, group).await;
            };
            let r = c
                .set_instance_health()
                .instance_id(&id)
                .health_status("Unhealthy")
                .should_respect_grace_period(rng.chance(0.5))
                .send()
                .await;
            (
                on("SetInstanceHealth", &id, format!("{id} Unhealthy")),
                judge(r),
            )
        }
        55..=59 => {
            let p = *rng.pick(&PROCESSES).expect("some");
            let r = c
                .suspend_processes()
                .auto_scaling_group_name(group)
                .scaling_processes(p)
                .send()
                .await;
            (drawn("SuspendProcesses", format!("{group} {p}")), judge(r))
        }
        60..=64 => {
            let r = c
                .resume_processes()
                .auto_scaling_group_name(group)
                .send()
                .await;
            (drawn("ResumeProcesses", group.to_string()), judge(r))
        }
        65..=69 => {
            let launching = rng.chance(0.5);
            let result = *rng.pick(&["CONTINUE", "ABANDON"]).expect("two");
            let timeout = rng.between(30, 120) as i32;
            put_hook(c, group, launching, timeout, result, None).await
        }
        70..=73 => {
            let Some(id) = rng.pick(&waiting).cloned() else {
                return describe(c, group).await;
            };
            let result = *rng.pick(&["CONTINUE", "ABANDON"]).expect("two");
            let hook = *rng.pick(&["in", "out"]).expect("two");
            let r = c
                .complete_lifecycle_action()
                .auto_scaling_group_name(group)
                .lifecycle_hook_name(hook)
                .instance_id(&id)
                .lifecycle_action_result(result)
                .send()
                .await;
            (
                drawn(
                    "CompleteLifecycleAction",
                    format!("{group} {hook} {id} {result}"),
                ),
                judge(r),
            )
        }
        74..=76 => {
            let hook = *rng.pick(&["in", "out"]).expect("two");
            let r = c
                .delete_lifecycle_hook()
                .auto_scaling_group_name(group)
                .lifecycle_hook_name(hook)
                .send()
                .await;
            (
                drawn("DeleteLifecycleHook", format!("{group} {hook}")),
                judge(r),
            )
        }
        77..=80 => {
            let Some(id) = vm else {
                return describe(c, group).await;
            };
            let on = rng.chance(0.6);
            let r = c
                .set_instance_protection()
                .auto_scaling_group_name(group)
                .instance_ids(&id)
                .protected_from_scale_in(on)
                .send()
                .await;
            (
                drawn("SetInstanceProtection", format!("{group} {id} {on}")),
                judge(r),
            )
        }
        81..=84 => {
            // AWS's pairs, and -1 -1 to take it off.
            let (min, max) = *rng
                .pick(&[(100, 110), (90, 120), (50, 100), (100, 200), (-1, -1)])
                .expect("some");
            let r = c
                .update_auto_scaling_group()
                .auto_scaling_group_name(group)
                .instance_maintenance_policy(
                    InstanceMaintenancePolicy::builder()
                        .min_healthy_percentage(min)
                        .max_healthy_percentage(max)
                        .build(),
                )
                .send()
                .await;
            (
                drawn(
                    "UpdateAutoScalingGroup",
                    format!("{group} maintenance {min}-{max}"),
                ),
                judge(r),
            )
        }
        85..=87 => {
            let r = c
                .start_instance_refresh()
                .auto_scaling_group_name(group)
                .send()
                .await;
            (drawn("StartInstanceRefresh", group.to_string()), judge(r))
        }
        88..=91 => {
            let force = rng.chance(0.6);
            let r = c
                .delete_auto_scaling_group()
                .auto_scaling_group_name(group)
                .force_delete(force)
                .send()
                .await;
            (
                drawn("DeleteAutoScalingGroup", format!("{group} force={force}")),
                judge(r),
            )
        }
        92..=94 => {
            // Invalid on purpose: a desired capacity no group may have.
            let r = c
                .set_desired_capacity()
                .auto_scaling_group_name(group)
                .desired_capacity(-1)
                .send()
                .await;
            (drawn("SetDesiredCapacity", format!("{group} -1")), judge(r))
        }
        95..=99 => {
            let Some(id) = rng.pick(&in_state("InService")).cloned() else {
                return describe(c, group).await;
            };
            let decrement = rng.chance(0.5);
            let r = c
                .enter_standby()
                .auto_scaling_group_name(group)
                .instance_ids(&id)
                .should_decrement_desired_capacity(decrement)
                .send()
                .await;
            let what = format!("{group} {id} decrement={decrement}");
            (on("EnterStandby", &id, what), judge(r))
        }
        100..=103 => {
            let Some(id) = rng.pick(&in_state("Standby")).cloned() else {
                return describe(c, group).await;
            };
            let r = c
                .exit_standby()
                .auto_scaling_group_name(group)
                .instance_ids(&id)
                .send()
                .await;
            (on("ExitStandby", &id, format!("{group} {id}")), judge(r))
        }
        104..=107 => {
            let Some(id) = vm else {
                return describe(c, group).await;
            };
            let decrement = rng.chance(0.5);
            let r = c
                .detach_instances()
                .auto_scaling_group_name(group)
                .instance_ids(&id)
                .should_decrement_desired_capacity(decrement)
                .send()
                .await;
            let what = format!("{group} {id} decrement={decrement}");
            (on("DetachInstances", &id, what), judge(r))
        }
        108..=111 => {
            let Some(id) = rng.pick(scene.detached).cloned() else {
                return describe(c, group).await;
            };
            let r = c
                .attach_instances()
                .auto_scaling_group_name(group)
                .instance_ids(&id)
                .send()
                .await;
            (
                on("AttachInstances", &id, format!("{group} {id}")),
                judge(r),
            )
        }
        112..=115 => {
            // Across both clouds, ranked either way, the first holding a few; or back to the
            // launch configuration's.
            let first = rng.between(1, 4);
            let clouds = match rng.below(3) {
                0 => format!("hotel:{first},sierra:10"),
                1 => format!("sierra:{first},hotel:10"),
                _ => String::new(),
            };
            let clouds = clouds.as_str();
            let r = match clouds {
                "" => judge(
                    c.delete_tags()
                        .tags(group_tag(group, "phantom:clouds", ""))
                        .send()
                        .await,
                ),
                _ => judge(
                    c.create_or_update_tags()
                        .tags(group_tag(group, "phantom:clouds", clouds))
                        .send()
                        .await,
                ),
            };
            let what = format!("{group} phantom:clouds={clouds}");
            let action = match clouds {
                "" => "DeleteTags",
                _ => "CreateOrUpdateTags",
            };
            (drawn(action, what), r)
        }
        116..=119 => {
            let in_secs = rng.between(5, 120);
            let desired = rng.between(0, 6) as i32;
            let start = aws_smithy_types::DateTime::from_millis(scene.now_ms + in_secs * 1000);
            let r = c
                .put_scheduled_update_group_action()
                .auto_scaling_group_name(group)
                .scheduled_action_name("soon")
                .start_time(start)
                .desired_capacity(desired)
                .send()
                .await;
            let what = format!("{group} desired {desired} in {in_secs} s");
            (drawn("PutScheduledUpdateGroupAction", what), judge(r))
        }
        120..=124 => {
            let change = *rng.pick(&[-2, -1, 1, 2]).expect("four");
            let r = c
                .put_scaling_policy()
                .auto_scaling_group_name(group)
                .policy_name("step")
                .adjustment_type("ChangeInCapacity")
                .scaling_adjustment(change)
                .send()
                .await;
            let what = format!("{group} step {change:+}");
            (drawn("PutScalingPolicy", what), judge(r))
        }
        125..=129 => {
            let r = c
                .execute_policy()
                .auto_scaling_group_name(group)
                .policy_name("step")
                .honor_cooldown(rng.chance(0.3))
                .send()
                .await;
            (drawn("ExecutePolicy", format!("{group} step")), judge(r))
        }
        130..=133 => {
            let r = c
                .attach_load_balancer_target_groups()
                .auto_scaling_group_name(group)
                .target_group_arns(scene.target_group)
                .send()
                .await;
            (
                drawn("AttachLoadBalancerTargetGroups", group.to_string()),
                judge(r),
            )
        }
        134..=135 => {
            let r = c
                .detach_load_balancer_target_groups()
                .auto_scaling_group_name(group)
                .target_group_arns(scene.target_group)
                .send()
                .await;
            (
                drawn("DetachLoadBalancerTargetGroups", group.to_string()),
                judge(r),
            )
        }
        136..=137 => {
            let check = *rng.pick(&["ELB", "EC2"]).expect("two");
            let r = c
                .update_auto_scaling_group()
                .auto_scaling_group_name(group)
                .health_check_type(check)
                .send()
                .await;
            let what = format!("{group} HealthCheckType {check}");
            (drawn("UpdateAutoScalingGroup", what), judge(r))
        }
        138..=141 => {
            let min = rng.between(0, 2) as i32;
            let state = *rng.pick(&["Stopped", "Running"]).expect("two");
            let r = c
                .put_warm_pool()
                .auto_scaling_group_name(group)
                .min_size(min)
                .pool_state(state.into())
                .send()
                .await;
            let what = format!("{group} min {min} {state}");
            (drawn("PutWarmPool", what), judge(r))
        }
        142..=144 => {
            let force = rng.chance(0.5);
            let r = c
                .delete_warm_pool()
                .auto_scaling_group_name(group)
                .force_delete(force)
                .send()
                .await;
            (
                drawn("DeleteWarmPool", format!("{group} force={force}")),
                judge(r),
            )
        }
        145..=151 => {
            let r = c
                .put_notification_configuration()
                .auto_scaling_group_name(group)
                .topic_arn(scene.topic)
                .set_notification_types(Some(TOLD.iter().map(|t| t.to_string()).collect()))
                .send()
                .await;
            (
                drawn("PutNotificationConfiguration", group.to_string()),
                judge(r),
            )
        }
        152..=154 => {
            let r = c
                .delete_notification_configuration()
                .auto_scaling_group_name(group)
                .topic_arn(scene.topic)
                .send()
                .await;
            (
                drawn("DeleteNotificationConfiguration", group.to_string()),
                judge(r),
            )
        }
        155..=159 => {
            // A hook that tells the user's queue of each VM it holds.
            let launching = rng.chance(0.5);
            let timeout = rng.between(30, 120) as i32;
            put_hook(
                c,
                group,
                launching,
                timeout,
                "CONTINUE",
                Some(scene.hook_queue),
            )
            .await
        }
        160..=166 => {
            // A group of spot and on-demand VMs from the cloud's template `fleet`, its types
            // weighted or not.
            let cloud = *rng.pick(&["hotel", "sierra"]).expect("two");
            let weighted = rng.chance(0.3);
            let policy = mixed(rng, cloud, weighted);
            let min = rng.between(0, 2) as i32;
            let max = min + rng.between(0, 5) as i32;
            let desired = rng.between(i64::from(min), i64::from(max)) as i32;
            let rebalance = rng.chance(0.5);
            let r = c
                .create_auto_scaling_group()
                .auto_scaling_group_name(group)
                .mixed_instances_policy(policy)
                .min_size(min)
                .max_size(max)
                .desired_capacity(desired)
                .capacity_rebalance(rebalance)
                .health_check_grace_period(rng.between(0, 30) as i32)
                .send()
                .await;
            let what = format!(
                "{group} mixed fleet@{cloud}{} rebalance={rebalance} {min}/{max}/{desired}",
                if weighted { " weighted" } else { "" }
            );
            (drawn("CreateAutoScalingGroup", what), judge(r))
        }
        167..=170 => {
            let on = rng.chance(0.5);
            let r = c
                .update_auto_scaling_group()
                .auto_scaling_group_name(group)
                .capacity_rebalance(on)
                .send()
                .await;
            let what = format!("{group} CapacityRebalance {on}");
            (drawn("UpdateAutoScalingGroup", what), judge(r))
        }
        171..=174 => {
            // Another split of the group's template, on the cloud it is on (or not: refused).
            let cloud = *rng.pick(&["hotel", "sierra"]).expect("two");
            let policy = mixed(rng, cloud, false);
            let r = c
                .update_auto_scaling_group()
                .auto_scaling_group_name(group)
                .mixed_instances_policy(policy)
                .send()
                .await;
            let what = format!("{group} MixedInstancesPolicy fleet@{cloud}");
            (drawn("UpdateAutoScalingGroup", what), judge(r))
        }
        175..=179 => {
            let n = rng.between(0, 7) as i32;
            let r = c
                .set_desired_capacity()
                .auto_scaling_group_name(group)
                .desired_capacity(n)
                .send()
                .await;
            (
                drawn("SetDesiredCapacity", format!("{group} {n}")),
                judge(r),
            )
        }
        r if r >= 180 + super::rest::ROLLS + super::cloudwatch::rolls(scene.mix) => {
            let first = 180 + super::rest::ROLLS + super::cloudwatch::rolls(scene.mix);
            super::iam::request(c, rng, scene, r - first).await
        }
        r if r >= 180 + super::rest::ROLLS => {
            super::cloudwatch::request(c, rng, scene, r - 180 - super::rest::ROLLS).await
        }
        180.. => super::rest::request(c, rng, scene, roll - 180).await,
    }
}

/// The instance types of the clouds' template `fleet` a mixed group tries, in order.
pub const FLEET_TYPES: [&str; 2] = ["t2.micro", "t2.small"];

/// A MixedInstancesPolicy of template `fleet` on `cloud`: a drawn split between on-demand and
/// spot, t2.small weighing 2 units if `weighted`.
fn mixed(
    rng: &mut Rng,
    cloud: &str,
    weighted: bool,
) -> aws_sdk_autoscaling::types::MixedInstancesPolicy {
    let split = aws_sdk_autoscaling::types::InstancesDistribution::builder()
        .on_demand_base_capacity(rng.between(0, 1) as i32)
        .on_demand_percentage_above_base_capacity(*rng.pick(&[0, 50, 100]).expect("three"))
        .spot_allocation_strategy(
            *rng.pick(&[
                "price-capacity-optimized",
                "lowest-price",
                "capacity-optimized",
            ])
            .expect("three"),
        )
        .build();
    let types: Vec<(&str, Option<&str>)> = FLEET_TYPES
        .iter()
        .zip([Some("1"), Some("2")])
        .map(|(t, w)| (*t, w.filter(|_| weighted)))
        .collect();
    crate::world::weighted_policy(&format!("fleet@{cloud}"), None, &types, split)
}

/// The role a hook with a notification target names (kept and shown, not assumed).
const ROLE: &str = "arn:aws:iam::000000000000:role/phantom-hooks";

/// PutLifecycleHook of the group's launch hook (`in`) or termination hook (`out`), telling
/// `told` of each VM it holds if given.
async fn put_hook(
    c: &Client,
    group: &str,
    launching: bool,
    timeout: i32,
    result: &str,
    told: Option<&str>,
) -> (Drawn, Answer) {
    let transition = match launching {
        true => "autoscaling:EC2_INSTANCE_LAUNCHING",
        false => "autoscaling:EC2_INSTANCE_TERMINATING",
    };
    let mut put = c
        .put_lifecycle_hook()
        .auto_scaling_group_name(group)
        .lifecycle_hook_name(if launching { "in" } else { "out" })
        .lifecycle_transition(transition)
        .heartbeat_timeout(timeout)
        .default_result(result);
    if let Some(target) = told {
        put = put.notification_target_arn(target).role_arn(ROLE);
    }
    let r = put.send().await;
    let told = if told.is_some() { " told" } else { "" };
    let what = format!("{group} {transition} {timeout}s {result}{told}");
    (
        Drawn {
            action: "PutLifecycleHook",
            what,
            vm: None,
        },
        judge(r),
    )
}

/// The reads: the group, its VMs and activities, each in the model's shapes.
async fn describe(c: &Client, group: &str) -> (Drawn, Answer) {
    let groups = judge(
        c.describe_auto_scaling_groups()
            .auto_scaling_group_names(group)
            .send()
            .await,
    );
    let answer = match groups {
        Answer::Code(ok) if ok == "OK" => {
            let activities = judge(
                c.describe_scaling_activities()
                    .auto_scaling_group_name(group)
                    .send()
                    .await,
            );
            match activities {
                Answer::Code(_) => judge(c.describe_auto_scaling_instances().send().await),
                other => other,
            }
        }
        other => other,
    };
    (
        Drawn {
            action: "Describe",
            what: group.to_string(),
            vm: None,
        },
        answer,
    )
}
