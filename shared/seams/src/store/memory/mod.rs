//! The in-memory store: the same outcomes as the DynamoDB adapter (conditions, all-or-nothing
//! writes, lease expiry, paging order and keys), in one process. For the in-process tests and the
//! simulation; `tests/tests/store_contract.rs` holds both adapters to one suite.
//!
//! Every operation counts as one DynamoDB call in `metrics` (a record as one per 100 writes, as
//! the DynamoDB adapter makes them) and is one step of its `Tripwire`, taken after its writes.

mod buckets;
mod directory;
mod fleet;
mod groups;
mod identities;
mod launch_configs;
mod trail;
mod watch;

use super::{
    activity_key, Ask, Backoff, Claim, CloudCredentials, CloudRecord, Directory, Fleet,
    GroupFilter, Groups, LaunchConfigs, Lease, Page, Record, StoreError, StoreResult, Usage,
    Watched, MAX_GROUPS, MAX_LAUNCH_CONFIGS,
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

#[derive(Clone)]
struct StoredGroup {
    group: Group,
    lease: Option<(String, i64)>,
    /// When the oldest ask no round has answered was made (`Ask`; their count is `Group::asks`).
    ask: Option<i64>,
}

impl StoredGroup {
    /// Counts `ask`, and keeps its time unless an older one is still unanswered.
    fn asked(&mut self, ask: Ask) {
        if ask.is_some() {
            self.ask = self.ask.or(ask);
            self.group.asks += 1;
        }
    }
}

#[derive(Default, Clone)]
struct State {
    users: BTreeMap<String, User>,
    /// (account, class) -> its shared bucket's next arrival time (µs)
    buckets: BTreeMap<Owned, i64>,
    /// (account, `trail_key`) -> an event of its trail
    trail: BTreeMap<Owned, phantom_model::trail::TrailEvent>,
    /// (account, managed policy name in lower case) -> the policy
    policies: BTreeMap<Owned, phantom_model::iam::ManagedPolicy>,
    /// (account, role name in lower case) -> the role
    roles: BTreeMap<Owned, phantom_model::iam::IamRole>,
    /// (account, IAM user name) -> the IAM user
    iam_users: BTreeMap<Owned, phantom_model::iam::IamUser>,
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
    /// (user, metric) -> its datapoints, by time
    data: BTreeMap<
        (String, phantom_model::cloudwatch::MetricId),
        Vec<phantom_model::cloudwatch::Datum>,
    >,
    /// (user, alarm name) -> the alarm
    alarms: BTreeMap<Owned, phantom_model::cloudwatch::StoredAlarm>,
    /// (user, alarm name) -> its history, oldest first
    alarm_history: BTreeMap<Owned, Vec<phantom_model::cloudwatch::AlarmHistoryItem>>,
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

/// A fault of DynamoDB's, injected into the store's next calls (by the simulation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFault {
    /// Refused with no effect, as throttling or a transaction conflict refuses.
    Refused,
    /// Took effect, and its answer was lost (a timeout after the write).
    LostAnswer,
}

#[derive(Default)]
struct Faults {
    /// The fault of the next calls, and how many more it strikes.
    next: Option<(StoreFault, usize)>,
    /// The state before the call under way, to undo it if it is refused.
    before: Option<State>,
    /// Faults struck so far.
    struck: u64,
}

pub struct MemoryStore {
    state: Mutex<State>,
    faults: Mutex<Faults>,
    trip: Arc<Tripwire>,
    /// Added to every call before it answers (the simulation's DynamoDB round trip), in µs.
    latency_us: AtomicU64,
    /// DynamoDB calls this store stood for, as counted in `metrics`.
    calls: AtomicU64,
    /// Every call lets other tasks run before it answers (the simulation's interleavings).
    interleave: std::sync::atomic::AtomicBool,
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
            faults: Mutex::new(Faults::default()),
            trip,
            latency_us: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            interleave: std::sync::atomic::AtomicBool::new(false),
            credential_reads: AtomicU64::new(0),
        }
    }

    /// The next `n` calls fail with `fault`.
    pub fn fail_next(&self, n: usize, fault: StoreFault) {
        let mut f = self.faults();
        f.next = (n > 0).then_some((fault, n));
        f.before = None;
    }

    /// Disarms the faults of `fail_next`, giving back those not struck yet.
    pub fn take_faults(&self) -> Option<(StoreFault, usize)> {
        let mut f = self.faults();
        f.before = None;
        f.next.take()
    }

    /// Faults struck so far (`fail_next`).
    pub fn faults_struck(&self) -> u64 {
        self.faults().struck
    }

    fn faults(&self) -> MutexGuard<'_, Faults> {
        self.faults.lock().expect("no fault injection panics")
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

    /// From now on every call lets other tasks run before it answers, as a real store's round
    /// trip does: handlers run at once interleave at each call (the simulation's seeds choose
    /// which run together).
    pub fn interleave(&self, on: bool) {
        self.interleave.store(on, Ordering::Relaxed);
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
        let st = self
            .state
            .lock()
            .expect("no operation panics holding the store");
        let mut f = self.faults();
        if matches!(f.next, Some((StoreFault::Refused, _))) && f.before.is_none() {
            f.before = Some(st.clone());
        }
        st
    }

    /// The fault striking the call that ends now, if one is armed: a refused call's work undone.
    fn struck(&self) -> Option<StoreError> {
        // The faults' lock is let go before the state's is taken (`state` takes them the other
        // way round).
        let (fault, before) = {
            let mut f = self.faults();
            let before = f.before.take();
            let (fault, n) = f.next?;
            f.next = (n > 1).then_some((fault, n - 1));
            f.struck += 1;
            (fault, before)
        };
        Some(match fault {
            StoreFault::Refused => {
                if let Some(before) = before {
                    *self
                        .state
                        .lock()
                        .expect("no operation panics holding the store") = before;
                }
                StoreError::Unavailable(
                    "ThrottlingException: the request was refused (memory store fault)".into(),
                )
            }
            StoreFault::LostAnswer => StoreError::Unavailable(
                "the request timed out after its write took effect (memory store fault)".into(),
            ),
        })
    }

    async fn done<T>(&self, out: StoreResult<T>) -> StoreResult<T> {
        if let Some(e) = self.struck() {
            return Err(e);
        }
        self.trip.step().await;
        if self.interleave.load(Ordering::Relaxed) {
            tokio::task::yield_now().await;
        }
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
