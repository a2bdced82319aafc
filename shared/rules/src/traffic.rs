//! Load balancers, pure: a group's traffic sources (classic load balancers by name, ELBv2 and VPC
//! Lattice target groups by ARN) attached and detached, what a round registers and deregisters, the states AWS
//! shows, and the VMs a load balancer calls unhealthy.
//!
//! A VM is registered with every attached source while it serves (InService and healthy), and
//! deregistered as soon as it stops serving (scale-in, replaced, Standby, detached); a leaving VM is
//! held (`reconcile`: Terminating:Wait) for its sources' drain time before it is terminated, as AWS
//! waits for a target group's deregistration delay. A detached source is `Removing` until none of
//! the group's VMs is registered with it, then gone.

use crate::health::{Checks, Failed};
use phantom_model::group::{Settings, TrafficSource};
use phantom_model::instance::{Lifecycle, Member};
pub use phantom_model::traffic::{AttachState, Attachment, Kind, Source};
use phantom_model::{Checked, Refusal};
use std::collections::{BTreeMap, BTreeSet};

/// AWS's quota of traffic sources a group (target groups and classic load balancers together).
pub const MAX_SOURCES: usize = 50;

/// An identifier's name or ARN on its cloud, and the cloud it names after `@` (as a launch
/// configuration's `<name>@<cloud>` does): none, the group's own cloud.
fn split(identifier: &str) -> (&str, Option<&str>) {
    match identifier.rsplit_once('@') {
        Some((local, cloud)) => (local, Some(cloud)),
        None => (identifier, None),
    }
}

/// The cloud a source is on (the group's own, `home`, unless it names one) and the source as that
/// cloud's ELB API knows it.
pub fn placed(s: &Source, home: &str) -> (String, Source) {
    let (local, cloud) = split(&s.identifier);
    (
        cloud.unwrap_or(home).to_string(),
        Source {
            identifier: local.to_string(),
            kind: s.kind,
        },
    )
}

/// A traffic source as AWS's `TrafficSourceIdentifier` gives it: `Type` `elb` (a classic load
/// balancer's name), `elbv2` (a target group's ARN) or `vpc-lattice` (a VPC Lattice target group's
/// ARN), or none (told apart by the identifier); `@<cloud>` after it names another of the group's
/// clouds.
pub fn source(identifier: &str, kind: Option<&str>) -> Checked<Source> {
    let (local, cloud) = split(identifier);
    if cloud.is_some_and(|c| c.is_empty()) {
        return Err(Refusal::invalid(format!(
            "{identifier} names no cloud after @: give <name>@<cloud>, or the name alone for the group's own cloud."
        )));
    }
    let arn = |service: &str| {
        local.starts_with("arn:")
            && local.split(':').nth(2) == Some(service)
            && local.contains(":targetgroup/")
    };
    let (target_group, lattice) = (arn("elasticloadbalancing"), arn("vpc-lattice"));
    let kind = match kind {
        Some("elb") => Kind::Elb,
        Some("elbv2") => Kind::Elbv2,
        Some("vpc-lattice") => Kind::VpcLattice,
        None if target_group => Kind::Elbv2,
        None if lattice => Kind::VpcLattice,
        None => Kind::Elb,
        Some(other) => {
            return Err(Refusal::invalid(format!(
                "Traffic source type {other} is not valid: give elb, elbv2 or vpc-lattice."
            )))
        }
    };
    match kind {
        Kind::Elbv2 if !target_group => Err(Refusal::invalid(format!(
            "{identifier} is not a target group's ARN (arn:aws:elasticloadbalancing:<region>:<account>:targetgroup/<name>/<id>)."
        ))),
        Kind::VpcLattice if !lattice => Err(Refusal::invalid(format!(
            "{identifier} is not a VPC Lattice target group's ARN (arn:aws:vpc-lattice:<region>:<account>:targetgroup/tg-<id>)."
        ))),
        // Any name AWS's model takes (up to 255 characters): whether the cloud has such a load
        // balancer is the cloud's to say, when it is attached.
        Kind::Elb if local.is_empty() => Err(Refusal::invalid(format!(
            "{identifier} names no load balancer."
        ))),
        kind => Ok(Source {
            identifier: identifier.to_string(),
            kind,
        }),
    }
}

/// The sources of a request's `TrafficSources`.
pub fn sources(given: &[TrafficSource]) -> Checked<Vec<Source>> {
    given
        .iter()
        .map(|t| source(&t.identifier, t.r#type.as_deref()))
        .collect()
}

/// CreateAutoScalingGroup's sources: its `LoadBalancerNames`, `TargetGroupARNs` and
/// `TrafficSources`, checked.
pub fn of_create(input: &phantom_model::request::CreateAutoScalingGroup) -> Checked<Vec<Source>> {
    let mut out = Vec::new();
    for name in &input.load_balancer_names {
        out.push(source(name, Some("elb"))?);
    }
    for arn in &input.target_group_arns {
        out.push(source(arn, Some("elbv2"))?);
    }
    out.extend(sources(&input.traffic_sources)?);
    out.sort();
    out.dedup();
    Ok(out)
}

/// The group's attachments with `sources` added (`Adding`; one being removed is added again);
/// `drain_secs` says each new one's drain time.
pub fn attach(
    current: &[Attachment],
    sources: &[Source],
    drain_secs: impl Fn(&Source) -> i64,
) -> Checked<Vec<Attachment>> {
    let mut list = current.to_vec();
    for s in sources {
        match list.iter_mut().find(|a| a.source == *s) {
            Some(a) if a.state == AttachState::Removing => a.state = AttachState::Adding,
            Some(_) => {}
            None => list.push(Attachment {
                source: s.clone(),
                state: AttachState::Adding,
                drain_secs: drain_secs(s),
                registered: Vec::new(),
            }),
        }
    }
    if list.len() > MAX_SOURCES {
        return Err(Refusal::over_limit(format!(
            "A group has at most {MAX_SOURCES} load balancers and target groups."
        )));
    }
    Ok(list)
}

/// The group's attachments with `sources` being removed. One the group does not have is refused,
/// with what AWS says of it.
pub fn detach(current: &[Attachment], sources: &[Source]) -> Checked<Vec<Attachment>> {
    let mut list = current.to_vec();
    for s in sources {
        match list
            .iter_mut()
            .find(|a| a.source == *s && a.state != AttachState::Removing)
        {
            Some(a) => a.state = AttachState::Removing,
            // AWS's words, which Terraform's destroy looks for.
            None => {
                return Err(Refusal::invalid(format!(
                    "Trying to remove {} that are not part of the group: {}",
                    match s.kind {
                        Kind::Elb => "Load Balancers",
                        Kind::Elbv2 => "Target Groups",
                        Kind::VpcLattice => "Traffic Sources",
                    },
                    s.identifier
                )))
            }
        }
    }
    Ok(list)
}

/// The group's `LoadBalancerNames`, `TargetGroupARNs` and `TrafficSources` as its attachments say
/// (one being removed is no longer listed).
pub fn show(s: &mut Settings) {
    let kept: Vec<&Source> = s
        .traffic
        .iter()
        .filter(|a| a.state != AttachState::Removing)
        .map(|a| &a.source)
        .collect();
    let of = |kind| {
        kept.iter()
            .filter(|src| src.kind == kind)
            .map(|src| src.identifier.clone())
            .collect()
    };
    s.load_balancer_names = of(Kind::Elb);
    s.target_group_arns = of(Kind::Elbv2);
    s.traffic_sources = kept
        .iter()
        .map(|src| TrafficSource {
            identifier: src.identifier.clone(),
            r#type: Some(src.kind.as_str().to_string()),
        })
        .collect();
}

/// What a round does with the group's sources: its calls, and the attachments once they went.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Step {
    pub register: Vec<(Source, Vec<String>)>,
    pub deregister: Vec<(Source, Vec<String>)>,
    pub attachments: Vec<Attachment>,
}

impl Step {
    pub fn is_empty(&self) -> bool {
        self.register.is_empty() && self.deregister.is_empty()
    }
}

/// The group's VMs that serve once the round's plan is carried out: InService (or turning
/// InService now) and healthy, and not leaving.
pub fn serving(
    members: &[Member],
    in_service: &[String],
    leaving: &BTreeSet<String>,
) -> BTreeSet<String> {
    members
        .iter()
        .filter(|m| {
            (m.lifecycle == Lifecycle::InService || in_service.contains(&m.id))
                && m.healthy
                && !leaving.contains(&m.id)
        })
        .map(|m| m.id.clone())
        .collect()
}

/// Registers what serves and is not registered (unless `add` is false: the AddToLoadBalancer
/// process suspended), deregisters what is registered and does not serve (every VM, for a source
/// being removed, which then goes), and moves each source's state: `Adding` to `Added` once what
/// serves is registered, and to `InService` once a registered VM passes the health check of a
/// source whose kind `checks` judges by (`health`: source id -> VM -> passes).
pub fn step(
    current: &[Attachment],
    serving: &BTreeSet<String>,
    health: &BTreeMap<String, BTreeMap<String, bool>>,
    checks: Checks,
    add: bool,
) -> Step {
    let mut out = Step::default();
    for a in current {
        let registered: BTreeSet<String> = a.registered.iter().cloned().collect();
        let want: BTreeSet<String> = match a.state {
            AttachState::Removing => BTreeSet::new(),
            _ if add => serving.clone(),
            _ => serving.intersection(&registered).cloned().collect(),
        };
        let add: Vec<String> = want.difference(&registered).cloned().collect();
        let drop: Vec<String> = registered.difference(&want).cloned().collect();
        if !add.is_empty() {
            out.register.push((a.source.clone(), add));
        }
        if !drop.is_empty() {
            out.deregister.push((a.source.clone(), drop));
        }
        if a.state == AttachState::Removing {
            continue;
        }
        let passing = health
            .get(&a.source.identifier)
            .is_some_and(|h| want.iter().any(|id| h.get(id) == Some(&true)));
        let state = match a.state {
            AttachState::Adding | AttachState::Added
                if checks.judged_by(a.source.kind) && passing =>
            {
                AttachState::InService
            }
            AttachState::Adding => AttachState::Added,
            s => s,
        };
        out.attachments.push(Attachment {
            state,
            registered: want.into_iter().collect(),
            ..a.clone()
        });
    }
    out
}

/// The serving VMs past their grace that a source they are registered with reports failing its
/// health check, of the sources `checks` judges by (HealthCheckType ELB, VPC_LATTICE).
pub fn unhealthy(
    checks: Checks,
    attachments: &[Attachment],
    members: &[Member],
    health: &BTreeMap<String, BTreeMap<String, bool>>,
    grace_ms: i64,
    now_ms: i64,
) -> BTreeMap<String, (Failed, String)> {
    members
        .iter()
        .filter(|m| m.lifecycle == Lifecycle::InService && m.healthy)
        .filter(|m| now_ms - m.in_group_since_ms() >= grace_ms)
        .filter_map(|m| {
            attachments
                .iter()
                .filter(|a| checks.judged_by(a.source.kind))
                .find(|a| {
                    a.registered.contains(&m.id)
                        && health.get(&a.source.identifier).and_then(|h| h.get(&m.id))
                            == Some(&false)
                })
                .map(|a| {
                    let why = format!("{} reports it failing", a.source.identifier);
                    let failed = match a.source.kind {
                        Kind::VpcLattice => Failed::Lattice,
                        Kind::Elb | Kind::Elbv2 => Failed::Elb,
                    };
                    (m.id.clone(), (failed, why))
                })
        })
        .collect()
}

/// How long a VM registered with the group's sources drains once deregistered (the longest of
/// its sources'), in ms; none for a VM registered nowhere.
pub fn drain_ms(attachments: &[Attachment], id: &str) -> Option<i64> {
    attachments
        .iter()
        .filter(|a| a.registered.iter().any(|r| r == id))
        .map(|a| a.drain_secs * 1000)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TG: &str =
        "arn:aws:elasticloadbalancing:us-east-1:000000000000:targetgroup/web/0123456789abcdef";

    fn member(id: &str, lifecycle: Lifecycle) -> Member {
        Member {
            launch_configuration: None,
            ..crate::fixtures::test_member(id, lifecycle)
        }
    }

    fn ids(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sources_are_told_apart_and_checked() {
        assert_eq!(source("web", None).unwrap().kind, Kind::Elb);
        assert_eq!(source(TG, None).unwrap().kind, Kind::Elbv2);
        assert_eq!(source(TG, Some("elbv2")).unwrap().kind, Kind::Elbv2);
        assert!(source("web", Some("elbv2")).is_err());
        // Another of the group's clouds, after @.
        let there = source(&format!("{TG}@sierra"), None).unwrap();
        assert_eq!(there.kind, Kind::Elbv2);
        let (cloud, local) = placed(&there, "hotel");
        assert_eq!((cloud.as_str(), local.identifier.as_str()), ("sierra", TG));
        assert_eq!(placed(&source("web", None).unwrap(), "hotel").0, "hotel");
        assert!(source("web@", None).is_err());
        // A name is the cloud's to judge (AWS's model takes up to 255 characters of any kind).
        assert_eq!(source("web_lb!", Some("elb")).unwrap().kind, Kind::Elb);
        assert!(source(&"l".repeat(255), Some("elb")).is_ok());
        // A VPC Lattice target group, by its ARN.
        let tg = "arn:aws:vpc-lattice:us-east-1:000000000000:targetgroup/tg-0123456789abcdef0";
        assert_eq!(source(tg, None).unwrap().kind, Kind::VpcLattice);
        assert_eq!(
            source(tg, Some("vpc-lattice")).unwrap().kind,
            Kind::VpcLattice
        );
        assert!(source(TG, Some("vpc-lattice"))
            .unwrap_err()
            .message()
            .contains("VPC Lattice"));
        assert!(source(tg, Some("elbv2")).is_err());
    }

    #[test]
    fn attach_detach_and_what_the_group_shows() {
        let web = source("web", None).unwrap();
        let tg = source(TG, None).unwrap();
        let list = attach(&[], &[web.clone(), tg.clone()], |s| match s.kind {
            Kind::Elb => 0,
            Kind::Elbv2 | Kind::VpcLattice => 300,
        })
        .unwrap();
        assert_eq!(list.len(), 2);
        assert!(list.iter().all(|a| a.state == AttachState::Adding));
        assert_eq!(list[1].drain_secs, 300);
        // Attaching again changes nothing; detaching one not attached is refused.
        assert_eq!(
            attach(&list, std::slice::from_ref(&web), |_| 0).unwrap(),
            list
        );
        let other = source("other", None).unwrap();
        assert!(detach(&list, &[other])
            .unwrap_err()
            .message()
            .contains("not part of the group"));
        let list = detach(&list, std::slice::from_ref(&web)).unwrap();
        assert_eq!(list[0].state, AttachState::Removing);
        let mut s: Settings = serde_json::from_value(serde_json::json!({
            "AutoScalingGroupName": "g", "AutoScalingGroupARN": "arn", "DefaultCooldown": 300,
            "HealthCheckType": "EC2", "HealthCheckGracePeriod": 0, "CreatedTime": "t",
            "AvailabilityZones": [], "TerminationPolicies": [], "NewInstancesProtectedFromScaleIn": false,
            "CapacityRebalance": false, "ServiceLinkedRoleARN": "r", "LoadBalancerNames": [],
            "TargetGroupARNs": [], "TrafficSources": [], "SuspendedProcesses": [],
            "EnabledMetrics": [], "Tags": []
        }))
        .unwrap();
        s.traffic = list.clone();
        show(&mut s);
        assert!(
            s.load_balancer_names.is_empty(),
            "being removed: not listed"
        );
        assert_eq!(s.target_group_arns, [TG]);
        assert_eq!(s.traffic_sources[0].r#type.as_deref(), Some("elbv2"));
        // Attached again while being removed: adding again.
        assert_eq!(
            attach(&list, &[web], |_| 0).unwrap()[0].state,
            AttachState::Adding
        );
        let full: Vec<Source> = (0..=MAX_SOURCES)
            .map(|i| source(&format!("lb-{i}"), None).unwrap())
            .collect();
        assert!(matches!(
            attach(&[], &full, |_| 0),
            Err(Refusal::OverLimit(_))
        ));
    }

    #[test]
    fn a_round_registers_what_serves_and_deregisters_what_leaves() {
        let tg = source(TG, None).unwrap();
        let list = attach(&[], std::slice::from_ref(&tg), |_| 300).unwrap();
        let members = [
            member("i-1", Lifecycle::InService),
            member("i-2", Lifecycle::Pending),
            member("i-3", Lifecycle::InService),
        ];
        // i-2 turns InService this round; i-3 is chosen to leave.
        let serves = serving(&members, &["i-2".into()], &ids(&["i-3"]));
        assert_eq!(serves, ids(&["i-1", "i-2"]));
        let s = step(&list, &serves, &BTreeMap::new(), Checks::default(), true);
        assert_eq!(s.register, [(tg.clone(), vec!["i-1".into(), "i-2".into()])]);
        assert!(s.deregister.is_empty());
        assert_eq!(s.attachments[0].state, AttachState::Added);
        // AddToLoadBalancer suspended: nothing new registered, a leaving VM still deregistered.
        let held = step(&list, &serves, &BTreeMap::new(), Checks::default(), false);
        assert!(held.register.is_empty() && held.attachments[0].registered.is_empty());
        // Next: i-1 leaves; the health check passes for i-2 (HealthCheckType ELB).
        let health =
            BTreeMap::from([(TG.to_string(), BTreeMap::from([("i-2".to_string(), true)]))]);
        let elb = Checks::parse("ELB").unwrap();
        let next = step(&s.attachments, &ids(&["i-2"]), &health, elb, true);
        assert_eq!(next.deregister, [(tg.clone(), vec!["i-1".into()])]);
        assert_eq!(next.attachments[0].state, AttachState::InService);
        assert_eq!(drain_ms(&s.attachments, "i-1"), Some(300_000));
        assert_eq!(drain_ms(&next.attachments, "i-1"), None);
        // Detached: everything deregistered, then the source is gone.
        let removing = detach(&next.attachments, std::slice::from_ref(&tg)).unwrap();
        let gone = step(&removing, &ids(&["i-2"]), &health, elb, true);
        assert_eq!(gone.deregister, [(tg, vec!["i-2".into()])]);
        assert!(gone.attachments.is_empty());
    }

    #[test]
    fn a_vm_failing_its_load_balancers_check_past_its_grace_is_unhealthy() {
        let tg = source(TG, None).unwrap();
        let mut list = attach(&[], &[tg], |_| 0).unwrap();
        list[0].registered = vec!["i-1".into(), "i-2".into()];
        let mut young = member("i-2", Lifecycle::InService);
        young.launched_ms = 50_000;
        let members = [member("i-1", Lifecycle::InService), young];
        let health = BTreeMap::from([(
            TG.to_string(),
            BTreeMap::from([("i-1".to_string(), false), ("i-2".to_string(), false)]),
        )]);
        let elb = Checks::parse("ELB").unwrap();
        let found = unhealthy(elb, &list, &members, &health, 30_000, 60_000);
        assert_eq!(found.keys().collect::<Vec<_>>(), ["i-1"]);
        assert_eq!(found["i-1"].0, Failed::Elb);
        assert!(unhealthy(elb, &list, &members, &BTreeMap::new(), 0, 60_000).is_empty());
        // A target group judges only with its kind's check on: VPC_LATTICE is not ELB's.
        let lattice = Checks::parse("VPC_LATTICE").unwrap();
        assert!(unhealthy(lattice, &list, &members, &health, 30_000, 60_000).is_empty());
        const LATTICE: &str =
            "arn:aws:vpc-lattice:us-east-1:000000000000:targetgroup/tg-0123456789abcdef0";
        let mut on_lattice = attach(&[], &[source(LATTICE, None).unwrap()], |_| 0).unwrap();
        on_lattice[0].registered = vec!["i-1".into()];
        let said = BTreeMap::from([(
            LATTICE.to_string(),
            BTreeMap::from([("i-1".to_string(), false)]),
        )]);
        let found = unhealthy(lattice, &on_lattice, &members, &said, 30_000, 60_000);
        assert_eq!(found["i-1"].0, Failed::Lattice);
        assert!(unhealthy(elb, &on_lattice, &members, &said, 30_000, 60_000).is_empty());
    }
}
