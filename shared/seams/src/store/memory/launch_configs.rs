//! Launch configurations and the groups that use them.

use super::*;

#[async_trait]
impl LaunchConfigs for MemoryStore {
    async fn create_launch_config(&self, user: &str, lc: &LaunchConfig) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let count = st.usage(user).launch_configs;
            let registered = st.clouds.contains_key(&lc.cloud);
            match st.lcs.entry(owned(user, &lc.name)) {
                _ if !registered => Err(StoreError::NotFound),
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

    async fn launch_configs(&self, user: &str, page: Page<'_>) -> StoreResult<Vec<LaunchConfig>> {
        let out = {
            let st = self.state(1);
            let mine = of_user(&st.lcs, user);
            paged(mine, page, |_| true)
                .into_iter()
                .map(|(lc, _)| lc.clone())
                .collect()
        };
        self.done(Ok(out)).await
    }
}
