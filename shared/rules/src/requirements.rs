//! Attribute-based instance type selection, pure: an override's `InstanceRequirements` checked
//! as AWS checks them, the instance types of a cloud that have the attributes asked for (from its
//! DescribeInstanceTypes), in the order a launch tries them (smallest first: fewest vCPUs, then
//! least memory, then by name; EC2's API gives no on-demand prices to order by), and the units
//! each counts for by the group's `DesiredCapacityType`.

use phantom_model::instance_type::{InstanceRequirements, InstanceTypeInfo, Range, RangeF};
use phantom_model::{Checked, Refusal};

const INCLUDED: [&str; 3] = ["included", "excluded", "required"];

/// Checks requirements as AWS does: the vCPU and memory minimums given, every range in order,
/// the words known; the members no cloud gives the data for (on-demand prices, CPU performance)
/// refused.
pub fn check(r: &InstanceRequirements) -> Checked<()> {
    for (member, given) in [
        (
            "MaxSpotPriceAsPercentageOfOptimalOnDemandPrice",
            r.max_spot_price_as_percentage_of_optimal_on_demand_price
                .is_some(),
        ),
        (
            "OnDemandMaxPricePercentageOverLowestPrice",
            r.on_demand_max_price_percentage_over_lowest_price.is_some(),
        ),
        (
            "BaselinePerformanceFactors",
            r.baseline_performance_factors.is_some(),
        ),
    ] {
        if given {
            return Err(Refusal::invalid(format!(
                "InstanceRequirements.{member} cannot be applied: it needs on-demand prices or CPU performance references, and EC2-compatible clouds publish neither through EC2's API. Leave it out."
            )));
        }
    }
    if r.vcpu_count.min.is_none() || r.memory_mib.min.is_none() {
        return Err(Refusal::invalid(
            "InstanceRequirements needs VCpuCount.Min and MemoryMiB.Min.",
        ));
    }
    for (member, range) in [
        ("VCpuCount", Some(r.vcpu_count)),
        ("MemoryMiB", Some(r.memory_mib)),
        ("NetworkInterfaceCount", r.network_interface_count),
        ("BaselineEbsBandwidthMbps", r.baseline_ebs_bandwidth_mbps),
        ("AcceleratorCount", r.accelerator_count),
        ("AcceleratorTotalMemoryMiB", r.accelerator_total_memory_mib),
    ] {
        if let Some(Range { min, max }) = range {
            if min.is_some_and(|m| m < 0) || max.is_some_and(|m| m < 0) {
                return Err(Refusal::invalid(format!(
                    "InstanceRequirements.{member} must not be negative."
                )));
            }
            if let (Some(min), Some(max)) = (min, max) {
                if min > max {
                    return Err(Refusal::invalid(format!(
                        "InstanceRequirements.{member}: Min ({min}) must not be greater than Max ({max})."
                    )));
                }
            }
        }
    }
    for (member, range) in [
        ("MemoryGiBPerVCpu", r.memory_gib_per_vcpu),
        ("TotalLocalStorageGB", r.total_local_storage_gb),
        ("NetworkBandwidthGbps", r.network_bandwidth_gbps),
    ] {
        if let Some(RangeF {
            min: Some(min),
            max: Some(max),
        }) = range
        {
            if min > max {
                return Err(Refusal::invalid(format!(
                    "InstanceRequirements.{member}: Min ({min}) must not be greater than Max ({max})."
                )));
            }
        }
    }
    if r.spot_max_price_percentage_over_lowest_price
        .is_some_and(|p| p < 0)
    {
        return Err(Refusal::invalid(
            "InstanceRequirements.SpotMaxPricePercentageOverLowestPrice must not be negative.",
        ));
    }
    if !r.allowed_instance_types.is_empty() && !r.excluded_instance_types.is_empty() {
        return Err(Refusal::invalid(
            "You can specify either AllowedInstanceTypes or ExcludedInstanceTypes, not both.",
        ));
    }
    let words: [(&str, &[String], &[&str]); 5] = [
        (
            "CpuManufacturers",
            &r.cpu_manufacturers,
            &["intel", "amd", "amazon-web-services", "apple"],
        ),
        (
            "InstanceGenerations",
            &r.instance_generations,
            &["current", "previous"],
        ),
        ("LocalStorageTypes", &r.local_storage_types, &["hdd", "ssd"]),
        (
            "AcceleratorTypes",
            &r.accelerator_types,
            &["gpu", "fpga", "inference"],
        ),
        (
            "AcceleratorManufacturers",
            &r.accelerator_manufacturers,
            &["amazon-web-services", "amd", "nvidia", "xilinx", "habana"],
        ),
    ];
    for (member, given, known) in words {
        if let Some(w) = given.iter().find(|w| !known.contains(&w.as_str())) {
            return Err(Refusal::invalid(format!(
                "InstanceRequirements.{member} '{w}' is not one of {}.",
                known.join(", ")
            )));
        }
    }
    for (member, given) in [
        ("BareMetal", &r.bare_metal),
        ("BurstablePerformance", &r.burstable_performance),
        ("LocalStorage", &r.local_storage),
    ] {
        if let Some(w) = given.as_deref().filter(|w| !INCLUDED.contains(w)) {
            return Err(Refusal::invalid(format!(
                "InstanceRequirements.{member} '{w}' is not one of {}.",
                INCLUDED.join(", ")
            )));
        }
    }
    Ok(())
}

fn within(range: Option<Range>, v: i64) -> bool {
    range.is_none_or(|r| r.min.is_none_or(|m| v >= m) && r.max.is_none_or(|m| v <= m))
}

fn within_f(range: Option<RangeF>, v: f64) -> bool {
    range.is_none_or(|r| r.min.is_none_or(|m| v >= m) && r.max.is_none_or(|m| v <= m))
}

/// `included` (or not given, where that is AWS's default), `excluded` or `required` of a type
/// that has the attribute or not.
fn allows(setting: Option<&str>, default: &str, has: bool) -> bool {
    match setting.unwrap_or(default) {
        "required" => has,
        "excluded" => !has,
        _ => true,
    }
}

/// `*` matches any run of characters, as AWS's instance type patterns do.
fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len()).any(|i| tail.is_char_boundary(i) && glob(rest, &tail[i..]))
        }
    }
}

/// The CPU maker in AWS's words: EC2's ProcessorInfo.Manufacturer, else the family's letter
/// (`m6g`: amazon-web-services, `m5a`: amd, `mac`: apple, else intel).
pub fn cpu_manufacturer(t: &InstanceTypeInfo) -> &'static str {
    match t.manufacturer.as_deref() {
        Some("AWS") => return "amazon-web-services",
        Some("AMD") => return "amd",
        Some("Intel") => return "intel",
        Some("Apple") => return "apple",
        _ => {}
    }
    let family = t.name.split('.').next().unwrap_or_default();
    if family.starts_with("mac") {
        return "apple";
    }
    // The letters after the generation's digit: `g` for Graviton, `a` for AMD.
    let attributes = family.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let attributes = attributes.trim_start_matches(|c: char| c.is_ascii_digit());
    if attributes.starts_with('g') {
        "amazon-web-services"
    } else if attributes.starts_with('a') {
        "amd"
    } else {
        "intel"
    }
}

/// An accelerator maker in AWS's words (EC2 writes `NVIDIA`, `AWS`, ...).
fn accelerator_maker(m: &str) -> String {
    match m {
        "AWS" => "amazon-web-services".into(),
        other => other.to_ascii_lowercase(),
    }
}

/// Whether instance type `t` has the attributes `r` asks for.
pub fn matches(r: &InstanceRequirements, t: &InstanceTypeInfo) -> bool {
    let names = |list: &[String]| list.iter().any(|p| glob(p, &t.name));
    let accelerators: Vec<_> = t
        .accelerators
        .iter()
        .filter(|a| {
            r.accelerator_types.is_empty() || r.accelerator_types.iter().any(|k| k == a.kind)
        })
        .filter(|a| {
            r.accelerator_manufacturers.is_empty()
                || r.accelerator_manufacturers
                    .contains(&accelerator_maker(&a.manufacturer))
        })
        .filter(|a| {
            r.accelerator_names.is_empty()
                || r.accelerator_names.contains(&a.name.to_ascii_lowercase())
        })
        .collect();
    // Accelerators asked for by kind, maker or name: the type must have such.
    let asked = !r.accelerator_types.is_empty()
        || !r.accelerator_manufacturers.is_empty()
        || !r.accelerator_names.is_empty();
    let count: i64 = accelerators.iter().map(|a| a.count).sum();
    let memory: i64 = accelerators.iter().map(|a| a.count * a.memory_mib).sum();
    within(Some(r.vcpu_count), t.vcpus)
        && within(Some(r.memory_mib), t.memory_mib)
        && (r.cpu_manufacturers.is_empty()
            || r.cpu_manufacturers.iter().any(|m| m == cpu_manufacturer(t)))
        && within_f(
            r.memory_gib_per_vcpu,
            t.memory_mib as f64 / 1024.0 / t.vcpus.max(1) as f64,
        )
        && (r.allowed_instance_types.is_empty() || names(&r.allowed_instance_types))
        && !names(&r.excluded_instance_types)
        && (r.instance_generations.is_empty()
            || r.instance_generations
                .iter()
                .any(|g| (g == "current") == t.current_generation))
        && allows(r.bare_metal.as_deref(), "excluded", t.bare_metal)
        && allows(r.burstable_performance.as_deref(), "excluded", t.burstable)
        && (r.require_hibernate_support != Some(true) || t.hibernation)
        && (r.network_interface_count.is_none()
            || t.network_interfaces
                .is_some_and(|n| within(r.network_interface_count, n)))
        && allows(
            r.local_storage.as_deref(),
            "included",
            t.local_storage.is_some(),
        )
        && (r.local_storage_types.is_empty()
            || t.local_storage
                .as_ref()
                .is_none_or(|(_, kinds)| kinds.iter().any(|k| r.local_storage_types.contains(k))))
        && (r.total_local_storage_gb.is_none()
            || t.local_storage
                .as_ref()
                .is_some_and(|(gb, _)| within_f(r.total_local_storage_gb, *gb)))
        && (r.baseline_ebs_bandwidth_mbps.is_none()
            || t.ebs_baseline_mbps
                .is_some_and(|m| within(r.baseline_ebs_bandwidth_mbps, m)))
        && (r.network_bandwidth_gbps.is_none()
            || t.network_gbps
                .is_some_and(|g| within_f(r.network_bandwidth_gbps, g)))
        && (!asked || count > 0)
        && within(r.accelerator_count, count)
        && within(r.accelerator_total_memory_mib, memory)
}

/// The types of `offered` that match `r`, in the order a launch tries them.
pub fn select<'a>(
    r: &InstanceRequirements,
    offered: &'a [InstanceTypeInfo],
) -> Vec<&'a InstanceTypeInfo> {
    let mut found: Vec<&InstanceTypeInfo> = offered.iter().filter(|t| matches(r, t)).collect();
    found.sort_by(|a, b| {
        (a.vcpus, a.memory_mib)
            .cmp(&(b.vcpus, b.memory_mib))
            .then_with(|| a.name.cmp(&b.name))
    });
    found
}

/// AWS's spot price protection where none is given: 100 % above the lowest price.
pub const SPOT_PROTECTION_PERCENT: i64 = 100;

/// The spot price protection of a group's requirements: the strictest given, else AWS's default.
pub fn spot_protection<'a>(all: impl Iterator<Item = &'a InstanceRequirements>) -> i64 {
    all.filter_map(|r| r.spot_max_price_percentage_over_lowest_price)
        .min()
        .unwrap_or(SPOT_PROTECTION_PERCENT)
}

/// Spot price protection: of `types`, those whose spot price (`prices`, where the cloud gives
/// one) is at most `percent` % above the lowest of them. A type without a price stays: nothing
/// says it costs more.
pub fn protected(
    types: &[String],
    prices: &std::collections::BTreeMap<String, f64>,
    percent: i64,
) -> Vec<String> {
    let lowest = types
        .iter()
        .filter_map(|t| prices.get(t))
        .copied()
        .fold(f64::INFINITY, f64::min);
    let ceiling = lowest * (1.0 + percent as f64 / 100.0);
    types
        .iter()
        .filter(|t| prices.get(*t).is_none_or(|p| *p <= ceiling))
        .cloned()
        .collect()
}

/// The units a VM of type `t` counts for by `DesiredCapacityType` (`units`: one).
pub fn units(capacity_type: &str, t: &InstanceTypeInfo) -> i64 {
    match capacity_type {
        "vcpu" => t.vcpus,
        "memory-mib" => t.memory_mib,
        _ => 1,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn info(name: &str, vcpus: i64, memory_mib: i64) -> InstanceTypeInfo {
        InstanceTypeInfo {
            name: name.into(),
            vcpus,
            memory_mib,
            manufacturer: None,
            current_generation: true,
            burstable: name.starts_with('t'),
            bare_metal: name.ends_with(".metal"),
            hibernation: true,
            network_interfaces: Some(3),
            network_gbps: None,
            local_storage: None,
            ebs_baseline_mbps: None,
            accelerators: Vec::new(),
        }
    }

    fn req(v: serde_json::Value) -> InstanceRequirements {
        serde_json::from_value(v).unwrap()
    }

    fn catalog() -> Vec<InstanceTypeInfo> {
        vec![
            info("t3.small", 2, 2048),
            info("m5.large", 2, 8192),
            info("c5.large", 2, 4096),
            info("m6g.large", 2, 8192),
            info("m5.xlarge", 4, 16384),
            info("m5.metal", 96, 393216),
            InstanceTypeInfo {
                current_generation: false,
                ..info("m4.large", 2, 8192)
            },
        ]
    }

    fn names(r: &InstanceRequirements) -> Vec<String> {
        select(r, &catalog())
            .into_iter()
            .map(|t| t.name.clone())
            .collect()
    }

    #[test]
    fn types_match_by_vcpu_and_memory_smallest_first_without_burstable_or_metal_by_default() {
        let r = req(json!({"VCpuCount": {"Min": 2, "Max": 4}, "MemoryMiB": {"Min": 4096}}));
        assert_eq!(
            names(&r),
            ["c5.large", "m4.large", "m5.large", "m6g.large", "m5.xlarge"]
        );
        let r = req(json!({"VCpuCount": {"Min": 2}, "MemoryMiB": {"Min": 2048},
            "BurstablePerformance": "required"}));
        assert_eq!(names(&r), ["t3.small"]);
    }

    #[test]
    fn makers_generations_patterns_and_memory_per_vcpu_narrow_the_choice() {
        let r = req(
            json!({"VCpuCount": {"Min": 2, "Max": 2}, "MemoryMiB": {"Min": 4096},
            "CpuManufacturers": ["amazon-web-services"]}),
        );
        assert_eq!(names(&r), ["m6g.large"]);
        let r = req(
            json!({"VCpuCount": {"Min": 2, "Max": 2}, "MemoryMiB": {"Min": 4096},
            "InstanceGenerations": ["current"], "ExcludedInstanceTypes": ["m6g.*", "c5*"]}),
        );
        assert_eq!(names(&r), ["m5.large"]);
        let r = req(json!({"VCpuCount": {"Min": 1}, "MemoryMiB": {"Min": 1},
            "AllowedInstanceTypes": ["m5.*"], "MemoryGiBPerVCpu": {"Min": 4}}));
        assert_eq!(names(&r), ["m5.large", "m5.xlarge"]);
        assert_eq!(cpu_manufacturer(&info("c6a.large", 2, 4096)), "amd");
        assert_eq!(
            cpu_manufacturer(&info("t4g.micro", 2, 1024)),
            "amazon-web-services"
        );
    }

    #[test]
    fn requirements_are_checked_as_aws_checks_them() {
        let bad = |v: serde_json::Value| check(&req(v)).unwrap_err().message().to_string();
        assert!(
            bad(json!({"VCpuCount": {"Max": 2}, "MemoryMiB": {"Min": 1}}))
                .contains("VCpuCount.Min")
        );
        assert!(
            bad(json!({"VCpuCount": {"Min": 4, "Max": 2}, "MemoryMiB": {"Min": 1}}))
                .contains("Min (4)")
        );
        assert!(bad(json!({"VCpuCount": {"Min": 1}, "MemoryMiB": {"Min": 1},
            "AllowedInstanceTypes": ["a"], "ExcludedInstanceTypes": ["b"]}))
        .contains("not both"));
        assert!(bad(json!({"VCpuCount": {"Min": 1}, "MemoryMiB": {"Min": 1},
            "CpuManufacturers": ["via"]}))
        .contains("via"));
        assert!(bad(json!({"VCpuCount": {"Min": 1}, "MemoryMiB": {"Min": 1},
            "OnDemandMaxPricePercentageOverLowestPrice": 50}))
        .contains("cannot be applied"));
        check(&req(
            json!({"VCpuCount": {"Min": 1}, "MemoryMiB": {"Min": 1}}),
        ))
        .unwrap();
    }

    #[test]
    fn spot_types_dearer_than_the_protection_allows_are_passed_over() {
        let types: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let prices = [("a", 0.010), ("b", 0.019), ("c", 0.021)]
            .map(|(t, p)| (t.to_string(), p))
            .into_iter()
            .collect();
        assert_eq!(protected(&types, &prices, 100), ["a", "b", "d"]);
        assert_eq!(protected(&types, &prices, 0), ["a", "d"]);
        let r = req(json!({"VCpuCount": {"Min": 1}, "MemoryMiB": {"Min": 1},
            "SpotMaxPricePercentageOverLowestPrice": 50}));
        assert_eq!(spot_protection([&r].into_iter()), 50);
        assert_eq!(spot_protection(std::iter::empty()), 100);
    }

    #[test]
    fn capacity_in_vcpus_or_memory() {
        let t = info("m5.large", 2, 8192);
        assert_eq!(
            (
                units("vcpu", &t),
                units("memory-mib", &t),
                units("units", &t)
            ),
            (2, 8192, 1)
        );
    }
}
