//! A group's metrics as AWS Auto Scaling collects them (EnableMetricsCollection), pure: what
//! each one is of a group and its recorded instances, and the two ways they are published,
//! CloudWatch's Embedded Metric Format (a JSON log line) and Prometheus's text format.
//!
//! The `…Instances` metrics count instances, the `…Capacity` ones capacity units: an instance
//! counts its weight (`phantom_rules::weights`), one without weights, when the two are equal.
//! `GroupUnhealthyInstances`, Phantom's, counts the VMs kept Unhealthy by the check that failed:
//! a sample a check with any, dimension `Check` (none while every VM is healthy).

use crate::group::Group;
use crate::health::Failed;
use crate::warm;
use phantom_metrics::{emf, exposition};
use phantom_model::cloudwatch::{Datum, Dimension, MetricId, Stats};
use phantom_model::instance::{Lifecycle, Member};

use crate::group::GroupRules;
pub use phantom_model::group::GROUP_METRICS as NAMES;
pub use phantom_model::group::PHANTOM_GROUP_METRICS as PHANTOM_NAMES;

/// The dimension CloudWatch tells users apart by (two users may name groups alike).
pub const USER_DIMENSION: &str = "PhantomUser";
/// The dimension AWS gives each group metric.
pub const GROUP_DIMENSION: &str = "AutoScalingGroupName";
/// The dimension (and Prometheus label) `GroupUnhealthyInstances` names the check by.
pub const CHECK_DIMENSION: &str = "Check";
pub const CHECK_LABEL: &str = "check";
/// Phantom's metric of the VMs kept Unhealthy.
pub const UNHEALTHY: &str = "GroupUnhealthyInstances";

/// One metric's value now (of one check, for `GroupUnhealthyInstances`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub metric: &'static str,
    pub value: f64,
    pub check: Option<&'static str>,
}

impl Sample {
    fn of(metric: &'static str, value: f64) -> Self {
        Self {
            metric,
            value,
            check: None,
        }
    }
}

/// The group's VMs kept Unhealthy (not leaving), by the check that found them so: a sample a
/// check that has any, in `Failed::LABELS` order. One marked before the check was kept counts
/// under `user` if no probe failed it, as its activity would say.
fn unhealthy(members: &[Member]) -> Vec<Sample> {
    let kept = members.iter().filter(|m| {
        !m.healthy
            && !matches!(
                m.lifecycle,
                Lifecycle::Terminating | Lifecycle::TerminatingWait | Lifecycle::Detaching
            )
    });
    let mut counts = [0usize; Failed::LABELS.len()];
    for m in kept {
        let label = match (&m.unhealthy_check, &m.probe_failed) {
            (Some(check), _) => check.as_str(),
            (None, Some(_)) => Failed::Probe.label(),
            (None, None) => Failed::User.label(),
        };
        if let Some(i) = Failed::LABELS.iter().position(|l| *l == label) {
            counts[i] += 1;
        }
    }
    Failed::LABELS
        .iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .map(|(label, n)| Sample {
            metric: UNHEALTHY,
            value: n as f64,
            check: Some(label),
        })
        .collect()
}

/// How many of the group's instances (or units) are in each state that the metrics count.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    in_service: i64,
    pending: i64,
    standby: i64,
    terminating: i64,
    warm_ready: i64,
    warm_pending: i64,
    warm_terminating: i64,
}

impl Counts {
    /// Each member counted as `unit` says.
    fn of(members: &[Member], unit: impl Fn(&Member) -> i64) -> Self {
        let mut c = Counts::default();
        for m in members {
            let n = unit(m);
            match m.lifecycle {
                Lifecycle::InService => c.in_service += n,
                // Attaching shows as Pending, as AWS shows an instance being attached.
                Lifecycle::Pending | Lifecycle::PendingWait | Lifecycle::Attaching => {
                    c.pending += n
                }
                Lifecycle::Standby => c.standby += n,
                // A retained instance still runs in a Terminating state: counted there.
                Lifecycle::Terminating
                | Lifecycle::TerminatingWait
                | Lifecycle::TerminatingRetained => c.terminating += n,
                // Leaving the group: AWS counts a detaching instance nowhere.
                Lifecycle::Detaching => {}
                Lifecycle::WarmedPending | Lifecycle::WarmedPendingWait => c.warm_pending += n,
                Lifecycle::WarmedStopped
                | Lifecycle::WarmedRunning
                | Lifecycle::WarmedHibernated => c.warm_ready += n,
                Lifecycle::WarmedTerminatingWait | Lifecycle::WarmedTerminating => {
                    c.warm_terminating += n
                }
            }
        }
        c
    }
}

/// The value of metric `name` (one of `NAMES`) for group `g` with these instances (`n`) and
/// capacity units (`c`).
fn value(name: &str, g: &Group, n: Counts, c: Counts) -> Option<f64> {
    // AWS: "the number of instances that are in service, pending, and terminating".
    let total = c.in_service + c.pending + c.terminating;
    let pool = g
        .settings
        .warm_pool_configuration
        .as_ref()
        .map_or(0, |p| warm::size(p, g.desired, g.max));
    let pool_total = c.warm_ready + c.warm_pending + c.warm_terminating;
    let v = match name {
        "GroupMinSize" => g.min,
        "GroupMaxSize" => g.max,
        "GroupDesiredCapacity" => g.desired,
        "GroupInServiceInstances" => n.in_service,
        "GroupPendingInstances" => n.pending,
        "GroupStandbyInstances" => n.standby,
        "GroupTerminatingInstances" => n.terminating,
        "GroupTotalInstances" => n.in_service + n.pending + n.terminating,
        "GroupInServiceCapacity" => c.in_service,
        "GroupPendingCapacity" => c.pending,
        "GroupStandbyCapacity" => c.standby,
        "GroupTerminatingCapacity" => c.terminating,
        "GroupTotalCapacity" => total,
        "WarmPoolDesiredCapacity" => pool,
        "WarmPoolWarmedCapacity" => c.warm_ready,
        "WarmPoolPendingCapacity" => c.warm_pending,
        "WarmPoolTerminatingCapacity" => c.warm_terminating,
        "WarmPoolTotalCapacity" => pool_total,
        "GroupAndWarmPoolDesiredCapacity" => g.desired + pool,
        "GroupAndWarmPoolTotalCapacity" => total + pool_total,
        _ => return None,
    };
    Some(v as f64)
}

/// The group's enabled metrics now, in `NAMES` order; none while it is being deleted.
pub fn samples(g: &Group, members: &[Member]) -> Vec<Sample> {
    if g.deleting() {
        return Vec::new();
    }
    let enabled = &g.settings.enabled_metrics;
    let n = Counts::of(members, |_| 1);
    let w = g.weights();
    let c = Counts::of(members, |m| w.units(m));
    let mut out = Vec::new();
    for name in NAMES
        .iter()
        .chain(&PHANTOM_NAMES)
        .filter(|name| enabled.iter().any(|e| e.metric == **name))
    {
        match *name {
            UNHEALTHY => out.extend(unhealthy(members)),
            _ => out.extend(value(name, g, n, c).map(|value| Sample::of(name, value))),
        }
    }
    out
}

/// The Embedded Metric Format lines of a group's samples at `at_ms`: CloudWatch reads them from
/// the function's log and makes each value a metric of `namespace`, with the dimensions user and
/// group (and `Check`, a line of its own for each check's `GroupUnhealthyInstances`). None when
/// there is nothing to publish.
pub fn emf_lines(
    namespace: &str,
    user: &str,
    group: &str,
    samples: &[Sample],
    at_ms: i64,
) -> Vec<String> {
    let metric = |s: &Sample| emf::Metric {
        name: s.metric,
        value: s.value,
        unit: "Count",
    };
    let plain: Vec<emf::Metric> = samples
        .iter()
        .filter(|s| s.check.is_none())
        .map(metric)
        .collect();
    let dims = [(USER_DIMENSION, user), (GROUP_DIMENSION, group)];
    let mut out = Vec::new();
    if !plain.is_empty() {
        out.push(emf::line(namespace, at_ms, &dims, &plain));
    }
    for s in samples {
        if let Some(check) = s.check {
            let dims = [dims[0], dims[1], (CHECK_DIMENSION, check)];
            out.push(emf::line(namespace, at_ms, &dims, &[metric(s)]));
        }
    }
    out
}

/// The namespace the group metrics have in the CloudWatch an account sees at Phantom's endpoint.
pub const AWS_NAMESPACE: &str = "AWS/AutoScaling";

/// A group's samples at `at_ms` as CloudWatch's `AWS/AutoScaling` has them: each metric by the
/// dimension `AutoScalingGroupName`, in unit `None`, as AWS publishes them (Phantom's own
/// `GroupUnhealthyInstances` is not AWS's: it stays in the deployment's namespace).
pub fn aws_data(group: &str, samples: &[Sample], at_ms: i64) -> Vec<Datum> {
    let dims = [Dimension {
        name: GROUP_DIMENSION.into(),
        value: group.into(),
    }];
    samples
        .iter()
        .filter(|s| s.metric != UNHEALTHY)
        .map(|s| Datum {
            metric: MetricId::new(AWS_NAMESPACE, s.metric, &dims),
            at_ms,
            unit: None,
            stats: Stats::one(s.value),
            high_resolution: false,
        })
        .collect()
}

/// The Prometheus name of an AWS metric: `GroupDesiredCapacity` is
/// `phantom_group_desired_capacity`.
pub fn prometheus_name(metric: &str) -> String {
    let mut out = String::from("phantom");
    for ch in metric.chars() {
        if ch.is_ascii_uppercase() {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

/// One group's samples, as a scrape answers them.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupSamples {
    pub user: String,
    pub group: String,
    pub samples: Vec<Sample>,
}

/// The labels a group's series carry: its user (two users may name groups alike; one
/// Prometheus may scrape them all) and its name.
pub const USER_LABEL: &str = "user";
pub const GROUP_LABEL: &str = "auto_scaling_group_name";

/// The Prometheus text exposition of some groups' samples: one gauge family per metric that any
/// group has enabled, a series per group labelled `user` and `auto_scaling_group_name`.
pub fn exposition(groups: &[GroupSamples]) -> String {
    let mut out = String::new();
    for &name in NAMES.iter().chain(&PHANTOM_NAMES) {
        let series: Vec<(&GroupSamples, &Sample)> = groups
            .iter()
            .flat_map(|g| {
                g.samples
                    .iter()
                    .filter(move |s| s.metric == name)
                    .map(move |s| (g, s))
            })
            .collect();
        if series.is_empty() {
            continue;
        }
        let family = prometheus_name(name);
        let whose = match name {
            UNHEALTHY => "Phantom's",
            _ => "AWS Auto Scaling's",
        };
        out.push_str(&format!(
            "# HELP {family} {whose} {name}, collected each time it is scraped.\n# TYPE {family} gauge\n"
        ));
        for (g, s) in series {
            let check = s
                .check
                .map(|c| format!(",{CHECK_LABEL}=\"{c}\""))
                .unwrap_or_default();
            out.push_str(&format!(
                "{family}{{{USER_LABEL}=\"{}\",{GROUP_LABEL}=\"{}\"{check}}} {}\n",
                exposition::label_value(&g.user),
                exposition::label_value(&g.group),
                s.value
            ));
        }
    }
    out
}

/// The PromQL of one group's series of `metric` as the scrape exposes it: `max` so that a
/// group scraped by two jobs is still one series.
pub fn promql(metric: &str, user: &str, group: &str) -> String {
    // PromQL's double-quoted strings escape as Go's do; the text format's escaping suits them.
    format!(
        "max({}{{{USER_LABEL}=\"{}\",{GROUP_LABEL}=\"{}\"}})",
        prometheus_name(metric),
        exposition::label_value(user),
        exposition::label_value(group)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use phantom_model::group::EnabledMetric;
    use serde_json::{json, Value};

    fn group(enabled: &[&str]) -> Group {
        let ctx = crate::fixtures::test_context("g1", 1_795_406_400_000);
        let input = json!({"AutoScalingGroupName": "web", "LaunchConfigurationName": "web@hotel",
            "MinSize": 1, "MaxSize": 6, "DesiredCapacity": 3});
        let mut g = crate::group::from_input(&serde_json::from_value(input).unwrap(), ctx).unwrap();
        g.settings.enabled_metrics = enabled
            .iter()
            .map(|m| EnabledMetric {
                metric: m.to_string(),
                granularity: "1Minute".into(),
            })
            .collect();
        g
    }

    fn member(id: &str, lifecycle: Lifecycle) -> Member {
        crate::fixtures::test_member(id, lifecycle)
    }

    fn fleet() -> Vec<Member> {
        vec![
            member("i-1", Lifecycle::InService),
            member("i-2", Lifecycle::InService),
            member("i-3", Lifecycle::Pending),
            member("i-4", Lifecycle::Attaching),
            member("i-5", Lifecycle::Standby),
            member("i-6", Lifecycle::TerminatingWait),
            member("i-7", Lifecycle::Detaching),
            member("i-8", Lifecycle::WarmedStopped),
            member("i-9", Lifecycle::WarmedPending),
        ]
    }

    #[test]
    fn aws_autoscaling_has_the_group_metrics_by_group_but_phantoms_own() {
        let g = group(&["GroupInServiceInstances", UNHEALTHY]);
        let data = aws_data("web", &samples(&g, &fleet()), 7);
        assert_eq!(data.len(), 1, "{data:?}");
        let d = &data[0];
        assert_eq!(
            (d.metric.namespace.as_str(), d.metric.name.as_str()),
            (AWS_NAMESPACE, "GroupInServiceInstances")
        );
        assert_eq!(d.metric.dimensions[0].value, "web");
        assert_eq!((d.at_ms, d.unit.as_deref(), d.stats.sum), (7, None, 2.0));
    }

    #[test]
    fn only_the_enabled_metrics_in_awss_order() {
        let g = group(&["GroupTotalInstances", "GroupDesiredCapacity"]);
        assert_eq!(
            samples(&g, &fleet()),
            vec![
                Sample::of("GroupDesiredCapacity", 3.0),
                Sample::of("GroupTotalInstances", 5.0),
            ]
        );
        assert!(samples(&group(&[]), &fleet()).is_empty());
    }

    #[test]
    fn capacity_metrics_count_units_where_the_overrides_give_weights() {
        let mut g = group(&["GroupInServiceInstances", "GroupInServiceCapacity"]);
        g.settings.launch_configuration_name = None;
        g.settings.mixed_instances_policy = Some(
            serde_json::from_value(json!({"LaunchTemplate": {
                "LaunchTemplateSpecification": {"LaunchTemplateName": "web@hotel"},
                "Overrides": [{"InstanceType": "t2.small", "WeightedCapacity": "2"},
                    {"InstanceType": "t2.micro", "WeightedCapacity": "1"}]}}))
            .unwrap(),
        );
        let small = Member {
            instance_type: "t2.small".into(),
            ..member("i-1", Lifecycle::InService)
        };
        let got: Vec<f64> = samples(&g, &[small, member("i-2", Lifecycle::InService)])
            .into_iter()
            .map(|s| s.value)
            .collect();
        assert_eq!(got, [2.0, 3.0]);
    }

    #[test]
    fn each_state_counts_where_aws_counts_it() {
        let g = group(&NAMES);
        let got: Vec<(&str, f64)> = samples(&g, &fleet())
            .into_iter()
            .map(|s| (s.metric, s.value))
            .collect();
        let want = [
            ("GroupMinSize", 1.0),
            ("GroupMaxSize", 6.0),
            ("GroupDesiredCapacity", 3.0),
            ("GroupInServiceInstances", 2.0),
            ("GroupPendingInstances", 2.0),
            ("GroupStandbyInstances", 1.0),
            ("GroupTerminatingInstances", 1.0),
            ("GroupTotalInstances", 5.0),
            ("GroupInServiceCapacity", 2.0),
            ("GroupPendingCapacity", 2.0),
            ("GroupStandbyCapacity", 1.0),
            ("GroupTerminatingCapacity", 1.0),
            ("GroupTotalCapacity", 5.0),
            // No warm pool: nothing desired there, but VMs recorded there still count.
            ("WarmPoolDesiredCapacity", 0.0),
            ("WarmPoolWarmedCapacity", 1.0),
            ("WarmPoolPendingCapacity", 1.0),
            ("WarmPoolTerminatingCapacity", 0.0),
            ("WarmPoolTotalCapacity", 2.0),
            ("GroupAndWarmPoolDesiredCapacity", 3.0),
            ("GroupAndWarmPoolTotalCapacity", 7.0),
            // Every VM healthy: no GroupUnhealthyInstances sample.
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn unhealthy_vms_kept_are_counted_by_the_check_that_failed() {
        let g = group(&["GroupUnhealthyInstances"]);
        let sick = |id: &str, lifecycle, check: Option<Failed>| Member {
            healthy: false,
            unhealthy_check: check.map(|c| c.label().to_string()),
            ..member(id, lifecycle)
        };
        let fleet = [
            sick("i-1", Lifecycle::InService, Some(Failed::StatusCheck)),
            sick("i-2", Lifecycle::InService, Some(Failed::StatusCheck)),
            sick("i-3", Lifecycle::InService, Some(Failed::Lattice)),
            // Marked before the check was kept: the user's, as its activity says.
            sick("i-4", Lifecycle::InService, None),
            // Leaving: no longer counted.
            sick("i-5", Lifecycle::Terminating, Some(Failed::Elb)),
            member("i-6", Lifecycle::InService),
        ];
        let got: Vec<(Option<&str>, f64)> = samples(&g, &fleet)
            .into_iter()
            .map(|s| (s.check, s.value))
            .collect();
        assert_eq!(
            got,
            [
                (Some("status-check"), 2.0),
                (Some("vpc-lattice"), 1.0),
                (Some("user"), 1.0)
            ]
        );
        // A line of its own for each check in CloudWatch, with the Check dimension.
        let lines = emf_lines("N", "alice", "web", &samples(&g, &fleet), 0);
        assert_eq!(lines.len(), 3);
        let v: Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(v["Check"], "status-check");
        assert_eq!(v["GroupUnhealthyInstances"], 2.0);
        // A series a check in Prometheus.
        let text = exposition(&[GroupSamples {
            user: "alice".into(),
            group: "web".into(),
            samples: samples(&g, &fleet),
        }]);
        assert!(text.contains(
            "phantom_group_unhealthy_instances{user=\"alice\",auto_scaling_group_name=\"web\",check=\"vpc-lattice\"} 1"
        ), "{text}");
    }

    #[test]
    fn a_warm_pool_desires_what_max_leaves_beside_desired() {
        let mut g = group(&["WarmPoolDesiredCapacity", "GroupAndWarmPoolDesiredCapacity"]);
        g.settings.warm_pool_configuration =
            Some(serde_json::from_value(json!({"MinSize": 1, "PoolState": "Stopped"})).unwrap());
        let got: Vec<f64> = samples(&g, &[]).iter().map(|s| s.value).collect();
        assert_eq!(got, vec![3.0, 6.0], "max 6 - desired 3 in the pool");
    }

    #[test]
    fn a_deleting_group_publishes_nothing() {
        let mut g = group(&NAMES);
        g.status = Some(phantom_model::group::DELETING.into());
        assert!(samples(&g, &fleet()).is_empty());
    }

    #[test]
    fn the_emf_line_follows_the_format() {
        let g = group(&["GroupDesiredCapacity", "GroupInServiceInstances"]);
        let lines = emf_lines(
            "Phantom/AutoScaling",
            "alice",
            "web",
            &samples(&g, &fleet()),
            1_700_000_000_000,
        );
        assert_eq!(lines.len(), 1);
        let line = &lines[0];
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(!line.contains('\n'), "one line");
        let aws = &v["_aws"];
        assert_eq!(aws["Timestamp"], 1_700_000_000_000i64);
        let directive = &aws["CloudWatchMetrics"][0];
        assert_eq!(directive["Namespace"], "Phantom/AutoScaling");
        let dims = directive["Dimensions"][0].as_array().unwrap();
        // Every dimension and every metric named must be a member at the top level.
        for d in dims {
            assert!(
                v[d.as_str().unwrap()].is_string(),
                "dimension {d} is a string member"
            );
        }
        for m in directive["Metrics"].as_array().unwrap() {
            assert!(
                v[m["Name"].as_str().unwrap()].is_number(),
                "metric {m} is a number member"
            );
        }
        assert_eq!(v["PhantomUser"], "alice");
        assert_eq!(v["AutoScalingGroupName"], "web");
        assert_eq!(v["GroupDesiredCapacity"], 3.0);
        assert_eq!(v["GroupInServiceInstances"], 2.0);
        assert!(emf_lines("N", "alice", "web", &[], 0).is_empty());
    }

    #[test]
    fn prometheus_names_and_exposition() {
        assert_eq!(
            prometheus_name("GroupDesiredCapacity"),
            "phantom_group_desired_capacity"
        );
        assert_eq!(
            prometheus_name("GroupAndWarmPoolTotalCapacity"),
            "phantom_group_and_warm_pool_total_capacity"
        );
        let of = |name: &str, enabled: &[&str]| GroupSamples {
            user: "al\nice".into(),
            group: name.into(),
            samples: samples(&group(enabled), &[]),
        };
        let text = exposition(&[
            of("web", &["GroupDesiredCapacity"]),
            of("a \"q\"\\b", &["GroupDesiredCapacity", "GroupMaxSize"]),
            of("off", &[]),
        ]);
        assert_eq!(
            text,
            "# HELP phantom_group_max_size AWS Auto Scaling's GroupMaxSize, collected each time it is scraped.\n\
             # TYPE phantom_group_max_size gauge\n\
             phantom_group_max_size{user=\"al\\nice\",auto_scaling_group_name=\"a \\\"q\\\"\\\\b\"} 6\n\
             # HELP phantom_group_desired_capacity AWS Auto Scaling's GroupDesiredCapacity, collected each time it is scraped.\n\
             # TYPE phantom_group_desired_capacity gauge\n\
             phantom_group_desired_capacity{user=\"al\\nice\",auto_scaling_group_name=\"web\"} 3\n\
             phantom_group_desired_capacity{user=\"al\\nice\",auto_scaling_group_name=\"a \\\"q\\\"\\\\b\"} 3\n"
        );
        assert_eq!(exposition(&[]), "");
        assert_eq!(
            promql("GroupDesiredCapacity", "alice", "a \"q\""),
            "max(phantom_group_desired_capacity{user=\"alice\",auto_scaling_group_name=\"a \\\"q\\\"\"})"
        );
    }
}
