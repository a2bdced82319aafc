//! Users, their access keys, the registered clouds and each user's credentials.

use super::*;

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
                    root_key(user, &user.access_key_id, secret),
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
        let out = self.change_user(u, |st| {
            if let Some(stored) = st.users.get_mut(&u.name) {
                stored.disabled = true;
                if let Some(second) = stored.second_key.take() {
                    st.keys.remove(&second);
                }
            }
            st.keys.remove(&u.access_key_id);
        });
        self.done(out).await
    }

    async fn add_root_key(&self, u: &User, access_key_id: &str, secret: &str) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let taken = st.keys.contains_key(access_key_id);
            match st.users.get_mut(&u.name) {
                None => Err(StoreError::NotFound),
                Some(stored) if *stored != *u || stored.second_key.is_some() => {
                    Err(StoreError::Conflict)
                }
                Some(_) if taken => Err(StoreError::Exists),
                Some(stored) => {
                    stored.second_key = Some(access_key_id.to_string());
                    let key = root_key(stored, access_key_id, secret);
                    st.keys.insert(access_key_id.to_string(), key);
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn set_root_key_active(
        &self,
        u: &User,
        access_key_id: &str,
        active: bool,
    ) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st.keys.get_mut(access_key_id) {
                Some(k) if k.user == u.name && k.identity.is_none() && k.session.is_none() => {
                    k.active = active;
                    Ok(())
                }
                _ => Err(StoreError::NotFound),
            }
        };
        self.done(out).await
    }

    async fn delete_root_key(&self, u: &User, access_key_id: &str) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st.users.get_mut(&u.name) {
                None => Err(StoreError::NotFound),
                Some(stored) if *stored != *u => Err(StoreError::Conflict),
                Some(stored) => match stored.second_key.clone() {
                    Some(second) if second == access_key_id => {
                        stored.second_key = None;
                        st.keys.remove(access_key_id);
                        Ok(())
                    }
                    Some(second) if stored.access_key_id == access_key_id => {
                        stored.access_key_id = second;
                        stored.second_key = None;
                        st.keys.remove(access_key_id);
                        Ok(())
                    }
                    _ => Err(StoreError::NotFound),
                },
            }
        };
        self.done(out).await
    }

    async fn set_limits(
        &self,
        u: &User,
        limits: Option<&phantom_model::limits::Limits>,
    ) -> StoreResult<()> {
        let out = self.change_user(u, |st| {
            if let Some(stored) = st.users.get_mut(&u.name) {
                stored.limits = limits.copied();
            }
            if let Some(k) = st.keys.get_mut(&u.access_key_id) {
                k.limits = limits.copied();
            }
        });
        self.done(out).await
    }

    async fn set_scrape(&self, user: &str, sha256: Option<&str>) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st.users.get_mut(user) {
                None => Err(StoreError::NotFound),
                Some(stored) => {
                    stored.scrape_sha256 = sha256.map(str::to_string);
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
                    let key = root_key(stored, access_key_id, secret);
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

    async fn no_status_checks(&self, name: &str) -> StoreResult<()> {
        let out = match self.state(1).clouds.get_mut(name) {
            Some(c) => {
                c.status_checks = false;
                Ok(())
            }
            None => Err(StoreError::NotFound),
        };
        self.done(out).await
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
        self.credential_reads.fetch_add(1, Ordering::Relaxed);
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

    async fn put_metric_source(&self, source: &MetricSource) -> StoreResult<()> {
        self.state(1).metric_source = Some(source.clone());
        self.done(Ok(())).await
    }

    async fn metric_source(&self) -> StoreResult<Option<MetricSource>> {
        let out = self.state(1).metric_source.clone();
        self.done(Ok(out)).await
    }

    async fn delete_metric_source(&self) -> StoreResult<()> {
        let out = match self.state(1).metric_source.take() {
            Some(_) => Ok(()),
            None => Err(StoreError::NotFound),
        };
        self.done(out).await
    }
}

impl MemoryStore {
    /// Changes user `u` as read: `NotFound` if gone, `Conflict` if its key changed since.
    fn change_user(&self, u: &User, change: impl FnOnce(&mut State)) -> StoreResult<()> {
        let mut st = self.state(1);
        match st.users.get(&u.name) {
            None => Err(StoreError::NotFound),
            Some(stored) if stored.access_key_id != u.access_key_id => Err(StoreError::Conflict),
            Some(_) => {
                change(&mut st);
                Ok(())
            }
        }
    }
}

/// A key of the account's root (neither an IAM user's nor a session's), active.
fn root_key(u: &User, access_key_id: &str, secret: &str) -> AccessKey {
    AccessKey {
        access_key_id: access_key_id.to_string(),
        secret: secret.to_string(),
        user: u.name.clone(),
        account_id: u.account_id.clone(),
        limits: u.limits,
        identity: None,
        active: true,
        last_used: None,
        session: None,
    }
}
