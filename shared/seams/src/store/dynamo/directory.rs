//! Users, their access keys, the registered clouds and each user's credentials for them, and the
//! deployment's metric source.

use super::*;

#[async_trait]
impl Directory for DynamoStore {
    async fn create_user(&self, user: &User, secret: &str) -> StoreResult<()> {
        let user_item = Put::builder()
            .table_name(&self.table)
            .set_item(Some(with_limits(
                key(USERS.into(), user.name.clone()),
                user.limits.as_ref(),
            )))
            .item("account_id", s(&user.account_id))
            .item("access_key_id", s(&user.access_key_id))
            .item("created", s(&user.created))
            .item("admin", AttributeValue::Bool(user.admin))
            .item("disabled", AttributeValue::Bool(user.disabled))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(unavailable)?;
        let key_item = self.key_put(user, &user.access_key_id, secret).await?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().put(user_item).build())
            .transact_items(TransactWriteItem::builder().put(key_item).build())
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e) {
                Some(failed) if failed.iter().any(|f| *f) => Err(StoreError::Exists),
                _ => Err(unavailable(e)),
            },
        }
    }

    async fn users(&self) -> StoreResult<Vec<User>> {
        self.query_prefix(USERS, "", None, usize::MAX, |_| true)
            .await?
            .iter()
            .map(Self::user_from)
            .collect()
    }

    async fn access_key(&self, access_key_id: &str) -> StoreResult<Option<AccessKey>> {
        let item = self
            .get(format!("KEY#{access_key_id}"), "KEY".into())
            .await?;
        let Some(i) = item else { return Ok(None) };
        let secret = self
            .secrets
            .open(&format!("KEY#{access_key_id}"), &get_s(&i, SEALED)?)
            .await
            .map_err(sealing)?;
        Ok(Some(AccessKey {
            access_key_id: access_key_id.to_string(),
            secret,
            user: get_s(&i, "user")?,
            account_id: get_s(&i, "account_id")?,
            limits: limits_of(&i)?,
            identity: json_of(&i, "identity", "an identity")?,
            // A root key written before keys had a status is active.
            active: match i.get("active") {
                None => true,
                Some(_) => get_bool(&i, "active")?,
            },
            last_used: json_of(&i, "last_used", "a key's last use")?,
            session: json_of(&i, "session", "a session")?,
        }))
    }

    async fn user(&self, name: &str) -> StoreResult<Option<User>> {
        self.get(USERS.into(), name.into())
            .await?
            .map(|i| Self::user_from(&i))
            .transpose()
    }

    async fn disable_user(&self, u: &User) -> StoreResult<()> {
        let mark = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(USERS.into(), u.name.clone())))
            .update_expression("SET disabled = :t")
            .condition_expression("access_key_id = :k")
            .expression_attribute_values(":t", AttributeValue::Bool(true))
            .expression_attribute_values(":k", s(&u.access_key_id))
            .build()
            .map_err(unavailable)?;
        let mut writes = vec![
            TransactWriteItem::builder().update(mark).build(),
            TransactWriteItem::builder()
                .delete(self.key_delete(&u.access_key_id)?)
                .build(),
        ];
        // The root's second key goes with its first.
        if let Some(second) = &u.second_key {
            writes.push(
                TransactWriteItem::builder()
                    .delete(self.key_delete(second)?)
                    .build(),
            );
        }
        let result = self
            .db
            .transact_write_items()
            .set_transact_items(Some(writes))
            .send()
            .await;
        self.user_write_outcome(result, &u.name).await
    }

    async fn add_root_key(&self, u: &User, access_key_id: &str, secret: &str) -> StoreResult<()> {
        let mark = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(USERS.into(), u.name.clone())))
            .update_expression("SET second_key = :k")
            .condition_expression("access_key_id = :p AND attribute_not_exists(second_key)")
            .expression_attribute_values(":k", s(access_key_id))
            .expression_attribute_values(":p", s(&u.access_key_id))
            .build()
            .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().update(mark).build())
            .transact_items(
                TransactWriteItem::builder()
                    .put(self.key_put(u, access_key_id, secret).await?)
                    .build(),
            )
            .send()
            .await;
        if let Err(e) = &result {
            if cancelled_conditions(e).is_some_and(|failed| failed.get(1) == Some(&true)) {
                return Err(StoreError::Exists);
            }
        }
        self.user_write_outcome(result, &u.name).await
    }

    async fn set_root_key_active(
        &self,
        u: &User,
        access_key_id: &str,
        active: bool,
    ) -> StoreResult<()> {
        // A root key of this account's: neither an IAM user's nor a session's.
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(format!("KEY#{access_key_id}"), "KEY".into())))
            .update_expression("SET active = :a")
            .condition_expression(
                "attribute_exists(pk) AND #u = :u AND attribute_not_exists(#i) AND attribute_not_exists(#s)",
            )
            .expression_attribute_names("#u", "user")
            .expression_attribute_names("#i", "identity")
            .expression_attribute_names("#s", "session")
            .expression_attribute_values(":a", AttributeValue::Bool(active))
            .expression_attribute_values(":u", s(&u.name))
            .send()
            .await;
        conditional(result, StoreError::NotFound)
    }

    async fn delete_root_key(&self, u: &User, access_key_id: &str) -> StoreResult<()> {
        let Some(second) = u.second_key.as_deref() else {
            return Err(StoreError::NotFound);
        };
        let user = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(USERS.into(), u.name.clone())))
            .expression_attribute_values(":p", s(&u.access_key_id))
            .expression_attribute_values(":s", s(second));
        // Its second key goes; or its first, and the second becomes its only one.
        let user = match (access_key_id == second, access_key_id == u.access_key_id) {
            (true, _) => user.update_expression("REMOVE second_key"),
            (false, true) => user.update_expression("SET access_key_id = :s REMOVE second_key"),
            (false, false) => return Err(StoreError::NotFound),
        }
        .condition_expression("access_key_id = :p AND second_key = :s")
        .build()
        .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().update(user).build())
            .transact_items(
                TransactWriteItem::builder()
                    .delete(self.key_delete(access_key_id)?)
                    .build(),
            )
            .send()
            .await;
        self.user_write_outcome(result, &u.name).await
    }

    async fn set_limits(
        &self,
        u: &User,
        limits: Option<&phantom_model::limits::Limits>,
    ) -> StoreResult<()> {
        let (expression, value) = match limits {
            Some(l) => (
                "SET limits = :l",
                Some(s(serde_json::to_string(l).expect("limits serialize"))),
            ),
            None => ("REMOVE limits", None),
        };
        let on_user = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(USERS.into(), u.name.clone())))
            .update_expression(expression)
            .condition_expression("access_key_id = :k")
            .set_expression_attribute_values(Some(
                [(":k".to_string(), s(&u.access_key_id))]
                    .into_iter()
                    .chain(value.clone().map(|v| (":l".to_string(), v)))
                    .collect(),
            ))
            .build()
            .map_err(unavailable)?;
        let on_key = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(format!("KEY#{}", u.access_key_id), "KEY".into())))
            .update_expression(expression)
            .condition_expression("attribute_exists(pk)")
            .set_expression_attribute_values(value.map(|v| [(":l".to_string(), v)].into()))
            .build()
            .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().update(on_user).build())
            .transact_items(TransactWriteItem::builder().update(on_key).build())
            .send()
            .await;
        self.user_write_outcome(result, &u.name).await
    }

    async fn set_scrape(&self, user: &str, sha256: Option<&str>) -> StoreResult<()> {
        let update = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(USERS.into(), user.into())))
            .condition_expression("attribute_exists(pk)");
        let update = match sha256 {
            Some(h) => update
                .update_expression("SET scrape = :h")
                .expression_attribute_values(":h", s(h)),
            None => update.update_expression("REMOVE scrape"),
        };
        conditional(update.send().await, StoreError::NotFound)
    }

    async fn rotate_access_key(
        &self,
        u: &User,
        access_key_id: &str,
        secret: &str,
    ) -> StoreResult<()> {
        let point = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(USERS.into(), u.name.clone())))
            .update_expression("SET access_key_id = :new, disabled = :f")
            .condition_expression("access_key_id = :old")
            .expression_attribute_values(":new", s(access_key_id))
            .expression_attribute_values(":old", s(&u.access_key_id))
            .expression_attribute_values(":f", AttributeValue::Bool(false))
            .build()
            .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().update(point).build())
            .transact_items(
                TransactWriteItem::builder()
                    .delete(self.key_delete(&u.access_key_id)?)
                    .build(),
            )
            .transact_items(
                TransactWriteItem::builder()
                    .put(self.key_put(u, access_key_id, secret).await?)
                    .build(),
            )
            .send()
            .await;
        if let Err(e) = &result {
            if cancelled_conditions(e).is_some_and(|failed| failed.get(2) == Some(&true)) {
                return Err(StoreError::Exists);
            }
        }
        self.user_write_outcome(result, &u.name).await
    }

    async fn delete_cloud(&self, name: &str) -> StoreResult<()> {
        let watched = self
            .query_prefix(WATCH, &format!("{name}#"), None, usize::MAX, |_| true)
            .await?;
        if !watched.is_empty() {
            let users = watched
                .iter()
                .map(|i| sk_suffix(i, &format!("{name}#")))
                .collect::<StoreResult<Vec<_>>>()?;
            return Err(StoreError::InUse(users));
        }
        let result = self
            .db
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(CLOUDS.into(), name.into())))
            .condition_expression("attribute_exists(pk)")
            .send()
            .await;
        conditional(result, StoreError::NotFound)
    }

    async fn delete_cloud_credentials(&self, user: &str, cloud: &str) -> StoreResult<()> {
        let result = self
            .db
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{CRED}{cloud}"))))
            .condition_expression("attribute_exists(pk)")
            .send()
            .await;
        conditional(result, StoreError::NotFound)
    }

    async fn put_cloud(&self, cloud: &CloudRecord) -> StoreResult<()> {
        self.db
            .put_item()
            .table_name(&self.table)
            .set_item(Some(key(CLOUDS.into(), cloud.name.clone())))
            .item("endpoint", s(&cloud.endpoint))
            .item("region", s(&cloud.region))
            .item("zone", s(&cloud.zone))
            .item("templates", AttributeValue::Bool(cloud.launch_templates))
            .item("lbs", AttributeValue::Bool(cloud.load_balancers))
            .item("events", AttributeValue::Bool(cloud.events))
            .item("status_checks", AttributeValue::Bool(cloud.status_checks))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn no_status_checks(&self, name: &str) -> StoreResult<()> {
        let update = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(CLOUDS.into(), name.into())))
            .condition_expression("attribute_exists(pk)")
            .update_expression("SET status_checks = :f")
            .expression_attribute_values(":f", AttributeValue::Bool(false));
        conditional(update.send().await, StoreError::NotFound)
    }

    async fn cloud(&self, name: &str) -> StoreResult<Option<CloudRecord>> {
        self.get(CLOUDS.into(), name.into())
            .await?
            .map(|i| Self::cloud_from(&i))
            .transpose()
    }

    async fn clouds(&self) -> StoreResult<Vec<CloudRecord>> {
        self.query_prefix(CLOUDS, "", None, usize::MAX, |_| true)
            .await?
            .iter()
            .map(Self::cloud_from)
            .collect()
    }

    async fn put_cloud_credentials(&self, user: &str, creds: &CloudCredentials) -> StoreResult<()> {
        let exists = |pk: &str, sk: &str| {
            ConditionCheck::builder()
                .table_name(&self.table)
                .set_key(Some(key(pk.into(), sk.into())))
                .condition_expression("attribute_exists(pk)")
                .build()
                .map_err(unavailable)
        };
        let sealed = self
            .secrets
            .seal(&credentials_context(user, &creds.cloud), &creds.secret)
            .await
            .map_err(sealing)?;
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(owner(user), format!("{CRED}{}", creds.cloud))))
            .item("access_key_id", s(&creds.access_key_id))
            .item(SEALED, s(sealed))
            .build()
            .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(
                TransactWriteItem::builder()
                    .condition_check(exists(USERS, user)?)
                    .build(),
            )
            .transact_items(
                TransactWriteItem::builder()
                    .condition_check(exists(CLOUDS, &creds.cloud)?)
                    .build(),
            )
            .transact_items(TransactWriteItem::builder().put(put).build())
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e) {
                Some(failed) if failed.iter().any(|f| *f) => Err(StoreError::NotFound),
                _ => Err(unavailable(e)),
            },
        }
    }

    async fn cloud_credentials(
        &self,
        user: &str,
        cloud: &str,
    ) -> StoreResult<Option<CloudCredentials>> {
        match self.get(owner(user), format!("{CRED}{cloud}")).await? {
            Some(i) => Ok(Some(self.credentials_from(user, &i).await?)),
            None => Ok(None),
        }
    }

    async fn all_cloud_credentials(&self, user: &str) -> StoreResult<Vec<CloudCredentials>> {
        let items = self
            .query_prefix(&owner(user), CRED, None, usize::MAX, |_| true)
            .await?;
        futures::future::try_join_all(items.iter().map(|i| self.credentials_from(user, i))).await
    }

    async fn put_metric_source(&self, source: &MetricSource) -> StoreResult<()> {
        let mut put = self
            .db
            .put_item()
            .table_name(&self.table)
            .set_item(Some(key(METRICS.into(), SOURCE.into())))
            .item("url", s(&source.url))
            .item("instance_label", s(&source.instance_label));
        let (kind, user, secret) = match &source.auth {
            None => ("none", None, None),
            Some(MetricAuth::Bearer(token)) => ("bearer", None, Some(token)),
            Some(MetricAuth::Basic { user, password }) => ("basic", Some(user), Some(password)),
        };
        put = put.item("auth", s(kind));
        if let Some(user) = user {
            put = put.item("auth_user", s(user));
        }
        if let Some(secret) = secret {
            let sealed = self
                .secrets
                .seal(METRIC_SOURCE_CONTEXT, secret)
                .await
                .map_err(sealing)?;
            put = put.item(SEALED, s(sealed));
        }
        put.send().await.map_err(unavailable)?;
        Ok(())
    }

    async fn metric_source(&self) -> StoreResult<Option<MetricSource>> {
        let Some(item) = self.get(METRICS.into(), SOURCE.into()).await? else {
            return Ok(None);
        };
        let secret = || async {
            self.secrets
                .open(METRIC_SOURCE_CONTEXT, &get_s(&item, SEALED)?)
                .await
                .map_err(sealing)
        };
        let auth = match get_s(&item, "auth")?.as_str() {
            "none" => None,
            "bearer" => Some(MetricAuth::Bearer(secret().await?)),
            "basic" => Some(MetricAuth::Basic {
                user: get_s(&item, "auth_user")?,
                password: secret().await?,
            }),
            _ => return Err(corrupt(&item, "auth", "none, bearer or basic")),
        };
        Ok(Some(MetricSource {
            url: get_s(&item, "url")?,
            instance_label: get_s(&item, "instance_label")?,
            auth,
        }))
    }

    async fn delete_metric_source(&self) -> StoreResult<()> {
        let result = self
            .db
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(METRICS.into(), SOURCE.into())))
            .condition_expression("attribute_exists(pk)")
            .send()
            .await;
        conditional(result, StoreError::NotFound)
    }
}

impl DynamoStore {
    /// An access key of user `u`, new (its id must not exist), its secret sealed.
    pub(super) async fn key_put(
        &self,
        u: &User,
        access_key_id: &str,
        secret: &str,
    ) -> StoreResult<Put> {
        let pk = format!("KEY#{access_key_id}");
        let sealed = self.secrets.seal(&pk, secret).await.map_err(sealing)?;
        Put::builder()
            .table_name(&self.table)
            .set_item(Some(with_limits(key(pk, "KEY".into()), u.limits.as_ref())))
            .item("user", s(&u.name))
            .item("account_id", s(&u.account_id))
            .item(SEALED, s(sealed))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(unavailable)
    }

    pub(super) fn key_delete(&self, access_key_id: &str) -> StoreResult<Delete> {
        Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(format!("KEY#{access_key_id}"), "KEY".into())))
            .build()
            .map_err(unavailable)
    }

    /// A conditional write on a user as read: its condition failing is `NotFound` if the user is
    /// gone, `Conflict` if it changed.
    pub(super) async fn user_write_outcome<R: std::fmt::Debug + Send + Sync + 'static>(
        &self,
        result: Result<
            aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsOutput,
            aws_sdk_dynamodb::error::SdkError<
                aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
                R,
            >,
        >,
        name: &str,
    ) -> StoreResult<()> {
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e) {
                Some(failed) if failed.iter().any(|f| *f) => match self.user(name).await? {
                    None => Err(StoreError::NotFound),
                    Some(_) => Err(StoreError::Conflict),
                },
                _ => Err(unavailable(e)),
            },
        }
    }

    pub(super) fn user_from(item: &Item) -> StoreResult<User> {
        Ok(User {
            name: get_s(item, SORT_KEY)?,
            account_id: get_s(item, "account_id")?,
            access_key_id: get_s(item, "access_key_id")?,
            created: get_s(item, "created")?,
            admin: get_bool(item, "admin")?,
            disabled: get_bool(item, "disabled")?,
            limits: limits_of(item)?,
            scrape_sha256: opt_s(item, "scrape")?,
            second_key: opt_s(item, "second_key")?,
        })
    }

    pub(super) fn cloud_from(item: &Item) -> StoreResult<CloudRecord> {
        Ok(CloudRecord {
            name: get_s(item, SORT_KEY)?,
            endpoint: get_s(item, "endpoint")?,
            region: get_s(item, "region")?,
            zone: get_s(item, "zone")?,
            launch_templates: get_bool(item, "templates")?,
            // A cloud put before Phantom had load balancers: PutCloud says otherwise.
            load_balancers: match item.get("lbs") {
                None => true,
                Some(_) => get_bool(item, "lbs")?,
            },
            // A cloud put before Phantom listened to events: PutCloud says otherwise.
            events: match item.get("events") {
                None => false,
                Some(_) => get_bool(item, "events")?,
            },
            // A cloud put before Phantom asked for status checks: asked until it says it has none.
            status_checks: match item.get("status_checks") {
                None => true,
                Some(_) => get_bool(item, "status_checks")?,
            },
        })
    }

    /// A user's credentials for a cloud, their secret opened.
    pub(super) async fn credentials_from(
        &self,
        user: &str,
        item: &Item,
    ) -> StoreResult<CloudCredentials> {
        let cloud = sk_suffix(item, CRED)?;
        let secret = self
            .secrets
            .open(&credentials_context(user, &cloud), &get_s(item, SEALED)?)
            .await
            .map_err(sealing)?;
        Ok(CloudCredentials {
            cloud,
            access_key_id: get_s(item, "access_key_id")?,
            secret,
        })
    }
}

/// An item with the user's limits as JSON, if it has any.
fn with_limits(mut item: Item, limits: Option<&phantom_model::limits::Limits>) -> Item {
    if let Some(l) = limits {
        item.insert(
            "limits".into(),
            s(serde_json::to_string(l).expect("limits serialize")),
        );
    }
    item
}

/// The limits an item holds: none where it has none; unreadable ones are an error.
fn limits_of(item: &Item) -> StoreResult<Option<phantom_model::limits::Limits>> {
    match opt_s(item, "limits")? {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|_| corrupt(item, "limits", "request limits")),
    }
}

/// A JSON attribute that may be absent; unreadable is an error.
fn json_of<T: serde::de::DeserializeOwned>(
    item: &Item,
    k: &str,
    want: &str,
) -> StoreResult<Option<T>> {
    match opt_s(item, k)? {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|_| corrupt(item, k, want)),
    }
}
