//! Acting on a cloud: connecting with the owner's credentials, RunInstances for a round's
//! placements (trying the next instance type where the cloud has none), TerminateInstances,
//! tagging attached VMs and untagging detached ones, and recording a failed round.

use super::*;
use phantom_model::group::LaunchTemplateSpecification;
use phantom_rules::group::GroupRules;
use phantom_rules::template::{Spec, TemplateRef};
use phantom_seams::cloud::LaunchRequest;

impl Provisioner {
    /// A cloud with the owner's credentials there, and its registration (its default zone, for
    /// a group across clouds; whether it has status checks).
    pub(crate) async fn connect_record(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Result<(CloudRecord, Arc<dyn Cloud>), CloudError>, StoreError> {
        let Some(cloud) = self.store.cloud(name).await? else {
            return Ok(Err(CloudError::new(
                "UnknownCloud",
                format!("cloud '{name}' is not registered"),
            )));
        };
        let Some(creds) = self.store.cloud_credentials(owner, name).await? else {
            return Ok(Err(CloudError::new(
                "NoCredentials",
                format!("user '{owner}' has no credentials for cloud '{name}'"),
            )));
        };
        let client = self.clouds.connect(&cloud, &creds);
        Ok(Ok((cloud, client)))
    }

    /// RunInstances for the plan's placements, then for its warm pool's, one request (and
    /// token) per placement, until one fails.
    pub(crate) async fn launch(
        &self,
        owner: &str,
        g: &Group,
        on: &On,
        cloud: &dyn Cloud,
        plan: &Plan,
        acted: &mut Acted,
    ) -> Result<(), StoreError> {
        // A spot VM moving back never falls back: the group keeps what it has meanwhile.
        let into = Destination::Group {
            fallback: on.fallback && !plan.move_back,
            named: false,
        };
        self.launch_into(owner, g, on, cloud, &plan.launch, into, acted)
            .await?;
        if plan.move_back {
            for m in &acted.launched {
                acted.moved_on.insert(
                    m.id.clone(),
                    "Spot can be had again: this spot VM takes the place of an on-demand one (phantom:spot-fallback), which leaves once it serves.".into(),
                );
            }
        }
        if acted.launch_failed.is_none() && !plan.launch_warm.is_empty() {
            self.launch_into(
                owner,
                g,
                on,
                cloud,
                &plan.launch_warm,
                Destination::Pool,
                acted,
            )
            .await?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn launch_into(
        &self,
        owner: &str,
        g: &Group,
        on: &On,
        cloud: &dyn Cloud,
        placements: &[Placement],
        into: Destination,
        acted: &mut Acted,
    ) -> Result<(), StoreError> {
        if placements.is_empty() {
            return Ok(());
        }
        let source = match self
            .source(owner, g, on.launch_configuration.as_deref())
            .await?
        {
            Ok(source) => source,
            Err(e) => {
                acted.launch_failed = Some(e.to_string());
                return Ok(());
            }
        };
        // Types chosen by their attributes: the cloud's that match, found now.
        let source = match source {
            Source::Template(spec) if !spec.requirements.is_empty() => {
                match cloud.instance_types().await {
                    Ok(offered) => {
                        let spec = spec.resolved(&offered, g.capacity_type());
                        if spec.instance_types.is_empty() {
                            acted.launch_failed = Some(format!(
                                "no instance type of cloud {} has the attributes the InstanceRequirements ask for",
                                on.cloud
                            ));
                            return Ok(());
                        }
                        Source::Template(spec)
                    }
                    Err(e) => {
                        acted.launch_failed = Some(e.to_string());
                        return Ok(());
                    }
                }
            }
            source => source,
        };
        // Launched from the version numbers `$Latest` and `$Default` are now, recorded so.
        let source = match source {
            Source::Template(spec) => match pinned(cloud, spec).await {
                Ok(spec) => Source::Template(spec),
                Err(why) => {
                    acted.launch_failed = Some(why);
                    return Ok(());
                }
            },
            source => source,
        };
        let mut tags = group_tags(g, owner);
        if matches!(into, Destination::Pool) {
            tags.push((TAG_WARM_POOL.to_string(), "true".to_string()));
        }
        let dist = g.distribution();
        // The overrides' instance types, in their priority (none: the template's own type).
        let (types, weights) = match &source {
            Source::Template(spec) => (spec.instance_types.clone(), spec.weights.clone()),
            Source::Config(_) => (Vec::new(), phantom_rules::weights::Weights::none()),
        };
        // Types chosen by their attributes keep to AWS's spot price protection.
        let protection = match &source {
            Source::Template(spec) if !spec.requirements.is_empty() => {
                Some(phantom_rules::requirements::spot_protection(
                    spec.requirements.iter().map(|(r, _)| r),
                ))
            }
            _ => None,
        };
        let prices = self
            .spot_prices(g, cloud, placements, &types, &dist, protection.is_some())
            .await;
        // One request per zone, subnet, market and order of types to try, for the units of its
        // placements: the k-th spot VM of the round starts at its own pool (lowest-price spreads
        // over SpotInstancePools).
        let mut batches: BTreeMap<Batch, i64> = BTreeMap::new();
        let mut spot_k = 0;
        for p in placements {
            let order = match p.market {
                Market::Spot if types.len() > 1 => {
                    spot_k += 1;
                    let here = prices_in(&prices, p.zone.as_deref());
                    let types = match protection {
                        Some(percent) => {
                            phantom_rules::requirements::protected(&types, &here, percent)
                        }
                        None => types.clone(),
                    };
                    dist.spot_order(&types, &here, spot_k - 1)
                }
                _ => types.clone(),
            };
            *batches
                .entry((p.zone.clone(), p.subnet.clone(), p.market, order))
                .or_default() += p.units;
        }
        let protect = g.target().protect_new;
        let launch_template = match &source {
            Source::Template(_) => on.launch_template.clone(),
            Source::Config(_) => None,
        };
        // Units launched past a batch's by a heavier type than asked (its overage), by market:
        // the next batches of that market launch that much less, so that a round fulfils its
        // units once in all, as AWS does (found by the simulator, `no-flap`: a spot unit in each
        // of two zones fell back to a two-unit type, and the next round let one go).
        let mut overage: BTreeMap<Market, i64> = BTreeMap::new();
        // The batches whose first type weighs most go first: their overage comes off the others.
        let mut batches: Vec<(Batch, i64)> = batches.into_iter().collect();
        batches.sort_by_key(|((_, _, _, order), _)| {
            std::cmp::Reverse(order.first().and_then(|t| weights.of_type(t)).unwrap_or(1))
        });
        'places: for (i, ((zone, subnet, market, order), units)) in batches.into_iter().enumerate()
        {
            let covered = overage.get(&market).copied().unwrap_or(0).min(units);
            if covered > 0 {
                *overage.entry(market).or_default() -= covered;
            }
            let units = units - covered;
            if units == 0 {
                continue;
            }
            let token = match into {
                Destination::Group { .. } => format!("{}-{i}", on.token),
                Destination::Pool => format!("{}-w{i}", on.token),
            };
            // balanced-best-effort: where this zone (or subnet) has no room, the group's others
            // (not for a placement the request named).
            let elsewhere = match into {
                Destination::Group { named: true, .. } => Vec::new(),
                _ => phantom_rules::distribution::elsewhere(
                    &g.settings,
                    zone.as_deref(),
                    subnet.as_deref(),
                ),
            };
            let mut tries = requests(
                &source,
                &order,
                &Placement {
                    zone: zone.clone(),
                    subnet: subnet.clone(),
                    market,
                    units,
                },
                dist.spot_max_price.as_deref(),
                token.clone(),
                tags.clone(),
            );
            // Beyond AWS (phantom:spot-fallback): where no type has spot, the same types
            // on-demand.
            if market == Market::Spot && matches!(into, Destination::Group { fallback: true, .. }) {
                tries.extend(requests(
                    &source,
                    &order,
                    &Placement {
                        zone,
                        subnet,
                        market: Market::OnDemand,
                        units,
                    },
                    None,
                    format!("{token}-od"),
                    tags.clone(),
                ));
            }
            let here = tries.clone();
            for (j, (zone, subnet)) in elsewhere.into_iter().enumerate() {
                tries.extend(here.iter().map(|t| LaunchRequest {
                    client_token: format!("{}-at{j}", t.client_token),
                    zone: zone.clone(),
                    network: t.network.at_subnet(subnet.clone()),
                    ..t.clone()
                }));
            }
            for t in &mut tries {
                t.placement_group.clone_from(&g.settings.placement_group);
            }
            let at = tries.first().and_then(|t| t.zone.clone());
            let tries = reserved(g, tries);
            if tries.is_empty() {
                acted.launch_failed = Some(format!(
                    "no capacity reservation the group targets is in {} (CapacityReservationPreference capacity-reservations-only)",
                    at.as_deref().unwrap_or("the launch's zone")
                ));
                return Ok(());
            }
            let last = tries.len() - 1;
            // What the cloud refused before this try, for the activity.
            let mut refused: Vec<String> = Vec::new();
            for (k, req) in tries.iter().enumerate() {
                let launched = cloud.launch(req).await;
                let code = match &launched {
                    Ok(_) => "OK",
                    Err(e) => e.code.as_str(),
                };
                phantom_metrics::ops::count(
                    phantom_metrics::ops::LAUNCHES,
                    &[("cloud", &on.cloud), ("code", code)],
                );
                let what = format!(
                    "{} {}",
                    req.instance_type
                        .as_deref()
                        .unwrap_or("the template's type"),
                    if req.spot.is_some() {
                        "spot"
                    } else {
                        "on-demand"
                    }
                );
                match launched {
                    Ok(vms) => {
                        acted.launch_answered |= !vms.is_empty();
                        let (lifecycle, to) = match into {
                            Destination::Group { .. } => (Lifecycle::Pending, &mut acted.launched),
                            Destination::Pool => {
                                (Lifecycle::WarmedPending, &mut acted.launched_warm)
                            }
                        };
                        if !refused.is_empty() {
                            let why = if market == Market::Spot && req.spot.is_none() {
                                " (no spot for any type; phantom:spot-fallback)"
                            } else {
                                ""
                            };
                            let note = format!("{}; launched {what}{why}.", refused.join("; "));
                            for s in &vms {
                                acted.moved_on.insert(s.id.clone(), note.clone());
                            }
                        }
                        let got: i64 = vms
                            .iter()
                            .map(|s| weights.of_type(&s.instance_type).unwrap_or(1))
                            .sum();
                        *overage.entry(market).or_default() += (got - units).max(0);
                        // A retried token is answered with its first launch's VMs, which may have
                        // gone since (found by the simulator, seed 91): those are not new.
                        to.extend(vms.into_iter().filter(|s| s.is_alive()).map(|s| {
                            Member {
                                id: s.id,
                                cloud: on.cloud.clone(),
                                zone: s.zone,
                                subnet: req.subnet().map(str::to_string),
                                lifecycle,
                                healthy: true,
                                launched_ms: s.launched_ms,
                                joined_ms: None,
                                replaces_ms: None,
                                at_risk_ms: None,
                                probe_failed: None,
                                unhealthy_check: None,
                                weight: weights.of_type(&s.instance_type),
                                protected: protect,
                                launch_configuration: on.launch_configuration.clone(),
                                launch_template: launch_template.clone(),
                                launched_from: match (&launch_template, &req.template) {
                                    (Some(group), Some(t)) => {
                                        Some(launched_from(group, t, &on.cloud))
                                    }
                                    _ => None,
                                },
                                instance_type: s.instance_type,
                                // What was asked for and granted (a cloud may not echo it).
                                market: if req.spot.is_some() {
                                    Market::Spot
                                } else {
                                    Market::OnDemand
                                },
                                waits: Vec::new(),
                                open: None,
                                rev: 0,
                            }
                        }));
                        continue 'places;
                    }
                    Err(e) if k < last && try_another_type(&e) => {
                        tracing::info!(group = g.name, error = %e, tried = what, "the cloud refused this instance type; trying the next override");
                        refused.push(format!("{what}: {}", e.code));
                    }
                    Err(e) => {
                        refused.push(format!("{what}: {e}"));
                        // No answer: the launch may have happened, and only its token finds out.
                        acted.launch_unanswered |= e.code == "CloudUnreachable";
                        acted.launch_failed = Some(if refused.len() > 1 {
                            format!("tried {}", refused.join("; "))
                        } else {
                            e.to_string()
                        });
                        // A place without room holds back only its own share: the others'
                        // launches go on (AWS's balanced-only); any other refusal would be
                        // every place's, so the round stops.
                        if try_another_type(&e) {
                            continue 'places;
                        }
                        break 'places;
                    }
                }
            }
        }
        Ok(())
    }

    /// The spot prices of `types` on `cloud`, where spot VMs are to be launched among several
    /// types by a strategy that orders by price or under price protection (`protected`); none
    /// where the cloud gives none (the overrides' order then, unprotected).
    async fn spot_prices(
        &self,
        g: &Group,
        cloud: &dyn Cloud,
        placements: &[Placement],
        types: &[String],
        dist: &Distribution,
        protected: bool,
    ) -> Vec<SpotPrice> {
        let spot = placements.iter().any(|p| p.market == Market::Spot);
        if !spot || types.len() < 2 || !(dist.orders_by_price() || protected) {
            return Vec::new();
        }
        match cloud.spot_prices(types).await {
            Ok(prices) => prices,
            Err(e) => {
                tracing::warn!(group = g.name, error = %e, "no spot prices from the cloud; trying the overrides in order");
                Vec::new()
            }
        }
    }

    /// What the group launches from: its launch configuration, or its launch template.
    pub(crate) async fn source(
        &self,
        owner: &str,
        g: &Group,
        launch_configuration: Option<&str>,
    ) -> Result<Result<Source, CloudError>, StoreError> {
        let Some(launch_configuration) = launch_configuration else {
            let from = g.launching();
            return Ok(
                match phantom_rules::template::of(from.launch_template, from.mixed_instances_policy)
                {
                    Ok(Some(spec)) => Ok(Source::Template(spec)),
                    Ok(None) => Err(CloudError::new(
                        "NoLaunchSource",
                        "the group has neither a launch configuration nor a launch template",
                    )),
                    Err(e) => Err(CloudError::new("InvalidLaunchTemplate", e.message())),
                },
            );
        };
        Ok(
            match self
                .store
                .launch_config(owner, launch_configuration)
                .await?
            {
                Some(lc) => Ok(Source::Config(Box::new(lc.settings))),
                None => Err(CloudError::new(
                    "LaunchConfigurationMissing",
                    format!("launch configuration {launch_configuration} not found"),
                )),
            },
        )
    }

    /// The cloud could not be looked at: a failed activity and a backoff, then a retry.
    pub(crate) async fn failed(
        &self,
        owner: &str,
        g: &Group,
        e: &CloudError,
        r: &Record,
    ) -> Result<Round, StoreError> {
        tracing::warn!(group = g.name, error = %e, "cloud unavailable");
        let mut r = r.clone();
        match self.write(owner, g, &mut r).await {
            Ok(()) | Err(StoreError::NotFound) | Err(StoreError::Conflict) => {}
            Err(e) => return Err(e),
        }
        self.retry_later(owner, g, &r).await;
        Ok(Round::Waiting)
    }

    /// A delayed message for when the backoff in `r` is due.
    pub(crate) async fn retry_later(&self, owner: &str, g: &Group, r: &Record) {
        if let Some(b) = r.backoff {
            self.retry_at(owner, g, b.retry_at_ms).await;
        }
    }

    /// A delayed message for when a backoff ending at `at_ms` is due.
    pub(crate) async fn retry_at(&self, owner: &str, g: &Group, at_ms: i64) {
        let wait = (at_ms - self.clock.now_ms()).max(0);
        let delay = ((wait + 999) / 1000) as i32;
        self.enqueue(
            &Reconcile::new(owner, &g.name, "retry after failure"),
            delay,
        )
        .await;
    }
}

/// VMs launched by one request: their zone, subnet, market and the instance types to try.
type Batch = (Option<String>, Option<String>, Market, Vec<String>);

/// Where new VMs go: into the group (on-demand where no spot can be had, if `fallback`; only in
/// the zone or subnet placed, if `named`, as LaunchInstances asks), or into its warm pool.
#[derive(Clone, Copy)]
pub(crate) enum Destination {
    Group { fallback: bool, named: bool },
    Pool,
}

/// StopInstances and StartInstances for the plan's warm pool moves. A refusal is logged only:
/// nothing is recorded of them, and the next round asks again.
pub(crate) async fn stop_and_start(g: &Group, cloud: &dyn Cloud, plan: &Plan) {
    if !plan.stop.is_empty() {
        let hibernate = g
            .settings
            .warm_pool_configuration
            .as_ref()
            .is_some_and(|c| c.pool_state == phantom_rules::warm::PoolState::Hibernated);
        if let Err(e) = cloud.stop(&plan.stop, hibernate).await {
            tracing::warn!(group = g.name, error = %e, ids = ?plan.stop, "could not stop warm pool instances");
        }
    }
    if !plan.start.is_empty() {
        if let Err(e) = cloud.start(&plan.start).await {
            tracing::warn!(group = g.name, error = %e, ids = ?plan.start, "could not start instances");
        }
    }
}

/// TerminateInstances for the plan's leavers (a refusal is recorded in `acted`); their ids.
pub(crate) async fn terminate(cloud: &dyn Cloud, plan: &Plan, acted: &mut Acted) -> Vec<String> {
    let ids: Vec<String> = plan.terminate.iter().map(|(id, _)| id.clone()).collect();
    if !ids.is_empty() {
        if let Err(e) = cloud.terminate(&ids).await {
            acted.terminate_failed = Some(e.to_string());
        }
    }
    ids
}

/// Where a round launches: the cloud, the launch configuration there (empty: the group's launch
/// template) and the ClientToken's prefix (with the placement's index, the token of a request).
#[derive(Clone)]
pub(crate) struct On {
    pub cloud: String,
    /// None for a group launched from a launch template.
    pub launch_configuration: Option<String>,
    /// The launch template there, as the group names it (`fleet@sierra` on sierra for a group
    /// across clouds from `fleet@hotel`); None for a launch configuration group.
    pub launch_template: Option<LaunchTemplateSpecification>,
    pub token: String,
    /// Spot may fall back to on-demand here (`phantom:spot-fallback`; across clouds, only on
    /// the last cloud that can launch).
    pub fallback: bool,
}

impl On {
    /// The group's own cloud and launch source.
    pub(crate) fn home(g: &Group) -> Self {
        Self {
            cloud: g.cloud.clone(),
            launch_configuration: g.launching().launch_configuration.map(str::to_string),
            launch_template: g.launching().source().launch_template,
            fallback: g.distribution().fallback,
            token: format!("{}-{}", g.id, g.launch_seq),
        }
    }
}

/// AttachInstances' VMs: looked up, the good ones tagged as the group's; a cloud that fails
/// leaves them Attaching for the next round.
pub(crate) async fn attach(
    g: &Group,
    owner: &str,
    cloud: &dyn Cloud,
    ids: &[String],
    acted: &mut Acted,
) {
    let found = match cloud.describe(ids).await {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(group = g.name, error = %e, "could not look up the instances to attach");
            return;
        }
    };
    let (ok, refused) = phantom_rules::attach::judge(ids, &found, &g.id);
    acted.attach_refused = refused;
    if ok.is_empty() {
        return;
    }
    let ok_ids: Vec<String> = ok.iter().map(|s| s.id.clone()).collect();
    match cloud.tag(&ok_ids, &group_tags(g, owner)).await {
        Ok(()) => acted.attached = ok,
        Err(e) => {
            tracing::warn!(group = g.name, error = %e, "could not tag the instances to attach")
        }
    }
}

/// DetachInstances' VMs: Phantom's tags removed, one VM at a time so that one already gone
/// (InvalidInstanceID.NotFound: nothing left to untag) does not hold up the others.
pub(crate) async fn detach(g: &Group, cloud: &dyn Cloud, ids: &[String], acted: &mut Acted) {
    for id in ids {
        match cloud
            .untag(
                std::slice::from_ref(id),
                &[TAG_OWNER, TAG_GROUP, TAG_GROUP_ID, TAG_WARM_POOL],
            )
            .await
        {
            Ok(()) => acted.detached.push(id.clone()),
            Err(e) if e.code == "InvalidInstanceID.NotFound" => acted.detached.push(id.clone()),
            Err(e) => {
                tracing::warn!(group = g.name, instance = id, error = %e, "could not untag a detached instance")
            }
        }
    }
}

/// The tags a VM of the group carries: Phantom's (owner, group, group id) and the group's
/// propagated ones.
pub(crate) fn group_tags(g: &Group, owner: &str) -> Vec<(String, String)> {
    let mut tags = vec![
        (TAG_OWNER.to_string(), owner.to_string()),
        (TAG_GROUP.to_string(), g.name.clone()),
        (TAG_GROUP_ID.to_string(), g.id.clone()),
    ];
    tags.extend(g.propagated_tags());
    tags
}

/// Each on-demand try as the group's CapacityReservationSpecification asks it, once per
/// reservation to try in its zone (spot uses none); a try no reservation allows is dropped.
fn reserved(g: &Group, tries: Vec<LaunchRequest>) -> Vec<LaunchRequest> {
    let spec = g.settings.capacity_reservation_specification.as_ref();
    let zones = &g.settings.reservation_zones;
    tries
        .into_iter()
        .flat_map(|t| {
            if t.spot.is_some() {
                return vec![t];
            }
            // A launch into a subnet is in the subnet's zone.
            let zone = t.zone.as_deref().or_else(|| {
                t.subnet()
                    .and_then(|id| phantom_rules::reservation::subnet_zone(&g.settings, id))
            });
            let asks = phantom_rules::reservation::asks(spec, zones, zone);
            let n = asks.len();
            asks.into_iter()
                .enumerate()
                .map(|(r, ask)| LaunchRequest {
                    client_token: if n > 1 {
                        format!("{}-cr{r}", t.client_token)
                    } else {
                        t.client_token.clone()
                    },
                    capacity_reservation: ask,
                    ..t.clone()
                })
                .collect()
        })
        .collect()
}

/// What a VM launched from template `t` on `cloud` shows as its LaunchTemplate: `t` (the group's
/// template or its override's own), named as the group names its template (with `@<cloud>` where
/// the group's has it), at the version it was launched from.
fn launched_from(
    group: &LaunchTemplateSpecification,
    t: &TemplateRef,
    cloud: &str,
) -> LaunchTemplateSpecification {
    let at = group
        .launch_template_name
        .as_deref()
        .or(group.launch_template_id.as_deref())
        .is_some_and(|n| n.contains('@'));
    let named = |s: &String| {
        if at {
            format!("{s}@{cloud}")
        } else {
            s.clone()
        }
    };
    LaunchTemplateSpecification {
        launch_template_id: t.id.as_ref().map(named),
        launch_template_name: t.name.as_ref().map(named),
        version: Some(t.version.clone()),
    }
}

/// `spec` with each template's `$Latest` or `$Default` the version number it is now on the cloud
/// (one DescribeLaunchTemplateVersions each), so that what a VM is recorded as launched from is
/// what it launched from; the cloud's error if it cannot be asked.
async fn pinned(cloud: &dyn Cloud, mut spec: Spec) -> Result<Spec, String> {
    let mut numbers: Vec<(TemplateRef, String)> = Vec::new();
    for t in spec.templates() {
        if !t.version.starts_with('$') || numbers.iter().any(|(k, _)| k == t) {
            continue;
        }
        match cloud.template(t).await {
            Ok(Some(found)) => numbers.push((t.clone(), found.version)),
            // RunInstances says so, in the cloud's words.
            Ok(None) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    let pin = |t: &mut TemplateRef| {
        if let Some((_, n)) = numbers.iter().find(|(k, _)| k == t) {
            t.version.clone_from(n);
        }
    };
    pin(&mut spec.template);
    spec.by_type.values_mut().for_each(pin);
    for (_, own) in &mut spec.requirements {
        if let Some(t) = own {
            pin(t);
        }
    }
    Ok(spec)
}
