//! The EC2 adapter: one client per (cloud, user credentials), and the three things Phantom asks of
//! a cloud: which tagged VMs exist, launch some, terminate some. Thin: the decisions are in
//! `phantom::reconcile`.

use aws_credential_types::Credentials;
use aws_sdk_ec2::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_ec2::types::{
    BlockDeviceMapping, EbsBlockDevice, Filter, HttpTokensState, IamInstanceProfileSpecification,
    InstanceMarketOptionsRequest, InstanceMetadataEndpointState, InstanceMetadataOptionsRequest,
    InstanceNetworkInterfaceSpecification, InstanceType, MarketType, Placement as Ec2Placement,
    ResourceType, RunInstancesMonitoringEnabled, SpotMarketOptions, Tag, TagSpecification, Tenancy,
    VolumeType,
};
use phantom::reconcile::{CloudState, Placement, Seen};
use phantom::store::{Cloud, CloudCredentials};
use serde_json::Value;
use std::time::Duration;

/// Tags every VM carries: who owns it and which group (by name and by id) it belongs to.
pub const TAG_OWNER: &str = "phantom:owner";
pub const TAG_GROUP: &str = "phantom:group";
pub const TAG_GROUP_ID: &str = "phantom:group-id";

/// What a cloud said when it refused, or why it could not be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudError {
    pub code: String,
    pub message: String,
}

impl std::fmt::Display for CloudError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for CloudError {}

fn cloud_error<E, R>(e: SdkError<E, R>) -> CloudError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    match e.as_service_error() {
        Some(s) => CloudError {
            code: s.code().unwrap_or("Unknown").to_string(),
            message: s.message().unwrap_or_default().to_string(),
        },
        None => CloudError {
            code: "CloudUnreachable".into(),
            message: DisplayErrorContext(&e).to_string(),
        },
    }
}

/// A VM with Phantom's tags, as the cloud shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tagged {
    pub seen: Seen,
    pub group: String,
    pub group_id: String,
}

/// One launch request: `count` VMs of a launch configuration, in one place, idempotent by token.
pub struct Launch<'a> {
    /// The launch configuration's document (botocore's `LaunchConfiguration` shape).
    pub launch_configuration: &'a Value,
    pub count: i32,
    pub placement: &'a Placement,
    /// The same token makes a retried RunInstances return the VMs of the first call.
    pub client_token: String,
    pub tags: Vec<(String, String)>,
}

#[derive(Clone)]
pub struct Ec2 {
    client: aws_sdk_ec2::Client,
}

impl Ec2 {
    /// A client for `cloud`'s EC2 endpoint that signs with the user's credentials for it.
    pub fn connect(sdk: &aws_config::SdkConfig, cloud: &Cloud, creds: &CloudCredentials) -> Self {
        let config = aws_sdk_ec2::config::Builder::from(sdk)
            .endpoint_url(&cloud.endpoint)
            .region(aws_sdk_ec2::config::Region::new(cloud.region.clone()))
            .credentials_provider(Credentials::new(
                &creds.access_key_id,
                &creds.secret,
                None,
                None,
                "phantom-cloud-credentials",
            ))
            .interceptor(phantom::metrics::Counter::Ec2)
            .timeout_config(
                aws_sdk_ec2::config::timeout::TimeoutConfig::builder()
                    .connect_timeout(Duration::from_secs(5))
                    .operation_attempt_timeout(Duration::from_secs(20))
                    .build(),
            )
            .build();
        Self {
            client: aws_sdk_ec2::Client::from_conf(config),
        }
    }

    /// The owner's tagged VMs, of one group (by id) or all: one DescribeInstances per page.
    pub async fn tagged(
        &self,
        owner: &str,
        group_id: Option<&str>,
    ) -> Result<Vec<Tagged>, CloudError> {
        let mut filters = vec![Filter::builder()
            .name(format!("tag:{TAG_OWNER}"))
            .values(owner)
            .build()];
        if let Some(id) = group_id {
            filters.push(
                Filter::builder()
                    .name(format!("tag:{TAG_GROUP_ID}"))
                    .values(id)
                    .build(),
            );
        }
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let page = self
                .client
                .describe_instances()
                .set_filters(Some(filters.clone()))
                .set_next_token(token.take())
                .max_results(1000)
                .send()
                .await
                .map_err(cloud_error)?;
            for r in page.reservations() {
                for i in r.instances() {
                    let tag = |k: &str| {
                        i.tags()
                            .iter()
                            .find(|t| t.key() == Some(k))
                            .and_then(|t| t.value())
                            .unwrap_or_default()
                            .to_string()
                    };
                    out.push(Tagged {
                        seen: seen(i),
                        group: tag(TAG_GROUP),
                        group_id: tag(TAG_GROUP_ID),
                    });
                }
            }
            match page.next_token() {
                Some(t) if !t.is_empty() => token = Some(t.to_string()),
                _ => return Ok(out),
            }
        }
    }

    /// RunInstances for `count` VMs; returns them as launched.
    pub async fn launch(&self, l: &Launch<'_>) -> Result<Vec<Seen>, CloudError> {
        let lc = l.launch_configuration;
        let text = |k: &str| lc[k].as_str().map(str::to_string);
        let tags: Vec<Tag> = l
            .tags
            .iter()
            .map(|(k, v)| Tag::builder().key(k).value(v).build())
            .collect();
        let (group_ids, group_names): (Vec<String>, Vec<String>) = lc["SecurityGroups"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .partition(|g| g.starts_with("sg-"));
        let mut req = self
            .client
            .run_instances()
            .min_count(l.count)
            .max_count(l.count)
            .client_token(&l.client_token)
            .set_image_id(text("ImageId"))
            .set_instance_type(text("InstanceType").map(|t| InstanceType::from(t.as_str())))
            .set_key_name(text("KeyName"))
            .set_user_data(text("UserData"))
            .set_kernel_id(text("KernelId"))
            .set_ramdisk_id(text("RamdiskId"))
            .set_ebs_optimized(lc["EbsOptimized"].as_bool())
            .tag_specifications(
                TagSpecification::builder()
                    .resource_type(ResourceType::Instance)
                    .set_tags(Some(tags))
                    .build(),
            );
        if let Some(enabled) = lc["InstanceMonitoring"]["Enabled"].as_bool() {
            req = req.monitoring(
                RunInstancesMonitoringEnabled::builder()
                    .enabled(enabled)
                    .build(),
            );
        }
        if let Some(profile) = text("IamInstanceProfile") {
            let spec = if profile.starts_with("arn:") {
                IamInstanceProfileSpecification::builder().arn(profile)
            } else {
                IamInstanceProfileSpecification::builder().name(profile)
            };
            req = req.iam_instance_profile(spec.build());
        }
        if let Some(price) = text("SpotPrice") {
            req = req.instance_market_options(
                InstanceMarketOptionsRequest::builder()
                    .market_type(MarketType::Spot)
                    .spot_options(SpotMarketOptions::builder().max_price(price).build())
                    .build(),
            );
        }
        let meta = &lc["MetadataOptions"];
        if meta.is_object() {
            req = req.metadata_options(
                InstanceMetadataOptionsRequest::builder()
                    .set_http_tokens(meta["HttpTokens"].as_str().map(HttpTokensState::from))
                    .set_http_put_response_hop_limit(
                        meta["HttpPutResponseHopLimit"].as_i64().map(|n| n as i32),
                    )
                    .set_http_endpoint(
                        meta["HttpEndpoint"]
                            .as_str()
                            .map(InstanceMetadataEndpointState::from),
                    )
                    .build(),
            );
        }
        for m in lc["BlockDeviceMappings"].as_array().into_iter().flatten() {
            req = req.block_device_mappings(block_device(m));
        }
        let tenancy = text("PlacementTenancy").map(|t| Tenancy::from(t.as_str()));
        if l.placement.zone.is_some() || tenancy.is_some() {
            req = req.placement(
                Ec2Placement::builder()
                    .set_availability_zone(l.placement.zone.clone())
                    .set_tenancy(tenancy)
                    .build(),
            );
        }
        match (
            &l.placement.subnet,
            lc["AssociatePublicIpAddress"].as_bool(),
        ) {
            // A public address is asked for on the primary network interface, with its subnet and groups.
            (Some(subnet), Some(public)) => {
                req = req.network_interfaces(
                    InstanceNetworkInterfaceSpecification::builder()
                        .device_index(0)
                        .subnet_id(subnet)
                        .associate_public_ip_address(public)
                        .set_groups(Some(group_ids.clone()))
                        .build(),
                );
            }
            (subnet, _) => {
                req = req
                    .set_subnet_id(subnet.clone())
                    .set_security_group_ids(Some(group_ids).filter(|g| !g.is_empty()))
                    .set_security_groups(Some(group_names).filter(|g| !g.is_empty()));
            }
        }
        let out = req.send().await.map_err(cloud_error)?;
        Ok(out.instances().iter().map(seen).collect())
    }

    /// TerminateInstances (idempotent: terminating a terminated VM is fine).
    pub async fn terminate(&self, ids: &[String]) -> Result<(), CloudError> {
        for chunk in ids.chunks(1000) {
            self.client
                .terminate_instances()
                .set_instance_ids(Some(chunk.to_vec()))
                .send()
                .await
                .map_err(cloud_error)?;
        }
        Ok(())
    }
}

fn seen(i: &aws_sdk_ec2::types::Instance) -> Seen {
    Seen {
        id: i.instance_id().unwrap_or_default().to_string(),
        state: CloudState::parse(
            i.state()
                .and_then(|s| s.name())
                .map(|n| n.as_str())
                .unwrap_or("terminated"),
        ),
        zone: i
            .placement()
            .and_then(|p| p.availability_zone())
            .unwrap_or_default()
            .to_string(),
        launched_ms: i
            .launch_time()
            .and_then(|t| t.to_millis().ok())
            .unwrap_or_default(),
        instance_type: i
            .instance_type()
            .map(|t| t.as_str().to_string())
            .unwrap_or_default(),
    }
}

fn block_device(m: &Value) -> BlockDeviceMapping {
    let ebs = &m["Ebs"];
    let mut b = BlockDeviceMapping::builder()
        .set_device_name(m["DeviceName"].as_str().map(str::to_string))
        .set_virtual_name(m["VirtualName"].as_str().map(str::to_string));
    if m["NoDevice"].as_bool() == Some(true) {
        b = b.no_device("");
    }
    if ebs.is_object() {
        b = b.ebs(
            EbsBlockDevice::builder()
                .set_snapshot_id(ebs["SnapshotId"].as_str().map(str::to_string))
                .set_volume_size(ebs["VolumeSize"].as_i64().map(|n| n as i32))
                .set_volume_type(ebs["VolumeType"].as_str().map(VolumeType::from))
                .set_delete_on_termination(ebs["DeleteOnTermination"].as_bool())
                .set_iops(ebs["Iops"].as_i64().map(|n| n as i32))
                .set_encrypted(ebs["Encrypted"].as_bool())
                .set_throughput(ebs["Throughput"].as_i64().map(|n| n as i32))
                .build(),
        );
    }
    b.build()
}
