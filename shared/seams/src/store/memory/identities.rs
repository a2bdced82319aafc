//! An account's IAM users and their keys' records. A user's name is unique in its account
//! whatever its case, as IAM's: it is kept under its name in lower case.

use super::*;
use crate::store::Identities;
use phantom_model::iam::IamUser;
use phantom_model::user::KeyUse;

#[async_trait]
impl Identities for MemoryStore {
    async fn iam_user(&self, account: &str, name: &str) -> StoreResult<Option<IamUser>> {
        let out = self
            .state(1)
            .iam_users
            .get(&(account.to_string(), name.to_lowercase()))
            .cloned();
        self.done(Ok(out)).await
    }

    async fn iam_users(&self, account: &str) -> StoreResult<Vec<IamUser>> {
        let out = self
            .state(1)
            .iam_users
            .iter()
            .filter(|((a, _), _)| a == account)
            .map(|(_, u)| u.clone())
            .collect();
        self.done(Ok(out)).await
    }

    async fn create_iam_user(&self, u: &IamUser) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match st
                .iam_users
                .entry((u.account.clone(), u.name.to_lowercase()))
            {
                Entry::Occupied(_) => Err(StoreError::Exists),
                Entry::Vacant(v) => {
                    v.insert(u.clone());
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn save_iam_user(
        &self,
        before: &IamUser,
        after: &IamUser,
        new_key: Option<(&str, &str)>,
        limits: Option<&phantom_model::limits::Limits>,
    ) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let id = (before.account.clone(), before.name.to_lowercase());
            match st.iam_users.get(&id) {
                None => Err(StoreError::NotFound),
                Some(stored) if stored.version != before.version => Err(StoreError::Conflict),
                Some(_) if new_key.is_some_and(|(k, _)| st.keys.contains_key(k)) => {
                    Err(StoreError::Exists)
                }
                Some(_)
                    if after.keys.iter().any(|k| {
                        !st.keys.contains_key(&k.access_key_id)
                            && new_key.is_none_or(|(id, _)| id != k.access_key_id)
                    }) =>
                {
                    Err(StoreError::Corrupt(format!(
                        "IAM user {}/{}: a key without its record",
                        before.account, before.name
                    )))
                }
                Some(_) => {
                    let mut saved = after.clone();
                    saved.version = before.version + 1;
                    for gone in before.keys.iter().filter(|k| {
                        !after
                            .keys
                            .iter()
                            .any(|a| a.access_key_id == k.access_key_id)
                    }) {
                        st.keys.remove(&gone.access_key_id);
                    }
                    for k in &after.keys {
                        let secret = match new_key {
                            Some((id, secret)) if id == k.access_key_id => secret.to_string(),
                            _ => st.keys[&k.access_key_id].secret.clone(),
                        };
                        let last_used = st
                            .keys
                            .get(&k.access_key_id)
                            .and_then(|old| old.last_used.clone());
                        st.keys.insert(
                            k.access_key_id.clone(),
                            AccessKey {
                                access_key_id: k.access_key_id.clone(),
                                secret,
                                user: saved.account.clone(),
                                account_id: saved.account_id.clone(),
                                limits: limits.copied(),
                                identity: Some(saved.identity()),
                                active: k.active,
                                last_used,
                                session: None,
                            },
                        );
                    }
                    st.iam_users.insert(id, saved);
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn delete_iam_user(&self, u: &IamUser) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let id = (u.account.clone(), u.name.to_lowercase());
            match st.iam_users.get(&id) {
                None => Err(StoreError::NotFound),
                Some(stored) if stored.version != u.version => Err(StoreError::Conflict),
                Some(_) => {
                    st.iam_users.remove(&id);
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn key_used(&self, access_key_id: &str, used: &KeyUse) -> StoreResult<()> {
        let out = match self.state(1).keys.get_mut(access_key_id) {
            None => Err(StoreError::NotFound),
            Some(k) => {
                k.last_used = Some(used.clone());
                Ok(())
            }
        };
        self.done(out).await
    }

    async fn create_session(&self, key: &AccessKey) -> StoreResult<()> {
        let out = match self.state(1).keys.entry(key.access_key_id.clone()) {
            Entry::Occupied(_) => Err(StoreError::Exists),
            Entry::Vacant(v) => {
                v.insert(key.clone());
                Ok(())
            }
        };
        self.done(out).await
    }
}
