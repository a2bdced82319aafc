//! The EC2 adapter: one client per (cloud, user credentials) implementing `phantom_seams::cloud::Cloud`.
//! Thin: the launch request is built by `phantom_seams::cloud::launch_request` (pure) and copied onto
//! the SDK's RunInstances here; the decisions are in `phantom_rules::reconcile`.

use async_trait::async_trait;
use aws_credential_types::Credentials;
use aws_sdk_ec2::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_ec2::types::{
    BlockDeviceMapping, CapacityReservationPreference,
    CapacityReservationSpecification as Ec2ReservationSpec,
    CapacityReservationTarget as Ec2ReservationTarget, EbsBlockDevice, Filter, HttpTokensState,
    IamInstanceProfileSpecification, InstanceMarketOptionsRequest, InstanceMetadataEndpointState,
    InstanceMetadataOptionsRequest, InstanceNetworkInterfaceSpecification, InstanceType,
    LaunchTemplateSpecification, MarketType, Placement as Ec2Placement, ResourceType,
    RunInstancesMonitoringEnabled, SpotMarketOptions, SummaryStatus, Tag, TagSpecification,
    Tenancy, VolumeType,
};
use phantom_model::cloud::{CloudCredentials, CloudRecord};
use phantom_model::instance::{CloudState, LaunchedWith, Market, Seen};
use phantom_model::instance_type::{Accelerator, InstanceTypeInfo};
use phantom_model::launch_template::TemplateName;
use phantom_model::status::{Check, CheckStatus, EventCode, ScheduledEvent};
use phantom_rules::template::TemplateRef;
use phantom_seams::cloud::launch::{BlockDevice, Network, Profile};
use phantom_seams::cloud::{
    template_not_found, without_unknown, Cloud, CloudError, Connect, FoundTemplate, InstanceStatus,
    LaunchRequest, Lookup, SpotPrice, Tagged, STATUS_BY_ID_MAX, STATUS_IDS_PER_CALL, TAG_GROUP,
    TAG_GROUP_ID, TAG_OWNER, TAG_WARM_POOL,
};
use std::sync::Arc;
use std::time::Duration;

fn cloud_error<E, R>(e: SdkError<E, R>) -> CloudError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    match e.as_service_error() {
        Some(s) => CloudError::new(
            s.code().unwrap_or("Unknown"),
            s.message().unwrap_or("(no message)"),
        ),
        None => CloudError::unreachable(DisplayErrorContext(&e).to_string()),
    }
}

/// Connects to each cloud's EC2 endpoint with the SDK configuration of the function.
pub struct Ec2Connect {
    sdk: aws_config::SdkConfig,
}

impl Ec2Connect {
    pub fn new(sdk: aws_config::SdkConfig) -> Self {
        Self { sdk }
    }
}

impl Connect for Ec2Connect {
    fn connect(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Cloud> {
        Arc::new(Ec2::connect(&self.sdk, cloud, creds))
    }
}

#[derive(Clone)]
pub struct Ec2 {
    client: aws_sdk_ec2::Client,
}

impl Ec2 {
    /// CreateTags, or DeleteTags (`delete`), of `tags` on `ids`: 1000 resources a call, EC2's
    /// limit.
    async fn tags_on(
        &self,
        ids: &[String],
        tags: Vec<Tag>,
        delete: bool,
    ) -> Result<(), CloudError> {
        for chunk in ids.chunks(1000) {
            let (resources, tags) = (Some(chunk.to_vec()), Some(tags.clone()));
            if delete {
                let call = self.client.delete_tags().set_resources(resources);
                call.set_tags(tags).send().await.map_err(cloud_error)?;
            } else {
                let call = self.client.create_tags().set_resources(resources);
                call.set_tags(tags).send().await.map_err(cloud_error)?;
            }
        }
        Ok(())
    }

    /// A client for `cloud`'s EC2 endpoint that signs with the user's credentials for it.
    pub fn connect(
        sdk: &aws_config::SdkConfig,
        cloud: &CloudRecord,
        creds: &CloudCredentials,
    ) -> Self {
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
            .interceptor(phantom_seams::metrics::Counter::Ec2)
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
}

#[async_trait]
impl Lookup for Ec2 {
    async fn states(&self, owner: &str) -> Result<Vec<(String, CloudState)>, CloudError> {
        Ok(Cloud::tagged(self, owner, None)
            .await?
            .into_iter()
            .map(|t| (t.seen.id, t.seen.state))
            .collect())
    }
    async fn describe(&self, ids: &[String]) -> Result<Vec<Tagged>, CloudError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.described(vec![Filter::builder()
            .name("instance-id")
            .set_values(Some(ids.to_vec()))
            .build()])
            .await
    }

    async fn launched_with(&self, id: &str) -> Result<Option<LaunchedWith>, CloudError> {
        let page = self
            .client
            .describe_instances()
            .filters(Filter::builder().name("instance-id").values(id).build())
            .send()
            .await
            .map_err(cloud_error)?;
        let Some(i) = page
            .reservations()
            .iter()
            .flat_map(|r| r.instances())
            .find(|i| i.instance_id() == Some(id))
        else {
            return Ok(None);
        };
        let missing = |what: &str| CloudError::unreadable(format!("instance {id} without {what}"));
        let placement = i.placement();
        Ok(Some(LaunchedWith {
            image_id: i.image_id().ok_or_else(|| missing("an image"))?.to_string(),
            instance_type: i
                .instance_type()
                .map(|t| t.as_str().to_string())
                .ok_or_else(|| missing("an instance type"))?,
            key_name: i.key_name().map(str::to_string),
            security_groups: i
                .security_groups()
                .iter()
                .filter_map(|g| g.group_id().map(str::to_string))
                .collect(),
            kernel_id: i.kernel_id().map(str::to_string),
            ramdisk_id: i.ramdisk_id().map(str::to_string),
            monitoring: i
                .monitoring()
                .and_then(|m| m.state())
                .is_some_and(|s| matches!(s.as_str(), "enabled" | "pending")),
            ebs_optimized: i.ebs_optimized().unwrap_or(false),
            iam_instance_profile: i
                .iam_instance_profile()
                .and_then(|p| p.arn())
                .map(str::to_string),
            tenancy: placement
                .and_then(|p| p.tenancy())
                .map(|t| t.as_str().to_string()),
            zone: placement
                .and_then(|p| p.availability_zone())
                .ok_or_else(|| missing("an availability zone"))?
                .to_string(),
            subnet: i.subnet_id().map(str::to_string),
        }))
    }

    async fn template(&self, t: &TemplateRef) -> Result<Option<FoundTemplate>, CloudError> {
        let answer = self
            .client
            .describe_launch_template_versions()
            .set_launch_template_id(t.id.clone())
            .set_launch_template_name(if t.id.is_some() { None } else { t.name.clone() })
            .versions(&t.version)
            .send()
            .await
            .map_err(cloud_error);
        match answer {
            Ok(out) => match out.launch_template_versions().first() {
                // A version answered without its template's id or name cannot be read.
                None => Ok(None),
                Some(v) => Ok(Some(FoundTemplate {
                    name: TemplateName {
                        launch_template_id: v
                            .launch_template_id()
                            .ok_or_else(|| {
                                CloudError::unreadable("a launch template version without its id")
                            })?
                            .to_string(),
                        launch_template_name: v
                            .launch_template_name()
                            .ok_or_else(|| {
                                CloudError::unreadable("a launch template version without its name")
                            })?
                            .to_string(),
                    },
                    version: v
                        .version_number()
                        .ok_or_else(|| {
                            CloudError::unreadable("a launch template version without its number")
                        })?
                        .to_string(),
                })),
            },
            Err(e) if template_not_found(&e.code) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn subnet_zones(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // By filter: an unknown id is absent, not an error for all.
        let out = self
            .client
            .describe_subnets()
            .filters(
                Filter::builder()
                    .name("subnet-id")
                    .set_values(Some(ids.to_vec()))
                    .build(),
            )
            .send()
            .await
            .map_err(cloud_error)?;
        out.subnets()
            .iter()
            .map(|s| match (s.subnet_id(), s.availability_zone()) {
                (Some(id), Some(zone)) => Ok((id.to_string(), zone.to_string())),
                _ => Err(CloudError::unreadable("a subnet without its id or zone")),
            })
            .collect()
    }

    async fn reservation_zones(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let out = self
            .client
            .describe_capacity_reservations()
            .set_capacity_reservation_ids(Some(ids.to_vec()))
            .send()
            .await
            .map_err(cloud_error)?;
        out.capacity_reservations()
            .iter()
            .map(
                |r| match (r.capacity_reservation_id(), r.availability_zone()) {
                    (Some(id), Some(zone)) => Ok((id.to_string(), zone.to_string())),
                    _ => Err(CloudError::unreadable(
                        "a capacity reservation without its id or zone",
                    )),
                },
            )
            .collect()
    }

    async fn statuses(&self, ids: &[String]) -> Result<Vec<InstanceStatus>, CloudError> {
        let mut out = Vec::new();
        if ids.len() <= STATUS_BY_ID_MAX {
            for chunk in ids.chunks(STATUS_IDS_PER_CALL) {
                let found = without_unknown(chunk.to_vec(), |chunk| async move {
                    let page = self
                        .client
                        .describe_instance_status()
                        .include_all_instances(true)
                        .set_instance_ids(Some(chunk))
                        .send()
                        .await
                        .map_err(cloud_error)?;
                    page.instance_statuses()
                        .iter()
                        .map(instance_status)
                        .collect::<Result<Vec<_>, _>>()
                })
                .await?;
                out.extend(found);
            }
            return Ok(out);
        }
        let mut token: Option<String> = None;
        loop {
            let page = self
                .client
                .describe_instance_status()
                .include_all_instances(true)
                .max_results(1000)
                .set_next_token(token.take())
                .send()
                .await
                .map_err(cloud_error)?;
            for st in page.instance_statuses() {
                if st
                    .instance_id()
                    .is_some_and(|id| ids.iter().any(|i| i == id))
                {
                    out.push(instance_status(st)?);
                }
            }
            match page.next_token().filter(|t| !t.is_empty()) {
                Some(t) => token = Some(t.to_string()),
                None => return Ok(out),
            }
        }
    }

    async fn zone_names(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let out = self
            .client
            .describe_availability_zones()
            .filters(
                Filter::builder()
                    .name("zone-id")
                    .set_values(Some(ids.to_vec()))
                    .build(),
            )
            .send()
            .await
            .map_err(cloud_error)?;
        out.availability_zones()
            .iter()
            .map(|z| match (z.zone_id(), z.zone_name()) {
                (Some(id), Some(name)) => Ok((id.to_string(), name.to_string())),
                _ => Err(CloudError::unreadable("a zone without its id or name")),
            })
            .collect()
    }
}

#[async_trait]
impl Cloud for Ec2 {
    /// The owner's tagged VMs, of one group (by id) or all: one DescribeInstances per page.
    async fn tagged(&self, owner: &str, group_id: Option<&str>) -> Result<Vec<Tagged>, CloudError> {
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
        self.described(filters).await
    }

    async fn launch(&self, l: &LaunchRequest) -> Result<Vec<Seen>, CloudError> {
        let tags: Vec<Tag> = l
            .tags
            .iter()
            .map(|(k, v)| Tag::builder().key(k).value(v).build())
            .collect();
        let mut req = self
            .client
            .run_instances()
            .min_count(l.count)
            .max_count(l.count)
            .client_token(&l.client_token)
            .set_image_id(l.image_id.clone())
            .set_instance_type(l.instance_type.as_deref().map(InstanceType::from))
            .set_key_name(l.key_name.clone())
            .set_user_data(l.user_data.clone())
            .set_kernel_id(l.kernel_id.clone())
            .set_ramdisk_id(l.ramdisk_id.clone())
            .set_ebs_optimized(l.ebs_optimized)
            .tag_specifications(
                TagSpecification::builder()
                    .resource_type(ResourceType::Instance)
                    .set_tags(Some(tags))
                    .build(),
            )
            .set_block_device_mappings(
                Some(l.block_devices.iter().map(block_device).collect())
                    .filter(|b: &Vec<_>| !b.is_empty()),
            );
        if let Some(enabled) = l.monitoring {
            req = req.monitoring(
                RunInstancesMonitoringEnabled::builder()
                    .enabled(enabled)
                    .build(),
            );
        }
        if let Some(profile) = &l.iam_profile {
            let spec = match profile {
                Profile::Arn(arn) => IamInstanceProfileSpecification::builder().arn(arn),
                Profile::Name(name) => IamInstanceProfileSpecification::builder().name(name),
            };
            req = req.iam_instance_profile(spec.build());
        }
        if let Some(spot) = &l.spot {
            req = req.instance_market_options(
                InstanceMarketOptionsRequest::builder()
                    .market_type(MarketType::Spot)
                    .spot_options(
                        SpotMarketOptions::builder()
                            .set_max_price(spot.max_price.clone())
                            .build(),
                    )
                    .build(),
            );
        }
        if let Some(t) = &l.template {
            req = req.launch_template(
                LaunchTemplateSpecification::builder()
                    .set_launch_template_id(t.id.clone())
                    .set_launch_template_name(t.name.clone())
                    .version(&t.version)
                    .build(),
            );
        }
        if let Some(meta) = &l.metadata {
            req = req.metadata_options(
                InstanceMetadataOptionsRequest::builder()
                    .set_http_tokens(meta.http_tokens.as_deref().map(HttpTokensState::from))
                    .set_http_put_response_hop_limit(meta.hop_limit)
                    .set_http_endpoint(
                        meta.http_endpoint
                            .as_deref()
                            .map(InstanceMetadataEndpointState::from),
                    )
                    .build(),
            );
        }
        if l.zone.is_some() || l.tenancy.is_some() || l.placement_group.is_some() {
            req = req.placement(
                Ec2Placement::builder()
                    .set_availability_zone(l.zone.clone())
                    .set_tenancy(l.tenancy.as_deref().map(Tenancy::from))
                    .set_group_name(l.placement_group.clone())
                    .build(),
            );
        }
        let ask = &l.capacity_reservation;
        if ask.preference.is_some() || ask.target.is_some() {
            req = req.capacity_reservation_specification(
                Ec2ReservationSpec::builder()
                    .set_capacity_reservation_preference(
                        ask.preference.map(CapacityReservationPreference::from),
                    )
                    .set_capacity_reservation_target(ask.target.as_ref().map(|id| {
                        Ec2ReservationTarget::builder()
                            .capacity_reservation_id(id)
                            .build()
                    }))
                    .build(),
            );
        }
        let nonempty = |v: &Vec<String>| Some(v.clone()).filter(|v| !v.is_empty());
        req = match &l.network {
            Network::Interface {
                subnet,
                public_ip,
                group_ids,
            } => req.network_interfaces(
                InstanceNetworkInterfaceSpecification::builder()
                    .device_index(0)
                    .subnet_id(subnet)
                    .associate_public_ip_address(*public_ip)
                    .set_groups(Some(group_ids.clone()))
                    .build(),
            ),
            Network::Plain {
                subnet,
                group_ids,
                group_names,
            } => req
                .set_subnet_id(subnet.clone())
                .set_security_group_ids(nonempty(group_ids))
                .set_security_groups(nonempty(group_names)),
        };
        let out = req.send().await.map_err(cloud_error)?;
        out.instances().iter().map(seen).collect()
    }

    async fn tag(&self, ids: &[String], tags: &[(String, String)]) -> Result<(), CloudError> {
        let tags = tags
            .iter()
            .map(|(k, v)| Tag::builder().key(k).value(v).build());
        self.tags_on(ids, tags.collect(), false).await
    }

    async fn untag(&self, ids: &[String], keys: &[&str]) -> Result<(), CloudError> {
        let tags = keys.iter().map(|k| Tag::builder().key(*k).build());
        self.tags_on(ids, tags.collect(), true).await
    }

    /// DescribeSpotPriceHistory from now: the current price of each type in each zone (Linux's,
    /// where the cloud gives prices for several products).
    async fn spot_prices(&self, types: &[String]) -> Result<Vec<SpotPrice>, CloudError> {
        if types.is_empty() {
            return Ok(Vec::new());
        }
        let out = self
            .client
            .describe_spot_price_history()
            .set_instance_types(Some(
                types
                    .iter()
                    .map(|t| InstanceType::from(t.as_str()))
                    .collect(),
            ))
            .start_time(aws_sdk_ec2::primitives::DateTime::from(
                std::time::SystemTime::now(),
            ))
            .send()
            .await
            .map_err(cloud_error)?;
        let mut prices = Vec::new();
        for p in out.spot_price_history() {
            let linux = p
                .product_description()
                .is_some_and(|d| d.as_str().starts_with("Linux/UNIX"));
            let (Some(t), Some(zone), Some(price)) =
                (p.instance_type(), p.availability_zone(), p.spot_price())
            else {
                return Err(CloudError::unreadable(
                    "a spot price without its type, zone or price",
                ));
            };
            let price: f64 = price.parse().map_err(|_| {
                CloudError::unreadable(format!("a spot price '{price}' that is not a number"))
            })?;
            if linux {
                prices.push(SpotPrice {
                    instance_type: t.as_str().to_string(),
                    zone: zone.to_string(),
                    price,
                });
            }
        }
        Ok(prices)
    }

    /// DescribeInstanceTypes, every page. A type without its name, vCPUs or memory is an
    /// error; an attribute EC2 leaves out is one the type does not have.
    async fn instance_types(&self) -> Result<Vec<InstanceTypeInfo>, CloudError> {
        let all: Vec<aws_sdk_ec2::types::InstanceTypeInfo> = self
            .client
            .describe_instance_types()
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .map_err(cloud_error)?;
        all.iter().map(instance_type_info).collect()
    }

    /// TerminateInstances (idempotent: terminating a terminated VM is fine).
    async fn terminate(&self, ids: &[String]) -> Result<(), CloudError> {
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

    async fn stop(&self, ids: &[String], hibernate: bool) -> Result<(), CloudError> {
        for chunk in ids.chunks(1000) {
            self.client
                .stop_instances()
                .set_instance_ids(Some(chunk.to_vec()))
                .set_hibernate(hibernate.then_some(true))
                .send()
                .await
                .map_err(cloud_error)?;
        }
        Ok(())
    }

    async fn start(&self, ids: &[String]) -> Result<(), CloudError> {
        for chunk in ids.chunks(1000) {
            self.client
                .start_instances()
                .set_instance_ids(Some(chunk.to_vec()))
                .send()
                .await
                .map_err(cloud_error)?;
        }
        Ok(())
    }
}

impl Ec2 {
    /// Every page of DescribeInstances with these filters, with Phantom's tags.
    async fn described(&self, filters: Vec<Filter>) -> Result<Vec<Tagged>, CloudError> {
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
                            .map(str::to_string)
                    };
                    out.push(Tagged {
                        seen: seen(i)?,
                        group: tag(TAG_GROUP),
                        group_id: tag(TAG_GROUP_ID),
                        private_ip: i.private_ip_address().map(str::to_string),
                        public_ip: i.public_ip_address().map(str::to_string),
                    });
                }
            }
            match page.next_token() {
                Some(t) if !t.is_empty() => token = Some(t.to_string()),
                _ => return Ok(out),
            }
        }
    }
}

/// An instance as a cloud's answer gives it; one without a member EC2 always gives is an error.
fn seen(i: &aws_sdk_ec2::types::Instance) -> Result<Seen, CloudError> {
    let id = i
        .instance_id()
        .ok_or_else(|| CloudError::unreadable("an instance without an InstanceId"))?;
    let missing = |what: &str| CloudError::unreadable(format!("instance {id} without {what}"));
    Ok(Seen {
        id: id.to_string(),
        state: CloudState::parse(
            i.state()
                .and_then(|s| s.name())
                .ok_or_else(|| missing("a state"))?
                .as_str(),
        ),
        zone: i
            .placement()
            .and_then(|p| p.availability_zone())
            .ok_or_else(|| missing("an availability zone"))?
            .to_string(),
        launched_ms: i
            .launch_time()
            .and_then(|t| t.to_millis().ok())
            .ok_or_else(|| missing("a launch time"))?,
        instance_type: i
            .instance_type()
            .ok_or_else(|| missing("an instance type"))?
            .as_str()
            .to_string(),
        market: Market::of_lifecycle(i.instance_lifecycle().map(|l| l.as_str())),
        pool: i.tags().iter().any(|t| t.key() == Some(TAG_WARM_POOL)),
    })
}

/// One VM's statuses as EC2 gives them; a check, event code or time it does not write is an
/// error.
fn instance_status(st: &aws_sdk_ec2::types::InstanceStatus) -> Result<InstanceStatus, CloudError> {
    let id = st
        .instance_id()
        .ok_or_else(|| CloudError::unreadable("an instance status without an InstanceId"))?
        .to_string();
    let ms = |t: &aws_sdk_ec2::primitives::DateTime| {
        t.to_millis()
            .map_err(|_| CloudError::unreadable(format!("instance {id}'s status time {t}")))
    };
    let check = |status: Option<&SummaryStatus>,
                 since: Option<&aws_sdk_ec2::primitives::DateTime>|
     -> Result<Check, CloudError> {
        let Some(status) = status else {
            return Ok(Check::NOT_APPLICABLE);
        };
        Ok(Check {
            status: CheckStatus::parse(status.as_str()).ok_or_else(|| {
                CloudError::unreadable(format!("instance {id}'s status '{}'", status.as_str()))
            })?,
            impaired_since_ms: since.map(ms).transpose()?,
        })
    };
    let summary = |s: Option<&aws_sdk_ec2::types::InstanceStatusSummary>| match s {
        None => Ok(Check::NOT_APPLICABLE),
        Some(s) => check(
            s.status(),
            s.details().iter().find_map(|d| d.impaired_since()),
        ),
    };
    let ebs = match st.attached_ebs_status() {
        None => Check::NOT_APPLICABLE,
        Some(s) => check(
            s.status(),
            s.details().iter().find_map(|d| d.impaired_since()),
        )?,
    };
    let mut events = Vec::new();
    for e in st.events() {
        let description = e.description().unwrap_or_default().to_string();
        if ScheduledEvent::is_over(&description) {
            continue;
        }
        let word = e.code().map(|c| c.as_str()).unwrap_or_default();
        let code = EventCode::parse(word).ok_or_else(|| {
            CloudError::unreadable(format!("instance {id}'s event code '{word}'"))
        })?;
        let not_before = e.not_before().ok_or_else(|| {
            CloudError::unreadable(format!("instance {id}'s event without NotBefore"))
        })?;
        events.push(ScheduledEvent {
            code,
            not_before_ms: ms(not_before)?,
            description,
        });
    }
    Ok(InstanceStatus {
        instance: summary(st.instance_status())?,
        system: summary(st.system_status())?,
        ebs,
        events,
        id,
    })
}

fn block_device(b: &BlockDevice) -> BlockDeviceMapping {
    let mut m = BlockDeviceMapping::builder()
        .set_device_name(b.device_name.clone())
        .set_virtual_name(b.virtual_name.clone());
    if b.no_device {
        m = m.no_device("");
    }
    if let Some(e) = &b.ebs {
        m = m.ebs(
            EbsBlockDevice::builder()
                .set_snapshot_id(e.snapshot_id.clone())
                .set_volume_size(e.volume_size)
                .set_volume_type(e.volume_type.as_deref().map(VolumeType::from))
                .set_delete_on_termination(e.delete_on_termination)
                .set_iops(e.iops)
                .set_encrypted(e.encrypted)
                .set_throughput(e.throughput)
                .build(),
        );
    }
    m.build()
}

/// One of DescribeInstanceTypes' answers as Phantom reads it.
fn instance_type_info(
    t: &aws_sdk_ec2::types::InstanceTypeInfo,
) -> Result<InstanceTypeInfo, CloudError> {
    let (Some(name), Some(vcpus), Some(memory_mib)) = (
        t.instance_type(),
        t.v_cpu_info().and_then(|v| v.default_v_cpus()),
        t.memory_info().and_then(|m| m.size_in_mib()),
    ) else {
        return Err(CloudError::unreadable(
            "an instance type without its name, vCPUs or memory",
        ));
    };
    // A device's count is always given; its memory is left out where it has none of its own.
    let device = |kind: &'static str,
                  count: Option<i32>,
                  manufacturer: Option<&str>,
                  name: Option<&str>,
                  memory: Option<i32>|
     -> Result<Accelerator, CloudError> {
        Ok(Accelerator {
            kind,
            count: i64::from(count.ok_or_else(|| {
                CloudError::unreadable(format!(
                    "a {kind} of {} without its count",
                    name.unwrap_or("?")
                ))
            })?),
            manufacturer: manufacturer.unwrap_or_default().to_string(),
            name: name.unwrap_or_default().to_string(),
            memory_mib: i64::from(memory.unwrap_or(0)),
        })
    };
    let mut accelerators = Vec::new();
    for g in t.gpu_info().map(|g| g.gpus()).unwrap_or_default() {
        accelerators.push(device(
            "gpu",
            g.count(),
            g.manufacturer(),
            g.name(),
            g.memory_info().and_then(|m| m.size_in_mib()),
        )?);
    }
    for f in t.fpga_info().map(|f| f.fpgas()).unwrap_or_default() {
        accelerators.push(device(
            "fpga",
            f.count(),
            f.manufacturer(),
            f.name(),
            f.memory_info().and_then(|m| m.size_in_mib()),
        )?);
    }
    for a in t
        .inference_accelerator_info()
        .map(|i| i.accelerators())
        .unwrap_or_default()
    {
        accelerators.push(device(
            "inference",
            a.count(),
            a.manufacturer(),
            a.name(),
            a.memory_info().and_then(|m| m.size_in_mib()),
        )?);
    }
    let local_storage = match t.instance_storage_info() {
        None => None,
        Some(s) => Some((
            s.total_size_in_gb().ok_or_else(|| {
                CloudError::unreadable(format!(
                    "instance storage of {} without its size",
                    name.as_str()
                ))
            })? as f64,
            s.disks()
                .iter()
                .filter_map(|d| d.r#type().map(|k| k.as_str().to_string()))
                .collect(),
        )),
    };
    let network = t.network_info();
    Ok(InstanceTypeInfo {
        name: name.as_str().to_string(),
        vcpus: i64::from(vcpus),
        memory_mib,
        manufacturer: t
            .processor_info()
            .and_then(|p| p.manufacturer())
            .map(str::to_string),
        current_generation: t.current_generation() == Some(true),
        burstable: t.burstable_performance_supported() == Some(true),
        bare_metal: t.bare_metal() == Some(true),
        hibernation: t.hibernation_supported() == Some(true),
        network_interfaces: network
            .and_then(|n| n.maximum_network_interfaces())
            .map(i64::from),
        network_gbps: network
            .and_then(|n| n.network_cards().first())
            .and_then(|c| c.baseline_bandwidth_in_gbps()),
        local_storage,
        ebs_baseline_mbps: t
            .ebs_info()
            .and_then(|e| e.ebs_optimized_info())
            .and_then(|o| o.baseline_bandwidth_in_mbps())
            .map(i64::from),
        accelerators,
    })
}
