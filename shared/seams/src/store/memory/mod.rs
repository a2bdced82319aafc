//! The in-memory store: the same outcomes as the DynamoDB adapter (conditions, all-or-nothing
//! writes, lease expiry, paging order and keys), in one process. For the in-process tests and the
//! simulation; `tests/tests/store_contract.rs` holds both adapters to one suite.
//!
//! Every operation counts as one DynamoDB call in `metrics` (a record as one per 100 writes, as
//! the DynamoDB adapter makes them) and is one step of its `Tripwire`, taken after its writes.

mod directory;
mod fleet;
mod groups;
mod launch_configs;

use super::{
    activity_key, Backoff, Claim, CloudCredentials, CloudRecord, Directory, Fleet, GroupFilter,
    Groups, LaunchConfigs, Lease, Page, Record, StoreError, StoreResult, Usage, Watched,
    MAX_GROUPS, MAX_LAUNCH_CONFIGS,
};
use crate::fault::Tripwire;
use crate::metrics::{self, Counter};
use async_trait::async_trait;
use phantom_model::activity::{Activity, ScalingActivity};
use phantom_model::group::{Group, DELETING};
use phantom_model::instance::Member;
use phantom_model::launch_config::LaunchConfig;
use phantom_model::tracking::MetricSource;
use phantom_model::user::{AccessKey, User};
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// (user, name)
type Owned = (String, String);

struct StoredGroup {
    group: Group,
    lease: Option<(String, i64)>,
}

#[derive(Default)]
struct State {
    users: BTreeMap<String, User>,
    keys: BTreeMap<String, AccessKey>,
    clouds: BTreeMap<String, CloudRecord>,
    creds: BTreeMap<Owned, CloudCredentials>,
    lcs: BTreeMap<Owned, (LaunchConfig, BTreeSet<String>)>,
    groups: BTreeMap<Owned, StoredGroup>,
    /// (user, group, instance id) -> (group id, record)
    instances: BTreeMap<(String, String, String), (String, Member)>,
    /// (user, activity key) -> document
    activities: BTreeMap<Owned, ScalingActivity>,
    /// (user, group) -> notices recorded and not yet sent, oldest first
    notices: BTreeMap<Owned, Vec<phantom_model::notification::Notice>>,
    /// (user, group) -> LaunchInstances requests by client token
    launches: BTreeMap<Owned, BTreeMap<String, phantom_model::sync_launch::SyncLaunch>>,
    /// (cloud, user) -> groups there
    watch: BTreeMap<Owned, i64>,
    /// (user, group, instance id) -> its last heartbeat (Unix ms)
    beats: BTreeMap<(String, String, String), i64>,
    /// (cloud, user) -> what its last full sweep saw
    views: BTreeMap<Owned, phantom_model::pulse::PairView>,
    pulse: Option<phantom_model::pulse::Lease>,
    metric_source: Option<MetricSource>,
}

impl State {
    /// Counted from what is stored: one lock holds the count and the write together.
    fn usage(&self, user: &str) -> Usage {
        let mine = |(u, _): &&Owned| u == user;
        Usage {
            groups: self.groups.keys().filter(mine).count() as i64,
            launch_configs: self.lcs.keys().filter(mine).count() as i64,
        }
    }
}

pub struct MemoryStore {
    state: Mutex<State>,
    trip: Arc<Tripwire>,
    /// Added to every call before it answers (the simulation's DynamoDB round trip), in µs.
    latency_us: AtomicU64,
    /// DynamoDB calls this store stood for, as counted in `metrics`.
    calls: AtomicU64,
    /// Reads of a user's cloud credentials (each opens a sealed secret: a KMS call where the data
    /// key is not cached).
    credential_reads: AtomicU64,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new(crate::fault::none())
    }
}

fn owned(user: &str, name: &str) -> Owned {
    (user.to_string(), name.to_string())
}

impl MemoryStore {
    pub fn new(trip: Arc<Tripwire>) -> Self {
        Self {
            state: Mutex::new(State::default()),
            trip,
            latency_us: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            credential_reads: AtomicU64::new(0),
        }
    }

    /// Reads of cloud credentials so far.
    pub fn credential_reads(&self) -> u64 {
        self.credential_reads.load(Ordering::Relaxed)
    }

    /// Every call from now on takes `latency` longer (a real store's round trip).
    pub fn set_latency(&self, latency: Duration) {
        self.latency_us
            .store(latency.as_micros() as u64, Ordering::Relaxed);
    }

    /// DynamoDB calls made of this store so far (a record of more than 99 writes is several).
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// The state, for one operation (never held across an await).
    fn state(&self, calls: usize) -> MutexGuard<'_, State> {
        self.calls.fetch_add(calls as u64, Ordering::Relaxed);
        for _ in 0..calls {
            metrics::count(Counter::DynamoDb);
        }
        self.state
            .lock()
            .expect("no operation panics holding the store")
    }

    async fn done<T>(&self, out: T) -> T {
        self.trip.step().await;
        let us = self.latency_us.load(Ordering::Relaxed);
        if us > 0 {
            tokio::time::sleep(Duration::from_micros(us)).await;
        }
        out
    }
}

/// The entries of one user in a map keyed by (user, name), in name order.
fn of_user<'a, V>(
    map: &'a BTreeMap<Owned, V>,
    user: &'a str,
) -> impl Iterator<Item = (&'a String, &'a V)> + 'a {
    map.range((user.to_string(), String::new())..)
        .take_while(move |((u, _), _)| u == user)
        .map(|((_, n), v)| (n, v))
}

/// Names in order after `after` (exclusive) that pass `keep`, at most `want`, all or only `names`.
fn paged<'a, T: 'a>(
    all: impl Iterator<Item = (&'a String, &'a T)>,
    page: Page<'_>,
    keep: impl Fn(&T) -> bool,
) -> Vec<&'a T> {
    all.filter(|(name, _)| page.names.is_none_or(|ns| ns.contains(name)))
        .filter(|(name, _)| page.after.is_none_or(|a| name.as_str() > a))
        .filter(|(_, v)| keep(v))
        .take(page.want)
        .map(|(_, v)| v)
        .collect()
}
