//! A MixedInstancesPolicy's InstancesDistribution, pure: how many of a group's VMs are on-demand
//! and how many spot (AWS's arithmetic: the base first, then the percentage above it, rounded up
//! in favour of on-demand), which market each new VM takes, which market a scale-in takes from
//! first so that the split holds, and in which order to try the overrides' instance types.

use phantom_model::group::InstancesDistribution;
use phantom_model::instance::Market;
use phantom_model::{Checked, Refusal};
use std::collections::BTreeMap;

/// How spot VMs choose among the overrides' instance types (SpotAllocationStrategy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpotStrategy {
    /// The cheapest, spread over the `SpotInstancePools` cheapest types.
    LowestPrice,
    /// The deepest pools: the clouds Phantom drives give no capacity signal, so the overrides
    /// in order, the next where the cloud refuses.
    CapacityOptimized,
    /// The overrides in order, the next where the cloud refuses.
    CapacityOptimizedPrioritized,
    /// The cheapest first; a type the cloud refuses is passed over.
    PriceCapacityOptimized,
}

/// A group's split between on-demand and spot, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution {
    pub on_demand_base: i64,
    pub on_demand_percent: i64,
    pub spot_strategy: SpotStrategy,
    pub spot_pools: i64,
    /// The most a spot VM may cost an hour (None: up to the on-demand price).
    pub spot_max_price: Option<String>,
    /// Beyond AWS (tag `phantom:spot-fallback` = `on-demand`): where no spot can be had, launch
    /// on-demand, and move back to spot a VM at a time once it can.
    pub fallback: bool,
}

/// Where a launch that a zone (or subnet) refused for want of capacity may go instead: nowhere
/// under `balanced-only` (that zone is asked again), the group's other subnets (or zones), in
/// its order, under `balanced-best-effort` (AWS's default). As (zone, subnet) pairs.
pub fn elsewhere(
    s: &phantom_model::group::Settings,
    zone: Option<&str>,
    subnet: Option<&str>,
) -> Vec<(Option<String>, Option<String>)> {
    use phantom_model::group::CapacityDistribution;
    let balanced_only = s
        .availability_zone_distribution
        .as_ref()
        .is_some_and(|d| d.capacity_distribution_strategy == CapacityDistribution::BalancedOnly);
    if balanced_only {
        return Vec::new();
    }
    match subnet {
        Some(failed) => phantom_model::group::subnet_ids(s.vpc_zone_identifier.as_deref())
            .into_iter()
            .filter(|other| other != failed)
            .map(|other| (None, Some(other)))
            .collect(),
        None => s
            .availability_zones
            .iter()
            .filter(|other| Some(other.as_str()) != zone)
            .map(|other| (Some(other.clone()), None))
            .collect(),
    }
}

/// The group tag that opts in to on-demand where spot cannot be had.
pub const TAG_FALLBACK: &str = "phantom:spot-fallback";

/// Whether a group's tags opt in to on-demand fallback; a value other than `on-demand` is
/// refused.
pub fn fallback_of<'a>(mut tags: impl Iterator<Item = (&'a str, &'a str)>) -> Checked<bool> {
    match tags.find(|(k, _)| *k == TAG_FALLBACK) {
        None => Ok(false),
        Some((_, "on-demand")) => Ok(true),
        Some((_, other)) => Err(Refusal::invalid(format!(
            "Tag {TAG_FALLBACK}: '{other}' is not a fallback Phantom knows: give on-demand, or remove the tag."
        ))),
    }
}

impl Distribution {
    /// All on-demand, as a group without a distribution is.
    pub fn on_demand() -> Self {
        Self {
            on_demand_base: 0,
            on_demand_percent: 100,
            spot_strategy: SpotStrategy::LowestPrice,
            spot_pools: 2,
            spot_max_price: None,
            fallback: false,
        }
    }

    /// Checks `d` as AWS does; what it leaves out takes AWS's documented default (base 0, 100 %
    /// on-demand, `prioritized`, `lowest-price` over 2 pools, no maximum price).
    pub fn of(d: &InstancesDistribution) -> Checked<Self> {
        let base = d.on_demand_base_capacity.unwrap_or(0);
        if base < 0 {
            return Err(Refusal::invalid(format!(
                "OnDemandBaseCapacity {base} must be 0 or more."
            )));
        }
        let percent = d.on_demand_percentage_above_base_capacity.unwrap_or(100);
        if !(0..=100).contains(&percent) {
            return Err(Refusal::invalid(format!(
                "OnDemandPercentageAboveBaseCapacity {percent} must be between 0 and 100."
            )));
        }
        match d.on_demand_allocation_strategy.as_deref() {
            None | Some("prioritized") | Some("lowest-price") => {}
            Some(other) => {
                return Err(Refusal::invalid(format!(
                "Invalid OnDemandAllocationStrategy '{other}': give prioritized or lowest-price."
            )))
            }
        }
        let spot_strategy = match d.spot_allocation_strategy.as_deref() {
            None | Some("lowest-price") => SpotStrategy::LowestPrice,
            Some("capacity-optimized") => SpotStrategy::CapacityOptimized,
            Some("capacity-optimized-prioritized") => SpotStrategy::CapacityOptimizedPrioritized,
            Some("price-capacity-optimized") => SpotStrategy::PriceCapacityOptimized,
            Some(other) => return Err(Refusal::invalid(format!(
                "Invalid SpotAllocationStrategy '{other}': give lowest-price, capacity-optimized, capacity-optimized-prioritized or price-capacity-optimized."
            ))),
        };
        // 0 is how Terraform's users clear it for the other strategies.
        let spot_pools = match d.spot_instance_pools {
            None | Some(0) => 2,
            Some(_) if spot_strategy != SpotStrategy::LowestPrice => {
                return Err(Refusal::invalid(
                    "SpotInstancePools option is only available with the lowest-price allocation strategy.",
                ))
            }
            Some(n) if (1..=20).contains(&n) => n,
            Some(n) => {
                return Err(Refusal::invalid(format!(
                    "SpotInstancePools {n} must be between 1 and 20."
                )))
            }
        };
        // An empty SpotMaxPrice removes the maximum (UpdateAutoScalingGroup's way to clear it).
        let spot_max_price = match d.spot_max_price.as_deref() {
            None | Some("") => None,
            Some(p) if p.parse::<f64>().is_ok_and(|v| v > 0.0) && p.len() <= 255 => {
                Some(p.to_string())
            }
            Some(p) => {
                return Err(Refusal::invalid(format!(
                    "SpotMaxPrice '{p}' must be a price per hour above 0, such as 0.05."
                )))
            }
        };
        Ok(Self {
            on_demand_base: base,
            on_demand_percent: percent,
            spot_strategy,
            spot_pools,
            spot_max_price,
            fallback: false,
        })
    }

    /// How many of `total` VMs are on-demand: the base, then the percentage of the rest,
    /// rounded up (AWS rounds in favour of on-demand).
    pub fn on_demand_of(&self, total: i64) -> i64 {
        let base = total.min(self.on_demand_base).max(0);
        let above = (total - base).max(0);
        base + (above * self.on_demand_percent + 99) / 100
    }

    /// The markets of `n` new VMs beside `on_demand` and `spot` VMs the group keeps: on-demand
    /// first while the group is short of its on-demand share.
    pub fn markets(&self, on_demand: i64, spot: i64, n: usize) -> Vec<Market> {
        let want = self.on_demand_of(on_demand + spot + n as i64);
        let more = (want - on_demand).clamp(0, n as i64) as usize;
        let mut out = vec![Market::OnDemand; more];
        out.resize(n, Market::Spot);
        out
    }

    /// Whether the group runs more on-demand VMs than its share, having fallen back where spot
    /// could not be had: one spot VM is to be launched to take an on-demand one's place.
    pub fn moves_back(&self, on_demand: i64, spot: i64) -> bool {
        self.fallback && on_demand > self.on_demand_of(on_demand + spot)
    }

    /// Which market a scale-in takes its next VM from, of a group with `on_demand` and `spot`
    /// VMs: the one above its share once the group is one smaller.
    pub fn leaving(&self, on_demand: i64, spot: i64) -> Option<Market> {
        let total = on_demand + spot;
        if total == 0 {
            return None;
        }
        let keep_on_demand = self.on_demand_of(total - 1);
        if on_demand > keep_on_demand {
            Some(Market::OnDemand)
        } else if spot > 0 {
            Some(Market::Spot)
        } else {
            Some(Market::OnDemand)
        }
    }

    /// Whether spot types are tried by price (else in the overrides' order).
    pub fn orders_by_price(&self) -> bool {
        matches!(
            self.spot_strategy,
            SpotStrategy::LowestPrice | SpotStrategy::PriceCapacityOptimized
        )
    }

    /// The order to try `types` (the overrides, in their priority) for a spot VM, the `k`-th of
    /// a round, given the spot prices the cloud answered (a type without one comes after those
    /// with one, in priority order).
    pub fn spot_order(
        &self,
        types: &[String],
        prices: &BTreeMap<String, f64>,
        k: usize,
    ) -> Vec<String> {
        match self.spot_strategy {
            SpotStrategy::CapacityOptimized | SpotStrategy::CapacityOptimizedPrioritized => {
                types.to_vec()
            }
            SpotStrategy::PriceCapacityOptimized => by_price(types, prices),
            SpotStrategy::LowestPrice => {
                // Spread over the cheapest pools: the k-th VM starts at pool k mod N.
                let mut order = by_price(types, prices);
                let pools = (self.spot_pools as usize).min(order.len()).max(1);
                order[..pools].rotate_left(k % pools);
                order
            }
        }
    }
}

/// `types` cheapest first (a stable sort: equal prices keep the overrides' priority).
fn by_price(types: &[String], prices: &BTreeMap<String, f64>) -> Vec<String> {
    let mut order = types.to_vec();
    order.sort_by(|a, b| {
        let (pa, pb) = (prices.get(a), prices.get(b));
        match (pa, pb) {
            (Some(x), Some(y)) => x.total_cmp(y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use Market::{OnDemand, Spot};

    fn split(base: i64, percent: i64) -> Distribution {
        Distribution {
            on_demand_base: base,
            on_demand_percent: percent,
            ..Distribution::on_demand()
        }
    }

    #[test]
    fn the_base_first_then_the_percentage_rounded_up_for_on_demand() {
        let d = split(1, 50);
        // 1 + ceil(5 * 50 %) = 1 + 3.
        assert_eq!(d.on_demand_of(6), 4);
        assert_eq!(d.on_demand_of(1), 1);
        assert_eq!(d.on_demand_of(0), 0);
        assert_eq!(split(0, 0).on_demand_of(10), 0);
        assert_eq!(split(3, 0).on_demand_of(2), 2);
        assert_eq!(split(0, 25).on_demand_of(10), 3);
        assert_eq!(Distribution::on_demand().on_demand_of(7), 7);
    }

    #[test]
    fn new_vms_fill_the_on_demand_share_first() {
        let d = split(1, 50);
        assert_eq!(
            d.markets(0, 0, 6),
            vec![OnDemand, OnDemand, OnDemand, OnDemand, Spot, Spot]
        );
        // A spot VM lost: its replacement is spot again.
        assert_eq!(d.markets(4, 1, 1), vec![Spot]);
        // An on-demand VM lost: on-demand again.
        assert_eq!(d.markets(3, 2, 1), vec![OnDemand]);
    }

    #[test]
    fn scale_in_takes_from_the_market_above_its_share() {
        let d = split(1, 50);
        // 4 + 2 of 6; at 5 the share is 1 + 2 = 3 on-demand: an on-demand VM leaves.
        assert_eq!(d.leaving(4, 2), Some(OnDemand));
        // 3 + 2 of 5; at 4 the share is 1 + 2 = 3: a spot VM leaves.
        assert_eq!(d.leaving(3, 2), Some(Spot));
        assert_eq!(d.leaving(0, 0), None);
        assert_eq!(split(0, 0).leaving(2, 0), Some(OnDemand));
    }

    #[test]
    fn refuses_what_aws_refuses() {
        let of = |json: serde_json::Value| {
            Distribution::of(&serde_json::from_value::<InstancesDistribution>(json).unwrap())
        };
        assert!(of(serde_json::json!({"OnDemandPercentageAboveBaseCapacity": 101})).is_err());
        assert!(of(serde_json::json!({"OnDemandBaseCapacity": -1})).is_err());
        assert!(of(serde_json::json!({"SpotAllocationStrategy": "cheapest"})).is_err());
        assert!(of(serde_json::json!({"OnDemandAllocationStrategy": "random"})).is_err());
        assert!(of(serde_json::json!({"SpotAllocationStrategy": "capacity-optimized", "SpotInstancePools": 2})).is_err());
        assert!(of(serde_json::json!({"SpotAllocationStrategy": "capacity-optimized", "SpotInstancePools": 0})).is_ok());
        assert!(of(serde_json::json!({"SpotInstancePools": 21})).is_err());
        assert!(of(serde_json::json!({"SpotMaxPrice": "cheap"})).is_err());
        let d = of(serde_json::json!({"SpotMaxPrice": ""})).unwrap();
        assert_eq!(d, Distribution::on_demand());
        let d = of(serde_json::json!({"OnDemandBaseCapacity": 1, "OnDemandPercentageAboveBaseCapacity": 50, "SpotAllocationStrategy": "price-capacity-optimized", "SpotMaxPrice": "0.05"})).unwrap();
        assert_eq!(
            (
                d.on_demand_base,
                d.on_demand_percent,
                d.spot_strategy,
                d.spot_max_price.as_deref()
            ),
            (1, 50, SpotStrategy::PriceCapacityOptimized, Some("0.05"))
        );
    }

    #[test]
    fn spot_types_are_tried_cheapest_first_or_in_priority() {
        let types: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let prices: BTreeMap<String, f64> = [
            ("a".to_string(), 0.3),
            ("b".to_string(), 0.1),
            ("c".to_string(), 0.2),
        ]
        .into();
        let mut d = split(0, 0);
        d.spot_strategy = SpotStrategy::PriceCapacityOptimized;
        assert_eq!(d.spot_order(&types, &prices, 0), ["b", "c", "a"]);
        d.spot_strategy = SpotStrategy::CapacityOptimizedPrioritized;
        assert_eq!(d.spot_order(&types, &prices, 0), ["a", "b", "c"]);
        // Lowest price over 2 pools: VMs alternate between the two cheapest.
        d.spot_strategy = SpotStrategy::LowestPrice;
        assert_eq!(d.spot_order(&types, &prices, 0), ["b", "c", "a"]);
        assert_eq!(d.spot_order(&types, &prices, 1), ["c", "b", "a"]);
        // No prices (a cloud that gives none): the overrides' order.
        assert_eq!(d.spot_order(&types, &BTreeMap::new(), 0), ["a", "b", "c"]);
    }
}
