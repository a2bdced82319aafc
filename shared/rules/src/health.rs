//! The health checks beyond a VM's state, judged, pure: EC2's status checks and scheduled events
//! (every group's), the attached EBS volumes' check (`HealthCheckType` EBS), as AWS applies them.
//!
//! An `impaired` instance or system check counts once it has lasted the group's confirmation
//! period (AWS waits a few minutes for EC2 to mend the VM; Phantom's default is 2 minutes, tag
//! `phantom:status-check-confirm-seconds` sets it, down to 0), and only past the group's grace
//! period. `insufficient-data` and `initializing` are never acted on. A scheduled event still to
//! come (a reboot, maintenance, a retirement or a stop) makes the VM Unhealthy at once, grace or
//! not: AWS replaces such a VM before the event.

use phantom_model::group::Group;
use phantom_model::instance::{Lifecycle, Member};
use phantom_model::status::{Check, CheckStatus, InstanceStatus};
use phantom_model::{Checked, Refusal};
use std::collections::BTreeMap;

/// The tag that sets a group's confirmation period, in seconds.
pub const TAG_CONFIRM: &str = "phantom:status-check-confirm-seconds";
/// The confirmation period of a group without the tag.
pub const DEFAULT_CONFIRM_MS: i64 = 120_000;
/// The longest confirmation period the tag may set (an hour): past it a hung VM is no longer
/// "mending".
const MAX_CONFIRM_SECS: i64 = 3600;

/// Which check found a VM unhealthy: what its activity's cause says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failed {
    /// EC2 says it is terminated, stopped or gone.
    State,
    /// EC2's instance or system status check is impaired.
    StatusCheck,
    /// EC2 has scheduled a reboot or maintenance for it.
    ScheduledEvent,
    /// EC2 has scheduled its retirement or stop: beyond AWS, it is replaced launch-first, as
    /// CapacityRebalance replaces an at-risk VM, whatever the group's maintenance policy says.
    Retiring,
    /// Its attached EBS volumes' status check is impaired (HealthCheckType EBS).
    Ebs,
    /// A load balancer's health check fails it (HealthCheckType ELB).
    Elb,
    /// A VPC Lattice target group's health check fails it (HealthCheckType VPC_LATTICE).
    Lattice,
    /// The group's probe found its application failing (`phantom_rules::probe`).
    Probe,
    /// SetInstanceHealth said so.
    User,
}

impl Failed {
    /// Every check.
    pub const ALL: [Failed; 9] = [
        Self::State,
        Self::StatusCheck,
        Self::ScheduledEvent,
        Self::Retiring,
        Self::Ebs,
        Self::Elb,
        Self::Lattice,
        Self::Probe,
        Self::User,
    ];

    /// Every `label`, once each: the checks the metrics count VMs under.
    pub const LABELS: [&'static str; 8] = [
        "state",
        "status-check",
        "scheduled-event",
        "ebs",
        "elb",
        "vpc-lattice",
        "probe",
        "user",
    ];

    /// Its name in Phantom's operating metrics (`phantom_unhealthy_total{check}`) and the group's
    /// `GroupUnhealthyInstances`.
    pub fn label(self) -> &'static str {
        match self {
            Self::State => "state",
            Self::StatusCheck => "status-check",
            Self::ScheduledEvent | Self::Retiring => "scheduled-event",
            Self::Ebs => "ebs",
            Self::Elb => "elb",
            Self::Lattice => "vpc-lattice",
            Self::Probe => "probe",
            Self::User => "user",
        }
    }

    /// What the activity's cause says the instance was taken out of service in response to, in
    /// AWS's words where AWS has them.
    pub fn in_response_to(self) -> &'static str {
        match self {
            Self::State => "an EC2 health check indicating it has been terminated or stopped",
            Self::StatusCheck => "an EC2 instance status check failure",
            Self::ScheduledEvent | Self::Retiring => "an EC2 scheduled event",
            Self::Ebs => "an EBS volume health check failure",
            Self::Elb => "an ELB system health check failure",
            // AWS's own words for it are not published: these follow ELB's.
            Self::Lattice => "a VPC Lattice health check failure",
            Self::Probe => "an application health check failure",
            Self::User => "a user health-check",
        }
    }
}

/// The checks a group's `HealthCheckType` turns on beside EC2's, which are always on. AWS takes
/// a comma-separated list of `EC2`, `ELB`, `EBS` and `VPC_LATTICE` (`ELB,EBS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checks {
    /// The group's ELB load balancers and target groups judge its VMs.
    pub elb: bool,
    /// The VMs' attached EBS volumes' status check.
    pub ebs: bool,
    /// The group's VPC Lattice target groups judge its VMs.
    pub lattice: bool,
}

impl Checks {
    /// The checks `HealthCheckType` names; a word that is none of AWS's is refused.
    pub fn parse(health_check_type: &str) -> Checked<Checks> {
        let mut out = Checks::default();
        for word in health_check_type.split(',').map(str::trim) {
            match word {
                "EC2" => {}
                "ELB" => out.elb = true,
                "EBS" => out.ebs = true,
                "VPC_LATTICE" => out.lattice = true,
                other => {
                    return Err(Refusal::invalid(format!(
                        "HealthCheckType '{other}' is not one Phantom has: give EC2 (each cloud's status checks), ELB (the group's load balancers too), EBS (the VMs' attached volumes too) or VPC_LATTICE (the group's VPC Lattice target groups too), or several separated by commas."
                    )))
                }
            }
        }
        Ok(out)
    }

    /// The checks of a group as stored (its `HealthCheckType` was parsed when it was written).
    pub fn of(g: &Group) -> Checks {
        Self::parse(&g.settings.health_check_type).unwrap_or_else(|_| Checks {
            // Kept to the words it has: a stored value was refused at its write if it had others.
            elb: g.settings.health_check_type.contains("ELB"),
            ebs: g.settings.health_check_type.contains("EBS"),
            lattice: g.settings.health_check_type.contains("VPC_LATTICE"),
        })
    }

    /// Whether a traffic source of this kind judges the group's VMs.
    pub fn judged_by(self, kind: phantom_model::traffic::Kind) -> bool {
        use phantom_model::traffic::Kind;
        match kind {
            Kind::Elb | Kind::Elbv2 => self.elb,
            Kind::VpcLattice => self.lattice,
        }
    }

    /// Whether any traffic source judges the group's VMs.
    pub fn by_sources(self) -> bool {
        self.elb || self.lattice
    }
}

/// Why a VM already marked Unhealthy is so, when no check fails it now: what its probe saw, the
/// check that marked it, or (marked before the check was kept) SetInstanceHealth.
pub fn marked(m: &Member) -> (Failed, String) {
    // The first check of that label (a scheduled event's, not a retirement's: it is judged
    // again from the cloud's events while they last).
    let stored = m
        .unhealthy_check
        .as_deref()
        .and_then(|l| Failed::ALL.into_iter().find(|f| f.label() == l));
    match (&m.probe_failed, stored) {
        (Some(why), _) => (Failed::Probe, why.clone()),
        (None, Some(check)) if check != Failed::User && check != Failed::Probe => {
            (check, "it was found so earlier".to_string())
        }
        _ => (Failed::User, "the instance was set unhealthy".to_string()),
    }
}

/// A group's confirmation period (ms), from its tag; a value that is not a whole number of
/// seconds from 0 to 3600 is refused.
pub fn confirm_ms(g: &Group) -> Checked<i64> {
    let Some(tag) = g.settings.tags.iter().find(|t| t.key == TAG_CONFIRM) else {
        return Ok(DEFAULT_CONFIRM_MS);
    };
    match tag.value.trim().parse::<i64>() {
        Ok(secs) if (0..=MAX_CONFIRM_SECS).contains(&secs) => Ok(secs * 1000),
        _ => Err(Refusal::invalid(format!(
            "Tag {TAG_CONFIRM} is '{}': give the seconds an impaired status check must last before the VM is replaced, from 0 to {MAX_CONFIRM_SECS}.",
            tag.value
        ))),
    }
}

/// What the checks the group runs make of its VMs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// Serving VMs found unhealthy: which check, and what it saw.
    pub failing: BTreeMap<String, (Failed, String)>,
    /// When an impairment seen now will have lasted its confirmation period (or a VM's grace
    /// ends): the group's round looks again then.
    pub look_again_ms: Option<i64>,
}

/// How the group's checks are set: whether the EBS check runs, the grace and confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub ebs: bool,
    pub grace_ms: i64,
    pub confirm_ms: i64,
}

/// The verdict on the group's serving VMs from their statuses (a VM without one is judged by its
/// state alone).
pub fn judge(s: Settings, members: &[Member], statuses: &[InstanceStatus], now_ms: i64) -> Judged {
    let mut out = Judged::default();
    let mut look_again: Option<i64> = None;
    let mut later = |at: i64| look_again = Some(look_again.map_or(at, |t| t.min(at)));
    let mut failing = BTreeMap::new();
    // A VM already marked Unhealthy (kept while ReplaceUnhealthy is suspended) is judged too, so
    // that its replacement names the check; so is a warm pool's running VM, whose hooks are done
    // (AWS checks those with EC2's status checks, with no grace period).
    for m in members
        .iter()
        .filter(|m| matches!(m.lifecycle, Lifecycle::InService | Lifecycle::WarmedRunning))
    {
        let grace_ms = match m.lifecycle {
            Lifecycle::WarmedRunning => 0,
            _ => s.grace_ms,
        };
        let Some(st) = statuses.iter().find(|st| st.id == m.id) else {
            continue;
        };
        if let Some(e) = st.events.first() {
            let why = format!(
                "{} scheduled, not before {}: {}",
                e.code.name(),
                at(e.not_before_ms),
                e.description
            );
            let failed = match e.code.ends_the_vm() {
                true => Failed::Retiring,
                false => Failed::ScheduledEvent,
            };
            failing.insert(m.id.clone(), (failed, why));
            continue;
        }
        let checks = [
            (Failed::StatusCheck, "system", st.system),
            (Failed::StatusCheck, "instance", st.instance),
            (Failed::Ebs, "attached EBS", st.ebs),
        ];
        for (failed, name, check) in checks {
            if failed == Failed::Ebs && !s.ebs {
                continue;
            }
            let Some(since) = impaired_since(check, m) else {
                continue;
            };
            let due = (since + s.confirm_ms).max(m.in_group_since_ms() + grace_ms);
            if now_ms < due {
                later(due);
                continue;
            }
            let why = format!("its {name} status check is impaired since {}", at(since));
            failing.insert(m.id.clone(), (failed, why));
            break;
        }
    }
    out.failing = failing;
    out.look_again_ms = look_again;
    out
}

/// A time as the activities write it.
fn at(ms: i64) -> String {
    phantom_model::time::format_seconds(phantom_model::time::from_ms(ms))
}

/// Since when a check has been impaired, if it is: EC2's ImpairedSince, or, from a cloud that
/// does not say, since the VM joined the group (EC2's own reading for a VM impaired from launch).
fn impaired_since(c: Check, m: &Member) -> Option<i64> {
    (c.status == CheckStatus::Impaired)
        .then(|| c.impaired_since_ms.unwrap_or_else(|| m.in_group_since_ms()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::test_member;
    use phantom_model::status::{EventCode, ScheduledEvent};

    const MIN: i64 = 60_000;
    const SET: Settings = Settings {
        ebs: false,
        grace_ms: 5 * MIN,
        confirm_ms: 2 * MIN,
    };

    fn serving(id: &str) -> Member {
        test_member(id, Lifecycle::InService)
    }

    fn impaired(id: &str, system: bool, since: i64) -> InstanceStatus {
        let bad = Check {
            status: CheckStatus::Impaired,
            impaired_since_ms: Some(since),
        };
        let mut st = InstanceStatus::ok(id);
        if system {
            st.system = bad;
        } else {
            st.instance = bad;
        }
        st
    }

    #[test]
    fn an_impaired_check_counts_once_it_has_lasted_the_confirmation_period() {
        let m = [serving("i-1"), serving("i-2")];
        let st = [impaired("i-1", true, 10 * MIN), InstanceStatus::ok("i-2")];
        // A minute in: not yet, and looked at again when two have passed.
        let early = judge(SET, &m, &st, 11 * MIN);
        assert!(early.failing.is_empty());
        assert_eq!(early.look_again_ms, Some(12 * MIN));
        let due = judge(SET, &m, &st, 12 * MIN);
        let (failed, why) = &due.failing["i-1"];
        assert_eq!(*failed, Failed::StatusCheck);
        assert!(
            why.contains("system status check is impaired since"),
            "{why}"
        );
        assert_eq!(due.failing.len(), 1);
    }

    #[test]
    fn the_grace_period_holds_a_new_vm_back_and_a_confirmation_of_zero_acts_at_once() {
        let m = [serving("i-1")];
        let st = [impaired("i-1", false, 0)];
        let early = judge(SET, &m, &st, MIN);
        assert!(early.failing.is_empty());
        assert_eq!(early.look_again_ms, Some(5 * MIN), "the grace ends later");
        let now = Settings {
            grace_ms: 0,
            confirm_ms: 0,
            ..SET
        };
        assert!(judge(now, &m, &st, 0).failing.contains_key("i-1"));
    }

    #[test]
    fn a_warm_pools_running_vm_is_judged_with_no_grace_period() {
        let m = [test_member("i-1", Lifecycle::WarmedRunning)];
        let st = [impaired("i-1", true, 0)];
        assert!(judge(SET, &m, &st, 2 * MIN).failing.contains_key("i-1"));
        let stopped = [test_member("i-1", Lifecycle::WarmedStopped)];
        assert!(judge(SET, &stopped, &st, 2 * MIN).failing.is_empty());
    }

    #[test]
    fn insufficient_data_and_initializing_are_never_acted_on() {
        let m = [serving("i-1")];
        for status in [CheckStatus::InsufficientData, CheckStatus::Initializing] {
            let mut st = InstanceStatus::ok("i-1");
            st.system = Check {
                status,
                impaired_since_ms: None,
            };
            assert_eq!(judge(SET, &m, &[st], 100 * MIN), Judged::default());
        }
    }

    #[test]
    fn the_ebs_check_counts_only_where_the_group_runs_it() {
        let m = [serving("i-1")];
        let mut st = InstanceStatus::ok("i-1");
        st.ebs = Check {
            status: CheckStatus::Impaired,
            impaired_since_ms: Some(0),
        };
        let st = [st];
        assert!(judge(SET, &m, &st, 100 * MIN).failing.is_empty());
        let ebs = Settings { ebs: true, ..SET };
        assert_eq!(judge(ebs, &m, &st, 100 * MIN).failing["i-1"].0, Failed::Ebs);
    }

    #[test]
    fn a_scheduled_event_makes_the_vm_unhealthy_at_once() {
        let m = [serving("i-1")];
        let mut st = InstanceStatus::ok("i-1");
        st.events.push(ScheduledEvent {
            code: EventCode::InstanceRetirement,
            not_before_ms: 3 * 24 * 60 * MIN,
            description: "The instance is running on degraded hardware".into(),
        });
        let j = judge(SET, &m, &[st.clone()], MIN);
        let (failed, why) = &j.failing["i-1"];
        assert_eq!(
            *failed,
            Failed::Retiring,
            "a retirement is replaced launch-first"
        );
        assert!(
            why.starts_with("instance-retirement scheduled, not before"),
            "{why}"
        );
    }

    #[test]
    fn only_serving_vms_are_judged_marked_unhealthy_or_not() {
        let mut marked = serving("i-1");
        marked.healthy = false;
        let m = [marked, test_member("i-2", Lifecycle::Pending)];
        let st = [impaired("i-1", true, 0), impaired("i-2", true, 0)];
        let j = judge(SET, &m, &st, 100 * MIN);
        assert_eq!(j.failing.keys().collect::<Vec<_>>(), ["i-1"]);
    }

    #[test]
    fn the_confirmation_tag_is_read_and_checked() {
        let mut g = crate::fixtures::test_group();
        assert_eq!(confirm_ms(&g), Ok(DEFAULT_CONFIRM_MS));
        let tag = |v: &str| phantom_model::group::TagDescription {
            key: TAG_CONFIRM.into(),
            value: v.into(),
            resource_id: "web".into(),
            resource_type: "auto-scaling-group".into(),
            propagate_at_launch: false,
        };
        g.settings.tags = vec![tag("0")];
        assert_eq!(confirm_ms(&g), Ok(0));
        for bad in ["-1", "3601", "two", ""] {
            g.settings.tags = vec![tag(bad)];
            assert!(confirm_ms(&g).is_err(), "{bad}");
        }
    }

    #[test]
    fn health_check_types_are_a_comma_separated_list_as_aws_takes_them() {
        assert_eq!(Checks::parse("EC2"), Ok(Checks::default()));
        let all = Checks::parse("ELB, EBS,VPC_LATTICE").unwrap();
        assert!(all.elb && all.ebs && all.lattice);
        let lattice = Checks::parse("VPC_LATTICE").unwrap();
        assert!(lattice.judged_by(phantom_model::traffic::Kind::VpcLattice));
        assert!(!lattice.judged_by(phantom_model::traffic::Kind::Elbv2));
        for bad in ["", "ELB,", "elb", "HTTP"] {
            assert!(Checks::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_check_has_its_label_listed_once() {
        for f in Failed::ALL {
            assert!(Failed::LABELS.contains(&f.label()), "{f:?}");
        }
        let mut labels = Failed::LABELS.to_vec();
        labels.dedup();
        assert_eq!(labels.len(), Failed::LABELS.len());
    }
}
