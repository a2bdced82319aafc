//! The in-memory store: the same outcomes as the DynamoDB adapter (conditions, all-or-nothing
//! writes, lease expiry, paging order and keys), in one process. For the in-process tests and the
//! simulation; `tests/tests/store_contract.rs` holds both adapters to one suite.
//!
//! Every operation counts as one DynamoDB call in `metrics` (a record as one per 100 writes, as
//! the DynamoDB adapter makes them) and is one step of its `Tripwire`, taken after its writes.

use super::{
    activity_key, Backoff, CloudCredentials, CloudRecord, Directory, Fleet, GroupFilter, Groups,
    LaunchConfigs, Lease, Record, StoreError, StoreResult, Usage, Watched, MAX_GROUPS,
    MAX_LAUNCH_CONFIGS,
};
use crate::fault::Tripwire;
use crate::identity::{AccessKey, User};
use crate::launch_config::LaunchConfig;
use crate::metrics::{self, Counter};
use crate::model::activity::Activity;
use crate::model::group::{Group, DELETING};
use crate::model::instance::Member;
use async_trait::async_trait;
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
    activities: BTreeMap<Owned, serde_json::Value>,
    /// (cloud, user) -> groups there
    watch: BTreeMap<Owned, i64>,
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
        }
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
fn page<'a, T: 'a>(
    all: impl Iterator<Item = (&'a String, &'a T)>,
    names: Option<&[String]>,
    after: Option<&str>,
    want: usize,
    keep: impl Fn(&T) -> bool,
) -> Vec<&'a T> {
    all.filter(|(name, _)| names.is_none_or(|ns| ns.contains(name)))
        .filter(|(name, _)| after.is_none_or(|a| name.as_str() > a))
        .filter(|(_, v)| keep(v))
        .take(want)
        .map(|(_, v)| v)
        .collect()
}

#[async_trait]
impl Directory for MemoryStore {
    async fn create_user(&self, user: &User, secret: &str) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            if st.users.contains_key(&user.name) || st.keys.contains_key(&user.access_key_id) {
                Err(StoreError::Exists)
            } else {
                st.users.insert(user.name.clone(), user.clone());
                st.keys.insert(
                    user.access_key_id.clone(),
                    AccessKey {
                        access_key_id: user.access_key_id.clone(),
                        secret: secret.to_string(),
                        user: user.name.clone(),
                        account_id: user.account_id.clone(),
                    },
                );
                Ok(())
            }
        };
        self.done(out).await
    }

    async fn users(&self) -> StoreResult<Vec<User>> {
        let out = self.state(1).users.values().cloned().collect();
        self.done(Ok(out)).await
    }

    async fn access_key(&self, access_key_id: &str) -> StoreResult<Option<AccessKey>> {
        let out = self.state(1).keys.get(access_key_id).cloned();
        self.done(Ok(out)).await
    }

    async fn user(&self, name: &str) -> StoreResult<Option<User>> {
        let out = self.state(1).users.get(name).cloned();
        self.done(Ok(out)).await
    }

    async fn disable_user(&self, u: &User) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st.users.get_mut(&u.name) {
                None => Err(StoreError::NotFound),
                Some(stored) if stored.access_key_id != u.access_key_id => {
                    Err(StoreError::Conflict)
                }
                Some(stored) => {
                    stored.disabled = true;
                    st.keys.remove(&u.access_key_id);
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn rotate_access_key(
        &self,
        u: &User,
        access_key_id: &str,
        secret: &str,
    ) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let taken = st.keys.contains_key(access_key_id);
            match st.users.get_mut(&u.name) {
                None => Err(StoreError::NotFound),
                Some(stored) if stored.access_key_id != u.access_key_id => {
                    Err(StoreError::Conflict)
                }
                Some(_) if taken => Err(StoreError::Exists),
                Some(stored) => {
                    stored.access_key_id = access_key_id.to_string();
                    stored.disabled = false;
                    let key = AccessKey {
                        access_key_id: access_key_id.to_string(),
                        secret: secret.to_string(),
                        user: stored.name.clone(),
                        account_id: stored.account_id.clone(),
                    };
                    st.keys.remove(&u.access_key_id);
                    st.keys.insert(access_key_id.to_string(), key);
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn delete_cloud(&self, name: &str) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let users: Vec<String> = st
                .watch
                .keys()
                .filter(|(cloud, _)| cloud == name)
                .map(|(_, user)| user.clone())
                .collect();
            if !users.is_empty() {
                Err(StoreError::InUse(users))
            } else if st.clouds.remove(name).is_none() {
                Err(StoreError::NotFound)
            } else {
                Ok(())
            }
        };
        self.done(out).await
    }

    async fn put_cloud(&self, cloud: &CloudRecord) -> StoreResult<()> {
        self.state(1)
            .clouds
            .insert(cloud.name.clone(), cloud.clone());
        self.done(Ok(())).await
    }

    async fn cloud(&self, name: &str) -> StoreResult<Option<CloudRecord>> {
        let out = self.state(1).clouds.get(name).cloned();
        self.done(Ok(out)).await
    }

    async fn clouds(&self) -> StoreResult<Vec<CloudRecord>> {
        let out = self.state(1).clouds.values().cloned().collect();
        self.done(Ok(out)).await
    }

    async fn put_cloud_credentials(&self, user: &str, creds: &CloudCredentials) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            if !st.users.contains_key(user) || !st.clouds.contains_key(&creds.cloud) {
                Err(StoreError::NotFound)
            } else {
                st.creds.insert(owned(user, &creds.cloud), creds.clone());
                Ok(())
            }
        };
        self.done(out).await
    }

    async fn cloud_credentials(
        &self,
        user: &str,
        cloud: &str,
    ) -> StoreResult<Option<CloudCredentials>> {
        let out = self.state(1).creds.get(&owned(user, cloud)).cloned();
        self.done(Ok(out)).await
    }

    async fn delete_cloud_credentials(&self, user: &str, cloud: &str) -> StoreResult<()> {
        let out = match self.state(1).creds.remove(&owned(user, cloud)) {
            Some(_) => Ok(()),
            None => Err(StoreError::NotFound),
        };
        self.done(out).await
    }

    async fn all_cloud_credentials(&self, user: &str) -> StoreResult<Vec<CloudCredentials>> {
        let out = of_user(&self.state(1).creds, user)
            .map(|(_, c)| c.clone())
            .collect();
        self.done(Ok(out)).await
    }
}

#[async_trait]
impl LaunchConfigs for MemoryStore {
    async fn create_launch_config(&self, user: &str, lc: &LaunchConfig) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let count = st.usage(user).launch_configs;
            match st.lcs.entry(owned(user, &lc.name)) {
                Entry::Occupied(_) => Err(StoreError::Exists),
                Entry::Vacant(_) if count >= MAX_LAUNCH_CONFIGS => Err(StoreError::Limit),
                Entry::Vacant(e) => {
                    e.insert((lc.clone(), BTreeSet::new()));
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn usage(&self, user: &str) -> StoreResult<Usage> {
        let out = self.state(1).usage(user);
        self.done(Ok(out)).await
    }

    async fn delete_launch_config(&self, user: &str, name: &str) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let k = owned(user, name);
            match st.lcs.get(&k) {
                None => Err(StoreError::NotFound),
                Some((_, used_by)) if !used_by.is_empty() => {
                    Err(StoreError::InUse(used_by.iter().cloned().collect()))
                }
                Some(_) => {
                    st.lcs.remove(&k);
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn launch_config(&self, user: &str, name: &str) -> StoreResult<Option<LaunchConfig>> {
        let out = self
            .state(1)
            .lcs
            .get(&owned(user, name))
            .map(|(lc, _)| lc.clone());
        self.done(Ok(out)).await
    }

    async fn launch_configs(
        &self,
        user: &str,
        names: Option<&[String]>,
        after: Option<&str>,
        want: usize,
    ) -> StoreResult<Vec<LaunchConfig>> {
        let out = {
            let st = self.state(1);
            let mine = of_user(&st.lcs, user);
            page(mine, names, after, want, |_| true)
                .into_iter()
                .map(|(lc, _)| lc.clone())
                .collect()
        };
        self.done(Ok(out)).await
    }
}

#[async_trait]
impl Groups for MemoryStore {
    async fn create_group(&self, user: &str, g: &Group) -> StoreResult<()> {
        // Read before anything is written: an unreadable clouds tag writes nothing.
        let clouds = g.clouds()?;
        let out = {
            let mut st = self.state(1);
            let k = owned(user, &g.name);
            let lcs: Vec<_> = g
                .launch_configurations()?
                .iter()
                .map(|lc| owned(user, lc))
                .collect();
            if st.groups.contains_key(&k) {
                Err(StoreError::Exists)
            } else if st.usage(user).groups >= MAX_GROUPS {
                Err(StoreError::Limit)
            } else if lcs.iter().all(|lc| st.lcs.contains_key(lc)) {
                // A group from a launch template marks no launch configuration.
                for lc in &lcs {
                    if let Some((_, used_by)) = st.lcs.get_mut(lc) {
                        used_by.insert(g.name.clone());
                    }
                }
                st.groups.insert(
                    k,
                    StoredGroup {
                        group: g.clone(),
                        lease: None,
                    },
                );
                for cloud in &clouds {
                    *st.watch.entry(owned(cloud, user)).or_default() += 1;
                }
                Ok(())
            } else {
                Err(StoreError::NotFound)
            }
        };
        self.done(out).await
    }

    async fn group(&self, user: &str, name: &str) -> StoreResult<Option<Group>> {
        let out = self
            .state(1)
            .groups
            .get(&owned(user, name))
            .map(|s| s.group.clone());
        self.done(Ok(out)).await
    }

    async fn groups(
        &self,
        user: &str,
        names: Option<&[String]>,
        after: Option<&str>,
        want: usize,
        keep: GroupFilter<'_>,
    ) -> StoreResult<Vec<Group>> {
        let out = {
            let st = self.state(1);
            let mine = of_user(&st.groups, user).map(|(n, s)| (n, &s.group));
            page(mine, names, after, want, keep)
                .into_iter()
                .cloned()
                .collect()
        };
        self.done(Ok(out)).await
    }

    async fn set_desired(&self, user: &str, g: &Group, desired: i64) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st.groups.get_mut(&owned(user, &g.name)) {
                Some(s) if s.group.id == g.id && s.group.version == g.version => {
                    s.group.desired = desired;
                    s.group.version += 1;
                    Ok(())
                }
                _ => Err(StoreError::Conflict),
            }
        };
        self.done(out).await
    }

    async fn update_group_with(
        &self,
        user: &str,
        old: &Group,
        new: &Group,
        activities: &[Activity],
    ) -> StoreResult<()> {
        let keys = activities
            .iter()
            .map(activity_key)
            .collect::<StoreResult<Vec<_>>>()?;
        // Read before anything is written: an unreadable clouds tag writes nothing.
        let (before, after) = (old.launch_configurations()?, new.launch_configurations()?);
        let (was, now) = (old.clouds()?, new.clouds()?);
        let out = {
            let mut st = self.state(1);
            let k = owned(user, &old.name);
            match st.groups.get(&k) {
                Some(s) if s.group.id == old.id && s.group.version == old.version => {
                    if after
                        .difference(&before)
                        .any(|lc| !st.lcs.contains_key(&owned(user, lc)))
                    {
                        Err(StoreError::NotFound)
                    } else {
                        for lc in before.difference(&after) {
                            if let Some((_, used_by)) = st.lcs.get_mut(&owned(user, lc)) {
                                used_by.remove(&old.name);
                            }
                        }
                        for lc in after.difference(&before) {
                            if let Some((_, used_by)) = st.lcs.get_mut(&owned(user, lc)) {
                                used_by.insert(old.name.clone());
                            }
                        }

                        for cloud in now.difference(&was) {
                            *st.watch.entry(owned(cloud, user)).or_default() += 1;
                        }
                        for cloud in was.difference(&now) {
                            *st.watch.entry(owned(cloud, user)).or_default() -= 1;
                        }
                        let s = st.groups.get_mut(&k).expect("looked up above");
                        s.group.launch_configuration = new.launch_configuration.clone();
                        s.group.min = new.min;
                        s.group.max = new.max;
                        s.group.desired = new.desired;
                        s.group.settings = new.settings.clone();
                        s.group.version += 1;
                        for (k, a) in keys.into_iter().zip(activities) {
                            st.activities.insert((user.to_string(), k), a.doc.clone());
                        }
                        Ok(())
                    }
                }
                _ => Err(StoreError::Conflict),
            }
        };
        self.done(out).await
    }

    async fn begin_delete(&self, user: &str, g: &Group) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st.groups.get_mut(&owned(user, &g.name)) {
                Some(s) if s.group.id == g.id && s.group.version == g.version => {
                    s.group.status = Some(DELETING.to_string());
                    s.group.desired = 0;
                    s.group.min = 0;
                    s.group.version += 1;
                    Ok(())
                }
                _ => Err(StoreError::Conflict),
            }
        };
        self.done(out).await
    }

    async fn delete_group(&self, user: &str, g: &Group) -> StoreResult<()> {
        let clouds = g.clouds()?;
        let out = {
            let mut st = self.state(1);
            let k = owned(user, &g.name);
            let lcs: Vec<_> = g
                .launch_configurations()?
                .iter()
                .map(|lc| owned(user, lc))
                .collect();
            match st.groups.get(&k) {
                Some(s) if s.group.id == g.id && s.group.version == g.version => {
                    if lcs.iter().all(|lc| st.lcs.contains_key(lc)) {
                        for lc in &lcs {
                            if let Some((_, used_by)) = st.lcs.get_mut(lc) {
                                used_by.remove(&g.name);
                            }
                        }
                        st.groups.remove(&k);
                        for cloud in &clouds {
                            *st.watch.entry(owned(cloud, user)).or_default() -= 1;
                        }
                        Ok(())
                    } else {
                        Err(StoreError::NotFound)
                    }
                }
                _ => Err(StoreError::Conflict),
            }
        };
        self.done(out).await
    }
}

#[async_trait]
impl Fleet for MemoryStore {
    async fn take_lease(
        &self,
        user: &str,
        name: &str,
        holder: &str,
        now_ms: i64,
        ttl_ms: i64,
    ) -> StoreResult<Lease> {
        let out = {
            let mut st = self.state(1);
            match st.groups.get_mut(&owned(user, name)) {
                None => Lease::NoGroup,
                Some(s) => match &s.lease {
                    Some((h, until)) if *until >= now_ms && h != holder => Lease::Busy,
                    _ => {
                        s.lease = Some((holder.to_string(), now_ms + ttl_ms));
                        Lease::Taken(Box::new(s.group.clone()))
                    }
                },
            }
        };
        self.done(Ok(out)).await
    }

    async fn release_lease(
        &self,
        user: &str,
        name: &str,
        holder: &str,
        version: Option<i64>,
    ) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st.groups.get_mut(&owned(user, name)) {
                Some(s)
                    if version.is_none_or(|v| s.group.version == v)
                        && s.lease.as_ref().is_some_and(|(h, _)| h == holder) =>
                {
                    s.lease = None;
                    Ok(())
                }
                _ => Err(StoreError::Conflict),
            }
        };
        self.done(out).await
    }

    async fn instances(&self, user: &str, group: &str) -> StoreResult<Vec<Member>> {
        let out = self
            .state(1)
            .instances
            .range((user.to_string(), group.to_string(), String::new())..)
            .take_while(|((u, g, _), _)| u == user && g == group)
            .map(|(_, (_, m))| m.clone())
            .collect();
        self.done(Ok(out)).await
    }

    async fn all_instances(&self, user: &str) -> StoreResult<Vec<(String, Member)>> {
        let out = self
            .state(1)
            .instances
            .range((user.to_string(), String::new(), String::new())..)
            .take_while(|((u, _, _), _)| u == user)
            .map(|((_, g, _), (_, m))| (g.clone(), m.clone()))
            .collect();
        self.done(Ok(out)).await
    }

    async fn instances_between(
        &self,
        user: &str,
        first: &str,
        last: &str,
    ) -> StoreResult<Vec<(String, Member)>> {
        let out = self
            .state(1)
            .instances
            .range((user.to_string(), first.to_string(), String::new())..)
            .take_while(|((u, g, _), _)| u == user && g.as_str() <= last)
            .map(|((_, g, _), (_, m))| (g.clone(), m.clone()))
            .collect();
        self.done(Ok(out)).await
    }

    async fn record(&self, user: &str, g: &Group, r: &Record) -> StoreResult<()> {
        if r.is_empty() {
            return Ok(());
        }
        let writes = r.put.len() + r.forget.len() + r.activities.len();
        let mut ids: Vec<&String> = r.put.iter().map(|m| &m.id).chain(&r.forget).collect();
        ids.sort();
        if ids.windows(2).any(|w| w[0] == w[1]) {
            // As DynamoDB: "Transaction request cannot include multiple operations on one item".
            return Err(StoreError::Unavailable(
                "multiple operations on one item in a record".into(),
            ));
        }
        let keys = r
            .activities
            .iter()
            .map(activity_key)
            .collect::<StoreResult<Vec<_>>>()?;
        let out = {
            let mut st = self.state(writes.div_ceil(99).max(1));
            // An instance to put that changed since it was read (or exists, if new).
            let instance_moved = r.put.iter().any(|m| {
                let stored = st
                    .instances
                    .get(&(user.to_string(), g.name.clone(), m.id.clone()))
                    .map(|(_, m)| m.rev);
                stored != (m.rev > 0).then_some(m.rev)
            });
            match st.groups.get_mut(&owned(user, &g.name)) {
                Some(s) if s.group.id == g.id => {
                    if (r.launch_seq.is_some() && s.group.launch_seq != g.launch_seq)
                        || (r.desired.is_some() && s.group.version != g.version)
                        || instance_moved
                    {
                        Err(StoreError::Conflict)
                    } else {
                        if let Some(d) = r.desired {
                            s.group.desired = d;
                            s.group.version += 1;
                        }
                        if let Some(next) = r.launch_seq {
                            s.group.launch_seq = next;
                        }
                        if let Some(Backoff {
                            failures,
                            retry_at_ms,
                        }) = r.backoff
                        {
                            s.group.failures = failures;
                            s.group.retry_at_ms = retry_at_ms;
                        }
                        if let Some(holds) = &r.holds {
                            s.group.holds = holds.clone();
                        }
                        for m in &r.put {
                            st.instances.insert(
                                (user.to_string(), g.name.clone(), m.id.clone()),
                                (
                                    g.id.clone(),
                                    Member {
                                        rev: m.rev + 1,
                                        ..m.clone()
                                    },
                                ),
                            );
                        }
                        for id in &r.forget {
                            st.instances
                                .remove(&(user.to_string(), g.name.clone(), id.clone()));
                        }
                        for (k, a) in keys.into_iter().zip(&r.activities) {
                            st.activities.insert((user.to_string(), k), a.doc.clone());
                        }
                        Ok(())
                    }
                }
                _ => Err(StoreError::NotFound),
            }
        };
        self.done(out).await
    }

    async fn watched(&self) -> StoreResult<Vec<Watched>> {
        let out = self
            .state(1)
            .watch
            .iter()
            .map(|((cloud, user), groups)| Watched {
                user: user.clone(),
                cloud: cloud.clone(),
                groups: *groups,
            })
            .collect();
        self.done(Ok(out)).await
    }

    async fn due(&self, now_ms: i64) -> StoreResult<Vec<(String, String)>> {
        let out = self
            .state(1)
            .groups
            .iter()
            .filter(|(_, s)| s.group.due_ms().is_some_and(|t| t <= now_ms))
            .map(|(k, _)| k.clone())
            .collect();
        self.done(Ok(out)).await
    }

    async fn unwatch(&self, user: &str, cloud: &str) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let k = owned(cloud, user);
            match st.watch.get(&k) {
                Some(n) if *n > 0 => Err(StoreError::Conflict),
                _ => {
                    st.watch.remove(&k);
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn activities(
        &self,
        user: &str,
        group: Option<&str>,
        after: Option<&str>,
        want: usize,
    ) -> StoreResult<Vec<(String, serde_json::Value)>> {
        let prefix = group.map(|g| format!("{g}#")).unwrap_or_default();
        let out = of_user(&self.state(1).activities, user)
            .filter_map(|(k, doc)| Some((k.strip_prefix(&prefix)?.to_string(), doc)))
            .filter(|(k, _)| after.is_none_or(|a| k.as_str() > a))
            .take(want)
            .map(|(k, doc)| (k, doc.clone()))
            .collect();
        self.done(Ok(out)).await
    }
}
