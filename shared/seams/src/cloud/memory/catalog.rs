//! The memory cloud's instance types: a few of EC2's, with the attributes its DescribeInstanceTypes
//! gives them (vCPUs, memory, maker, generation, burstable, storage, accelerators).

use phantom_model::instance_type::{Accelerator, InstanceTypeInfo};

/// (name, vCPUs, memory MiB, maker, burstable).
const TYPES: [(&str, i64, i64, &str, bool); 10] = [
    ("t2.micro", 1, 1024, "Intel", true),
    ("t2.small", 1, 2048, "Intel", true),
    ("t3.medium", 2, 4096, "Intel", true),
    ("t4g.micro", 2, 1024, "AWS", true),
    ("c5.large", 2, 4096, "Intel", false),
    ("m5.large", 2, 8192, "Intel", false),
    ("m5a.large", 2, 8192, "AMD", false),
    ("m6g.large", 2, 8192, "AWS", false),
    ("m5.xlarge", 4, 16384, "Intel", false),
    ("c5.2xlarge", 8, 16384, "Intel", false),
];

pub fn instance_types() -> Vec<InstanceTypeInfo> {
    let mut all: Vec<InstanceTypeInfo> = TYPES
        .iter()
        .map(
            |(name, vcpus, memory_mib, maker, burstable)| InstanceTypeInfo {
                name: name.to_string(),
                vcpus: *vcpus,
                memory_mib: *memory_mib,
                manufacturer: Some(maker.to_string()),
                current_generation: !name.starts_with("t2."),
                burstable: *burstable,
                bare_metal: false,
                hibernation: true,
                network_interfaces: Some(if *vcpus > 2 { 4 } else { 3 }),
                network_gbps: Some(if *vcpus > 2 { 1.25 } else { 0.75 }),
                local_storage: None,
                ebs_baseline_mbps: Some(650),
                accelerators: Vec::new(),
            },
        )
        .collect();
    all.push(InstanceTypeInfo {
        name: "g4dn.xlarge".into(),
        vcpus: 4,
        memory_mib: 16384,
        manufacturer: Some("Intel".into()),
        current_generation: true,
        burstable: false,
        bare_metal: false,
        hibernation: false,
        network_interfaces: Some(3),
        network_gbps: Some(5.0),
        local_storage: Some((125.0, vec!["ssd".into()])),
        ebs_baseline_mbps: Some(950),
        accelerators: vec![Accelerator {
            kind: "gpu",
            count: 1,
            manufacturer: "NVIDIA".into(),
            name: "T4".into(),
            memory_mib: 16384,
        }],
    });
    all
}
