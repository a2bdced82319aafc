//! The in-memory cloud: EC2's behaviour as Phantom relies on it (ClientToken idempotence, tags,
//! pending -> running, terminated VMs still listed), and the ways real clouds fail, on demand:
//! refusals, server errors and throttling, slowness, unreachability, an answer lost after the
//! launch happened, running out of capacity. `MemoryClouds` connects endpoints to such clouds.
//!
//! Every call counts as one EC2 call in `metrics` (a DescribeInstances as one per page of 1000, as
//! EC2 pages it, each taking the cloud's latency) and is one step of its `Tripwire`.

mod balancers;
mod catalog;
mod clouds;
mod faults;
mod status;

pub use clouds::MemoryClouds;
pub use faults::Fault;
pub use status::Which;

use super::{
    Catalog, Cloud, CloudError, Connect, ConnectLookup, FoundTemplate, Image, InstanceStatus,
    KeyPair, LaunchRequest, Lookup, SpotPrice, Tagged, TAG_GROUP, TAG_GROUP_ID, TAG_OWNER,
    TAG_WARM_POOL,
};
use crate::fault::Tripwire;
use crate::metrics::{self, Counter};
use async_trait::async_trait;
use phantom_model::cloud::{CloudCredentials, CloudRecord};
use phantom_model::instance::{CloudState, LaunchedWith, Market, Seen};
use phantom_model::launch_template::TemplateName;
use phantom_model::time::Clock;
use phantom_rules::template::TemplateRef;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A VM as the memory cloud holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vm {
    pub id: String,
    pub state: CloudState,
    pub zone: String,
    pub subnet: Option<String>,
    pub image: Option<String>,
    pub instance_type: String,
    pub launched_ms: i64,
    /// When it last began to boot: launched, or started again after a stop.
    pub booted_ms: i64,
    pub tags: BTreeMap<String, String>,
    pub client_token: Option<String>,
    pub market: Market,
    pub placement_group: Option<String>,
    /// The capacity reservation it was launched into.
    pub capacity_reservation: Option<String>,
}

impl Vm {
    /// Its private address: one of loopback's (127.0.0.0/8) made from its id, so that a test
    /// can serve a VM's application on it for a probe.
    pub fn address(&self) -> String {
        let n = u64::from_str_radix(self.id.trim_start_matches("i-"), 16).unwrap_or(0);
        format!("127.{}.{}.{}", (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff)
    }

    fn seen(&self) -> Seen {
        Seen {
            id: self.id.clone(),
            state: self.state,
            zone: self.zone.clone(),
            launched_ms: self.launched_ms,
            instance_type: self.instance_type.clone(),
            market: self.market,
            pool: self.tags.contains_key(TAG_WARM_POOL),
        }
    }
}

/// How long a terminated VM is still listed: EC2 forgets it after about an hour.
pub const FORGET_AFTER: Duration = Duration::from_secs(3600);

/// EC2's event of a VM at elevated risk of interruption.
pub const REBALANCE_RECOMMENDATION: &str = "EC2 Instance Rebalance Recommendation";
/// EC2's event two minutes before it takes a spot VM back.
pub const INTERRUPTION_WARNING: &str = "EC2 Spot Instance Interruption Warning";

#[derive(Default)]
struct State {
    vms: BTreeMap<String, Vm>,
    /// Owner tag -> the ids of the VMs carrying it (DescribeInstances by tag reads only these).
    by_owner: BTreeMap<String, BTreeSet<String>>,
    /// Terminated VMs, oldest first: (when, id). Each is forgotten `forget_ms` after.
    ended: VecDeque<(i64, String)>,
    forget_ms: i64,
    forgotten: usize,
    /// How long a new VM stays pending (0: running by the time anyone looks).
    boot_ms: i64,
    /// A new VM is missing from DescribeInstances this long after its launch, as EC2's answers
    /// are eventually consistent.
    describe_lag_ms: i64,
    /// A VM's tag filter follows its tags this long behind (EC2's tags are eventually
    /// consistent): a VM untagged within it is still found by its old owner, showing its new tags.
    tag_lag_ms: i64,
    /// Tags changed within the tag lag, still matched by filters until then: (when, id, the
    /// tags before), oldest first.
    stale_tags: VecDeque<(i64, String, BTreeMap<String, String>)>,
    tokens: BTreeMap<String, Vec<String>>,
    /// A forgotten VM launched with a client token, as a repeat of its launch returns it: EC2
    /// keeps a token's answer for at least a day after the VM ends, past its listing.
    by_token_only: BTreeMap<String, Seen>,
    next: u64,
    next_zone: usize,
    run_calls: usize,
    tagged_calls: usize,
    /// State changes as EC2 would send them to EventBridge: (id, new state), oldest first.
    events: Vec<(String, CloudState)>,
    /// At-risk signals as EC2 would send them to EventBridge: (id, detail-type), oldest first.
    signals: Vec<(String, &'static str)>,
    refuse: Option<CloudError>,
    /// Every call lets other tasks run first (`interleave`).
    interleave: bool,
    failing: Option<(usize, Fault)>,
    unreachable: bool,
    latency: Duration,
    /// Calls waiting out their latency now, and the most that ever did at once.
    in_flight: usize,
    most_in_flight: usize,
    lose_answers: usize,
    capacity: Option<usize>,
    /// Load balancers and target groups by name or ARN.
    balancers: BTreeMap<String, balancers::Balancer>,
    /// Launch templates by id: (name, image, instance type).
    templates: BTreeMap<String, (String, String, String)>,
    /// A cloud whose EC2 API has no launch templates refuses RunInstances with one.
    no_templates: bool,
    /// Instance types this cloud has no capacity for (InsufficientInstanceCapacity).
    short_of: BTreeSet<String>,
    /// Instance types with no spot capacity here (a spot launch of one fails as EC2's does).
    no_spot: BTreeSet<String>,
    /// The most a spot VM costs an hour here, by instance type (a lower SpotMaxPrice fails).
    spot_prices: BTreeMap<String, f64>,
    /// Imported key pairs: name -> fingerprint.
    key_pairs: BTreeMap<String, String>,
    /// Zones with no room: a launch there fails for want of capacity.
    full_zones: BTreeSet<String>,
    /// Placement groups by name; a launch into another is refused, as EC2 refuses it.
    placement_groups: BTreeSet<String>,
    /// Capacity reservations by id: their zone and the instances they still have room for.
    reservations: BTreeMap<String, (String, i32)>,
    /// Status checks and events tests have set, by VM.
    told: BTreeMap<String, status::Told>,
    /// A cloud without DescribeInstanceStatus.
    no_status_checks: bool,
    /// Scheduled events as AWS Health would send them to EventBridge: (id, code), oldest first.
    health: Vec<(String, phantom_model::status::EventCode)>,
    status_calls: usize,
}

/// Whether a filter on tag `key` still matches `value` on VM `id`: it had it within the tag lag.
fn had_tag(
    stale_tags: &VecDeque<(i64, String, BTreeMap<String, String>)>,
    id: &str,
    key: &str,
    value: &str,
) -> bool {
    stale_tags
        .iter()
        .any(|(_, i, t)| i == id && t.get(key).map(String::as_str) == Some(value))
}

impl State {
    /// The owner index catches up with the tag changes older than the tag lag.
    fn follow_tags(&mut self, now: i64) {
        while self.stale_tags.front().is_some_and(|(at, _, _)| now >= *at) {
            let Some((_, id, before)) = self.stale_tags.pop_front() else {
                break;
            };
            let Some(owner) = before.get(TAG_OWNER) else {
                continue;
            };
            let owns = self
                .vms
                .get(&id)
                .is_some_and(|vm| vm.tags.get(TAG_OWNER) == Some(owner));
            if !owns && !had_tag(&self.stale_tags, &id, TAG_OWNER, owner) {
                if let Some(set) = self.by_owner.get_mut(owner) {
                    set.remove(&id);
                }
            }
        }
    }

    /// Drops the VMs terminated `forget_ms` ago or longer, as EC2 stops listing them.
    fn forget(&mut self, now: i64) {
        while self
            .ended
            .front()
            .is_some_and(|(at, _)| now - at >= self.forget_ms)
        {
            let Some((_, id)) = self.ended.pop_front() else {
                break;
            };
            let Some(vm) = self.vms.remove(&id) else {
                continue;
            };
            self.forgotten += 1;
            if vm.client_token.is_some() {
                self.by_token_only.insert(id.clone(), vm.seen());
            }
            if let Some(set) = vm
                .tags
                .get(TAG_OWNER)
                .and_then(|o| self.by_owner.get_mut(o))
            {
                set.remove(&id);
            }
        }
    }
}

static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub struct MemoryCloud {
    zones: Vec<String>,
    images: Option<Vec<String>>,
    clock: Arc<dyn Clock>,
    trip: Arc<Tripwire>,
    state: Mutex<State>,
}

impl MemoryCloud {
    pub fn new(zones: &[&str], clock: Arc<dyn Clock>, trip: Arc<Tripwire>) -> Self {
        Self {
            zones: zones.iter().map(|z| z.to_string()).collect(),
            images: None,
            clock,
            trip,
            state: Mutex::new(State {
                forget_ms: FORGET_AFTER.as_millis() as i64,
                ..State::default()
            }),
        }
    }

    /// Terminated VMs are listed this long, then forgotten (`FORGET_AFTER` unless set).
    pub fn set_forget_after(&self, after: Duration) {
        self.state().forget_ms = after.as_millis() as i64;
    }

    /// Refuses images not in this list, as a cloud with image validation does.
    pub fn with_images(mut self, images: &[&str]) -> Self {
        self.images = Some(images.iter().map(|i| i.to_string()).collect());
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("no cloud operation panics")
    }

    // ---- faults ----

    /// New VMs stay pending this long (on the cloud's clock) before they run.
    pub fn set_boot_time(&self, boot: Duration) {
        self.state().boot_ms = boot.as_millis() as i64;
    }

    /// A launch template `name` (image, instance type); returns its id.
    pub fn add_template(&self, name: &str, image: &str, instance_type: &str) -> String {
        let mut st = self.state();
        let id = format!("lt-{:017x}", st.templates.len() + 1);
        st.templates.insert(
            id.clone(),
            (name.into(), image.into(), instance_type.into()),
        );
        id
    }

    /// This cloud's EC2 API has no launch templates.
    pub fn without_templates(&self) {
        self.state().no_templates = true;
    }

    // ---- what tests look at and do from outside ----

    pub fn vms(&self) -> Vec<Vm> {
        self.state().vms.values().cloned().collect()
    }

    /// A capacity reservation in `zone` with room for `count` instances.
    pub fn add_capacity_reservation(&self, id: &str, zone: &str, count: i32) {
        self.state()
            .reservations
            .insert(id.to_string(), (zone.to_string(), count));
    }

    /// A placement group VMs may be launched into.
    pub fn add_placement_group(&self, name: &str) {
        self.state().placement_groups.insert(name.to_string());
    }

    /// The ids of pending and running VMs.
    pub fn alive(&self) -> Vec<String> {
        self.state()
            .vms
            .values()
            .filter(|v| v.state.alive())
            .map(|v| v.id.clone())
            .collect()
    }

    pub fn run_instances_calls(&self) -> usize {
        self.state().run_calls
    }

    /// DescribeInstances calls of the owner's VMs (`Cloud::tagged`, `Lookup::owned`).
    pub fn describe_calls(&self) -> usize {
        self.state().tagged_calls
    }

    /// VMs ever created, forgotten ones too.
    pub fn launched_total(&self) -> usize {
        let st = self.state();
        st.vms.len() + st.forgotten
    }

    pub fn terminate_outside(&self, id: &str) {
        self.set_state(id, CloudState::Terminated);
    }

    pub fn stop_outside(&self, id: &str) {
        self.set_state(id, CloudState::Stopped);
    }

    fn set_state(&self, id: &str, state: CloudState) {
        let now = self.clock.now_ms();
        let mut st = self.state();
        if let Some(vm) = st.vms.get_mut(id).filter(|vm| vm.state != state) {
            vm.state = state;
            st.events.push((id.to_string(), state));
            if state == CloudState::Terminated {
                st.ended.push_back((now, id.to_string()));
            }
        }
    }

    /// The state changes since the last call, as EC2's state-change events would tell them:
    /// VMs ended or stopped outside Phantom, and by its own TerminateInstances.
    pub fn take_events(&self) -> Vec<(String, CloudState)> {
        std::mem::take(&mut self.state().events)
    }

    /// EC2 says the VM is at elevated risk of interruption (a rebalance recommendation).
    pub fn recommend_rebalance(&self, id: &str) {
        self.state()
            .signals
            .push((id.to_string(), REBALANCE_RECOMMENDATION));
    }

    /// EC2 warns that it takes the spot VM back in two minutes.
    pub fn warn_interruption(&self, id: &str) {
        self.state()
            .signals
            .push((id.to_string(), INTERRUPTION_WARNING));
    }

    /// The at-risk signals since the last call, with their events' detail-types.
    pub fn take_signals(&self) -> Vec<(String, &'static str)> {
        std::mem::take(&mut self.state().signals)
    }

    /// A running VM launched outside Phantom, without tags (for AttachInstances); returns its id.
    pub fn outside(&self) -> String {
        let now = self.clock.now_ms();
        let mut st = self.state();
        // An image the cloud has, as any VM running on it.
        let image = Some(
            self.images
                .as_ref()
                .and_then(|i| i.first().cloned())
                .unwrap_or_else(|| "ami-0outside".to_string()),
        );
        let vm = self.new_vm(&mut st, None, image, "t2.micro", now, None);
        let id = vm.id.clone();
        st.vms.insert(
            id.clone(),
            Vm {
                state: CloudState::Running,
                ..vm
            },
        );
        id
    }

    /// A VM's tags, as the cloud holds them.
    pub fn tags_of(&self, id: &str) -> BTreeMap<String, String> {
        self.state()
            .vms
            .get(id)
            .map(|v| v.tags.clone())
            .unwrap_or_default()
    }

    /// A running VM with Phantom's tags that Phantom never recorded; returns its id.
    pub fn plant(&self, owner: &str, group: &str, group_id: &str) -> String {
        let now = self.clock.now_ms();
        let mut st = self.state();
        let vm = self.new_vm(&mut st, None, None, "t2.micro", now, None);
        let id = vm.id.clone();
        let tags = [
            (TAG_OWNER, owner),
            (TAG_GROUP, group),
            (TAG_GROUP_ID, group_id),
        ];
        st.by_owner
            .entry(owner.to_string())
            .or_default()
            .insert(id.clone());
        st.vms.insert(
            id.clone(),
            Vm {
                state: CloudState::Running,
                tags: tags
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                ..vm
            },
        );
        id
    }

    fn new_vm(
        &self,
        st: &mut State,
        zone: Option<String>,
        image: Option<String>,
        instance_type: &str,
        now: i64,
        token: Option<String>,
    ) -> Vm {
        st.next += 1;
        let zone = zone.unwrap_or_else(|| {
            st.next_zone += 1;
            self.zones[(st.next_zone - 1) % self.zones.len().max(1)].clone()
        });
        Vm {
            // Unique across every memory cloud of the process, as EC2's random ids are across
            // clouds: a group across clouds records its VMs by id.
            id: format!(
                "i-{:017x}",
                NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ),
            state: CloudState::Pending,
            zone,
            subnet: None,
            image,
            instance_type: instance_type.to_string(),
            launched_ms: now,
            booted_ms: now,
            tags: BTreeMap::new(),
            client_token: token,
            market: Market::OnDemand,
            placement_group: None,
            capacity_reservation: None,
        }
    }

    fn run(&self, req: &LaunchRequest) -> Result<Vec<Seen>, CloudError> {
        let now = self.clock.now_ms();
        let mut st = self.state();
        st.run_calls += 1;
        if let Some(ids) = st.tokens.get(&req.client_token) {
            // Found by the simulator, seed 2530 of mix 18: a launch repeated after a day-jump
            // named a VM forgotten meanwhile.
            return Ok(ids
                .iter()
                .map(|id| match st.vms.get(id) {
                    Some(vm) => vm.seen(),
                    None => st.by_token_only[id].clone(),
                })
                .collect());
        }
        if let Some(e) = &st.refuse {
            return Err(e.clone());
        }
        // A template gives the image and the type unless the request overrides the type.
        let mut image_id = req.image_id.clone();
        let mut instance_type = req.instance_type.clone();
        if let Some(t) = &req.template {
            if st.no_templates {
                return Err(CloudError::new(
                    "UnsupportedOperation",
                    "The launch template parameter is not supported by this cloud.",
                ));
            }
            let found = st.templates.iter().find(|(id, (name, _, _))| {
                t.id.as_deref() == Some(id.as_str()) || t.name.as_deref() == Some(name.as_str())
            });
            let Some((_, (_, image, itype))) = found else {
                return Err(match (&t.id, &t.name) {
                    (Some(id), _) => CloudError::new(
                        "InvalidLaunchTemplateId.NotFound",
                        format!(
                            "The specified launch template, with template ID {id}, does not exist."
                        ),
                    ),
                    (None, Some(name)) => CloudError::new(
                        "InvalidLaunchTemplateName.NotFoundException",
                        format!(
                            "The specified launch template, with template name {name}, does not exist."
                        ),
                    ),
                    (None, None) => CloudError::new(
                        "MissingParameter",
                        "The request must contain the parameter LaunchTemplateName or LaunchTemplateId",
                    ),
                });
            };
            image_id = Some(image.clone());
            instance_type = instance_type.or(Some(itype.clone()));
        }
        if let Some(short) = instance_type.as_ref().filter(|t| st.short_of.contains(*t)) {
            return Err(CloudError::new(
                "InsufficientInstanceCapacity",
                format!("We currently do not have sufficient {short} capacity."),
            ));
        }
        if let (Some(spot), Some(t)) = (&req.spot, &instance_type) {
            if st.no_spot.contains(t) {
                return Err(CloudError::new(
                    "InsufficientInstanceCapacity",
                    format!(
                        "There is no Spot capacity available that matches your request for {t}."
                    ),
                ));
            }
            let price = st.spot_prices.get(t).copied();
            let max = spot
                .max_price
                .as_deref()
                .and_then(|p| p.parse::<f64>().ok());
            if let (Some(price), Some(max)) = (price, max) {
                if max < price {
                    return Err(CloudError::new(
                        "SpotMaxPriceTooLow",
                        format!("Your Spot request price of {max} is lower than the minimum required Spot request fulfillment price of {price}."),
                    ));
                }
            }
        }
        // A VM launched into a subnet is in its zone (`subnet-<zone>` here).
        let at = req.zone.clone().or_else(|| {
            req.subnet()
                .and_then(|s| s.strip_prefix("subnet-"))
                .map(str::to_string)
        });
        if let Some(full) = at.as_ref().filter(|z| st.full_zones.contains(*z)) {
            return Err(CloudError::new(
                "InsufficientInstanceCapacity",
                format!("We currently do not have sufficient capacity in the Availability Zone you requested ({full})."),
            ));
        }
        if let Some(pg) = req
            .placement_group
            .as_ref()
            .filter(|pg| !st.placement_groups.contains(*pg))
        {
            return Err(CloudError::new(
                "InvalidPlacementGroup.Unknown",
                format!("The Placement Group '{pg}' is unknown."),
            ));
        }
        if let (Some(images), Some(image)) = (&self.images, &image_id) {
            if !images.contains(image) {
                return Err(CloudError::new(
                    "InvalidAMIID.NotFound",
                    format!("The image id '[{image}]' does not exist"),
                ));
            }
        }
        // A targeted reservation must be in the launch's zone and have room; `only` without a
        // target takes any in the zone that has.
        let ask = &req.capacity_reservation;
        let reserved = match (&ask.target, ask.preference) {
            (Some(id), _) => {
                let Some((zone, room)) = st.reservations.get(id) else {
                    return Err(CloudError::new(
                        "InvalidCapacityReservationId.NotFound",
                        format!("The capacity reservation ID '{id}' does not exist"),
                    ));
                };
                if at.as_ref().is_some_and(|z| z != zone) {
                    return Err(CloudError::new(
                        "InvalidParameterCombination",
                        format!("The capacity reservation {id} is in {zone}."),
                    ));
                }
                if *room < req.count {
                    return Err(CloudError::new(
                        "ReservationCapacityExceeded",
                        "The requested reservation does not have sufficient compatible and available capacity for this request.",
                    ));
                }
                Some(id.clone())
            }
            (None, Some("capacity-reservations-only")) => {
                let fits = st.reservations.iter().find(|(_, (zone, room))| {
                    at.as_ref().is_none_or(|z| z == zone) && *room >= req.count
                });
                match fits {
                    Some((id, _)) => Some(id.clone()),
                    None => {
                        return Err(CloudError::new(
                            "InsufficientInstanceCapacity",
                            "There is no capacity reservation with room for this request.",
                        ))
                    }
                }
            }
            _ => None,
        };
        let alive = st.vms.values().filter(|v| v.state.alive()).count();
        if st
            .capacity
            .is_some_and(|k| alive + req.count.max(0) as usize > k)
        {
            return Err(CloudError::new(
                "InsufficientInstanceCapacity",
                "There is not enough capacity to fulfill your request.",
            ));
        }
        if let Some((_, room)) = reserved.as_ref().and_then(|id| st.reservations.get_mut(id)) {
            *room -= req.count;
        }
        let mut ids = Vec::new();
        for _ in 0..req.count.max(0) {
            let mut vm = self.new_vm(
                &mut st,
                at.clone(),
                image_id.clone(),
                instance_type.as_deref().unwrap_or("m1.small"),
                now,
                Some(req.client_token.clone()),
            );
            vm.subnet = req.subnet().map(str::to_string);
            vm.placement_group.clone_from(&req.placement_group);
            vm.capacity_reservation.clone_from(&reserved);
            if req.spot.is_some() {
                vm.market = Market::Spot;
            }
            vm.tags = req.tags.iter().cloned().collect();
            if let Some(owner) = vm.tags.get(TAG_OWNER) {
                st.by_owner
                    .entry(owner.clone())
                    .or_default()
                    .insert(vm.id.clone());
            }
            ids.push(vm.id.clone());
            st.vms.insert(vm.id.clone(), vm);
        }
        st.tokens.insert(req.client_token.clone(), ids.clone());
        let seen = ids.iter().map(|id| st.vms[id].seen()).collect();
        if st.lose_answers > 0 {
            st.lose_answers -= 1;
            return Err(CloudError::unreachable(
                "the connection dropped before the answer arrived (memory cloud)",
            ));
        }
        Ok(seen)
    }
}

#[async_trait]
impl Lookup for MemoryCloud {
    async fn states(&self, owner: &str) -> Result<Vec<(String, CloudState)>, CloudError> {
        Ok(Cloud::tagged(self, owner, None)
            .await?
            .into_iter()
            .map(|t| (t.seen.id, t.seen.state))
            .collect())
    }
    async fn describe(&self, ids: &[String]) -> Result<Vec<Tagged>, CloudError> {
        self.enter().await?;
        let now = self.clock.now_ms();
        let out = {
            let mut st = self.state();
            st.forget(now);
            ids.iter()
                .filter_map(|id| st.vms.get(id))
                .filter(|vm| now >= vm.launched_ms + st.describe_lag_ms)
                .map(|vm| {
                    let tag = |k: &str| vm.tags.get(k).cloned();
                    Tagged {
                        seen: vm.seen(),
                        owner: tag(TAG_OWNER),
                        group: tag(TAG_GROUP),
                        group_id: tag(TAG_GROUP_ID),
                        private_ip: Some(vm.address()),
                        public_ip: None,
                    }
                })
                .collect()
        };
        self.trip.step().await;
        Ok(out)
    }

    async fn launched_with(&self, id: &str) -> Result<Option<LaunchedWith>, CloudError> {
        self.enter().await?;
        let found = self.state().vms.get(id).cloned();
        let found = found
            .map(|vm| {
                let image_id = vm.image.clone().ok_or_else(|| {
                    CloudError::unreadable(format!("instance {id} without an image"))
                })?;
                Ok::<_, CloudError>((vm, image_id))
            })
            .transpose()?
            .map(|(vm, image_id)| LaunchedWith {
                image_id,
                instance_type: vm.instance_type.clone(),
                key_name: None,
                security_groups: Vec::new(),
                kernel_id: None,
                ramdisk_id: None,
                monitoring: false,
                ebs_optimized: false,
                iam_instance_profile: None,
                tenancy: Some("default".into()),
                zone: vm.zone.clone(),
                subnet: vm.subnet.clone(),
            });
        self.trip.step().await;
        Ok(found)
    }

    async fn template(&self, t: &TemplateRef) -> Result<Option<FoundTemplate>, CloudError> {
        self.enter().await?;
        let st = self.state();
        if st.no_templates {
            return Err(CloudError::new(
                "UnsupportedOperation",
                "The launch template parameter is not supported by this cloud.",
            ));
        }
        // Each template here has one version: 1, which is also its latest and default.
        let version_ok = matches!(t.version.as_str(), "$Latest" | "$Default" | "1");
        Ok(st
            .templates
            .iter()
            .filter(|_| version_ok)
            .find(|(id, (name, _, _))| {
                t.id.as_deref() == Some(id.as_str()) || t.name.as_deref() == Some(name.as_str())
            })
            .map(|(id, (name, _, _))| FoundTemplate {
                name: TemplateName {
                    launch_template_id: id.clone(),
                    launch_template_name: name.clone(),
                },
                version: "1".to_string(),
            }))
    }

    /// One subnet per zone, `subnet-<zone>`, as a default VPC has.
    async fn subnet_zones(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        self.enter().await?;
        Ok(ids
            .iter()
            .filter_map(|id| {
                let zone = id.strip_prefix("subnet-")?;
                self.zones
                    .iter()
                    .any(|z| z == zone)
                    .then(|| (id.clone(), zone.to_string()))
            })
            .collect())
    }

    async fn reservation_zones(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        self.enter().await?;
        let st = self.state();
        ids.iter()
            .map(|id| match st.reservations.get(id) {
                Some((zone, _)) => Ok((id.clone(), zone.clone())),
                None => Err(CloudError::new(
                    "InvalidCapacityReservationId.NotFound",
                    format!("The capacity reservation ID '{id}' does not exist"),
                )),
            })
            .collect()
    }

    async fn statuses(&self, ids: &[String]) -> Result<Vec<InstanceStatus>, CloudError> {
        self.describe_statuses(ids).await
    }

    /// Zone ids in the zones' order: `az1`, `az2`, …
    async fn zone_names(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        self.enter().await?;
        Ok(self
            .zones
            .iter()
            .enumerate()
            .map(|(i, zone)| (format!("az{}", i + 1), zone.clone()))
            .filter(|(id, _)| ids.contains(id))
            .collect())
    }
}

#[async_trait]
impl Catalog for MemoryCloud {
    async fn images(&self) -> Result<Vec<Image>, CloudError> {
        self.enter().await?;
        Ok(self
            .images
            .iter()
            .flatten()
            .map(|id| Image {
                id: id.clone(),
                name: format!("{id} image"),
                description: String::new(),
                architecture: "x86_64".into(),
            })
            .collect())
    }

    async fn key_pairs(&self) -> Result<Vec<KeyPair>, CloudError> {
        self.enter().await?;
        Ok(self
            .state()
            .key_pairs
            .iter()
            .map(|(name, fingerprint)| KeyPair {
                name: name.clone(),
                fingerprint: fingerprint.clone(),
            })
            .collect())
    }

    async fn import_key_pair(&self, name: &str, public_key: &str) -> Result<String, CloudError> {
        self.enter().await?;
        let mut st = self.state();
        if st.key_pairs.contains_key(name) {
            return Err(CloudError::new(
                "InvalidKeyPair.Duplicate",
                format!("The keypair '{name}' already exists."),
            ));
        }
        // Not EC2's digest: a stand-in that differs per key.
        let fingerprint = format!("memory:{:016x}", fnv(public_key.as_bytes()));
        st.key_pairs.insert(name.to_string(), fingerprint.clone());
        Ok(fingerprint)
    }
}

/// FNV-1a, for the memory cloud's stand-in fingerprints.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[async_trait]
impl Cloud for MemoryCloud {
    async fn tagged(&self, owner: &str, group_id: Option<&str>) -> Result<Vec<Tagged>, CloudError> {
        self.enter().await?;
        let now = self.clock.now_ms();
        let out = {
            let mut st = self.state();
            st.tagged_calls += 1;
            st.forget(now);
            st.follow_tags(now);
            let st = &mut *st;
            let mut out = Vec::new();
            let ids = st.by_owner.get(owner).cloned().unwrap_or_default();
            let (boot_ms, lag_ms) = (st.boot_ms, st.describe_lag_ms);
            for id in &ids {
                let Some(vm) = st.vms.get_mut(id) else {
                    continue;
                };
                if now < vm.launched_ms + lag_ms {
                    continue;
                }
                let tag = |k: &str| vm.tags.get(k).cloned();
                let unmatched = group_id.is_some_and(|g| {
                    tag(TAG_GROUP_ID).as_deref() != Some(g)
                        && !had_tag(&st.stale_tags, id, TAG_GROUP_ID, g)
                });
                if unmatched || vm.state == CloudState::Terminated {
                    continue;
                }
                // A new VM boots by the time anyone looks (or after the boot time set).
                if vm.state == CloudState::Pending && now >= vm.booted_ms + boot_ms {
                    vm.state = CloudState::Running;
                }
                out.push(Tagged {
                    seen: vm.seen(),
                    owner: tag(TAG_OWNER),
                    group: tag(TAG_GROUP),
                    group_id: tag(TAG_GROUP_ID),
                    private_ip: Some(vm.address()),
                    public_ip: None,
                });
            }
            out
        };
        // EC2 answers DescribeInstances 1000 VMs a page: each further page is another call.
        let latency = self.state().latency;
        for _ in 1..out.len().div_ceil(1000) {
            metrics::count(Counter::Ec2);
            if !latency.is_zero() {
                tokio::time::sleep(latency).await;
            }
        }
        self.trip.step().await;
        Ok(out)
    }

    async fn launch(&self, req: &LaunchRequest) -> Result<Vec<Seen>, CloudError> {
        self.enter().await?;
        let out = self.run(req);
        self.trip.step().await;
        out
    }

    async fn terminate(&self, ids: &[String]) -> Result<(), CloudError> {
        self.enter().await?;
        let now = self.clock.now_ms();
        {
            let mut st = self.state();
            for id in ids {
                if let Some(vm) = st.vms.get_mut(id) {
                    // EC2's event tells a change of state: terminating a terminated VM tells none
                    // (each did, and each told a round that terminated it again: a storm found by
                    // the simulator, seed 3162).
                    let changed = vm.state != CloudState::Terminated;
                    vm.state = CloudState::Terminated;
                    if changed {
                        st.events.push((id.clone(), CloudState::Terminated));
                        st.ended.push_back((now, id.clone()));
                    }
                }
            }
        }
        self.trip.step().await;
        Ok(())
    }
    async fn stop(&self, ids: &[String], _hibernate: bool) -> Result<(), CloudError> {
        self.enter().await?;
        self.change(ids, |vm, _| match vm.state {
            CloudState::Running | CloudState::Stopping | CloudState::Stopped => {
                vm.state = CloudState::Stopped;
                Ok(())
            }
            _ => Err(incorrect_state(&vm.id, "stopped")),
        })?;
        self.trip.step().await;
        Ok(())
    }

    /// A few of EC2's instance types, as its DescribeInstanceTypes describes them.
    async fn instance_types(
        &self,
    ) -> Result<Vec<phantom_model::instance_type::InstanceTypeInfo>, CloudError> {
        self.enter().await?;
        Ok(catalog::instance_types())
    }

    /// The prices set with `set_spot_price`, the same in every zone.
    async fn spot_prices(&self, types: &[String]) -> Result<Vec<SpotPrice>, CloudError> {
        self.enter().await?;
        let st = self.state();
        Ok(types
            .iter()
            .filter_map(|t| st.spot_prices.get(t).map(|p| (t, *p)))
            .flat_map(|(t, price)| {
                self.zones.iter().map(move |zone| SpotPrice {
                    instance_type: t.clone(),
                    zone: zone.clone(),
                    price,
                })
            })
            .collect())
    }

    async fn start(&self, ids: &[String]) -> Result<(), CloudError> {
        self.enter().await?;
        let now = self.clock.now_ms();
        self.change(ids, |vm, short_of| match vm.state {
            CloudState::Pending | CloudState::Running => Ok(()),
            CloudState::Stopped if short_of.contains(&vm.instance_type) => Err(CloudError::new(
                "InsufficientInstanceCapacity",
                format!(
                    "We currently do not have sufficient {} capacity.",
                    vm.instance_type
                ),
            )),
            CloudState::Stopped => {
                vm.state = CloudState::Pending;
                vm.booted_ms = now;
                Ok(())
            }
            _ => Err(incorrect_state(&vm.id, "started")),
        })?;
        self.trip.step().await;
        Ok(())
    }

    async fn tag(&self, ids: &[String], tags: &[(String, String)]) -> Result<(), CloudError> {
        self.retag(ids, |tags_of| tags_of.extend(tags.iter().cloned()))
            .await
    }

    async fn untag(&self, ids: &[String], keys: &[&str]) -> Result<(), CloudError> {
        self.retag(ids, |tags_of| {
            tags_of.retain(|k, _| !keys.contains(&k.as_str()))
        })
        .await
    }
}

impl MemoryCloud {
    /// Changes the tags of each of these VMs (all there, or none changed: EC2 refuses an unknown
    /// id), keeping the index by owner true.
    async fn retag(
        &self,
        ids: &[String],
        change: impl Fn(&mut BTreeMap<String, String>),
    ) -> Result<(), CloudError> {
        self.enter().await?;
        let now = self.clock.now_ms();
        {
            let mut st = self.state();
            let st = &mut *st;
            if let Some(id) = ids.iter().find(|id| !st.vms.contains_key(*id)) {
                return Err(not_found(id));
            }
            for id in ids {
                let Some(vm) = st.vms.get_mut(id) else {
                    continue;
                };
                let before = vm.tags.clone();
                change(&mut vm.tags);
                if before == vm.tags {
                    continue;
                }
                let owner = before.get(TAG_OWNER).cloned();
                if let Some(after) = vm.tags.get(TAG_OWNER) {
                    st.by_owner
                        .entry(after.clone())
                        .or_default()
                        .insert(id.clone());
                }
                if st.tag_lag_ms > 0 {
                    st.stale_tags
                        .push_back((now + st.tag_lag_ms, id.clone(), before));
                } else if let Some(owner) = owner.filter(|o| vm.tags.get(TAG_OWNER) != Some(o)) {
                    if let Some(set) = st.by_owner.get_mut(&owner) {
                        set.remove(id);
                    }
                }
            }
        }
        self.trip.step().await;
        Ok(())
    }
}

/// EC2's answer for a VM in a state the call cannot change.
fn incorrect_state(id: &str, to: &str) -> CloudError {
    CloudError::new(
        "IncorrectInstanceState",
        format!("The instance '{id}' is not in a state from which it can be {to}."),
    )
}

impl MemoryCloud {
    /// Applies `f` to each VM, all or none as EC2 does: the first refusal changes nothing.
    fn change(
        &self,
        ids: &[String],
        f: impl Fn(&mut Vm, &BTreeSet<String>) -> Result<(), CloudError>,
    ) -> Result<(), CloudError> {
        let mut st = self.state();
        let st = &mut *st;
        let mut changed = Vec::new();
        for id in ids {
            let Some(vm) = st.vms.get(id) else {
                return Err(not_found(id));
            };
            let mut vm = vm.clone();
            f(&mut vm, &st.short_of)?;
            changed.push(vm);
        }
        for vm in changed {
            st.vms.insert(vm.id.clone(), vm);
        }
        Ok(())
    }
}

/// EC2's answer for an unknown instance id.
fn not_found(id: &str) -> CloudError {
    CloudError::new(
        "InvalidInstanceID.NotFound",
        format!("The instance ID '{id}' does not exist"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use phantom_model::instance::Placement;
    use phantom_model::time::ManualClock;

    fn cloud() -> MemoryCloud {
        MemoryCloud::new(
            &["a", "b"],
            Arc::new(ManualClock::starting_at(1_000)),
            crate::fault::none(),
        )
        .with_images(&["ami-ok"])
    }

    fn req(token: &str, count: i32) -> LaunchRequest {
        super::super::launch_request(
            &phantom_model::launch_config::LaunchConfiguration::new(
                "web",
                "arn:web",
                "ami-ok",
                "t2.micro",
                "2026-01-01T00:00:00.000Z",
            ),
            count,
            &Placement {
                zone: None,
                subnet: None,
                market: phantom_model::instance::Market::OnDemand,
                units: 1,
            },
            token.into(),
            vec![
                (TAG_OWNER.into(), "u".into()),
                (TAG_GROUP_ID.into(), "g1".into()),
            ],
        )
    }

    #[tokio::test]
    async fn a_token_launches_once_even_when_the_answer_is_lost() {
        let c = cloud();
        c.lose_next_launch_answers(1);
        let lost = c.launch(&req("t", 2)).await.unwrap_err();
        assert_eq!(lost.code, "CloudUnreachable");
        let again = c.launch(&req("t", 2)).await.unwrap();
        assert_eq!(again.len(), 2);
        assert_eq!(c.launched_total(), 2);
        assert_eq!(c.launch(&req("t2", 1)).await.unwrap().len(), 1);
        assert_eq!(c.launched_total(), 3);
    }

    #[tokio::test]
    async fn faults_come_and_go() {
        let c = cloud();
        c.set_capacity(1);
        let e = c.launch(&req("t", 2)).await.unwrap_err();
        assert_eq!(e.code, "InsufficientInstanceCapacity");
        c.fail_next(2, Fault::Throttling);
        assert_eq!(
            c.tagged("u", None).await.unwrap_err().code,
            "RequestLimitExceeded"
        );
        assert_eq!(
            c.tagged("u", None).await.unwrap_err().code,
            "RequestLimitExceeded"
        );
        assert!(c.tagged("u", None).await.is_ok());
        c.refuse("Unsupported", "no");
        assert_eq!(
            c.launch(&req("t3", 1)).await.unwrap_err().code,
            "Unsupported"
        );
        c.clear_faults();
        c.set_unreachable(true);
        assert_eq!(c.terminate(&[]).await.unwrap_err().code, "CloudUnreachable");
        c.clear_faults();
        let bad = LaunchRequest {
            image_id: Some("ami-nope".into()),
            ..req("t4", 1)
        };
        assert_eq!(
            c.launch(&bad).await.unwrap_err().code,
            "InvalidAMIID.NotFound"
        );
    }

    #[tokio::test]
    async fn tags_filter_and_vms_boot_when_looked_at() {
        let c = cloud();
        let vms = c.launch(&req("t", 2)).await.unwrap();
        assert!(vms.iter().all(|v| v.state == CloudState::Pending));
        assert_eq!(vms[0].zone, "a");
        assert_eq!(vms[1].zone, "b");
        c.plant("other", "x", "g9");
        let mine = c.tagged("u", Some("g1")).await.unwrap();
        assert_eq!(mine.len(), 2);
        assert!(mine.iter().all(|t| t.seen.state == CloudState::Running));
        assert!(c.tagged("u", Some("g2")).await.unwrap().is_empty());
        c.terminate(&[vms[0].id.clone()]).await.unwrap();
        assert_eq!(c.alive().len(), 2);
    }
}
