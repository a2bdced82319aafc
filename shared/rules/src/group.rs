//! Auto Scaling groups: the checks and defaults of CreateAutoScalingGroup and SetDesiredCapacity,
//! and DescribeAutoScalingGroups' filters. Pure: no AWS types.

pub use crate::launching::Launching;
use crate::reconcile::Target;
use crate::tags::MAX_TAGS;
use phantom_model::group::TagDescription;
use phantom_model::group::{DeletionProtection, SubnetZone};
use phantom_model::instance::LaunchedWith;
use phantom_model::request::{
    self, CreateAutoScalingGroup, GroupSettings, Tag, UpdateAutoScalingGroup,
};
use phantom_model::{Checked, Refusal};
use std::collections::{BTreeMap, BTreeSet};
use time::OffsetDateTime;

pub use phantom_model::group::{subnet_ids, Group, Settings, DELETING};

/// The rules over a stored group: what it launches from and aims at, its split and weights, its
/// clouds. A trait because `Group` is the model's (`phantom_model::group`) and these rules are not.
pub trait GroupRules {
    /// What it launches from now: a running refresh's DesiredConfiguration while the refresh goes
    /// forward, else its own launch configuration or template.
    fn launching(&self) -> Launching<'_>;

    /// When the scheduled run next has work for it (Unix ms), unless it is being deleted: its
    /// first scheduled action's time or its ForecastAndScale policies' next hour less the
    /// buffer, or 0 (every run) while it has an enabled target tracking policy or step policy
    /// alarm to evaluate, an instance refresh watching alarms, or metrics to publish. What the
    /// store keeps in its index of due groups.
    fn due_ms(&self) -> Option<i64>;

    /// What the provisioner aims at for this group.
    fn target(&self) -> Target;

    /// The units each VM of the group counts for: its MixedInstancesPolicy's weights, checked
    /// when it was stored; one each without them.
    fn weights(&self) -> crate::weights::Weights;

    /// The split between on-demand and spot of what the group launches now: its
    /// MixedInstancesPolicy's, checked when it was stored; all on-demand without one.
    fn distribution(&self) -> crate::distribution::Distribution;

    /// The clouds a group spans (its `phantom:clouds` and `phantom:policy` tags), if it spans any.
    fn spread(&self) -> Checked<Option<crate::spread::Spread>>;

    /// Every launch configuration the group uses, each marked in use by the store: its own and,
    /// across clouds, the one of each listed cloud (none for a launch template group). Clouds
    /// tags that cannot be read are an error, never "its own cloud only".
    fn launch_configurations(&self) -> Checked<BTreeSet<String>>;

    /// Every cloud the group runs on: its own and, across clouds, each listed one. The health
    /// check's list counts the group on each, so each is swept. Clouds tags that cannot be read
    /// are an error, never "its own cloud only".
    fn clouds(&self) -> Checked<BTreeSet<String>>;
}

impl GroupRules for Group {
    /// What it launches from now: a running refresh's DesiredConfiguration while the refresh goes
    /// forward, else its own launch configuration or template.
    fn launching(&self) -> Launching<'_> {
        crate::launching::of(self)
    }

    /// When the scheduled run next has work for it (Unix ms), unless it is being deleted: its
    /// first scheduled action's time or its ForecastAndScale policies' next hour less the
    /// buffer, or 0 (every run) while it has an enabled target tracking policy or step policy
    /// alarm to evaluate, an instance refresh watching alarms, or metrics to publish. What the
    /// store keeps in its index of due groups.
    fn due_ms(&self) -> Option<i64> {
        if self.deleting() {
            return None;
        }
        let watching = crate::refresh::active(&self.settings.instance_refreshes)
            .is_some_and(|r| !crate::refresh::watched_alarms(r).is_empty());
        // A group its probe watches is read by every run of the health check too.
        let probed = crate::probe::of_group(self).is_ok_and(|p| p.is_some());
        if self.tracked() || !self.settings.enabled_metrics.is_empty() || watching || probed {
            return Some(0);
        }
        let scheduled = crate::schedule::next_due(&self.settings.scheduled_actions);
        let predicted = crate::predictive::next_due(self);
        scheduled.into_iter().chain(predicted).min()
    }

    /// What the provisioner aims at for this group.
    fn target(&self) -> Target {
        let s = &self.settings;
        let from = self.launching().source();
        let mixed = mixed(self);
        Target {
            cloud: self.cloud.clone(),
            desired: self.desired,
            deleting: self.deleting(),
            grace_ms: s.health_check_grace_period * 1000,
            termination_policies: s.termination_policies.clone(),
            zones: crate::reservation::launch_zones(s),
            subnets: crate::reservation::launch_subnets(s, self.subnets()),
            launch_configuration: from.launch_configuration,
            launch_template: from.launch_template,
            protect_new: s.new_instances_protected_from_scale_in,
            retry_at_ms: self.retry_at_ms,
            reserved: 0,
            suspended: crate::processes::suspended(&s.suspended_processes),
            hooks: crate::lifecycle::hooks(&s.lifecycle_hooks),
            refresh: crate::refresh::active(&s.instance_refreshes).cloned(),
            max_lifetime_ms: s.max_instance_lifetime.map(|l| l * 1000),
            maintenance: s.instance_maintenance_policy,
            retain_abandoned: s
                .instance_lifecycle_policy
                .as_ref()
                .is_some_and(|p| p.retains_abandoned()),
            warmup_ms: self.warmup_secs() * 1000,
            // A group being deleted keeps no pool: its VMs go with the group's.
            pool: s
                .warm_pool_configuration
                .as_ref()
                .filter(|_| !self.deleting())
                .map(|c| crate::warm::Pool::of(c, self.desired, self.max)),
            failing: BTreeMap::new(),
            drain_ms: self
                .settings
                .traffic
                .iter()
                .flat_map(|a| a.registered.iter())
                .filter_map(|id| {
                    crate::traffic::drain_ms(&self.settings.traffic, id)
                        .filter(|ms| *ms > 0)
                        .map(|ms| (id.clone(), ms))
                })
                .collect(),
            distribution: self.distribution(),
            elsewhere: (0, 0),
            capacity_rebalance: s.capacity_rebalance,
            max: self.max,
            rebalance_leaving: None,
            room: None,
            weights: weights_of(self, mixed.as_ref()),
            instance_types: mixed.map(|spec| spec.instance_types).unwrap_or_default(),
        }
    }

    /// The units each VM of the group counts for: its MixedInstancesPolicy's weights, checked
    /// when it was stored; one each without them.
    fn weights(&self) -> crate::weights::Weights {
        weights_of(self, mixed(self).as_ref())
    }

    /// The split between on-demand and spot of what the group launches now: its
    /// MixedInstancesPolicy's, checked when it was stored; all on-demand without one.
    fn distribution(&self) -> crate::distribution::Distribution {
        use crate::distribution::Distribution;
        let given = self
            .launching()
            .mixed_instances_policy
            .and_then(|m| m.instances_distribution.as_ref());
        // Checked on every write (`spread::settled`), as the stored policy is.
        let fallback = crate::distribution::fallback_of(
            self.settings
                .tags
                .iter()
                .map(|t| (t.key.as_str(), t.value.as_str())),
        )
        .unwrap_or(false);
        match given.map(Distribution::of) {
            None => Distribution::on_demand(),
            Some(Ok(d)) => Distribution { fallback, ..d },
            // Checked on every write, so only a record from another version gets here.
            Some(Err(e)) => {
                tracing::error!(
                    group = self.name,
                    error = e.message(),
                    "stored InstancesDistribution fails its check; launching on-demand"
                );
                Distribution::on_demand()
            }
        }
    }

    /// The clouds a group spans (its `phantom:clouds` and `phantom:policy` tags), if it spans any.
    fn spread(&self) -> Checked<Option<crate::spread::Spread>> {
        crate::spread::Spread::of_group(self)
    }

    /// Every launch configuration the group uses, each marked in use by the store: its own and,
    /// across clouds, the one of each listed cloud (none for a launch template group). Clouds
    /// tags that cannot be read are an error, never "its own cloud only".
    fn launch_configurations(&self) -> Checked<BTreeSet<String>> {
        let mut lcs = BTreeSet::new();
        let Some(own) = self.launch_configuration() else {
            return Ok(lcs);
        };
        lcs.insert(own.to_string());
        if let Some(spread) = spread_read(self)? {
            for site in &spread.sites {
                lcs.insert(crate::on_cloud::launch_configuration(own, &site.cloud));
            }
        }
        Ok(lcs)
    }

    /// Every cloud the group runs on: its own and, across clouds, each listed one. The health
    /// check's list counts the group on each, so each is swept. Clouds tags that cannot be read
    /// are an error, never "its own cloud only".
    fn clouds(&self) -> Checked<BTreeSet<String>> {
        let mut clouds = BTreeSet::from([self.cloud.clone()]);
        if let Some(spread) = spread_read(self)? {
            clouds.extend(spread.sites.into_iter().map(|s| s.cloud));
        }
        Ok(clouds)
    }
}

/// The template and overrides of the group's MixedInstancesPolicy, checked when it was
/// stored (so only a record from another version fails here: logged, and read as none).
fn mixed(g: &Group) -> Option<crate::template::Spec> {
    match crate::template::of(None, g.launching().mixed_instances_policy) {
        Ok(spec) => spec,
        Err(e) => {
            tracing::error!(
                group = g.name,
                error = e.message(),
                "stored MixedInstancesPolicy fails its check; launching as if it had none"
            );
            None
        }
    }
}

fn weights_of(g: &Group, mixed: Option<&crate::template::Spec>) -> crate::weights::Weights {
    match mixed {
        // Types chosen by their attributes weigh their vCPUs or memory, found at launch.
        Some(spec) if !spec.requirements.is_empty() => match g.capacity_type() {
            "units" => crate::weights::Weights::none(),
            _ => crate::weights::Weights::recorded(),
        },
        Some(spec) => spec.weights.clone(),
        None => crate::weights::Weights::none(),
    }
}

/// `spread`, its refusal as the domain's.
fn spread_read(g: &Group) -> Checked<Option<crate::spread::Spread>> {
    g.spread()
        .map_err(|e| Refusal::invalid(format!("group {}: {}", g.name, e.message())))
}

pub const TERMINATION_POLICIES: [&str; 7] = [
    "Default",
    "OldestInstance",
    "NewestInstance",
    "OldestLaunchConfiguration",
    "OldestLaunchTemplate",
    "ClosestToNextInstanceHour",
    "AllocationStrategy",
];

pub fn arn(region: &str, account: &str, id: &str, name: &str) -> String {
    format!(
        "arn:aws:autoscaling:{region}:{account}:autoScalingGroup:{id}:autoScalingGroupName/{name}"
    )
}

pub fn service_linked_role(account: &str) -> String {
    format!("arn:aws:iam::{account}:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling")
}

/// MinSize <= DesiredCapacity <= MaxSize, in AWS's words.
pub fn check_sizes(min: i64, max: i64, desired: i64) -> Checked<()> {
    if min < 0 {
        return Err(Refusal::invalid(format!(
            "MinSize must be greater than or equal to 0, got {min}"
        )));
    }
    if max < min {
        return Err(Refusal::invalid(format!(
            "Max bound, {max}, must be greater than or equal to min bound, {min}"
        )));
    }
    if desired < min || desired > max {
        return Err(Refusal::invalid(format!(
            "Desired capacity:{desired} must be between the specified min size:{min} and max size:{max}"
        )));
    }
    Ok(())
}

/// SetDesiredCapacity's check against the group's current bounds.
pub fn check_new_desired(group: &Group, desired: i64) -> Checked<()> {
    if desired > group.max {
        return Err(Refusal::invalid(format!(
            "New SetDesiredCapacity value {desired} is above max value {} for the AutoScalingGroup.",
            group.max
        )));
    }
    if desired < group.min {
        return Err(Refusal::invalid(format!(
            "New SetDesiredCapacity value {desired} is below min value {} for the AutoScalingGroup.",
            group.min
        )));
    }
    Ok(())
}

/// What CreateAutoScalingGroup needs besides its input.
pub struct NewGroupContext<'a> {
    /// The id for the group's ARN (a UUID).
    pub id: String,
    pub region: &'a str,
    pub account: &'a str,
    pub cloud: String,
    /// The zone used when the request names neither zones nor subnets.
    pub default_zone: &'a str,
    pub now: OffsetDateTime,
}

/// Checks a CreateAutoScalingGroup request and builds the group it describes.
pub fn from_input(input: &CreateAutoScalingGroup, ctx: NewGroupContext<'_>) -> Checked<Group> {
    let name = input.auto_scaling_group_name.clone();
    check_launch_source(input)?;
    if let Some(id) = &input.instance_id {
        return Err(Refusal::invalid(format!(
            "Instance {id} was not made a launch configuration first (group::from_instance)."
        )));
    }
    // Checked here; attached by the api once it has found them on the group's cloud.
    crate::traffic::of_create(input)?;
    check_settings(&input.settings)?;
    let (min, max) = (input.min_size, input.max_size);
    let desired = input.desired_capacity.unwrap_or(min);
    check_sizes(min, max, desired)?;
    let group_arn = arn(ctx.region, ctx.account, &ctx.id, &name);
    let mut settings = Settings {
        auto_scaling_group_name: name.clone(),
        arn: group_arn.clone(),
        launch_configuration_name: None,
        launch_template: None,
        mixed_instances_policy: None,
        default_cooldown: 300,
        health_check_type: "EC2".into(),
        health_check_grace_period: 0,
        created_time: phantom_model::time::format_timestamp(ctx.now),
        availability_zones: Vec::new(),
        availability_zone_ids: None,
        vpc_zone_identifier: None,
        termination_policies: vec!["Default".into()],
        new_instances_protected_from_scale_in: false,
        capacity_rebalance: false,
        service_linked_role_arn: service_linked_role(ctx.account),
        load_balancer_names: Vec::new(),
        target_group_arns: Vec::new(),
        traffic_sources: Vec::new(),
        suspended_processes: Vec::new(),
        enabled_metrics: Vec::new(),
        tags: tag_descriptions(&name, &input.tags)?,
        max_instance_lifetime: None,
        default_instance_warmup: None,
        placement_group: None,
        availability_zone_distribution: None,
        instance_maintenance_policy: None,
        instance_lifecycle_policy: None,
        capacity_reservation_specification: None,
        reservation_zones: Vec::new(),
        subnet_zones: Vec::new(),
        deletion_protection: None,
        context: None,
        desired_capacity_type: None,
        lifecycle_hooks: crate::lifecycle::from_specifications(
            &name,
            &group_arn,
            &input.lifecycle_hook_specification_list,
        )?,
        scaling_policies: Vec::new(),
        scheduled_actions: Vec::new(),
        instance_refreshes: Vec::new(),
        warm_pool_configuration: None,
        notifications: Vec::new(),
        traffic: Vec::new(),
        cooldown_ends_ms: None,
        predicted: None,
        template_names: Vec::new(),
    };
    apply_settings(&input.settings, &mut settings);
    check_capacity_type(&settings)?;
    if settings.availability_zones.is_empty() && settings.vpc_zone_identifier.is_none() {
        settings.availability_zones = vec![ctx.default_zone.to_string()];
    }
    Ok(Group {
        name,
        id: ctx.id,
        cloud: ctx.cloud,
        min,
        max,
        desired,
        version: 1,
        launch_seq: 0,
        status: None,
        failures: 0,
        retry_at_ms: 0,
        unreplaced_ms: Vec::new(),
        asks: 0,
        holds: Default::default(),
        settings,
    })
}

/// The members of a group's request Phantom does not act on, and why: each is refused when given
/// with anything but its AWS default (docs/actions.md lists them), at creation and update alike.
pub const REFUSED: [(&str, &str); 3] = [
    (
        "AvailabilityZoneImpairmentPolicy",
        "Phantom's clouds have no zonal shift",
    ),
    (
        "SkipZonalShiftValidation",
        "Phantom's clouds have no zonal shift",
    ),
    (
        "ServiceLinkedRoleARN",
        "Phantom calls each cloud with the credentials registered for it, not an IAM role",
    ),
];

/// The first of `given` (a refused member, and whether it was given with a value other than its
/// AWS default, which changes nothing) that was given, refused with why.
fn refuse<'a>(mut given: impl Iterator<Item = (&'a str, bool)>) -> Checked<()> {
    match given.find(|(_, given)| *given) {
        Some((member, _)) => {
            let why = REFUSED
                .iter()
                .find(|(m, _)| *m == member)
                .map_or("", |(_, why)| why);
            Err(Refusal::invalid(format!(
                "{member} is not supported: {why}. Leave it out."
            )))
        }
        None => Ok(()),
    }
}

/// The settings of a group's request that CreateAutoScalingGroup and UpdateAutoScalingGroup check
/// alike.
fn check_settings(s: &GroupSettings) -> Checked<()> {
    refuse(
        [
            (
                "AvailabilityZoneImpairmentPolicy",
                s.availability_zone_impairment_policy.is_some(),
            ),
            (
                "SkipZonalShiftValidation",
                s.skip_zonal_shift_validation == Some(true),
            ),
            ("ServiceLinkedRoleARN", s.service_linked_role_arn.is_some()),
        ]
        .into_iter(),
    )?;
    crate::template::of(
        s.launch_template.as_ref(),
        s.mixed_instances_policy.as_ref(),
    )?;
    if let Some(asked) = &s.instance_maintenance_policy {
        crate::maintenance::of(asked)?;
    }
    if let Some(spec) = &s.capacity_reservation_specification {
        crate::reservation::check(spec)?;
    }
    let ids = s
        .availability_zone_ids
        .as_ref()
        .is_some_and(|z| !z.is_empty());
    if ids && s.availability_zones.is_none() {
        return Err(Refusal::invalid(
            "AvailabilityZoneIds were not named by the group's cloud first (group::name_zone_ids).",
        ));
    }
    for (field, value) in [
        ("DefaultCooldown", s.default_cooldown),
        ("HealthCheckGracePeriod", s.health_check_grace_period),
    ] {
        if value.is_some_and(|v| v < 0) {
            return Err(Refusal::invalid(format!(
                "{field} must be greater than or equal to 0"
            )));
        }
    }
    if let Some(life) = s.max_instance_lifetime {
        if life != 0 && !(86_400..=31_536_000).contains(&life) {
            return Err(Refusal::invalid(
                "The maximum instance lifetime must be 0 or between 86400 and 31536000 seconds.",
            ));
        }
    }
    if let Some(hc) = &s.health_check_type {
        crate::health::Checks::parse(hc)?;
    }
    for p in s.termination_policies.iter().flatten() {
        if !TERMINATION_POLICIES.contains(&p.as_str()) {
            return Err(Refusal::invalid(format!(
                "Termination policy '{p}' is not one of {}.",
                TERMINATION_POLICIES.join(", ")
            )));
        }
    }
    Ok(())
}

/// A group in subnets is in their zones: AWS fills AvailabilityZones in from VPCZoneIdentifier
/// (each zone once, sorted), refuses a subnet its cloud does not have, and refuses zones given
/// beside the subnets that are not theirs. `found` is the cloud's answer: subnet, zone.
pub fn in_subnet_zones(
    settings: &mut Settings,
    given: Option<&[String]>,
    found: &[(String, String)],
) -> Checked<()> {
    let mut zones: Vec<String> = Vec::new();
    let mut subnet_zones = Vec::new();
    for id in subnet_ids(settings.vpc_zone_identifier.as_deref()) {
        let (_, zone) = found
            .iter()
            .find(|(s, _)| *s == id)
            .ok_or_else(|| Refusal::invalid(format!("The subnet ID '{id}' does not exist")))?;
        if !zones.contains(zone) {
            zones.push(zone.clone());
        }
        subnet_zones.push(SubnetZone {
            subnet_id: id,
            availability_zone: zone.clone(),
        });
    }
    zones.sort();
    if let Some(given) = given.filter(|g| !g.is_empty()) {
        let mut given = given.to_vec();
        given.sort();
        given.dedup();
        if given != zones {
            return Err(Refusal::invalid(
                "The availability zones of the specified subnets and the Auto Scaling group do not match",
            ));
        }
    }
    settings.availability_zones = zones;
    settings.subnet_zones = subnet_zones;
    Ok(())
}

/// The AvailabilityZoneIds a request gives (none: empty), refused beside AvailabilityZones.
pub fn zone_ids(s: &GroupSettings) -> Checked<&[String]> {
    let ids = s.availability_zone_ids.as_deref().unwrap_or_default();
    if !ids.is_empty() && s.availability_zones.as_ref().is_some_and(|z| !z.is_empty()) {
        return Err(Refusal::invalid(
            "You cannot specify both AvailabilityZones and AvailabilityZoneIds in the same request.",
        ));
    }
    Ok(ids)
}

/// A request's AvailabilityZoneIds named as the group's cloud names them (`found`: id, name;
/// DescribeAvailabilityZones): the group's zones are those names, in the ids' order. An id the
/// cloud does not have is refused, nothing written.
pub fn name_zone_ids(s: &mut GroupSettings, found: &[(String, String)]) -> Checked<()> {
    let names = zone_names(zone_ids(s)?, found)?;
    if !names.is_empty() {
        s.availability_zones = Some(names);
    }
    Ok(())
}

/// The names of zone ids `ids` in their order, by what the cloud answered (`found`: id, name).
pub fn zone_names(ids: &[String], found: &[(String, String)]) -> Checked<Vec<String>> {
    ids.iter()
        .map(|id| {
            found
                .iter()
                .find(|(i, _)| i == id)
                .map(|(_, name)| name.clone())
                .ok_or_else(|| {
                    Refusal::invalid(format!("The availability zone ID '{id}' does not exist"))
                })
        })
        .collect()
}

/// A new group names exactly one launch source, as AWS checks first (counting InstanceId).
pub fn check_launch_source(input: &CreateAutoScalingGroup) -> Checked<()> {
    if launch_sources(&input.settings) + usize::from(input.instance_id.is_some()) != 1 {
        return Err(no_launch_source());
    }
    Ok(())
}

/// A CreateAutoScalingGroup with `InstanceId`, once the launch configuration made from the
/// instance (`launch_config`, named after the group, as AWS names it) exists: the group launches
/// from it, into the instance's subnet (or zone) unless the request names others.
pub fn from_instance(input: &mut CreateAutoScalingGroup, launch_config: &str, vm: &LaunchedWith) {
    let s = &mut input.settings;
    input.instance_id = None;
    s.launch_configuration_name = Some(launch_config.to_string());
    let placed = s.vpc_zone_identifier.is_some()
        || s.availability_zones.as_ref().is_some_and(|z| !z.is_empty());
    if !placed {
        match &vm.subnet {
            Some(subnet) => s.vpc_zone_identifier = Some(subnet.clone()),
            None => s.availability_zones = Some(vec![vm.zone.clone()]),
        }
    }
}

/// An UpdateAutoScalingGroup names at most one new launch source (AWS's words).
pub fn check_new_launch_source(s: &GroupSettings) -> Checked<()> {
    if launch_sources(s) > 1 {
        return Err(Refusal::invalid(
            "Valid requests must contain either LaunchTemplate, LaunchConfigurationName or MixedInstancesPolicy parameter.",
        ));
    }
    Ok(())
}

/// A CreateAutoScalingGroup naming no launch source, or more than one (AWS's words).
pub fn no_launch_source() -> Refusal {
    Refusal::invalid(
        "Valid requests must contain either LaunchTemplate, LaunchConfigurationName, InstanceId or MixedInstancesPolicy parameter.",
    )
}

/// How many launch sources the request names (a launch configuration, a template, a mixed
/// instances policy).
fn launch_sources(s: &GroupSettings) -> usize {
    [
        s.launch_configuration_name.is_some(),
        s.launch_template.is_some(),
        s.mixed_instances_policy.is_some(),
    ]
    .into_iter()
    .filter(|given| *given)
    .count()
}

/// The request's settings, each given one replacing the group's (checked by `check_settings`):
/// what is stored is what Describe returns. The name, the sizes, the tags and the hooks have
/// their own rules.
fn apply_settings(input: &GroupSettings, s: &mut Settings) {
    // A new launch source replaces the old one, whichever kind each is.
    if let Some(lc) = &input.launch_configuration_name {
        (
            s.launch_configuration_name,
            s.launch_template,
            s.mixed_instances_policy,
        ) = (Some(lc.clone()), None, None);
    }
    if let Some(lt) = &input.launch_template {
        (
            s.launch_configuration_name,
            s.launch_template,
            s.mixed_instances_policy,
        ) = (None, Some(lt.clone()), None);
    }
    if let Some(mip) = &input.mixed_instances_policy {
        (
            s.launch_configuration_name,
            s.launch_template,
            s.mixed_instances_policy,
        ) = (None, None, Some(mip.clone()));
    }
    if let Some(v) = input.default_cooldown {
        s.default_cooldown = v;
    }
    if let Some(v) = input.health_check_grace_period {
        s.health_check_grace_period = v;
    }
    if let Some(v) = input.max_instance_lifetime {
        s.max_instance_lifetime = Some(v);
    }
    // -1 takes a warm-up off, as in AWS.
    if let Some(v) = input.default_instance_warmup {
        s.default_instance_warmup = (v >= 0).then_some(v);
    }
    if let Some(v) = &input.health_check_type {
        s.health_check_type = v.clone();
    }
    if let Some(v) = input.new_instances_protected_from_scale_in {
        s.new_instances_protected_from_scale_in = v;
    }
    if let Some(v) = input.capacity_rebalance {
        s.capacity_rebalance = v;
    }
    if let Some(v) = &input.termination_policies {
        s.termination_policies = v.clone();
    }
    if let Some(v) = &input.context {
        s.context = Some(v.clone());
    }
    if let Some(v) = &input.availability_zone_distribution {
        s.availability_zone_distribution = Some(v.clone());
    }
    // An empty name takes it off (Terraform's update when the setting is removed).
    if let Some(v) = &input.placement_group {
        s.placement_group = Some(v.clone()).filter(|p| !p.is_empty());
    }
    if let Some(v) = input.deletion_protection {
        s.deletion_protection = Some(v);
    }
    // Its reservations' zones are the api's to fill (`reservation::zones`), from the cloud.
    if let Some(v) = &input.capacity_reservation_specification {
        s.capacity_reservation_specification = Some(v.clone());
        s.reservation_zones.clear();
    }
    if let Some(v) = &input.instance_lifecycle_policy {
        s.instance_lifecycle_policy = Some(v.clone());
    }
    // Checked by `check_settings`; -1 in both takes it off.
    if let Some(Ok(v)) = input
        .instance_maintenance_policy
        .as_ref()
        .map(crate::maintenance::of)
    {
        s.instance_maintenance_policy = v;
    }
    if let Some(v) = &input.desired_capacity_type {
        s.desired_capacity_type = Some(v.clone());
    }
    // Zones or subnets: new subnets without zones leave the group no zones (it has one or the
    // other).
    if let Some(v) = &input.vpc_zone_identifier {
        s.vpc_zone_identifier = Some(v.clone());
        if input.availability_zones.is_none() {
            s.availability_zones.clear();
        }
    }
    if let Some(v) = &input.availability_zones {
        s.availability_zones = v.clone();
    }
    // Zone ids are shown as given while the zones are theirs (`name_zone_ids` named them).
    if input.availability_zones.is_some() || input.vpc_zone_identifier.is_some() {
        s.availability_zone_ids = input
            .availability_zone_ids
            .clone()
            .filter(|ids| !ids.is_empty());
    }
}

/// DeleteAutoScalingGroup of `g` (with `force`, ForceDelete) as its deletion protection allows:
/// `prevent-force-deletion` refuses ForceDelete, `prevent-all-deletion` every deletion.
pub fn check_deletion(g: &Group, force: bool) -> Checked<()> {
    let level = g
        .settings
        .deletion_protection
        .unwrap_or(DeletionProtection::None);
    let refused = match level {
        DeletionProtection::None => false,
        DeletionProtection::PreventForceDeletion => force,
        DeletionProtection::PreventAllDeletion => true,
    };
    if refused {
        return Err(Refusal::invalid(format!(
            "AutoScalingGroup {} has DeletionProtection {}: it cannot be deleted{}. Set DeletionProtection to a less restrictive level first.",
            g.settings.auto_scaling_group_name,
            level.as_str(),
            if force { " with ForceDelete" } else { "" },
        )));
    }
    Ok(())
}

/// A group's `DesiredCapacityType`: `units`, or `vcpu` or `memory-mib` where its instance types
/// are chosen by their attributes (InstanceRequirements), as AWS has it.
fn check_capacity_type(s: &Settings) -> Checked<()> {
    let Some(t) = s.desired_capacity_type.as_deref() else {
        return Ok(());
    };
    if !matches!(t, "units" | "vcpu" | "memory-mib") {
        return Err(Refusal::invalid(format!(
            "DesiredCapacityType '{t}' is not one of units, vcpu, memory-mib."
        )));
    }
    let by_attributes = crate::template::of(None, s.mixed_instances_policy.as_ref())?
        .is_some_and(|spec| !spec.requirements.is_empty());
    if t != "units" && !by_attributes {
        return Err(Refusal::invalid(format!(
            "DesiredCapacityType {t} is only supported with attribute-based instance type selection: give the MixedInstancesPolicy's overrides InstanceRequirements."
        )));
    }
    Ok(())
}

/// UpdateAutoScalingGroup: the group with the request's changes, checked as AWS checks them. A new
/// MinSize above the current desired capacity raises it, a new MaxSize below lowers it, when the
/// request gives no DesiredCapacity. The caller has checked that a new launch configuration
/// exists and is on the group's cloud.
pub fn update(g: &Group, input: &UpdateAutoScalingGroup) -> Checked<Group> {
    check_settings(&input.settings)?;
    check_new_launch_source(&input.settings)?;
    let min = input.min_size.unwrap_or(g.min);
    let max = input.max_size.unwrap_or(g.max);
    let desired = input
        .desired_capacity
        .unwrap_or_else(|| g.desired.max(min).min(max));
    check_sizes(min, max, desired)?;
    let mut next = g.clone();
    apply_settings(&input.settings, &mut next.settings);
    check_capacity_type(&next.settings)?;
    (next.min, next.max, next.desired) = (min, max, desired);
    Ok(next)
}

/// Request `Tag`s become `TagDescription`s of this group.
fn tag_descriptions(group: &str, tags: &[Tag]) -> Checked<Vec<TagDescription>> {
    if tags.len() > MAX_TAGS {
        return Err(Refusal::invalid(format!(
            "A group may have at most {MAX_TAGS} tags, got {}.",
            tags.len()
        )));
    }
    let mut out: Vec<TagDescription> = Vec::with_capacity(tags.len());
    for t in tags {
        let key = t.key.clone();
        if key.to_ascii_lowercase().starts_with("aws:") {
            return Err(Refusal::invalid(format!(
                "Tag keys starting with 'aws:' are reserved: '{key}'."
            )));
        }
        if out.iter().any(|d| d.key == key) {
            return Err(Refusal::invalid(format!("Duplicate tag key '{key}'.")));
        }
        out.push(TagDescription {
            resource_id: group.to_string(),
            resource_type: crate::tags::RESOURCE_TYPE.to_string(),
            key,
            // AWS's defaults for a tag given without them.
            value: t.value.clone().unwrap_or_default(),
            propagate_at_launch: t.propagate_at_launch.unwrap_or(false),
        });
    }
    crate::tags::order(&mut out);
    Ok(out)
}

/// One of DescribeAutoScalingGroups' `Filters`: `tag-key`, `tag-value` or `tag:<key>`.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    TagKey(Vec<String>),
    TagValue(Vec<String>),
    Tag(String, Vec<String>),
}

pub fn parse_filters(filters: &[request::Filter]) -> Checked<Vec<Filter>> {
    let mut out = Vec::new();
    for f in filters {
        let name = f.name.as_deref().ok_or_else(|| {
            Refusal::invalid("Each filter needs a Name: tag-key, tag-value or tag:<key>.")
        })?;
        let values = f.values.clone();
        out.push(match name {
            "tag-key" => Filter::TagKey(values),
            "tag-value" => Filter::TagValue(values),
            n if n.starts_with("tag:") => Filter::Tag(n[4..].to_string(), values),
            other => {
                return Err(Refusal::invalid(format!(
                    "Filter name '{other}' is not valid: use tag-key, tag-value or tag:<key>."
                )))
            }
        });
    }
    Ok(out)
}

/// True when the group's tags satisfy every filter (each filter matches any of its values).
pub fn matches_filters(tags: &[TagDescription], filters: &[Filter]) -> bool {
    let tags: Vec<(&str, &str)> = tags
        .iter()
        .map(|t| (t.key.as_str(), t.value.as_str()))
        .collect();
    filters.iter().all(|f| match f {
        Filter::TagKey(keys) => tags.iter().any(|(k, _)| keys.iter().any(|x| x == k)),
        Filter::TagValue(vals) => tags.iter().any(|(_, v)| vals.iter().any(|x| x == v)),
        Filter::Tag(key, vals) => tags
            .iter()
            .any(|(k, v)| k == key && vals.iter().any(|x| x == v)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// The group a CreateAutoScalingGroup request makes, as the decoder gives the request.
    fn create(input: &Value) -> Checked<Group> {
        from_input(
            &serde_json::from_value(input.clone()).expect("a request"),
            ctx(),
        )
    }

    /// `g` after an UpdateAutoScalingGroup request.
    fn change(g: &Group, input: &Value) -> Checked<Group> {
        update(
            g,
            &serde_json::from_value(input.clone()).expect("a request"),
        )
    }

    fn ctx() -> NewGroupContext<'static> {
        // 2026-01-01T00:00:00Z
        crate::fixtures::test_context("g-id", 1_767_225_600_000)
    }

    #[test]
    fn defaults_and_round_trip_fields() {
        let input = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "web@hotel",
            "MinSize": 1, "MaxSize": 5, "TerminationPolicies": ["OldestInstance"],
            "Tags": [{"Key": "team", "Value": "a", "PropagateAtLaunch": true}],
            "LifecycleHookSpecificationList": [{"LifecycleHookName": "h",
                "LifecycleTransition": "autoscaling:EC2_INSTANCE_LAUNCHING"}]});
        let g = create(&input).unwrap();
        assert_eq!((g.min, g.max, g.desired, g.version), (1, 5, 1, 1));
        let d = serde_json::to_value(g.clone().describe(Vec::new(), None)).unwrap();
        assert_eq!(d["DesiredCapacity"], 1);
        assert_eq!(d["AvailabilityZones"], json!(["hotel-a"]));
        assert_eq!(d["TerminationPolicies"], json!(["OldestInstance"]));
        assert_eq!(d["Tags"][0]["ResourceId"], "g");
        assert_eq!(d["Tags"][0]["ResourceType"], "auto-scaling-group");
        assert_eq!(d["DefaultCooldown"], 300);
        assert!(d.get("LifecycleHookSpecificationList").is_none());
        assert_eq!(
            g.target().hooks.len(),
            1,
            "the hooks given become the group's"
        );
        let bad = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "web@hotel",
            "MinSize": 0, "MaxSize": 1,
            "LifecycleHookSpecificationList": [{"LifecycleHookName": "h", "LifecycleTransition": "x"}]});
        assert!(create(&bad).is_err());
    }

    #[test]
    fn subnets_bring_their_zones_and_refuse_others() {
        let input = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l",
            "MinSize": 0, "MaxSize": 1, "VPCZoneIdentifier": "subnet-2, subnet-1,subnet-3"});
        let mut g = create(&input).unwrap();
        let found: Vec<(String, String)> =
            [("subnet-1", "b"), ("subnet-2", "a"), ("subnet-3", "b")]
                .map(|(s, z)| (s.to_string(), z.to_string()))
                .into();
        in_subnet_zones(&mut g.settings, None, &found).unwrap();
        assert_eq!(g.settings.availability_zones, ["a", "b"]);
        let given = ["b".to_string(), "a".to_string()];
        assert!(in_subnet_zones(&mut g.settings, Some(&given), &found).is_ok());
        let other = ["c".to_string()];
        let Err(Refusal::Invalid(m)) = in_subnet_zones(&mut g.settings, Some(&other), &found)
        else {
            panic!("zones not of the subnets are refused");
        };
        assert!(m.contains("do not match"), "{m}");
        let Err(Refusal::Invalid(m)) = in_subnet_zones(&mut g.settings, None, &found[..1]) else {
            panic!("an unknown subnet is refused");
        };
        assert_eq!(m, "The subnet ID 'subnet-2' does not exist");
    }

    #[test]
    fn subnets_mean_no_default_zone() {
        let input = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l",
            "MinSize": 0, "MaxSize": 1, "VPCZoneIdentifier": "subnet-1,subnet-2"});
        let g = create(&input).unwrap();
        assert!(g.settings.availability_zones.is_empty());
        assert_eq!(
            g.settings.vpc_zone_identifier.as_deref(),
            Some("subnet-1,subnet-2")
        );
        assert_eq!(g.subnets(), ["subnet-1", "subnet-2"]);
    }

    #[test]
    fn size_errors_use_aws_wording() {
        assert_eq!(
            check_sizes(5, 1, 1).unwrap_err().message().to_string(),
            "Max bound, 1, must be greater than or equal to min bound, 5"
        );
        assert_eq!(
            check_sizes(1, 5, 9).unwrap_err().message().to_string(),
            "Desired capacity:9 must be between the specified min size:1 and max size:5"
        );
        let g = create(&json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": 1, "MaxSize": 3})).unwrap();
        assert!(check_new_desired(&g, 4)
            .unwrap_err()
            .message()
            .contains("above max value 3"));
        assert!(check_new_desired(&g, 0)
            .unwrap_err()
            .message()
            .contains("below min value 1"));
        check_new_desired(&g, 3).unwrap();
    }

    #[test]
    fn refuses_bad_groups() {
        for input in [
            json!({"AutoScalingGroupName": "g", "MinSize": 0, "MaxSize": 1}),
            json!({"AutoScalingGroupName": "g", "LaunchTemplate": {"LaunchTemplateId": "lt", "Version": "x"}, "MinSize": 0, "MaxSize": 1}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "LaunchTemplate": {"LaunchTemplateId": "lt"}, "MinSize": 0, "MaxSize": 1}),
            json!({"AutoScalingGroupName": "g", "InstanceId": "i-1", "MinSize": 0, "MaxSize": 1}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": -1, "MaxSize": 1}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": 0, "MaxSize": 1, "TerminationPolicies": ["Random"]}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": 0, "MaxSize": 1, "HealthCheckType": "ELB,HTTP"}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": 0, "MaxSize": 1, "Tags": [{"Key": "a"}, {"Key": "a"}]}),
            json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l", "MinSize": 0, "MaxSize": 1, "Tags": [{"Key": "aws:x"}]}),
        ] {
            assert!(
                matches!(create(&input).unwrap_err(), Refusal::Invalid(_)),
                "{input}"
            );
        }
    }

    #[test]
    fn an_instance_maintenance_policy_is_kept_until_minus_one_clears_it() {
        let base = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l",
            "MinSize": 0, "MaxSize": 1,
            "InstanceMaintenancePolicy": {"MinHealthyPercentage": 90, "MaxHealthyPercentage": 120}});
        let g = create(&base).unwrap();
        let kept = Some(phantom_model::group::InstanceMaintenancePolicy {
            min_healthy_percentage: 90,
            max_healthy_percentage: 120,
        });
        assert_eq!(g.settings.instance_maintenance_policy, kept);
        let shown = serde_json::to_value(&g.settings).unwrap();
        assert_eq!(
            shown["InstanceMaintenancePolicy"],
            json!({"MinHealthyPercentage": 90, "MaxHealthyPercentage": 120})
        );
        // An update that does not name it leaves it; a bad one changes nothing.
        let g = change(&g, &json!({"AutoScalingGroupName": "g", "MaxSize": 2})).unwrap();
        assert_eq!(g.settings.instance_maintenance_policy, kept);
        let bad = json!({"AutoScalingGroupName": "g",
            "InstanceMaintenancePolicy": {"MinHealthyPercentage": 90}});
        assert!(change(&g, &bad).is_err());
        let off = json!({"AutoScalingGroupName": "g",
            "InstanceMaintenancePolicy": {"MinHealthyPercentage": -1, "MaxHealthyPercentage": -1}});
        let g = change(&g, &off).unwrap();
        assert_eq!(g.settings.instance_maintenance_policy, None);
        assert!(serde_json::to_value(&g.settings).unwrap()["InstanceMaintenancePolicy"].is_null());
    }

    #[test]
    fn zone_ids_are_named_by_the_cloud_and_shown_until_names_replace_them() {
        let found = [
            ("az1".to_string(), "us-east-1a".to_string()),
            ("az2".to_string(), "us-east-1b".to_string()),
        ];
        let asked = |v: Value| -> CreateAutoScalingGroup { serde_json::from_value(v).unwrap() };
        let base = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l",
            "MinSize": 0, "MaxSize": 1, "AvailabilityZoneIds": ["az2", "az1"]});
        // Not named first: refused (the api names them before the rules see the request).
        assert!(create(&base).is_err());
        let mut input = asked(base.clone());
        name_zone_ids(&mut input.settings, &found).unwrap();
        let g = from_input(&input, ctx()).unwrap();
        assert_eq!(g.settings.availability_zones, ["us-east-1b", "us-east-1a"]);
        assert_eq!(
            g.settings.availability_zone_ids,
            Some(vec!["az2".to_string(), "az1".to_string()])
        );
        // An id the cloud does not have; ids beside names.
        let mut unknown = asked(
            json!({"AutoScalingGroupName": "g", "MinSize": 0, "MaxSize": 1,
            "AvailabilityZoneIds": ["az9"]}),
        );
        let e = name_zone_ids(&mut unknown.settings, &found).unwrap_err();
        assert_eq!(e.message(), "The availability zone ID 'az9' does not exist");
        let mut both = asked(
            json!({"AutoScalingGroupName": "g", "MinSize": 0, "MaxSize": 1,
            "AvailabilityZoneIds": ["az1"], "AvailabilityZones": ["us-east-1a"]}),
        );
        assert!(name_zone_ids(&mut both.settings, &found).is_err());
        // Zones by name replace the ids; an update naming neither keeps them.
        let kept = change(&g, &json!({"AutoScalingGroupName": "g", "MaxSize": 2})).unwrap();
        assert!(kept.settings.availability_zone_ids.is_some());
        let named = change(
            &g,
            &json!({"AutoScalingGroupName": "g", "AvailabilityZones": ["us-east-1a"]}),
        )
        .unwrap();
        assert_eq!(named.settings.availability_zone_ids, None);
    }

    #[test]
    fn settings_phantom_does_not_act_on_are_refused_not_stored() {
        let base = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l",
            "MinSize": 0, "MaxSize": 1});
        for (member, _) in REFUSED {
            let mut input = base.clone();
            input[member] = match member {
                "ServiceLinkedRoleARN" => json!("x"),
                "SkipZonalShiftValidation" => json!(true),
                _ => json!({"Any": "thing"}),
            };
            let e = create(&input).unwrap_err();
            assert!(matches!(e, Refusal::Invalid(_)), "{member}");
            assert!(
                e.message()
                    .starts_with(&format!("{member} is not supported")),
                "{}",
                e.message()
            );
            let g = create(&base).unwrap();
            assert_eq!(
                change(&g, &input).unwrap_err().message().to_string(),
                e.message()
            );
        }
        // Their AWS defaults change nothing, so they pass.
        let mut defaults = base.clone();
        defaults["DesiredCapacityType"] = json!("units");
        create(&defaults).unwrap();
        defaults["DesiredCapacityType"] = json!("vcpu");
        assert!(create(&defaults).is_err());
    }

    #[test]
    fn deletion_protection_refuses_force_or_every_deletion_until_lowered() {
        let base = json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "l",
            "MinSize": 0, "MaxSize": 1});
        let g = create(&base).unwrap();
        assert_eq!(g.settings.deletion_protection, None);
        check_deletion(&g, true).unwrap();
        let mut input = base.clone();
        input["DeletionProtection"] = json!("prevent-force-deletion");
        let g = change(&g, &input).unwrap();
        check_deletion(&g, false).unwrap();
        let e = check_deletion(&g, true).unwrap_err();
        assert!(matches!(e, Refusal::Invalid(_)));
        assert!(
            e.message().contains(
                "DeletionProtection prevent-force-deletion: it cannot be deleted with ForceDelete"
            ),
            "{}",
            e.message()
        );
        input["DeletionProtection"] = json!("prevent-all-deletion");
        let g = change(&g, &input).unwrap();
        assert!(check_deletion(&g, false).is_err());
        assert!(check_deletion(&g, true).is_err());
        // Shown as given; lowered, the group may go again; an update without it keeps it.
        let shown = serde_json::to_value(&g.settings).unwrap();
        assert_eq!(shown["DeletionProtection"], "prevent-all-deletion");
        let kept = change(&g, &base).unwrap();
        assert!(check_deletion(&kept, false).is_err());
        input["DeletionProtection"] = json!("none");
        check_deletion(&change(&g, &input).unwrap(), true).unwrap();
    }

    #[test]
    fn tag_filters() {
        let tag = |key: &str, value: &str| TagDescription {
            resource_id: "g".into(),
            resource_type: "auto-scaling-group".into(),
            key: key.into(),
            value: value.into(),
            propagate_at_launch: false,
        };
        let doc = [tag("env", "prod"), tag("team", "a")];
        let f = |v: Value| {
            parse_filters(&serde_json::from_value::<Vec<request::Filter>>(v).unwrap()).unwrap()
        };
        assert!(matches_filters(
            &doc,
            &f(json!([{"Name": "tag-key", "Values": ["env"]}]))
        ));
        assert!(matches_filters(
            &doc,
            &f(
                json!([{"Name": "tag:env", "Values": ["dev", "prod"]}, {"Name": "tag-value", "Values": ["a"]}])
            )
        ));
        assert!(!matches_filters(
            &doc,
            &f(json!([{"Name": "tag:env", "Values": ["dev"]}]))
        ));
        assert!(parse_filters(
            &serde_json::from_value::<Vec<request::Filter>>(
                json!([{"Name": "instance-id", "Values": ["x"]}])
            )
            .unwrap()
        )
        .is_err());
    }
}
