//! An account's IAM users (`IAM#<account>` / `USER#<name>`, the user as JSON in `doc` and its
//! `version`; the name in lower case in the key, as IAM's names are unique whatever their case),
//! and their keys' records, which carry each user's identity and policies.

use super::*;
use crate::store::{IamChange, Identities, PolicySave, RoleSave, UserSave};
use phantom_model::iam::{IamRole, IamUser, ManagedPolicy};
use phantom_model::user::{AccessKey, KeyUse};

const IAM: &str = "IAM#";
const IAM_USER: &str = "USER#";

fn user_key(account: &str, name: &str) -> Item {
    key(
        format!("{IAM}{account}"),
        format!("{IAM_USER}{}", name.to_lowercase()),
    )
}

fn user_from(item: &Item) -> StoreResult<IamUser> {
    let doc = get_s(item, "doc")?;
    let mut u: IamUser =
        serde_json::from_str(&doc).map_err(|_| corrupt(item, "doc", "an IAM user"))?;
    u.version = get_n(item, "version")? as u64;
    Ok(u)
}

fn user_item(u: &IamUser, version: u64) -> Item {
    let mut item = user_key(&u.account, &u.name);
    item.insert(
        "doc".into(),
        s(serde_json::to_string(u).expect("an IAM user serializes")),
    );
    item.insert("version".into(), n(version as i64));
    item
}

fn identity_json(u: &IamUser) -> AttributeValue {
    s(serde_json::to_string(&u.identity()).expect("an identity serializes"))
}

/// What a write's condition failing means, in `save_iam`.
enum Failed {
    /// A name or key id to create is taken.
    Taken,
    /// The user (account, name) is gone or changed.
    User(String, String),
    /// The policy (account, name) is gone or changed.
    Policy(String, String),
    /// The role (account, name) is gone or changed.
    Role(String, String),
}

const IAM_POLICY: &str = "POLICY#";
const IAM_ROLE: &str = "ROLE#";

fn role_key(account: &str, name: &str) -> Item {
    key(
        format!("{IAM}{account}"),
        format!("{IAM_ROLE}{}", name.to_lowercase()),
    )
}

/// An item holding `doc` (JSON) and its `version`, at `at`.
fn doc_item<T: serde::Serialize>(at: &Item, doc: &T, version: u64) -> Item {
    let mut item = at.clone();
    item.insert(
        "doc".into(),
        s(serde_json::to_string(doc).expect("an IAM entity serializes")),
    );
    item.insert("version".into(), n(version as i64));
    item
}

/// The entity an item holds in `doc`, its version from `version`.
fn doc_from<T: serde::de::DeserializeOwned + Versioned>(item: &Item, what: &str) -> StoreResult<T> {
    let doc = get_s(item, "doc")?;
    let mut out: T = serde_json::from_str(&doc).map_err(|_| corrupt(item, "doc", what))?;
    out.set_version(get_n(item, "version")? as u64);
    Ok(out)
}

/// An IAM entity whose version lives beside its document.
trait Versioned {
    fn set_version(&mut self, v: u64);
}

impl Versioned for IamRole {
    fn set_version(&mut self, v: u64) {
        self.version = v;
    }
}

fn policy_key(account: &str, name: &str) -> Item {
    key(
        format!("{IAM}{account}"),
        format!("{IAM_POLICY}{}", name.to_lowercase()),
    )
}

fn policy_item(p: &ManagedPolicy, version: u64) -> Item {
    let mut item = policy_key(&p.account, &p.name);
    item.insert(
        "doc".into(),
        s(serde_json::to_string(p).expect("a policy serializes")),
    );
    item.insert("version".into(), n(version as i64));
    item
}

fn policy_from(item: &Item) -> StoreResult<ManagedPolicy> {
    let doc = get_s(item, "doc")?;
    let mut p: ManagedPolicy =
        serde_json::from_str(&doc).map_err(|_| corrupt(item, "doc", "a managed policy"))?;
    p.version = get_n(item, "version")? as u64;
    Ok(p)
}

impl DynamoStore {
    /// A user's writes in `save_iam`: the user, conditional on its version, and its keys.
    async fn user_writes(
        &self,
        u: &UserSave<'_>,
        limits: Option<&phantom_model::limits::Limits>,
        writes: &mut Vec<(TransactWriteItem, Failed)>,
    ) -> StoreResult<()> {
        let (before, after) = (u.before, u.after);
        writes.push((
            TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name(&self.table)
                        .set_item(Some(user_item(after, before.version + 1)))
                        .condition_expression("version = :v")
                        .expression_attribute_values(":v", n(before.version as i64))
                        .build()
                        .map_err(unavailable)?,
                )
                .build(),
            Failed::User(before.account.clone(), before.name.clone()),
        ));
        for gone in before.keys.iter().filter(|k| {
            !after
                .keys
                .iter()
                .any(|a| a.access_key_id == k.access_key_id)
        }) {
            writes.push((
                TransactWriteItem::builder()
                    .delete(self.key_delete(&gone.access_key_id)?)
                    .build(),
                Failed::Taken,
            ));
        }
        let limits_value = limits.map(|l| s(serde_json::to_string(l).expect("limits serialize")));
        for k in &after.keys {
            let pk = format!("KEY#{}", k.access_key_id);
            let created = u.new_key.is_some_and(|(id, _)| id == k.access_key_id);
            let write = match u.new_key {
                Some((id, secret)) if id == k.access_key_id => {
                    let sealed = self.secrets.seal(&pk, secret).await.map_err(sealing)?;
                    let mut item = key(pk, "KEY".into());
                    item.insert("user".into(), s(&after.account));
                    item.insert("account_id".into(), s(&after.account_id));
                    item.insert(SEALED.into(), s(sealed));
                    item.insert("identity".into(), identity_json(after));
                    item.insert("active".into(), AttributeValue::Bool(k.active));
                    if let Some(l) = &limits_value {
                        item.insert("limits".into(), l.clone());
                    }
                    TransactWriteItem::builder()
                        .put(
                            Put::builder()
                                .table_name(&self.table)
                                .set_item(Some(item))
                                .condition_expression("attribute_not_exists(pk)")
                                .build()
                                .map_err(unavailable)?,
                        )
                        .build()
                }
                _ => {
                    let expression = match limits_value {
                        // `identity` is a reserved word in DynamoDB's expressions.
                        Some(_) => "SET #i = :i, active = :a, limits = :l",
                        None => "SET #i = :i, active = :a REMOVE limits",
                    };
                    let mut values = HashMap::from([
                        (":i".to_string(), identity_json(after)),
                        (":a".to_string(), AttributeValue::Bool(k.active)),
                    ]);
                    if let Some(l) = &limits_value {
                        values.insert(":l".into(), l.clone());
                    }
                    TransactWriteItem::builder()
                        .update(
                            Update::builder()
                                .table_name(&self.table)
                                .set_key(Some(key(pk, "KEY".into())))
                                .update_expression(expression)
                                .expression_attribute_names("#i", "identity")
                                .condition_expression("attribute_exists(pk)")
                                .set_expression_attribute_values(Some(values))
                                .build()
                                .map_err(unavailable)?,
                        )
                        .build()
                }
            };
            // A new key's id taken; an old key's record gone with a change to its user.
            let failed = match created {
                true => Failed::Taken,
                false => Failed::User(before.account.clone(), before.name.clone()),
            };
            writes.push((write, failed));
        }
        Ok(())
    }
}

#[async_trait]
impl Identities for DynamoStore {
    async fn iam_user(&self, account: &str, name: &str) -> StoreResult<Option<IamUser>> {
        let key = user_key(account, name);
        self.get(get_s(&key, PARTITION_KEY)?, get_s(&key, SORT_KEY)?)
            .await?
            .map(|i| user_from(&i))
            .transpose()
    }

    async fn iam_users(&self, account: &str) -> StoreResult<Vec<IamUser>> {
        self.query_prefix(
            &format!("{IAM}{account}"),
            IAM_USER,
            None,
            usize::MAX,
            |_| true,
        )
        .await?
        .iter()
        .map(user_from)
        .collect()
    }

    async fn create_iam_user(&self, u: &IamUser) -> StoreResult<()> {
        let result = self
            .db
            .put_item()
            .table_name(&self.table)
            .set_item(Some(user_item(u, 0)))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await;
        conditional(result, StoreError::Exists)
    }

    async fn save_iam(&self, change: &IamChange<'_>) -> StoreResult<()> {
        // Each write, and what its condition failing means.
        let mut writes: Vec<(TransactWriteItem, Failed)> = Vec::new();
        for u in &change.users {
            self.user_writes(u, change.limits, &mut writes).await?;
        }
        for p in &change.policies {
            let (write, failed) = match p {
                PolicySave::Create(p) => (
                    Put::builder()
                        .table_name(&self.table)
                        .set_item(Some(policy_item(p, 0)))
                        .condition_expression("attribute_not_exists(pk)")
                        .build()
                        .map_err(unavailable)
                        .map(|w| TransactWriteItem::builder().put(w).build())?,
                    Failed::Taken,
                ),
                PolicySave::Update { before, after } => (
                    Put::builder()
                        .table_name(&self.table)
                        .set_item(Some(policy_item(after, before.version + 1)))
                        .condition_expression("version = :v")
                        .expression_attribute_values(":v", n(before.version as i64))
                        .build()
                        .map_err(unavailable)
                        .map(|w| TransactWriteItem::builder().put(w).build())?,
                    Failed::Policy(before.account.clone(), before.name.clone()),
                ),
                PolicySave::Delete(p) => (
                    Delete::builder()
                        .table_name(&self.table)
                        .set_key(Some(policy_key(&p.account, &p.name)))
                        .condition_expression("version = :v")
                        .expression_attribute_values(":v", n(p.version as i64))
                        .build()
                        .map_err(unavailable)
                        .map(|w| TransactWriteItem::builder().delete(w).build())?,
                    Failed::Policy(p.account.clone(), p.name.clone()),
                ),
            };
            writes.push((write, failed));
        }
        for r in &change.roles {
            let (write, failed) = match r {
                RoleSave::Create(r) => (
                    Put::builder()
                        .table_name(&self.table)
                        .set_item(Some(doc_item(&role_key(&r.account, &r.name), *r, 0)))
                        .condition_expression("attribute_not_exists(pk)")
                        .build()
                        .map_err(unavailable)
                        .map(|w| TransactWriteItem::builder().put(w).build())?,
                    Failed::Taken,
                ),
                RoleSave::Update { before, after } => (
                    Put::builder()
                        .table_name(&self.table)
                        .set_item(Some(doc_item(
                            &role_key(&before.account, &before.name),
                            *after,
                            before.version + 1,
                        )))
                        .condition_expression("version = :v")
                        .expression_attribute_values(":v", n(before.version as i64))
                        .build()
                        .map_err(unavailable)
                        .map(|w| TransactWriteItem::builder().put(w).build())?,
                    Failed::Role(before.account.clone(), before.name.clone()),
                ),
                RoleSave::Delete(r) => (
                    Delete::builder()
                        .table_name(&self.table)
                        .set_key(Some(role_key(&r.account, &r.name)))
                        .condition_expression("version = :v")
                        .expression_attribute_values(":v", n(r.version as i64))
                        .build()
                        .map_err(unavailable)
                        .map(|w| TransactWriteItem::builder().delete(w).build())?,
                    Failed::Role(r.account.clone(), r.name.clone()),
                ),
            };
            writes.push((write, failed));
        }
        let (items, meanings): (Vec<_>, Vec<_>) = writes.into_iter().unzip();
        let result = self
            .db
            .transact_write_items()
            .set_transact_items(Some(items))
            .send()
            .await;
        let Err(e) = result else { return Ok(()) };
        let Some(failed) = cancelled_conditions(&e) else {
            return Err(unavailable(e));
        };
        let Some(at) = failed.iter().position(|f| *f) else {
            return Err(unavailable(e));
        };
        match &meanings[at] {
            Failed::Taken => Err(StoreError::Exists),
            Failed::User(account, name) => match self.iam_user(account, name).await? {
                None => Err(StoreError::NotFound),
                Some(_) => Err(StoreError::Conflict),
            },
            Failed::Policy(account, name) => match self.managed_policy(account, name).await? {
                None => Err(StoreError::NotFound),
                Some(_) => Err(StoreError::Conflict),
            },
            Failed::Role(account, name) => match self.iam_role(account, name).await? {
                None => Err(StoreError::NotFound),
                Some(_) => Err(StoreError::Conflict),
            },
        }
    }

    async fn managed_policy(
        &self,
        account: &str,
        name: &str,
    ) -> StoreResult<Option<ManagedPolicy>> {
        let key = policy_key(account, name);
        self.get(get_s(&key, PARTITION_KEY)?, get_s(&key, SORT_KEY)?)
            .await?
            .map(|i| policy_from(&i))
            .transpose()
    }

    async fn iam_role(&self, account: &str, name: &str) -> StoreResult<Option<IamRole>> {
        let key = role_key(account, name);
        self.get(get_s(&key, PARTITION_KEY)?, get_s(&key, SORT_KEY)?)
            .await?
            .map(|i| doc_from(&i, "a role"))
            .transpose()
    }

    async fn iam_roles(&self, account: &str) -> StoreResult<Vec<IamRole>> {
        self.query_prefix(
            &format!("{IAM}{account}"),
            IAM_ROLE,
            None,
            usize::MAX,
            |_| true,
        )
        .await?
        .iter()
        .map(|i| doc_from(i, "a role"))
        .collect()
    }

    async fn managed_policies(&self, account: &str) -> StoreResult<Vec<ManagedPolicy>> {
        self.query_prefix(
            &format!("{IAM}{account}"),
            IAM_POLICY,
            None,
            usize::MAX,
            |_| true,
        )
        .await?
        .iter()
        .map(policy_from)
        .collect()
    }

    async fn delete_iam_user(&self, u: &IamUser) -> StoreResult<()> {
        let result = self
            .db
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(user_key(&u.account, &u.name)))
            .condition_expression("version = :v")
            .expression_attribute_values(":v", n(u.version as i64))
            .send()
            .await;
        match conditional(result, StoreError::Conflict) {
            Err(StoreError::Conflict) => match self.iam_user(&u.account, &u.name).await? {
                None => Err(StoreError::NotFound),
                Some(_) => Err(StoreError::Conflict),
            },
            other => other,
        }
    }

    async fn key_used(&self, access_key_id: &str, used: &KeyUse) -> StoreResult<()> {
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(format!("KEY#{access_key_id}"), "KEY".into())))
            .update_expression("SET last_used = :u")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(
                ":u",
                s(serde_json::to_string(used).expect("a key's use serializes")),
            )
            .send()
            .await;
        conditional(result, StoreError::NotFound)
    }

    async fn create_session(&self, k: &AccessKey) -> StoreResult<()> {
        let Some(session) = &k.session else {
            return Err(StoreError::Corrupt(format!(
                "key {} is no session's",
                k.access_key_id
            )));
        };
        let pk = format!("KEY#{}", k.access_key_id);
        let sealed = self.secrets.seal(&pk, &k.secret).await.map_err(sealing)?;
        let mut item = key(pk, "KEY".into());
        item.insert("user".into(), s(&k.user));
        item.insert("account_id".into(), s(&k.account_id));
        item.insert(SEALED.into(), s(sealed));
        item.insert("active".into(), AttributeValue::Bool(true));
        item.insert(
            "session".into(),
            s(serde_json::to_string(session).expect("a session serializes")),
        );
        // DynamoDB's TTL removes it a day after it expires; the expiry itself is checked.
        item.insert(
            TTL_ATTRIBUTE.into(),
            n(session.expires_ms / 1000 + SESSION_KEPT_SECS),
        );
        let result = self
            .db
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await;
        conditional(result, StoreError::Exists)
    }
}

/// How long an expired session's record is kept (its refusals say ExpiredToken meanwhile).
const SESSION_KEPT_SECS: i64 = 24 * 3600;
