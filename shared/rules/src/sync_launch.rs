//! LaunchInstances, pure: the request checked as AWS documents it (where, how many, within the
//! group's sizes), and what a launch of it came to (its answer, the group's new desired
//! capacity). The provisioner launches it under the group's lease (functions/provisioner).

use crate::group::{Group, GroupRules};
use phantom_model::instance::{Market, Member, Placement};
use phantom_model::request::LaunchInstances;
pub use phantom_model::sync_launch::{InstanceCollection, LaunchError, SyncLaunch, SyncResult};
use phantom_model::{Checked, Refusal};

/// The reason of the reconcile that asks the provisioner to carry a request out.
pub const REASON: &str = "LaunchInstances";

/// AWS's most instances one LaunchInstances launches.
pub const MAX_INSTANCES: i64 = 100;

/// The request `input` makes of group `g`, checked: what `resolve` checks, and the group's sizes
/// have room for it.
pub fn ask(g: &Group, input: &LaunchInstances, now_ms: i64) -> Checked<SyncLaunch> {
    let l = resolve(g, input, now_ms)?;
    fits(g, l.requested)?;
    Ok(l)
}

/// The AvailabilityZoneIds a request gives (none: empty), refused beside AvailabilityZones.
pub fn zone_ids(input: &LaunchInstances) -> Checked<&[String]> {
    let ids = input.availability_zone_ids.as_deref().unwrap_or_default();
    let named = input
        .availability_zones
        .as_ref()
        .is_some_and(|z| !z.is_empty());
    if !ids.is_empty() && named {
        return Err(Refusal::invalid(
            "You cannot specify both AvailabilityZones and AvailabilityZoneIds in the same request.",
        ));
    }
    Ok(ids)
}

/// The request's zone ids named as the group's cloud names them (`found`: id, name): an id the
/// cloud does not have is refused.
pub fn name_zone_ids(input: &mut LaunchInstances, found: &[(String, String)]) -> Checked<()> {
    let names = crate::group::zone_names(zone_ids(input)?, found)?;
    input.availability_zones = Some(names);
    input.availability_zone_ids = None;
    Ok(())
}

/// The request `input` makes of group `g`: the placement it names is one of the group's (a group
/// of one zone or subnet needs none), its purchase option is one market. What a retry with the
/// same client token is compared by.
pub fn resolve(g: &Group, input: &LaunchInstances, now_ms: i64) -> Checked<SyncLaunch> {
    if !zone_ids(input)?.is_empty() {
        return Err(Refusal::invalid(
            "AvailabilityZoneIds were not named by the group's cloud first (sync_launch::name_zone_ids).",
        ));
    }
    let n = input.requested_capacity;
    if n < 1 {
        return Err(Refusal::invalid("RequestedCapacity must be at least 1."));
    }
    if g.settings.mixed_instances_policy.is_none() && n > MAX_INSTANCES {
        return Err(Refusal::invalid(format!(
            "RequestedCapacity {n} is more than the {MAX_INSTANCES} instances one launch may have."
        )));
    }
    market(g)?;
    let zone = input.availability_zones.iter().flatten().next().cloned();
    let subnet = input.subnet_ids.iter().flatten().next().cloned();
    let (zones, subnets) = (&g.settings.availability_zones, g.subnets());
    if let Some(z) = &zone {
        if !zones.contains(z) {
            return Err(Refusal::invalid(format!(
                "The Availability Zone {z} is not one of the group's ({}).",
                zones.join(", ")
            )));
        }
    }
    if let Some(s) = &subnet {
        if !subnets.contains(s) {
            return Err(Refusal::invalid(format!(
                "The subnet {s} is not one of the group's ({}).",
                subnets.join(", ")
            )));
        }
    }
    // Where the group has one place only, that is where.
    let (zone, subnet) = match (zone, subnet) {
        (None, None) if subnets.len() > 1 || (subnets.is_empty() && zones.len() > 1) => {
            return Err(Refusal::invalid(
                "Either AvailabilityZones or SubnetIds must be specified for groups with multiple Availability Zone configurations.",
            ))
        }
        (None, None) => (
            subnets.is_empty().then(|| zones.first().cloned()).flatten(),
            subnets.first().cloned(),
        ),
        given => given,
    };
    Ok(SyncLaunch {
        client_token: input.client_token.clone(),
        requested: n,
        zone,
        subnet,
        retry: input.retry_strategy.as_deref() == Some("retry-with-group-configuration"),
        asked_ms: now_ms,
        result: None,
    })
}

/// Whether the group's sizes have room for `n` more (AttachInstances' words).
pub fn fits(g: &Group, n: i64) -> Checked<()> {
    if g.desired + n > g.max {
        return Err(Refusal::invalid(format!(
            "AutoScalingGroup {} has min-size={}, max-size={}, and desired-size={}. To launch {n} instance{}, please update the AutoScalingGroup sizes appropriately.",
            g.name,
            g.min,
            g.max,
            g.desired,
            if n == 1 { "" } else { "s" }
        )));
    }
    Ok(())
}

/// The one market a group's LaunchInstances launches on: AWS takes mixed instances policies
/// that are all on-demand or all spot only.
pub fn market(g: &Group) -> Checked<Market> {
    if g.settings.mixed_instances_policy.is_none() {
        return Ok(Market::OnDemand);
    }
    let d = g.distribution();
    match (d.on_demand_base, d.on_demand_percent) {
        (0, 0) => Ok(Market::Spot),
        (_, 100) => Ok(Market::OnDemand),
        _ => Err(Refusal::invalid(
            "LaunchInstances supports mixed instances policies with fully On-Demand or fully Spot purchasing options only.",
        )),
    }
}

/// Where the request's VMs go.
pub fn placement(l: &SyncLaunch, market: Market) -> Placement {
    Placement {
        zone: l.zone.clone(),
        subnet: l.subnet.clone(),
        market,
        units: l.requested,
    }
}

/// The request carried out: its answer from the VMs launched (alike ones together) and the
/// cloud's refusal, if any (`code`, `message`), for the units not launched on `market` (None:
/// the group's purchase options gave none).
pub fn finished(
    l: &SyncLaunch,
    launched: &[Member],
    market: Option<Market>,
    refused: Option<(&str, &str)>,
) -> SyncLaunch {
    let mut instances: Vec<InstanceCollection> = Vec::new();
    for m in launched {
        let market = market_type(m.market);
        match instances.iter_mut().find(|c| {
            c.instance_type == m.instance_type
                && c.availability_zone == m.zone
                && c.market_type == market
        }) {
            Some(c) => c.instance_ids.push(m.id.clone()),
            None => instances.push(InstanceCollection {
                instance_type: m.instance_type.clone(),
                market_type: market.into(),
                subnet_id: l.subnet.clone(),
                availability_zone: m.zone.clone(),
                instance_ids: vec![m.id.clone()],
            }),
        }
    }
    let errors = refused
        .map(|(code, message)| LaunchError {
            instance_type: None,
            market_type: market.map(|m| market_type(m).to_string()),
            subnet_id: l.subnet.clone(),
            availability_zone: l.zone.clone(),
            error_code: code.into(),
            error_message: message.into(),
        })
        .into_iter()
        .collect();
    SyncLaunch {
        result: Some(SyncResult { instances, errors }),
        ..l.clone()
    }
}

/// The group's desired capacity once the request is carried out: up by what was launched, or
/// with `retry`, by all that was asked (the rest for the group to launch its own way); never
/// past its MaxSize.
pub fn desired_after(g: &Group, l: &SyncLaunch, launched_units: i64) -> i64 {
    let added = if l.retry { l.requested } else { launched_units };
    (g.desired + added).min(g.max)
}

fn market_type(m: Market) -> &'static str {
    match m {
        Market::OnDemand => "OnDemand",
        Market::Spot => "Spot",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::test_group;
    use serde_json::json;

    fn input(v: serde_json::Value) -> LaunchInstances {
        serde_json::from_value(v).expect("a request")
    }

    #[test]
    fn a_request_names_one_of_the_groups_places_and_fits_its_sizes() {
        let mut g = test_group();
        g.settings.availability_zones = vec!["a".into(), "b".into()];
        g.desired = 2;
        g.max = 4;
        let base =
            json!({"AutoScalingGroupName": "web", "RequestedCapacity": 2, "ClientToken": "t1"});
        let e = ask(&g, &input(base.clone()), 0).unwrap_err();
        assert!(
            e.message()
                .starts_with("Either AvailabilityZones or SubnetIds"),
            "{}",
            e.message()
        );
        let mut at_b = base.clone();
        at_b["AvailabilityZones"] = json!(["b"]);
        let l = ask(&g, &input(at_b.clone()), 5).unwrap();
        assert_eq!(
            (l.zone.as_deref(), l.requested, l.retry, l.asked_ms),
            (Some("b"), 2, false, 5)
        );
        at_b["AvailabilityZones"] = json!(["c"]);
        assert!(ask(&g, &input(at_b.clone()), 0).is_err());
        at_b["AvailabilityZones"] = json!(["a"]);
        at_b["RequestedCapacity"] = json!(3);
        let e = ask(&g, &input(at_b), 0).unwrap_err();
        assert!(e
            .message()
            .contains("please update the AutoScalingGroup sizes appropriately"));
        // One zone: none need be named.
        g.settings.availability_zones = vec!["a".into()];
        let l = ask(&g, &input(base), 0).unwrap();
        assert_eq!(l.zone.as_deref(), Some("a"));
    }

    #[test]
    fn the_desired_capacity_grows_by_what_was_launched_or_with_retry_by_all_asked() {
        let mut g = test_group();
        g.desired = 1;
        g.max = 10;
        let mut l = SyncLaunch {
            client_token: "t".into(),
            requested: 3,
            zone: Some("a".into()),
            subnet: None,
            retry: false,
            asked_ms: 0,
            result: None,
        };
        assert_eq!(desired_after(&g, &l, 2), 3);
        l.retry = true;
        assert_eq!(desired_after(&g, &l, 2), 4);
        g.max = 3;
        assert_eq!(desired_after(&g, &l, 2), 3, "never past MaxSize");
    }
}
