//! An account's IAM users (`IAM#<account>` / `USER#<name>`, the user as JSON in `doc` and its
//! `version`; the name in lower case in the key, as IAM's names are unique whatever their case),
//! and their keys' records, which carry each user's identity and policies.

use super::*;
use crate::store::Identities;
use phantom_model::iam::IamUser;
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

    async fn save_iam_user(
        &self,
        before: &IamUser,
        after: &IamUser,
        new_key: Option<(&str, &str)>,
        limits: Option<&phantom_model::limits::Limits>,
    ) -> StoreResult<()> {
        let mut writes = vec![TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(user_item(after, before.version + 1)))
                    .condition_expression("version = :v")
                    .expression_attribute_values(":v", n(before.version as i64))
                    .build()
                    .map_err(unavailable)?,
            )
            .build()];
        for gone in before.keys.iter().filter(|k| {
            !after
                .keys
                .iter()
                .any(|a| a.access_key_id == k.access_key_id)
        }) {
            writes.push(
                TransactWriteItem::builder()
                    .delete(self.key_delete(&gone.access_key_id)?)
                    .build(),
            );
        }
        let limits_value = limits.map(|l| s(serde_json::to_string(l).expect("limits serialize")));
        for k in &after.keys {
            let pk = format!("KEY#{}", k.access_key_id);
            let write = match new_key {
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
            writes.push(write);
        }
        let result = self
            .db
            .transact_write_items()
            .set_transact_items(Some(writes))
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e) {
                Some(failed) if failed.first() == Some(&true) => {
                    match self.iam_user(&before.account, &before.name).await? {
                        None => Err(StoreError::NotFound),
                        Some(_) => Err(StoreError::Conflict),
                    }
                }
                // The user as read, and a key's condition failed: the new id is taken.
                Some(failed) if failed.iter().any(|f| *f) => Err(StoreError::Exists),
                _ => Err(unavailable(e)),
            },
        }
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
