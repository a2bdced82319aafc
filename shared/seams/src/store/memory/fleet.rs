//! The instance records, the provisioner's leases, the records of a round and the activities.

use super::*;
use phantom_model::notification::Notice;
use phantom_model::pulse::{Lease as PulseLease, PairView};
use phantom_model::sync_launch::SyncLaunch;
use phantom_rules::group::GroupRules;

#[async_trait]
impl Fleet for MemoryStore {
    async fn take_lease(&self, claim: Claim<'_>) -> StoreResult<Lease> {
        let out = {
            let mut st = self.state(1);
            match st.groups.get_mut(&owned(claim.user, claim.group)) {
                None => Lease::NoGroup,
                Some(s) => match &s.lease {
                    Some((h, until)) if *until >= claim.now_ms && h != claim.holder => {
                        Lease::Busy { until_ms: *until }
                    }
                    _ => {
                        s.lease = Some((claim.holder.to_string(), claim.until_ms()));
                        Lease::Taken(Box::new(s.group.clone()))
                    }
                },
            }
        };
        self.done(Ok(out)).await
    }

    async fn renew_lease(&self, claim: Claim<'_>) -> StoreResult<bool> {
        let out = {
            let mut st = self.state(1);
            match st.groups.get_mut(&owned(claim.user, claim.group)) {
                Some(s) if s.lease.as_ref().is_some_and(|(h, _)| h == claim.holder) => {
                    s.lease = Some((claim.holder.to_string(), claim.until_ms()));
                    true
                }
                _ => false,
            }
        };
        self.done(Ok(out)).await
    }

    async fn release_lease(
        &self,
        user: &str,
        name: &str,
        holder: &str,
        seen: Option<&Group>,
    ) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st.groups.get_mut(&owned(user, name)) {
                Some(s)
                    if seen
                        .is_none_or(|g| s.group.version == g.version && s.group.asks == g.asks)
                        && s.lease.as_ref().is_some_and(|(h, _)| h == holder) =>
                {
                    s.lease = None;
                    // The asks it saw are answered; none came since.
                    if seen.is_some() {
                        s.ask = None;
                        s.group.asks = 0;
                    }
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
        let writes =
            r.put.len() + r.forget.len() + r.activities.len() + r.notices.len() + r.launches.len();
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
        // An activity written twice (an open one ended twice) is one item twice too.
        let mut once = keys.clone();
        once.sort();
        once.dedup();
        if once.len() < keys.len() {
            return Err(StoreError::Unavailable(
                "multiple operations on one item in a record".into(),
            ));
        }
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
                        if let Some(unreplaced) = &r.unreplaced {
                            s.group.unreplaced_ms = unreplaced.clone();
                        }
                        if let Some(holds) = &r.holds {
                            s.group.holds = holds.clone();
                        }
                        s.asked(r.ask_ms);
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
                        let notices = st.notices.entry(owned(user, &g.name)).or_default();
                        notices.extend(r.notices.iter().cloned());
                        notices.sort_by(|a, b| a.id.cmp(&b.id));
                        let launches = st.launches.entry(owned(user, &g.name)).or_default();
                        for l in &r.launches {
                            launches.insert(l.client_token.clone(), l.clone());
                        }
                        Ok(())
                    }
                }
                _ => Err(StoreError::NotFound),
            }
        };
        self.done(out).await
    }

    async fn notices(&self, user: &str, group: &str) -> StoreResult<Vec<Notice>> {
        let out = self
            .state(1)
            .notices
            .get(&owned(user, group))
            .cloned()
            .unwrap_or_default();
        self.done(Ok(out)).await
    }

    async fn sent(&self, user: &str, group: &str, id: &str) -> StoreResult<()> {
        {
            let mut st = self.state(1);
            if let Some(list) = st.notices.get_mut(&owned(user, group)) {
                list.retain(|n| n.id != id);
            }
        }
        self.done(Ok(())).await
    }

    async fn put_launch(&self, user: &str, group: &str, l: &SyncLaunch) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let launches = st.launches.entry(owned(user, group)).or_default();
            if launches.contains_key(&l.client_token) {
                Err(StoreError::Exists)
            } else {
                launches.insert(l.client_token.clone(), l.clone());
                Ok(())
            }
        };
        self.done(out).await
    }

    async fn launches(&self, user: &str, group: &str) -> StoreResult<Vec<SyncLaunch>> {
        let out = self
            .state(1)
            .launches
            .get(&owned(user, group))
            .map(|l| l.values().cloned().collect())
            .unwrap_or_default();
        self.done(Ok(out)).await
    }

    async fn beat(&self, user: &str, group: &str, instance: &str, at_ms: i64) -> StoreResult<()> {
        self.state(1)
            .beats
            .insert((user.into(), group.into(), instance.into()), at_ms);
        self.done(Ok(())).await
    }

    async fn beats(&self, user: &str, group: &str) -> StoreResult<Vec<(String, i64)>> {
        let out = self
            .state(1)
            .beats
            .iter()
            .filter(|((u, g, _), _)| u == user && g == group)
            .map(|((_, _, id), at)| (id.clone(), *at))
            .collect();
        self.done(Ok(out)).await
    }

    async fn watched(&self) -> StoreResult<Vec<Watched>> {
        let out = {
            let st = self.state(1);
            st.watch
                .iter()
                .map(|(k, groups)| Watched {
                    user: k.1.clone(),
                    cloud: k.0.clone(),
                    groups: *groups,
                    view: st.views.get(k).cloned(),
                })
                .collect()
        };
        self.done(Ok(out)).await
    }

    async fn asked(&self, at_ms: i64) -> StoreResult<Vec<(String, String)>> {
        let out = {
            let st = self.state(1);
            st.groups
                .iter()
                .filter(|(_, s)| s.ask.is_some_and(|a| a <= at_ms))
                .map(|(k, _)| k.clone())
                .collect()
        };
        self.done(Ok(out)).await
    }

    async fn ask(&self, user: &str, name: &str, at_ms: i64) -> StoreResult<()> {
        let out = match self.state(1).groups.get_mut(&owned(user, name)) {
            Some(s) => {
                s.asked(Some(at_ms));
                Ok(())
            }
            None => Err(StoreError::NotFound),
        };
        self.done(out).await
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
                    st.views.remove(&k);
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn owners_of(&self, instance_id: &str) -> StoreResult<Vec<(String, String)>> {
        let out = self
            .state(1)
            .instances
            .keys()
            .filter(|(_, _, id)| id == instance_id)
            .map(|(user, group, _)| (user.clone(), group.clone()))
            .collect();
        self.done(Ok(out)).await
    }

    async fn set_view(&self, user: &str, cloud: &str, view: &PairView) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let k = owned(cloud, user);
            if st.watch.contains_key(&k) {
                st.views.insert(k, view.clone());
                Ok(())
            } else {
                Err(StoreError::NotFound)
            }
        };
        self.done(out).await
    }

    async fn pulse(&self) -> StoreResult<Option<PulseLease>> {
        let out = self.state(1).pulse;
        self.done(Ok(out)).await
    }

    async fn put_pulse(&self, expect: u64, lease: &PulseLease) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            if st.pulse.map_or(0, |l| l.seq) == expect {
                st.pulse = Some(*lease);
                Ok(())
            } else {
                Err(StoreError::Conflict)
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
    ) -> StoreResult<Vec<(String, ScalingActivity)>> {
        let prefix = group.map(|g| format!("{g}#")).unwrap_or_default();
        let out = of_user(&self.state(1).activities, user)
            .filter_map(|(k, doc)| Some((k.strip_prefix(&prefix)?.to_string(), doc)))
            .filter(|(k, _)| group.is_none() || crate::store::activity_of_group(k))
            .filter(|(k, _)| after.is_none_or(|a| k.as_str() > a))
            .take(want)
            .map(|(k, doc)| (k, doc.clone()))
            .collect();
        self.done(Ok(out)).await
    }
}
