//! The launch request a launch configuration makes, pure: which image, type, key, groups, disks,
//! network and placement RunInstances gets. The EC2 adapter copies it onto the SDK's request and
//! decides nothing; the memory cloud reads the same struct.

use crate::model::instance::Placement;
use serde_json::Value;

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
    pub spot_price: Option<String>,
    pub metadata: Option<Metadata>,
    pub block_devices: Vec<BlockDevice>,
    pub zone: Option<String>,
    pub tenancy: Option<String>,
    pub network: Network,
    pub tags: Vec<(String, String)>,
    /// A launch template on the cloud: the image and the rest come from it, and the fields above
    /// (an instance type, the placement, the tags) override it.
    pub template: Option<crate::template::TemplateRef>,
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

impl LaunchRequest {
    pub fn subnet(&self) -> Option<&str> {
        match &self.network {
            Network::Plain { subnet, .. } => subnet.as_deref(),
            Network::Interface { subnet, .. } => Some(subnet),
        }
    }
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn int(v: &Value) -> Option<i32> {
    v.as_i64().and_then(|n| i32::try_from(n).ok())
}

/// What a group launches from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A launch configuration's document.
    Config(Value),
    Template(crate::template::Spec),
}

/// The requests for `count` VMs at one placement, in the order to try: one for a launch
/// configuration; for a template, one per override instance type (the next is tried when the
/// cloud has no capacity for the one before), each with its own token, since a token may not be
/// reused with other parameters.
pub fn requests(
    source: &Source,
    count: i32,
    placement: &Placement,
    token: String,
    tags: Vec<(String, String)>,
) -> Vec<LaunchRequest> {
    match source {
        Source::Config(lc) => vec![launch_request(lc, count, placement, token, tags)],
        Source::Template(spec) if spec.instance_types.is_empty() => vec![template_request(
            &spec.template,
            None,
            count,
            placement,
            token,
            tags,
        )],
        Source::Template(spec) => spec
            .instance_types
            .iter()
            .enumerate()
            .map(|(k, t)| {
                let token = if k == 0 {
                    token.clone()
                } else {
                    format!("{token}-{k}")
                };
                template_request(
                    &spec.template,
                    Some(t.clone()),
                    count,
                    placement,
                    token,
                    tags.clone(),
                )
            })
            .collect(),
    }
}

/// Whether a refusal means "no room for this instance type here": try the next override.
pub fn try_another_type(e: &crate::cloud::CloudError) -> bool {
    matches!(
        e.code.as_str(),
        "InsufficientInstanceCapacity" | "InstanceLimitExceeded" | "Unsupported"
    )
}

/// `count` VMs of a launch template at `placement`, of `instance_type` if given (a mixed
/// instances override) or the template's own, idempotent by `client_token`, tagged `tags`.
pub fn template_request(
    template: &crate::template::TemplateRef,
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
        spot_price: None,
        metadata: None,
        block_devices: Vec::new(),
        zone: placement.zone.clone(),
        tenancy: None,
        network: Network::Plain {
            subnet: placement.subnet.clone(),
            group_ids: Vec::new(),
            group_names: Vec::new(),
        },
        tags,
        template: Some(template.clone()),
    }
}

/// `count` VMs of launch configuration `lc` (botocore's `LaunchConfiguration` document) at
/// `placement`, idempotent by `client_token`, tagged `tags`.
pub fn launch_request(
    lc: &Value,
    count: i32,
    placement: &Placement,
    client_token: String,
    tags: Vec<(String, String)>,
) -> LaunchRequest {
    let (group_ids, group_names): (Vec<String>, Vec<String>) = lc["SecurityGroups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(text)
        .partition(|g| g.starts_with("sg-"));
    let network = match (&placement.subnet, lc["AssociatePublicIpAddress"].as_bool()) {
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
    let meta = &lc["MetadataOptions"];
    LaunchRequest {
        count,
        client_token,
        image_id: text(&lc["ImageId"]),
        instance_type: text(&lc["InstanceType"]),
        key_name: text(&lc["KeyName"]),
        user_data: text(&lc["UserData"]),
        kernel_id: text(&lc["KernelId"]),
        ramdisk_id: text(&lc["RamdiskId"]),
        ebs_optimized: lc["EbsOptimized"].as_bool(),
        monitoring: lc["InstanceMonitoring"]["Enabled"].as_bool(),
        iam_profile: text(&lc["IamInstanceProfile"]).map(|p| {
            if p.starts_with("arn:") {
                Profile::Arn(p)
            } else {
                Profile::Name(p)
            }
        }),
        spot_price: text(&lc["SpotPrice"]),
        metadata: meta.is_object().then(|| Metadata {
            http_tokens: text(&meta["HttpTokens"]),
            hop_limit: int(&meta["HttpPutResponseHopLimit"]),
            http_endpoint: text(&meta["HttpEndpoint"]),
        }),
        block_devices: lc["BlockDeviceMappings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                let ebs = &m["Ebs"];
                BlockDevice {
                    device_name: text(&m["DeviceName"]),
                    virtual_name: text(&m["VirtualName"]),
                    no_device: m["NoDevice"].as_bool() == Some(true),
                    ebs: ebs.is_object().then(|| Ebs {
                        snapshot_id: text(&ebs["SnapshotId"]),
                        volume_size: int(&ebs["VolumeSize"]),
                        volume_type: text(&ebs["VolumeType"]),
                        delete_on_termination: ebs["DeleteOnTermination"].as_bool(),
                        iops: int(&ebs["Iops"]),
                        encrypted: ebs["Encrypted"].as_bool(),
                        throughput: int(&ebs["Throughput"]),
                    }),
                }
            })
            .collect(),
        zone: placement.zone.clone(),
        tenancy: text(&lc["PlacementTenancy"]),
        network,
        tags,
        template: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(zone: Option<&str>, subnet: Option<&str>) -> Placement {
        Placement {
            zone: zone.map(str::to_string),
            subnet: subnet.map(str::to_string),
        }
    }

    fn request(lc: Value, p: Placement) -> LaunchRequest {
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
        assert_eq!(r.spot_price.as_deref(), Some("0.05"));
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
