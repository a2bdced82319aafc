//! Instance weights, pure: a MixedInstancesPolicy override's `WeightedCapacity`, the capacity
//! units a VM of that instance type counts for toward the group's desired, minimum and maximum
//! capacity. Without weights every VM is one unit. As AWS counts them: a launch covers what the
//! group is short of even past it ("launches instances until the desired capacity is totally
//! fulfilled, even if this results in an overage"), so the group runs above MaxSize by less than
//! its largest weight at most; a scale-in never takes the group below its desired capacity.

use phantom_model::instance::Member;
use phantom_model::{Checked, Refusal};
use std::collections::BTreeMap;

/// The units of each instance type of a group's overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weights {
    by_type: BTreeMap<String, i64>,
    /// Whether VMs weigh what their types do (given by the overrides, or by the cloud's types'
    /// vCPUs or memory under a `DesiredCapacityType`), not one each.
    weighed: bool,
    /// The first override's weight: the type a launch tries first, so what the decision counts a
    /// new VM as (1 without weights).
    nominal: i64,
}

impl Default for Weights {
    fn default() -> Self {
        Self::none()
    }
}

/// AWS's bounds of a `WeightedCapacity`.
const MAX_WEIGHT: i64 = 999;

impl Weights {
    /// Every VM one unit.
    pub fn none() -> Self {
        Self {
            by_type: BTreeMap::new(),
            weighed: false,
            nominal: 1,
        }
    }

    /// Each VM weighs what it was launched weighing: a group whose types come from the cloud
    /// (InstanceRequirements) and count their vCPUs or memory (`DesiredCapacityType`). The
    /// decision counts a unit a placement; the launch finds how many VMs of a type cover them.
    pub fn recorded() -> Self {
        Self {
            by_type: BTreeMap::new(),
            weighed: true,
            nominal: 1,
        }
    }

    /// The units of each type the cloud offers, in the order a launch tries them.
    pub fn of_types(units: &[(String, i64)]) -> Self {
        Self {
            by_type: units.iter().cloned().collect(),
            weighed: true,
            nominal: units.first().map_or(1, |(_, u)| *u),
        }
    }

    /// From the overrides' (instance type, `WeightedCapacity`) in their order, checked: each a
    /// whole number from 1 to 999, given on all overrides or none.
    pub fn of(overrides: &[(String, Option<String>)]) -> Checked<Self> {
        let given = overrides.iter().filter(|(_, w)| w.is_some()).count();
        if given == 0 {
            return Ok(Self::none());
        }
        if given < overrides.len() {
            return Err(Refusal::invalid(
                "If you specify a value for WeightedCapacity for one instance type, you must specify a value for WeightedCapacity for all of them.",
            ));
        }
        let mut by_type = BTreeMap::new();
        for (t, w) in overrides {
            let w = w.as_deref().unwrap_or_default();
            let units = w
                .parse::<i64>()
                .ok()
                .filter(|u| (1..=MAX_WEIGHT).contains(u))
                .ok_or_else(|| {
                    Refusal::invalid(format!(
                        "WeightedCapacity '{w}' of instance type {t} is not valid: it must be a whole number from 1 to {MAX_WEIGHT}."
                    ))
                })?;
            by_type.insert(t.clone(), units);
        }
        let nominal = by_type[&overrides[0].0];
        Ok(Self {
            by_type,
            weighed: true,
            nominal,
        })
    }

    /// Whether the overrides give weights (each VM then shows its `WeightedCapacity`).
    pub fn given(&self) -> bool {
        self.weighed
    }

    /// The weight of instance type `t` now, if the overrides give it one.
    pub fn of_type(&self, t: &str) -> Option<i64> {
        self.by_type.get(t).copied()
    }

    /// The units a VM counts for: its type's weight now (changed weights apply to running VMs,
    /// as in AWS); a type no longer in the overrides keeps the weight it was launched with;
    /// without weights, one.
    pub fn units(&self, m: &Member) -> i64 {
        if !self.given() {
            return 1;
        }
        self.of_type(&m.instance_type).or(m.weight).unwrap_or(1)
    }

    /// The units of `members`.
    pub fn sum(&self, members: &[Member]) -> i64 {
        members.iter().map(|m| self.units(m)).sum()
    }

    /// What a new VM counts for in the decision (the first override's weight).
    pub fn nominal(&self) -> i64 {
        self.nominal
    }

    /// VMs of type `t` (None: the template's own type, one unit) that cover `units`.
    pub fn count(&self, units: i64, t: Option<&str>) -> i64 {
        let w = t.and_then(|t| self.of_type(t)).unwrap_or(1);
        (units + w - 1) / w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::test_member;
    use phantom_model::instance::Lifecycle;

    fn of(pairs: &[(&str, Option<&str>)]) -> Checked<Weights> {
        let owned: Vec<(String, Option<String>)> = pairs
            .iter()
            .map(|(t, w)| (t.to_string(), w.map(str::to_string)))
            .collect();
        Weights::of(&owned)
    }

    #[test]
    fn weights_are_given_on_all_overrides_or_none_each_from_1_to_999() {
        assert!(!of(&[("a", None), ("b", None)]).unwrap().given());
        let w = of(&[("t2.small", Some("2")), ("t2.micro", Some("1"))]).unwrap();
        assert_eq!((w.of_type("t2.micro"), w.nominal()), (Some(1), 2));
        assert!(of(&[("a", Some("1")), ("b", None)])
            .unwrap_err()
            .message()
            .contains("for all of them"));
        for bad in ["0", "1000", "1.5", "x"] {
            assert!(of(&[("a", Some(bad))]).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_vm_counts_its_types_weight_now_else_the_one_it_was_launched_with() {
        let w = of(&[("t2.micro", Some("1")), ("t2.small", Some("2"))]).unwrap();
        let small = Member {
            instance_type: "t2.small".into(),
            weight: Some(5),
            ..test_member("i-1", Lifecycle::InService)
        };
        let gone = Member {
            instance_type: "m5.large".into(),
            weight: Some(4),
            ..test_member("i-2", Lifecycle::InService)
        };
        assert_eq!((w.units(&small), w.units(&gone)), (2, 4));
        assert_eq!(w.sum(&[small.clone(), gone]), 6);
        assert_eq!(Weights::none().units(&small), 1, "weights taken away");
    }

    #[test]
    fn a_launch_covers_its_units_past_them_if_it_must() {
        let w = of(&[("t2.micro", Some("1")), ("t2.small", Some("2"))]).unwrap();
        assert_eq!(w.count(3, Some("t2.small")), 2);
        assert_eq!(w.count(3, Some("t2.micro")), 3);
        assert_eq!(w.count(3, None), 3);
    }
}
