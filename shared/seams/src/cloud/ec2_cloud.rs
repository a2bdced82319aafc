//! The provisioner's EC2 client: `Cloud` on EC2's Query API, the client of the api's lookups
//! (`ec2_query`) with the provisioner's timeouts, a failed call made again as the SDK's standard
//! retry mode makes it. What RunInstances is asked is `run_params`, the launch request
//! (`launch::LaunchRequest`, decided by `phantom_rules`) written as EC2's Query parameters.

use super::ec2_query::{by_owner_alive, items_of, tagged, Ec2Lookup};
use super::launch::{BlockDevice, Network, Profile};
use super::signed::Node;
use super::{Cloud, CloudError, Connect, LaunchRequest, SpotPrice, Tagged, TAG_GROUP_ID};
use async_trait::async_trait;
use aws_smithy_http_client::Connector;
use phantom_model::cloud::{CloudCredentials, CloudRecord};
use phantom_model::instance::Seen;
use phantom_model::instance_type::{Accelerator, InstanceTypeInfo};
use std::sync::Arc;
use std::time::Duration;

/// The provisioner works for no waiting caller: longer than the api's lookups.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const CALL_TIMEOUT: Duration = Duration::from_secs(20);
/// As the SDK's standard retry mode: a call and two more.
const ATTEMPTS: u32 = 3;
/// EC2 takes up to 1000 resources a call (TerminateInstances, CreateTags, ...).
const IDS_PER_CALL: usize = 1000;

/// Connects to each cloud's EC2 endpoint with a user's credentials there; one connection pool for
/// all.
pub struct Ec2Clouds {
    connector: Arc<Connector>,
}

impl Default for Ec2Clouds {
    fn default() -> Self {
        Self {
            connector: Arc::new(crate::config::connector(CONNECT_TIMEOUT, CALL_TIMEOUT)),
        }
    }
}

impl Connect for Ec2Clouds {
    fn connect(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Cloud> {
        Arc::new(Ec2Lookup::new(
            self.connector.clone(),
            cloud,
            creds,
            CALL_TIMEOUT,
            ATTEMPTS,
        ))
    }
}

#[async_trait]
impl Cloud for Ec2Lookup {
    /// The owner's tagged VMs not terminated, of one group (by id) or all: one DescribeInstances
    /// per page.
    async fn tagged(&self, owner: &str, group_id: Option<&str>) -> Result<Vec<Tagged>, CloudError> {
        let mut params = by_owner_alive(owner);
        if let Some(id) = group_id {
            params.push(pair("Filter.3.Name", format!("tag:{TAG_GROUP_ID}")));
            params.push(pair("Filter.3.Value.1", id));
        }
        self.described(params).await
    }

    async fn launch(&self, l: &LaunchRequest) -> Result<Vec<Seen>, CloudError> {
        let doc = self.client.call(&run_params(l)).await?;
        items_of(&doc, "instancesSet")
            .into_iter()
            .map(|i| tagged(i).map(|t| t.seen))
            .collect()
    }

    /// TerminateInstances (idempotent: terminating a terminated VM is fine).
    async fn terminate(&self, ids: &[String]) -> Result<(), CloudError> {
        for chunk in ids.chunks(IDS_PER_CALL) {
            self.client
                .call(&listed("TerminateInstances", "InstanceId", chunk))
                .await?;
        }
        Ok(())
    }

    async fn stop(&self, ids: &[String], hibernate: bool) -> Result<(), CloudError> {
        for chunk in ids.chunks(IDS_PER_CALL) {
            let mut params = listed("StopInstances", "InstanceId", chunk);
            if hibernate {
                params.push(pair("Hibernate", "true"));
            }
            self.client.call(&params).await?;
        }
        Ok(())
    }

    async fn start(&self, ids: &[String]) -> Result<(), CloudError> {
        for chunk in ids.chunks(IDS_PER_CALL) {
            self.client
                .call(&listed("StartInstances", "InstanceId", chunk))
                .await?;
        }
        Ok(())
    }

    async fn tag(&self, ids: &[String], tags: &[(String, String)]) -> Result<(), CloudError> {
        for chunk in ids.chunks(IDS_PER_CALL) {
            let mut params = listed("CreateTags", "ResourceId", chunk);
            for (n, (k, v)) in tags.iter().enumerate() {
                params.push(pair(&format!("Tag.{}.Key", n + 1), k));
                params.push(pair(&format!("Tag.{}.Value", n + 1), v));
            }
            self.client.call(&params).await?;
        }
        Ok(())
    }

    async fn untag(&self, ids: &[String], keys: &[&str]) -> Result<(), CloudError> {
        for chunk in ids.chunks(IDS_PER_CALL) {
            let mut params = listed("DeleteTags", "ResourceId", chunk);
            for (n, k) in keys.iter().enumerate() {
                params.push(pair(&format!("Tag.{}.Key", n + 1), *k));
            }
            self.client.call(&params).await?;
        }
        Ok(())
    }

    /// DescribeSpotPriceHistory from now: the current price of each type in each zone (Linux's,
    /// where the cloud gives prices for several products).
    async fn spot_prices(&self, types: &[String]) -> Result<Vec<SpotPrice>, CloudError> {
        if types.is_empty() {
            return Ok(Vec::new());
        }
        let now = time::OffsetDateTime::now_utc()
            .replace_nanosecond(0)
            .ok()
            .and_then(|t| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            })
            .ok_or_else(|| CloudError::unreadable("a clock that cannot be written"))?;
        let mut params = listed("DescribeSpotPriceHistory", "InstanceType", types);
        params.push(pair("StartTime", now));
        let doc = self.client.call(&params).await?;
        spot_prices(&doc)
    }

    /// DescribeInstanceTypes, every page. A type without its name, vCPUs or memory is an
    /// error; an attribute EC2 leaves out is one the type does not have.
    async fn instance_types(&self) -> Result<Vec<InstanceTypeInfo>, CloudError> {
        let mut params = vec![pair("Action", "DescribeInstanceTypes")];
        let mut out = Vec::new();
        loop {
            let doc = self.client.call(&params).await?;
            for t in items_of(&doc, "instanceTypeSet") {
                out.push(instance_type_info(t)?);
            }
            match doc.path(&["nextToken"]).map(|n| n.text.as_str()) {
                Some(t) if !t.is_empty() => {
                    params.retain(|(k, _)| k != "NextToken");
                    params.push(pair("NextToken", t));
                }
                _ => return Ok(out),
            }
        }
    }
}

fn pair(k: &str, v: impl Into<String>) -> (String, String) {
    (k.to_string(), v.into())
}

/// An `action` on a list of `values`, each `<member>.N`.
fn listed(action: &str, member: &str, values: &[String]) -> Vec<(String, String)> {
    let mut params = vec![pair("Action", action)];
    for (n, v) in values.iter().enumerate() {
        params.push(pair(&format!("{member}.{}", n + 1), v));
    }
    params
}

/// RunInstances' parameters for a launch request, as the SDK writes them: a list's members
/// numbered from 1, a structure's members after a dot, and only what the request sets.
pub(crate) fn run_params(l: &LaunchRequest) -> Vec<(String, String)> {
    let mut p = vec![
        pair("Action", "RunInstances"),
        pair("MinCount", l.count.to_string()),
        pair("MaxCount", l.count.to_string()),
        pair("ClientToken", &l.client_token),
    ];
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            p.push(pair(k, v));
        }
    };
    let text = |b: Option<bool>| b.map(|b| b.to_string());
    put("ImageId", l.image_id.clone());
    put("InstanceType", l.instance_type.clone());
    put("KeyName", l.key_name.clone());
    put("UserData", l.user_data.clone());
    put("KernelId", l.kernel_id.clone());
    put("RamdiskId", l.ramdisk_id.clone());
    put("EbsOptimized", text(l.ebs_optimized));
    put("Monitoring.Enabled", text(l.monitoring));
    match &l.iam_profile {
        Some(Profile::Arn(arn)) => put("IamInstanceProfile.Arn", Some(arn.clone())),
        Some(Profile::Name(name)) => put("IamInstanceProfile.Name", Some(name.clone())),
        None => {}
    }
    if let Some(spot) = &l.spot {
        put("InstanceMarketOptions.MarketType", Some("spot".into()));
        put(
            "InstanceMarketOptions.SpotOptions.MaxPrice",
            spot.max_price.clone(),
        );
    }
    if let Some(t) = &l.template {
        put("LaunchTemplate.LaunchTemplateId", t.id.clone());
        put("LaunchTemplate.LaunchTemplateName", t.name.clone());
        put("LaunchTemplate.Version", Some(t.version.clone()));
    }
    if let Some(meta) = &l.metadata {
        put("MetadataOptions.HttpTokens", meta.http_tokens.clone());
        put(
            "MetadataOptions.HttpPutResponseHopLimit",
            meta.hop_limit.map(|h| h.to_string()),
        );
        put("MetadataOptions.HttpEndpoint", meta.http_endpoint.clone());
    }
    put("Placement.AvailabilityZone", l.zone.clone());
    put("Placement.Tenancy", l.tenancy.clone());
    put("Placement.GroupName", l.placement_group.clone());
    let ask = &l.capacity_reservation;
    put(
        "CapacityReservationSpecification.CapacityReservationPreference",
        ask.preference.map(str::to_string),
    );
    put(
        "CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId",
        ask.target.clone(),
    );
    for (n, b) in l.block_devices.iter().enumerate() {
        block_device(&mut put, &format!("BlockDeviceMapping.{}", n + 1), b);
    }
    match &l.network {
        Network::Interface {
            subnet,
            public_ip,
            group_ids,
        } => {
            put("NetworkInterface.1.DeviceIndex", Some("0".into()));
            put("NetworkInterface.1.SubnetId", Some(subnet.clone()));
            put(
                "NetworkInterface.1.AssociatePublicIpAddress",
                Some(public_ip.to_string()),
            );
            for (n, g) in group_ids.iter().enumerate() {
                put(
                    &format!("NetworkInterface.1.SecurityGroupId.{}", n + 1),
                    Some(g.clone()),
                );
            }
        }
        Network::Plain {
            subnet,
            group_ids,
            group_names,
        } => {
            put("SubnetId", subnet.clone());
            for (n, g) in group_ids.iter().enumerate() {
                put(&format!("SecurityGroupId.{}", n + 1), Some(g.clone()));
            }
            for (n, g) in group_names.iter().enumerate() {
                put(&format!("SecurityGroup.{}", n + 1), Some(g.clone()));
            }
        }
    }
    put("TagSpecification.1.ResourceType", Some("instance".into()));
    for (n, (k, v)) in l.tags.iter().enumerate() {
        put(
            &format!("TagSpecification.1.Tag.{}.Key", n + 1),
            Some(k.clone()),
        );
        put(
            &format!("TagSpecification.1.Tag.{}.Value", n + 1),
            Some(v.clone()),
        );
    }
    p
}

/// One block device mapping's parameters under `at` (`BlockDeviceMapping.N`).
fn block_device(put: &mut impl FnMut(&str, Option<String>), at: &str, b: &BlockDevice) {
    put(&format!("{at}.DeviceName"), b.device_name.clone());
    put(&format!("{at}.VirtualName"), b.virtual_name.clone());
    if b.no_device {
        put(&format!("{at}.NoDevice"), Some(String::new()));
    }
    if let Some(e) = &b.ebs {
        let number = |n: Option<i32>| n.map(|n| n.to_string());
        let flag = |b: Option<bool>| b.map(|b| b.to_string());
        put(&format!("{at}.Ebs.SnapshotId"), e.snapshot_id.clone());
        put(&format!("{at}.Ebs.VolumeSize"), number(e.volume_size));
        put(&format!("{at}.Ebs.VolumeType"), e.volume_type.clone());
        put(
            &format!("{at}.Ebs.DeleteOnTermination"),
            flag(e.delete_on_termination),
        );
        put(&format!("{at}.Ebs.Iops"), number(e.iops));
        put(&format!("{at}.Ebs.Encrypted"), flag(e.encrypted));
        put(&format!("{at}.Ebs.Throughput"), number(e.throughput));
    }
}

/// The Linux prices of a DescribeSpotPriceHistory answer; one without its type, zone or a price
/// that is a number is an error.
fn spot_prices(doc: &Node) -> Result<Vec<SpotPrice>, CloudError> {
    let mut prices = Vec::new();
    for p in items_of(doc, "spotPriceHistorySet") {
        let text = |k: &str| p.path(&[k]).map(|n| n.text.as_str());
        let (Some(t), Some(zone), Some(price)) = (
            text("instanceType"),
            text("availabilityZone"),
            text("spotPrice"),
        ) else {
            return Err(CloudError::unreadable(
                "a spot price without its type, zone or price",
            ));
        };
        let price: f64 = price.parse().map_err(|_| {
            CloudError::unreadable(format!("a spot price '{price}' that is not a number"))
        })?;
        if text("productDescription").is_some_and(|d| d.starts_with("Linux/UNIX")) {
            prices.push(SpotPrice {
                instance_type: t.to_string(),
                zone: zone.to_string(),
                price,
            });
        }
    }
    Ok(prices)
}

/// The number at `path` under `node`, if it is there; one that does not read is an error.
fn number<T: std::str::FromStr>(node: &Node, path: &[&str]) -> Result<Option<T>, CloudError> {
    match node.path(path) {
        None => Ok(None),
        Some(n) => n.text.trim().parse().map(Some).map_err(|_| {
            CloudError::unreadable(format!(
                "{} '{}' that is not a number",
                path.join("."),
                n.text
            ))
        }),
    }
}

fn flag(node: &Node, name: &str) -> bool {
    node.path(&[name]).is_some_and(|n| n.text == "true")
}

/// One of DescribeInstanceTypes' answers as Phantom reads it.
fn instance_type_info(t: &Node) -> Result<InstanceTypeInfo, CloudError> {
    let (Some(name), Some(vcpus), Some(memory_mib)) = (
        t.path(&["instanceType"]).map(|n| n.text.clone()),
        number::<i64>(t, &["vCpuInfo", "defaultVCpus"])?,
        number::<i64>(t, &["memoryInfo", "sizeInMiB"])?,
    ) else {
        return Err(CloudError::unreadable(
            "an instance type without its name, vCPUs or memory",
        ));
    };
    // A device's count is always given; its memory is left out where it has none of its own.
    let devices = |kind: &'static str, path: &[&str]| -> Result<Vec<Accelerator>, CloudError> {
        let list = t.path(path).map(|l| l.items()).unwrap_or_default();
        list.into_iter()
            .map(|d| {
                let text = |k: &str| d.path(&[k]).map(|n| n.text.clone()).unwrap_or_default();
                Ok(Accelerator {
                    kind,
                    count: number(d, &["count"])?.ok_or_else(|| {
                        CloudError::unreadable(format!(
                            "a {kind} of {name} without its count ({})",
                            text("name")
                        ))
                    })?,
                    manufacturer: text("manufacturer"),
                    name: text("name"),
                    memory_mib: number(d, &["memoryInfo", "sizeInMiB"])?.unwrap_or(0),
                })
            })
            .collect()
    };
    let mut accelerators = devices("gpu", &["gpuInfo", "gpus"])?;
    accelerators.extend(devices("fpga", &["fpgaInfo", "fpgas"])?);
    accelerators.extend(devices(
        "inference",
        &["inferenceAcceleratorInfo", "accelerators"],
    )?);
    let local_storage = match t.path(&["instanceStorageInfo"]) {
        None => None,
        Some(s) => Some((
            number::<f64>(s, &["totalSizeInGB"])?.ok_or_else(|| {
                CloudError::unreadable(format!("instance storage of {name} without its size"))
            })?,
            s.path(&["disks"])
                .map(|d| d.items())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|d| d.path(&["type"]).map(|k| k.text.clone()))
                .collect(),
        )),
    };
    let first_card = t
        .path(&["networkInfo", "networkCards"])
        .and_then(|c| c.items().into_iter().next());
    Ok(InstanceTypeInfo {
        vcpus,
        memory_mib,
        manufacturer: t
            .path(&["processorInfo", "manufacturer"])
            .map(|n| n.text.clone()),
        current_generation: flag(t, "currentGeneration"),
        burstable: flag(t, "burstablePerformanceSupported"),
        bare_metal: flag(t, "bareMetal"),
        hibernation: flag(t, "hibernationSupported"),
        network_interfaces: number(t, &["networkInfo", "maximumNetworkInterfaces"])?,
        network_gbps: match first_card {
            Some(c) => number(c, &["baselineBandwidthInGbps"])?,
            None => None,
        },
        local_storage,
        ebs_baseline_mbps: number(
            t,
            &["ebsInfo", "ebsOptimizedInfo", "baselineBandwidthInMbps"],
        )?,
        accelerators,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::launch::{Ebs, Metadata, Spot};
    use crate::cloud::signed::parse;

    fn request() -> LaunchRequest {
        LaunchRequest {
            count: 2,
            client_token: "tok".into(),
            image_id: Some("ami-1".into()),
            instance_type: Some("t3.micro".into()),
            key_name: None,
            user_data: Some("aGk=".into()),
            kernel_id: None,
            ramdisk_id: None,
            ebs_optimized: Some(false),
            monitoring: Some(true),
            iam_profile: Some(Profile::Name("web".into())),
            spot: Some(Spot {
                max_price: Some("0.05".into()),
            }),
            metadata: Some(Metadata {
                http_tokens: Some("required".into()),
                hop_limit: Some(2),
                http_endpoint: None,
            }),
            block_devices: vec![
                BlockDevice {
                    device_name: Some("/dev/sdf".into()),
                    virtual_name: None,
                    no_device: false,
                    ebs: Some(Ebs {
                        snapshot_id: None,
                        volume_size: Some(20),
                        volume_type: Some("gp3".into()),
                        delete_on_termination: Some(true),
                        iops: None,
                        encrypted: None,
                        throughput: None,
                    }),
                },
                BlockDevice {
                    device_name: Some("/dev/sdg".into()),
                    virtual_name: None,
                    no_device: true,
                    ebs: None,
                },
            ],
            zone: Some("us-east-1a".into()),
            tenancy: None,
            placement_group: Some("pg".into()),
            capacity_reservation: phantom_rules::reservation::Ask {
                preference: Some("open"),
                target: None,
            },
            network: Network::Interface {
                subnet: "subnet-1".into(),
                public_ip: true,
                group_ids: vec!["sg-1".into(), "sg-2".into()],
            },
            tags: vec![("phantom:owner".into(), "olga".into())],
            template: None,
        }
    }

    #[test]
    fn a_launch_request_is_written_as_the_sdk_writes_run_instances() {
        let p = run_params(&request());
        let got: std::collections::BTreeMap<&str, &str> =
            p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got.len(), p.len(), "no parameter twice: {p:?}");
        let want = [
            ("Action", "RunInstances"),
            ("MinCount", "2"),
            ("MaxCount", "2"),
            ("ClientToken", "tok"),
            ("ImageId", "ami-1"),
            ("InstanceType", "t3.micro"),
            ("UserData", "aGk="),
            ("EbsOptimized", "false"),
            ("Monitoring.Enabled", "true"),
            ("IamInstanceProfile.Name", "web"),
            ("InstanceMarketOptions.MarketType", "spot"),
            ("InstanceMarketOptions.SpotOptions.MaxPrice", "0.05"),
            ("MetadataOptions.HttpTokens", "required"),
            ("MetadataOptions.HttpPutResponseHopLimit", "2"),
            ("Placement.AvailabilityZone", "us-east-1a"),
            ("Placement.GroupName", "pg"),
            (
                "CapacityReservationSpecification.CapacityReservationPreference",
                "open",
            ),
            ("BlockDeviceMapping.1.DeviceName", "/dev/sdf"),
            ("BlockDeviceMapping.1.Ebs.VolumeSize", "20"),
            ("BlockDeviceMapping.1.Ebs.VolumeType", "gp3"),
            ("BlockDeviceMapping.1.Ebs.DeleteOnTermination", "true"),
            ("BlockDeviceMapping.2.DeviceName", "/dev/sdg"),
            ("BlockDeviceMapping.2.NoDevice", ""),
            ("NetworkInterface.1.DeviceIndex", "0"),
            ("NetworkInterface.1.SubnetId", "subnet-1"),
            ("NetworkInterface.1.AssociatePublicIpAddress", "true"),
            ("NetworkInterface.1.SecurityGroupId.1", "sg-1"),
            ("NetworkInterface.1.SecurityGroupId.2", "sg-2"),
            ("TagSpecification.1.ResourceType", "instance"),
            ("TagSpecification.1.Tag.1.Key", "phantom:owner"),
            ("TagSpecification.1.Tag.1.Value", "olga"),
        ];
        assert_eq!(got, want.into_iter().collect());
    }

    #[test]
    fn a_plain_network_names_its_subnet_and_groups_on_the_instance() {
        let mut l = request();
        l.network = Network::Plain {
            subnet: None,
            group_ids: vec!["sg-1".into()],
            group_names: vec!["web".into()],
        };
        let p = run_params(&l);
        let has = |k: &str| p.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(has("SecurityGroupId.1"), Some("sg-1"));
        assert_eq!(has("SecurityGroup.1"), Some("web"));
        assert_eq!(has("SubnetId"), None);
        assert!(!p.iter().any(|(k, _)| k.starts_with("NetworkInterface")));
    }

    #[test]
    fn reads_instance_types_as_ec2_writes_them() {
        let doc = parse(
            r#"<DescribeInstanceTypesResponse><instanceTypeSet><item>
              <instanceType>p3.2xlarge</instanceType><currentGeneration>true</currentGeneration>
              <bareMetal>false</bareMetal><hibernationSupported>false</hibernationSupported>
              <burstablePerformanceSupported>false</burstablePerformanceSupported>
              <processorInfo><manufacturer>Intel</manufacturer></processorInfo>
              <vCpuInfo><defaultVCpus>8</defaultVCpus></vCpuInfo>
              <memoryInfo><sizeInMiB>62464</sizeInMiB></memoryInfo>
              <networkInfo><maximumNetworkInterfaces>4</maximumNetworkInterfaces>
                <networkCards><item><baselineBandwidthInGbps>2.5</baselineBandwidthInGbps></item></networkCards>
              </networkInfo>
              <ebsInfo><ebsOptimizedInfo><baselineBandwidthInMbps>1750</baselineBandwidthInMbps></ebsOptimizedInfo></ebsInfo>
              <gpuInfo><gpus><item><name>V100</name><manufacturer>NVIDIA</manufacturer><count>1</count>
                <memoryInfo><sizeInMiB>16384</sizeInMiB></memoryInfo></item></gpus></gpuInfo>
              <mediaAcceleratorInfo><accelerators><item><count>9</count></item></accelerators></mediaAcceleratorInfo>
              <instanceStorageInfo><totalSizeInGB>475</totalSizeInGB><disks><item><type>ssd</type></item></disks></instanceStorageInfo>
            </item><item>
              <instanceType>t2.micro</instanceType>
              <vCpuInfo><defaultVCpus>1</defaultVCpus></vCpuInfo>
              <memoryInfo><sizeInMiB>1024</sizeInMiB></memoryInfo>
            </item></instanceTypeSet></DescribeInstanceTypesResponse>"#,
        )
        .unwrap();
        let types: Vec<InstanceTypeInfo> = items_of(&doc, "instanceTypeSet")
            .into_iter()
            .map(|t| instance_type_info(t).unwrap())
            .collect();
        let p3 = &types[0];
        assert_eq!(
            (p3.name.as_str(), p3.vcpus, p3.memory_mib),
            ("p3.2xlarge", 8, 62464)
        );
        assert_eq!(p3.manufacturer.as_deref(), Some("Intel"));
        assert!(p3.current_generation && !p3.burstable && !p3.bare_metal);
        assert_eq!(p3.network_interfaces, Some(4));
        assert_eq!(p3.network_gbps, Some(2.5));
        assert_eq!(p3.ebs_baseline_mbps, Some(1750));
        assert_eq!(p3.local_storage, Some((475.0, vec!["ssd".to_string()])));
        // The media accelerators are not inference accelerators.
        assert_eq!(p3.accelerators.len(), 1);
        assert_eq!(
            (
                p3.accelerators[0].kind,
                p3.accelerators[0].count,
                p3.accelerators[0].memory_mib
            ),
            ("gpu", 1, 16384)
        );
        let micro = &types[1];
        assert_eq!(micro.manufacturer, None);
        assert_eq!(
            (micro.network_interfaces, micro.local_storage.clone()),
            (None, None)
        );
        assert!(micro.accelerators.is_empty() && !micro.current_generation);

        let no_memory = parse(
            "<r><instanceTypeSet><item><instanceType>x</instanceType><vCpuInfo><defaultVCpus>1</defaultVCpus></vCpuInfo></item></instanceTypeSet></r>",
        )
        .unwrap();
        let e = instance_type_info(items_of(&no_memory, "instanceTypeSet")[0]).unwrap_err();
        assert_eq!(e.code, "UnreadableAnswer");
        let bad = parse(
            "<r><instanceTypeSet><item><instanceType>x</instanceType><vCpuInfo><defaultVCpus>one</defaultVCpus></vCpuInfo><memoryInfo><sizeInMiB>1</sizeInMiB></memoryInfo></item></instanceTypeSet></r>",
        )
        .unwrap();
        let e = instance_type_info(items_of(&bad, "instanceTypeSet")[0]).unwrap_err();
        assert!(e.message.contains("vCpuInfo.defaultVCpus 'one'"), "{e}");
    }

    #[test]
    fn reads_linux_spot_prices_and_refuses_a_price_that_is_not_a_number() {
        let item = |product: &str, price: &str| {
            format!(
                "<item><instanceType>m5.large</instanceType><productDescription>{product}</productDescription>\
                 <spotPrice>{price}</spotPrice><availabilityZone>us-east-1a</availabilityZone></item>"
            )
        };
        let doc = |items: String| {
            parse(&format!(
                "<DescribeSpotPriceHistoryResponse><spotPriceHistorySet>{items}</spotPriceHistorySet></DescribeSpotPriceHistoryResponse>"
            ))
            .unwrap()
        };
        let prices =
            spot_prices(&doc(item("Linux/UNIX", "0.031") + &item("Windows", "0.09"))).unwrap();
        assert_eq!(
            prices,
            vec![SpotPrice {
                instance_type: "m5.large".into(),
                zone: "us-east-1a".into(),
                price: 0.031
            }]
        );
        let e = spot_prices(&doc(item("Linux/UNIX", "cheap"))).unwrap_err();
        assert_eq!(e.code, "UnreadableAnswer");
    }
}
