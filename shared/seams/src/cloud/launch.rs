//! The launch request a launch configuration makes, pure: which image, type, key, groups, disks,
//! network and placement RunInstances gets. The EC2 adapter copies it onto the SDK's request and
//! decides nothing; the memory cloud reads the same struct.

use phantom_model::instance::{Market, Placement};
use phantom_model::launch_config::LaunchConfiguration;

#[derive(Debug, Clone, PartialEq)]
pub struct LaunchRequest {
    pub count: i32,
    /// The same token makes a retried RunInstances return the VMs of the first call.
    pub client_token: String,
    pub image_id: Option<String>,
    pub instance_type: Option<String>,
    pub key_name: Option<String>,
    /// Base64, as stored.
    pub user_data: Option<String>,
    pub kernel_id: Option<String>,
    pub ramdisk_id: Option<String>,
    pub ebs_optimized: Option<bool>,
    pub monitoring: Option<bool>,
    pub iam_profile: Option<Profile>,
    /// Spot capacity, not on-demand (RunInstances' InstanceMarketOptions).
    pub spot: Option<Spot>,
    pub metadata: Option<Metadata>,
    pub block_devices: Vec<BlockDevice>,
    pub zone: Option<String>,
    pub tenancy: Option<String>,
    /// The group's placement group (RunInstances' Placement.GroupName).
    pub placement_group: Option<String>,
    /// The capacity reservation it asks for (RunInstances' CapacityReservationSpecification;
    /// the default asks nothing).
    pub capacity_reservation: phantom_rules::reservation::Ask,
    pub network: Network,
    pub tags: Vec<(String, String)>,
    /// A launch template on the cloud: the image and the rest come from it, and the fields above
    /// (an instance type, the placement, the tags) override it.
    pub template: Option<phantom_rules::template::TemplateRef>,
}

/// A spot request: the most it may cost an hour (None: up to the on-demand price, EC2's own
/// default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    pub max_price: Option<String>,
}

/// An instance profile by name or by ARN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Profile {
    Name(String),
    Arn(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub http_tokens: Option<String>,
    pub hop_limit: Option<i32>,
    pub http_endpoint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockDevice {
    pub device_name: Option<String>,
    pub virtual_name: Option<String>,
    pub no_device: bool,
    pub ebs: Option<Ebs>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ebs {
    pub snapshot_id: Option<String>,
    pub volume_size: Option<i32>,
    pub volume_type: Option<String>,
    pub delete_on_termination: Option<bool>,
    pub iops: Option<i32>,
    pub encrypted: Option<bool>,
    pub throughput: Option<i32>,
}

/// Where the VM's network comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    /// The instance's own fields: a subnet (or none) and security groups by id and by name.
    Plain {
        subnet: Option<String>,
        group_ids: Vec<String>,
        group_names: Vec<String>,
    },
    /// A public address is asked for on the primary network interface (device 0), which then
    /// carries the subnet and the groups (by id).
    Interface {
        subnet: String,
        public_ip: bool,
        group_ids: Vec<String>,
    },
}

impl Network {
    /// The same network in subnet `subnet` (None: as it is, for a launch into another zone).
    pub fn at_subnet(&self, subnet: Option<String>) -> Self {
        match (self, subnet) {
            (n, None) => n.clone(),
            (
                Network::Plain {
                    group_ids,
                    group_names,
                    ..
                },
                Some(s),
            ) => Network::Plain {
                subnet: Some(s),
                group_ids: group_ids.clone(),
                group_names: group_names.clone(),
            },
            (
                Network::Interface {
                    public_ip,
                    group_ids,
                    ..
                },
                Some(s),
            ) => Network::Interface {
                subnet: s,
                public_ip: *public_ip,
                group_ids: group_ids.clone(),
            },
        }
    }
}

impl LaunchRequest {
    pub fn subnet(&self) -> Option<&str> {
        match &self.network {
            Network::Plain { subnet, .. } => subnet.as_deref(),
            Network::Interface { subnet, .. } => Some(subnet),
        }
    }
}

/// What a group launches from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Config(Box<LaunchConfiguration>),
    Template(phantom_rules::template::Spec),
}

/// The requests for VMs covering a placement's capacity units (`Placement::units`), in the order
/// to try:
/// one for a launch configuration (a VM a unit); for a template, one per instance type of
/// `types` (a MixedInstancesPolicy's overrides in the order to try them; empty: the template's
/// own type), as many VMs of it as cover the units by its weight (`phantom_rules::weights`), the next
/// tried when the cloud has no room for the one before, each with its own token, since a token
/// may not be reused with other parameters. A spot placement asks for spot at up to
/// `spot_max_price`.
pub fn requests(
    source: &Source,
    types: &[String],
    placement: &Placement,
    spot_max_price: Option<&str>,
    token: String,
    tags: Vec<(String, String)>,
) -> Vec<LaunchRequest> {
    let spec = match source {
        Source::Config(lc) => {
            return vec![launch_request(
                lc,
                placement.units as i32,
                placement,
                token,
                tags,
            )]
        }
        Source::Template(spec) => spec,
    };
    let spot = (placement.market == Market::Spot).then(|| Spot {
        max_price: spot_max_price.map(str::to_string),
    });
    let types: Vec<Option<String>> = if types.is_empty() {
        vec![None]
    } else {
        types.iter().cloned().map(Some).collect()
    };
    types
        .into_iter()
        .enumerate()
        .map(|(k, t)| {
            let token = if k == 0 {
                token.clone()
            } else {
                format!("{token}-{k}")
            };
            let count = spec.weights.count(placement.units, t.as_deref()) as i32;
            LaunchRequest {
                spot: spot.clone(),
                ..template_request(
                    spec.template_for(t.as_deref()),
                    t,
                    count,
                    placement,
                    token,
                    tags.clone(),
                )
            }
        })
        .collect()
}

/// Whether a refusal means "no room for this instance type here, or not at this price": try
/// the next override.
pub fn try_another_type(e: &crate::cloud::CloudError) -> bool {
    matches!(
        e.code.as_str(),
        "InsufficientInstanceCapacity"
            | "InstanceLimitExceeded"
            | "Unsupported"
            | "SpotMaxPriceTooLow"
            | "MaxSpotInstanceCountExceeded"
            | "InsufficientCapacityOnHost"
            | "ReservationCapacityExceeded"
    )
}

/// `count` VMs of a launch template at `placement`, of `instance_type` if given (a mixed
/// instances override) or the template's own, idempotent by `client_token`, tagged `tags`.
pub fn template_request(
    template: &phantom_rules::template::TemplateRef,
    instance_type: Option<String>,
    count: i32,
    placement: &Placement,
    client_token: String,
    tags: Vec<(String, String)>,
) -> LaunchRequest {
    LaunchRequest {
        count,
        client_token,
        image_id: None,
        instance_type,
        key_name: None,
        user_data: None,
        kernel_id: None,
        ramdisk_id: None,
        ebs_optimized: None,
        monitoring: None,
        iam_profile: None,
        spot: None,
        metadata: None,
        block_devices: Vec::new(),
        zone: placement.zone.clone(),
        tenancy: None,
        placement_group: None,
        capacity_reservation: Default::default(),
        network: Network::Plain {
            subnet: placement.subnet.clone(),
            group_ids: Vec::new(),
            group_names: Vec::new(),
        },
        tags,
        template: Some(template.clone()),
    }
}

/// `count` VMs of launch configuration `lc` at `placement`, idempotent by `client_token`,
/// tagged `tags`.
pub fn launch_request(
    lc: &LaunchConfiguration,
    count: i32,
    placement: &Placement,
    client_token: String,
    tags: Vec<(String, String)>,
) -> LaunchRequest {
    let (group_ids, group_names): (Vec<String>, Vec<String>) = lc
        .security_groups
        .iter()
        .cloned()
        .partition(|g| g.starts_with("sg-"));
    let network = match (&placement.subnet, lc.associate_public_ip_address) {
        (Some(subnet), Some(public_ip)) => Network::Interface {
            subnet: subnet.clone(),
            public_ip,
            group_ids,
        },
        (subnet, _) => Network::Plain {
            subnet: subnet.clone(),
            group_ids,
            group_names,
        },
    };
    LaunchRequest {
        count,
        client_token,
        image_id: Some(lc.image_id.clone()),
        instance_type: Some(lc.instance_type.clone()),
        key_name: lc.key_name.clone(),
        user_data: lc.user_data.clone(),
        kernel_id: lc.kernel_id.clone(),
        ramdisk_id: lc.ramdisk_id.clone(),
        ebs_optimized: Some(lc.ebs_optimized),
        monitoring: Some(lc.instance_monitoring.enabled),
        iam_profile: lc.iam_instance_profile.as_ref().map(|p| {
            if p.starts_with("arn:") {
                Profile::Arn(p.clone())
            } else {
                Profile::Name(p.clone())
            }
        }),
        // A launch configuration's SpotPrice makes every VM of it spot, as on AWS.
        spot: lc.spot_price.clone().map(|p| Spot { max_price: Some(p) }),
        metadata: lc.metadata_options.as_ref().map(|m| Metadata {
            http_tokens: m.http_tokens.clone(),
            hop_limit: m.http_put_response_hop_limit,
            http_endpoint: m.http_endpoint.clone(),
        }),
        block_devices: lc
            .block_device_mappings
            .iter()
            .map(|m| BlockDevice {
                device_name: Some(m.device_name.clone()),
                virtual_name: m.virtual_name.clone(),
                no_device: m.no_device == Some(true),
                ebs: m.ebs.as_ref().map(|e| Ebs {
                    snapshot_id: e.snapshot_id.clone(),
                    volume_size: e.volume_size,
                    volume_type: e.volume_type.clone(),
                    delete_on_termination: e.delete_on_termination,
                    iops: e.iops,
                    encrypted: e.encrypted,
                    throughput: e.throughput,
                }),
            })
            .collect(),
        zone: placement.zone.clone(),
        tenancy: lc.placement_tenancy.clone(),
        placement_group: None,
        capacity_reservation: Default::default(),
        network,
        tags,
        template: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn at(zone: Option<&str>, subnet: Option<&str>) -> Placement {
        Placement {
            zone: zone.map(str::to_string),
            subnet: subnet.map(str::to_string),
            market: Market::OnDemand,
            units: 1,
        }
    }

    /// A stored launch configuration: AWS's defaults, then `given`'s members.
    fn request(given: Value, p: Placement) -> LaunchRequest {
        let mut doc = json!({"LaunchConfigurationName": "l", "LaunchConfigurationARN": "arn:l",
            "ImageId": "ami-1", "InstanceType": "t2.micro", "SecurityGroups": [],
            "ClassicLinkVPCSecurityGroups": [], "BlockDeviceMappings": [],
            "InstanceMonitoring": {"Enabled": true}, "CreatedTime": "2026-01-01T00:00:00.000Z",
            "EbsOptimized": false});
        for (k, v) in given.as_object().unwrap() {
            doc[k] = v.clone();
        }
        let lc: LaunchConfiguration = serde_json::from_value(doc).unwrap();
        launch_request(&lc, 2, &p, "tok".into(), vec![("k".into(), "v".into())])
    }

    #[test]
    fn a_minimal_launch_configuration() {
        let r = request(
            json!({"ImageId": "ami-1", "InstanceType": "t2.micro"}),
            at(Some("z"), None),
        );
        assert_eq!((r.count, r.client_token.as_str()), (2, "tok"));
        assert_eq!(r.image_id.as_deref(), Some("ami-1"));
        assert_eq!(r.zone.as_deref(), Some("z"));
        assert_eq!(
            r.network,
            Network::Plain {
                subnet: None,
                group_ids: vec![],
                group_names: vec![]
            }
        );
        assert!(r.block_devices.is_empty() && r.metadata.is_none() && r.iam_profile.is_none());
        assert_eq!(r.tags, vec![("k".to_string(), "v".to_string())]);
    }

    #[test]
    fn groups_by_id_and_by_name_and_the_network_interface() {
        let lc = json!({"SecurityGroups": ["sg-1", "web", "sg-2"]});
        let r = request(lc.clone(), at(None, Some("subnet-1")));
        assert_eq!(
            r.network,
            Network::Plain {
                subnet: Some("subnet-1".into()),
                group_ids: vec!["sg-1".into(), "sg-2".into()],
                group_names: vec!["web".into()]
            }
        );
        let mut public = lc;
        public["AssociatePublicIpAddress"] = json!(true);
        let r = request(public.clone(), at(None, Some("subnet-1")));
        assert_eq!(
            r.network,
            Network::Interface {
                subnet: "subnet-1".into(),
                public_ip: true,
                group_ids: vec!["sg-1".into(), "sg-2".into()]
            }
        );
        assert_eq!(r.subnet(), Some("subnet-1"));
        // Without a subnet there is no interface to put the address on.
        let r = request(public, at(Some("z"), None));
        assert!(matches!(r.network, Network::Plain { subnet: None, .. }));
    }

    #[test]
    fn disks_profiles_spot_metadata_tenancy() {
        let lc = json!({
            "BlockDeviceMappings": [
                {"DeviceName": "/dev/sda1", "Ebs": {"SnapshotId": "snap-1", "VolumeSize": 30, "VolumeType": "gp3",
                  "DeleteOnTermination": true, "Iops": 3000, "Encrypted": true, "Throughput": 125}},
                {"DeviceName": "/dev/sdb", "VirtualName": "ephemeral0"},
                {"DeviceName": "/dev/sdc", "NoDevice": true}
            ],
            "IamInstanceProfile": "arn:aws:iam::1:instance-profile/web",
            "SpotPrice": "0.05",
            "MetadataOptions": {"HttpTokens": "required", "HttpPutResponseHopLimit": 2, "HttpEndpoint": "enabled"},
            "PlacementTenancy": "dedicated",
            "InstanceMonitoring": {"Enabled": false},
            "EbsOptimized": true
        });
        let r = request(lc, at(None, None));
        assert_eq!(r.block_devices.len(), 3);
        let ebs = r.block_devices[0].ebs.as_ref().unwrap();
        assert_eq!(
            (ebs.volume_size, ebs.iops, ebs.throughput, ebs.encrypted),
            (Some(30), Some(3000), Some(125), Some(true))
        );
        assert_eq!(
            r.block_devices[1].virtual_name.as_deref(),
            Some("ephemeral0")
        );
        assert!(r.block_devices[2].no_device && r.block_devices[2].ebs.is_none());
        assert_eq!(
            r.iam_profile,
            Some(Profile::Arn("arn:aws:iam::1:instance-profile/web".into()))
        );
        assert_eq!(
            r.spot,
            Some(Spot {
                max_price: Some("0.05".into())
            })
        );
        assert_eq!(
            r.metadata,
            Some(Metadata {
                http_tokens: Some("required".into()),
                hop_limit: Some(2),
                http_endpoint: Some("enabled".into())
            })
        );
        assert_eq!(r.tenancy.as_deref(), Some("dedicated"));
        assert_eq!((r.monitoring, r.ebs_optimized), (Some(false), Some(true)));
        let r = request(json!({"IamInstanceProfile": "web"}), at(None, None));
        assert_eq!(r.iam_profile, Some(Profile::Name("web".into())));
    }
}
