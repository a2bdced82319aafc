//! An account's IAM users and their keys' records. A user's name is unique in its account
//! whatever its case, as IAM's: it is kept under its name in lower case.

use super::*;
use crate::store::{IamChange, Identities, PolicySave, RoleSave};
use phantom_model::iam::{IamRole, IamUser, ManagedPolicy};
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

    async fn save_iam(&self, change: &IamChange<'_>) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            match check(&st, change) {
                Err(e) => Err(e),
                Ok(()) => {
                    apply(&mut st, change);
                    Ok(())
                }
            }
        };
        self.done(out).await
    }

    async fn managed_policy(
        &self,
        account: &str,
        name: &str,
    ) -> StoreResult<Option<ManagedPolicy>> {
        let out = self
            .state(1)
            .policies
            .get(&(account.to_string(), name.to_lowercase()))
            .cloned();
        self.done(Ok(out)).await
    }

    async fn iam_role(&self, account: &str, name: &str) -> StoreResult<Option<IamRole>> {
        let out = self
            .state(1)
            .roles
            .get(&(account.to_string(), name.to_lowercase()))
            .cloned();
        self.done(Ok(out)).await
    }

    async fn iam_roles(&self, account: &str) -> StoreResult<Vec<IamRole>> {
        let out = self
            .state(1)
            .roles
            .iter()
            .filter(|((a, _), _)| a == account)
            .map(|(_, r)| r.clone())
            .collect();
        self.done(Ok(out)).await
    }

    async fn managed_policies(&self, account: &str) -> StoreResult<Vec<ManagedPolicy>> {
        let out = self
            .state(1)
            .policies
            .iter()
            .filter(|((a, _), _)| a == account)
            .map(|(_, p)| p.clone())
            .collect();
        self.done(Ok(out)).await
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

fn user_id(u: &IamUser) -> Owned {
    (u.account.clone(), u.name.to_lowercase())
}

fn policy_id(p: &ManagedPolicy) -> Owned {
    (p.account.clone(), p.name.to_lowercase())
}

/// Whether every part of `change` may be written: as `Identities::save_iam` refuses.
fn check(st: &State, change: &IamChange<'_>) -> StoreResult<()> {
    for u in &change.users {
        match st.iam_users.get(&user_id(u.before)) {
            None => return Err(StoreError::NotFound),
            Some(stored) if stored.version != u.before.version => return Err(StoreError::Conflict),
            Some(_) => {}
        }
        if u.new_key.is_some_and(|(k, _)| st.keys.contains_key(k)) {
            return Err(StoreError::Exists);
        }
        let orphan = u.after.keys.iter().any(|k| {
            !st.keys.contains_key(&k.access_key_id)
                && u.new_key.is_none_or(|(id, _)| id != k.access_key_id)
        });
        if orphan {
            return Err(StoreError::Corrupt(format!(
                "IAM user {}/{}: a key without its record",
                u.before.account, u.before.name
            )));
        }
    }
    for p in &change.policies {
        let (read, exists) = match p {
            PolicySave::Create(p) => {
                if st.policies.contains_key(&policy_id(p)) {
                    return Err(StoreError::Exists);
                }
                continue;
            }
            PolicySave::Update { before, .. } => (before, st.policies.get(&policy_id(before))),
            PolicySave::Delete(p) => (p, st.policies.get(&policy_id(p))),
        };
        match exists {
            None => return Err(StoreError::NotFound),
            Some(stored) if stored.version != read.version => return Err(StoreError::Conflict),
            Some(_) => {}
        }
    }
    for r in &change.roles {
        let (read, exists) = match r {
            RoleSave::Create(r) => {
                if st.roles.contains_key(&role_id(r)) {
                    return Err(StoreError::Exists);
                }
                continue;
            }
            RoleSave::Update { before, .. } => (before, st.roles.get(&role_id(before))),
            RoleSave::Delete(r) => (r, st.roles.get(&role_id(r))),
        };
        match exists {
            None => return Err(StoreError::NotFound),
            Some(stored) if stored.version != read.version => return Err(StoreError::Conflict),
            Some(_) => {}
        }
    }
    Ok(())
}

fn role_id(r: &IamRole) -> Owned {
    (r.account.clone(), r.name.to_lowercase())
}

fn apply(st: &mut State, change: &IamChange<'_>) {
    for r in &change.roles {
        match r {
            RoleSave::Create(r) => {
                let mut saved = (*r).clone();
                saved.version = 0;
                st.roles.insert(role_id(r), saved);
            }
            RoleSave::Update { before, after } => {
                let mut saved = (*after).clone();
                saved.version = before.version + 1;
                st.roles.insert(role_id(before), saved);
            }
            RoleSave::Delete(r) => {
                st.roles.remove(&role_id(r));
            }
        }
    }
    for u in &change.users {
        let mut saved = u.after.clone();
        saved.version = u.before.version + 1;
        for gone in u.before.keys.iter().filter(|k| {
            !u.after
                .keys
                .iter()
                .any(|a| a.access_key_id == k.access_key_id)
        }) {
            st.keys.remove(&gone.access_key_id);
        }
        for k in &u.after.keys {
            let (secret, last_used) = match (u.new_key, st.keys.get(&k.access_key_id)) {
                (Some((id, secret)), _) if id == k.access_key_id => (secret.to_string(), None),
                (_, Some(old)) => (old.secret.clone(), old.last_used.clone()),
                // `check` found every other key's record.
                (_, None) => continue,
            };
            st.keys.insert(
                k.access_key_id.clone(),
                AccessKey {
                    access_key_id: k.access_key_id.clone(),
                    secret,
                    user: saved.account.clone(),
                    account_id: saved.account_id.clone(),
                    limits: change.limits.copied(),
                    identity: Some(saved.identity()),
                    active: k.active,
                    last_used,
                    session: None,
                },
            );
        }
        st.iam_users.insert(user_id(&saved), saved);
    }
    for p in &change.policies {
        match p {
            PolicySave::Create(p) => {
                let mut saved = (*p).clone();
                saved.version = 0;
                st.policies.insert(policy_id(p), saved);
            }
            PolicySave::Update { before, after } => {
                let mut saved = (*after).clone();
                saved.version = before.version + 1;
                st.policies.insert(policy_id(before), saved);
            }
            PolicySave::Delete(p) => {
                st.policies.remove(&policy_id(p));
            }
        }
    }
}
