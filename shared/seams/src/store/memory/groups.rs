//! Groups, with the in-use marks, the usage counts and the health check's list moved with them.

use super::*;
use phantom_rules::group::GroupRules;

#[async_trait]
impl Groups for MemoryStore {
    async fn create_group(&self, user: &str, g: &Group, ask: Ask) -> StoreResult<()> {
        let (k, lcs, clouds) = keys(user, g)?;
        let out = {
            let mut st = self.state(1);
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
                let mut stored = StoredGroup {
                    group: Group {
                        asks: 0,
                        ..g.clone()
                    },
                    lease: None,
                    ask: None,
                };
                stored.asked(ask);
                st.groups.insert(k, stored);
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
        page: Page<'_>,
        keep: GroupFilter<'_>,
    ) -> StoreResult<Vec<Group>> {
        let out = {
            let st = self.state(1);
            let mine = of_user(&st.groups, user).map(|(n, s)| (n, &s.group));
            paged(mine, page, keep).into_iter().cloned().collect()
        };
        self.done(Ok(out)).await
    }

    async fn set_desired(&self, user: &str, g: &Group, desired: i64, ask: Ask) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st.groups.get_mut(&owned(user, &g.name)) {
                Some(s) if s.group.id == g.id && s.group.version == g.version => {
                    s.group.desired = desired;
                    s.group.version += 1;
                    s.asked(ask);
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
        ask: Ask,
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
                        s.group.min = new.min;
                        s.group.max = new.max;
                        s.group.desired = new.desired;
                        s.group.settings = new.settings.clone();
                        s.group.version += 1;
                        s.asked(ask);
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

    async fn begin_delete(&self, user: &str, g: &Group, ask: Ask) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st.groups.get_mut(&owned(user, &g.name)) {
                Some(s) if s.group.id == g.id && s.group.version == g.version => {
                    s.group.status = Some(DELETING.to_string());
                    s.group.desired = 0;
                    s.group.min = 0;
                    s.group.version += 1;
                    s.asked(ask);
                    Ok(())
                }
                _ => Err(StoreError::Conflict),
            }
        };
        self.done(out).await
    }

    async fn delete_group(&self, user: &str, g: &Group) -> StoreResult<()> {
        let (k, lcs, clouds) = keys(user, g)?;
        let out = {
            let mut st = self.state(1);
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

/// The group's key, its launch configurations' keys and its clouds, read before anything is
/// written: an unreadable clouds tag writes nothing.
fn keys(user: &str, g: &Group) -> StoreResult<(Owned, Vec<Owned>, BTreeSet<String>)> {
    let clouds = g.clouds()?;
    let lcs = g.launch_configurations()?;
    let lcs = lcs.iter().map(|lc| owned(user, lc)).collect();
    Ok((owned(user, &g.name), lcs, clouds))
}
