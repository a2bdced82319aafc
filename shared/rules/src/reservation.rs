//! A group's CapacityReservationSpecification, pure: what CreateAutoScalingGroup and
//! UpdateAutoScalingGroup accept, and what each on-demand launch asks of the cloud's
//! RunInstances (its CapacityReservationSpecification), in the order to try.
//!
//! `none` launches outside reservations; `default` leaves it to the cloud (an open reservation
//! that matches, else on-demand). `capacity-reservations-only` launches only into reservations:
//! the targeted ones in the launch's zone, or without targets any open one; a launch none has
//! room for fails. `capacity-reservations-first` tries the targeted reservations in the zone,
//! then launches as `default`. Spot launches use no reservation.

use phantom_model::group::{
    CapacityReservationSpecification as Spec, ReservationPreference as Preference, ReservationZone,
    Settings,
};
use phantom_model::{Checked, Refusal};

/// What one RunInstances asks: its CapacityReservationPreference and its target reservation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ask {
    pub preference: Option<&'static str>,
    pub target: Option<String>,
}

/// Checks a specification as given; the targeted reservations' ids, to be asked of the cloud.
pub fn check(spec: &Spec) -> Checked<Vec<String>> {
    let target = spec.capacity_reservation_target.as_ref();
    if target.is_some_and(|t| !t.capacity_reservation_resource_group_arns.is_empty()) {
        return Err(Refusal::invalid(
            "CapacityReservationResourceGroupArns is not supported: Phantom's clouds have no resource groups. Name the reservations by CapacityReservationIds.",
        ));
    }
    let ids = target
        .map(|t| t.capacity_reservation_ids.clone())
        .unwrap_or_default();
    let targets = matches!(
        spec.capacity_reservation_preference,
        Some(Preference::CapacityReservationsOnly | Preference::CapacityReservationsFirst)
    );
    if !ids.is_empty() && !targets {
        return Err(Refusal::invalid(
            "A CapacityReservationTarget needs the CapacityReservationPreference capacity-reservations-only or capacity-reservations-first.",
        ));
    }
    Ok(ids)
}

/// The zones of the targeted reservations as the cloud answered (`found`: id, zone, in any
/// order), in the order given; a reservation the cloud does not have is refused.
pub fn zones(ids: &[String], found: &[(String, String)]) -> Checked<Vec<ReservationZone>> {
    ids.iter()
        .map(|id| {
            found
                .iter()
                .find(|(i, _)| i == id)
                .map(|(_, zone)| ReservationZone {
                    capacity_reservation_id: id.clone(),
                    availability_zone: zone.clone(),
                })
                .ok_or_else(|| {
                    Refusal::invalid(format!("The capacity reservation ID '{id}' does not exist"))
                })
        })
        .collect()
}

/// Whether the group may launch only into the reservations it targets.
fn only_targeted(s: &Settings) -> bool {
    let only = s
        .capacity_reservation_specification
        .as_ref()
        .and_then(|spec| spec.capacity_reservation_preference)
        == Some(Preference::CapacityReservationsOnly);
    only && !s.reservation_zones.is_empty()
}

/// The zones a group launches into: its own, but with capacity-reservations-only and targets,
/// only those of its zones that have one of them.
pub fn launch_zones(s: &Settings) -> Vec<String> {
    if !only_targeted(s) {
        return s.availability_zones.clone();
    }
    s.availability_zones
        .iter()
        .filter(|z| {
            s.reservation_zones
                .iter()
                .any(|r| r.availability_zone == **z)
        })
        .cloned()
        .collect()
}

/// The zone of subnet `id`, if its cloud told it.
pub fn subnet_zone<'a>(s: &'a Settings, id: &str) -> Option<&'a str> {
    s.subnet_zones
        .iter()
        .find(|z| z.subnet_id == id)
        .map(|z| z.availability_zone.as_str())
}

/// The subnets a group launches into: `subnets`, but with capacity-reservations-only and
/// targets, only those in a zone that has one of them (one whose zone is not known is kept: its
/// launch says).
pub fn launch_subnets(s: &Settings, subnets: Vec<String>) -> Vec<String> {
    if !only_targeted(s) {
        return subnets;
    }
    subnets
        .into_iter()
        .filter(|id| {
            subnet_zone(s, id).is_none_or(|zone| {
                s.reservation_zones
                    .iter()
                    .any(|r| r.availability_zone == zone)
            })
        })
        .collect()
}

/// A group that may launch only into its targeted reservations needs one in its zones, or in
/// the zone of one of its `subnets`.
pub fn check_zones(s: &Settings, subnets: &[String]) -> Checked<()> {
    if !only_targeted(s) {
        return Ok(());
    }
    if subnets.is_empty() {
        if launch_zones(s).is_empty() {
            return Err(Refusal::invalid(format!(
                "None of the capacity reservations the group targets is in its Availability Zones ({}): with capacity-reservations-only it could launch nothing.",
                s.availability_zones.join(", ")
            )));
        }
    } else if launch_subnets(s, subnets.to_vec()).is_empty() {
        return Err(Refusal::invalid(format!(
            "None of the capacity reservations the group targets is in the Availability Zone of one of its subnets ({}): with capacity-reservations-only it could launch nothing.",
            subnets.join(", ")
        )));
    }
    Ok(())
}

/// What an on-demand launch in `zone` (None: the cloud's choice) asks, in the order to try; an
/// empty list: no reservation the group targets is in that zone, and it may use no other.
pub fn asks(spec: Option<&Spec>, zones: &[ReservationZone], zone: Option<&str>) -> Vec<Ask> {
    let preference = spec.and_then(|s| s.capacity_reservation_preference);
    let targeted: Vec<Ask> = zones
        .iter()
        .filter(|z| zone.is_none_or(|here| z.availability_zone == here))
        .map(|z| Ask {
            // EC2 takes a preference beside a target only when it is capacity-reservations-only.
            preference: (preference == Some(Preference::CapacityReservationsOnly))
                .then_some("capacity-reservations-only"),
            target: Some(z.capacity_reservation_id.clone()),
        })
        .collect();
    match preference {
        None | Some(Preference::Default) => vec![Ask::default()],
        Some(Preference::None) => vec![Ask {
            preference: Some("none"),
            target: None,
        }],
        Some(Preference::CapacityReservationsOnly) if zones.is_empty() => vec![Ask {
            preference: Some("capacity-reservations-only"),
            target: None,
        }],
        Some(Preference::CapacityReservationsOnly) => targeted,
        Some(Preference::CapacityReservationsFirst) => {
            let mut all = targeted;
            all.push(Ask::default());
            all
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phantom_model::group::CapacityReservationTarget;

    fn spec(preference: Preference, ids: &[&str]) -> Spec {
        Spec {
            capacity_reservation_preference: Some(preference),
            capacity_reservation_target: (!ids.is_empty()).then(|| CapacityReservationTarget {
                capacity_reservation_ids: ids.iter().map(|s| s.to_string()).collect(),
                capacity_reservation_resource_group_arns: Vec::new(),
            }),
        }
    }

    fn rz(id: &str, zone: &str) -> ReservationZone {
        ReservationZone {
            capacity_reservation_id: id.into(),
            availability_zone: zone.into(),
        }
    }

    #[test]
    fn targets_need_a_reservation_preference_and_ids_not_resource_groups() {
        assert_eq!(
            check(&spec(Preference::CapacityReservationsOnly, &["cr-1"])),
            Ok(vec!["cr-1".to_string()])
        );
        assert!(check(&spec(Preference::None, &["cr-1"])).is_err());
        assert!(check(&spec(Preference::Default, &["cr-1"])).is_err());
        let mut groups = spec(Preference::CapacityReservationsFirst, &[]);
        groups.capacity_reservation_target = Some(CapacityReservationTarget {
            capacity_reservation_ids: Vec::new(),
            capacity_reservation_resource_group_arns: vec!["arn:aws:resource-groups:x".into()],
        });
        assert!(check(&groups)
            .unwrap_err()
            .message()
            .contains("no resource groups"));
        let found = [("cr-2".to_string(), "b".to_string())];
        assert_eq!(
            zones(&["cr-2".to_string()], &found),
            Ok(vec![rz("cr-2", "b")])
        );
        assert!(zones(&["cr-9".to_string()], &found).is_err());
    }

    #[test]
    fn each_launch_tries_the_reservations_in_its_zone_then_what_the_preference_allows() {
        let z = [rz("cr-1", "a"), rz("cr-2", "b"), rz("cr-3", "a")];
        let target = |p: Option<&'static str>, id: &str| Ask {
            preference: p,
            target: Some(id.into()),
        };
        let only = spec(
            Preference::CapacityReservationsOnly,
            &["cr-1", "cr-2", "cr-3"],
        );
        let o = Some("capacity-reservations-only");
        assert_eq!(
            asks(Some(&only), &z, Some("a")),
            [target(o, "cr-1"), target(o, "cr-3")]
        );
        assert!(asks(Some(&only), &z, Some("c")).is_empty());
        let first = spec(Preference::CapacityReservationsFirst, &["cr-1", "cr-2"]);
        assert_eq!(
            asks(Some(&first), &z[..2], Some("b")),
            [target(None, "cr-2"), Ask::default()]
        );
        assert_eq!(asks(None, &[], Some("a")), [Ask::default()]);
        assert_eq!(
            asks(Some(&spec(Preference::None, &[])), &[], Some("a")),
            [Ask {
                preference: Some("none"),
                target: None
            }]
        );
        assert_eq!(
            asks(
                Some(&spec(Preference::CapacityReservationsOnly, &[])),
                &[],
                None
            ),
            [Ask {
                preference: o,
                target: None
            }]
        );
    }

    #[test]
    fn only_targeted_reservations_narrow_a_groups_subnets_to_their_zones() {
        let mut s = crate::fixtures::test_group().settings;
        s.subnet_zones = [("subnet-a", "a"), ("subnet-b", "b")]
            .map(|(id, z)| phantom_model::group::SubnetZone {
                subnet_id: id.into(),
                availability_zone: z.into(),
            })
            .into();
        let all = || {
            ["subnet-a", "subnet-b", "subnet-c"]
                .map(String::from)
                .to_vec()
        };
        // Without capacity-reservations-only and targets: all.
        assert_eq!(launch_subnets(&s, all()), all());
        s.capacity_reservation_specification =
            Some(spec(Preference::CapacityReservationsOnly, &["cr-2"]));
        s.reservation_zones = vec![rz("cr-2", "b")];
        // subnet-c's zone is not known: kept, its launch says.
        assert_eq!(launch_subnets(&s, all()), ["subnet-b", "subnet-c"]);
        assert!(check_zones(&s, &all()).is_ok());
        let e = check_zones(&s, &all()[..1])
            .unwrap_err()
            .message()
            .to_string();
        assert!(e.contains("subnet-a"), "{e}");
    }
}
