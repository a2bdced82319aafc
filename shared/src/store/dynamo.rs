//! The DynamoDB adapter: one table, keys that start with the owner.
//!
//! | pk              | sk                 | holds                                     |
//! |-----------------|--------------------|-------------------------------------------|
//! | `USERS`         | user name          | a user (account id, access key id, admin, disabled) |
//! | `KEY#<akid>`    | `KEY`              | an access key: secret (sealed), user      |
//! | `CLOUDS`        | cloud name         | a cloud: EC2 endpoint, region, zone       |
//! | `OWNER#<user>`  | `CRED#<cloud>`     | the user's credentials for a cloud (secret sealed) |
//! | `OWNER#<user>`  | `LC#<name>`        | a launch configuration (+ groups using it) |
//! | `OWNER#<user>`  | `ASG#<name>`       | an auto scaling group (+ the provisioner's lease) |
//! | `OWNER#<user>`  | `INST#<group>#<id>` | an instance of a group                   |
//! | `OWNER#<user>`  | `ACT#<group>#<inverted ms>#<id>` | a scaling activity, newest first |
//! | `OWNER#<user>`  | `USAGE`            | the user's group and launch configuration counts (limits) |
//! | `WATCH`         | `<cloud>#<user>`   | the health check's list: the user's group count there |
//!
//! Index `due` (sparse, keys only): a group with a scheduled action to run carries `due_pk`
//! (always `DUE`) and `due` (when its first action is due, Unix ms); the scheduler queries
//! `due <= now` and reads nothing of the groups with nothing due.
//!
//! Secrets are stored sealed (`crate::secrets`: envelope encryption with KMS), never in plain text.
//!
//! Uniqueness and in-use rules are conditions on the writes themselves (transactions where two
//! items change together), never a read followed by a write.

use super::{
    activity_key, Backoff, CloudCredentials, CloudRecord, Directory, Fleet, GroupFilter, Groups,
    LaunchConfigs, Lease, Record, StoreError, StoreResult, Usage, Watched, MAX_GROUPS,
    MAX_LAUNCH_CONFIGS, PARTITION_KEY, SORT_KEY, TTL_ATTRIBUTE,
};
use crate::identity::{AccessKey, User};
use crate::launch_config::LaunchConfig;
use crate::model::activity::Activity;
use crate::model::group::{Group, Settings, DELETING};
use crate::model::instance::{Lifecycle, Member};
use crate::secrets::{SecretError, Secrets};
use async_trait::async_trait;
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata};
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, KeysAndAttributes, Put, TransactWriteItem, Update,
};
use aws_sdk_dynamodb::Client;
use std::collections::HashMap;
use std::sync::Arc;

type Item = HashMap<String, AttributeValue>;

const LC: &str = "LC#";
const ASG: &str = "ASG#";
const CRED: &str = "CRED#";
const INST: &str = "INST#";
const ACT: &str = "ACT#";
/// Scaling activities are kept six weeks, as AWS keeps them (DynamoDB TTL on `expires`).
const ACTIVITY_TTL_SECS: i64 = 6 * 7 * 24 * 3600;
const USERS: &str = "USERS";
const CLOUDS: &str = "CLOUDS";
const WATCH: &str = "WATCH";
const USAGE: &str = "USAGE";
/// The index of groups with a scheduled action due (template.yaml declares it; the check in
/// infra/check_template.py compares them).
pub const DUE_INDEX: &str = "due";
pub const DUE_PARTITION: &str = "due_pk";
pub const DUE_SORT: &str = "due";
const DUE: &str = "DUE";
/// The attribute of a secret, sealed (`crate::secrets`): never the secret itself.
const SEALED: &str = "sealed";

/// What a user's credentials for a cloud are sealed for: their item.
fn credentials_context(user: &str, cloud: &str) -> String {
    format!("{}/{CRED}{cloud}", owner(user))
}

fn sealing(e: SecretError) -> StoreError {
    match e {
        SecretError::Unavailable(m) => StoreError::Unavailable(m),
        SecretError::Unreadable(m) => StoreError::Corrupt(m),
    }
}

fn watch_key(user: &str, cloud: &str) -> Item {
    key(WATCH.into(), format!("{cloud}#{user}"))
}

fn owner(user: &str) -> String {
    format!("OWNER#{user}")
}

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn n(v: i64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// The key of an item, for the errors of the readers below.
fn describe(item: &Item) -> String {
    let part = |k: &str| {
        item.get(k)
            .and_then(|v| v.as_s().ok())
            .map_or("?", |v| v.as_str())
    };
    format!("{}/{}", part(PARTITION_KEY), part(SORT_KEY))
}

fn corrupt(item: &Item, k: &str, want: &str) -> StoreError {
    StoreError::Corrupt(format!(
        "{}: attribute {k} missing or not {want}",
        describe(item)
    ))
}

/// A string attribute that must be there.
fn get_s(item: &Item, k: &str) -> StoreResult<String> {
    opt_s(item, k)?.ok_or_else(|| corrupt(item, k, "a string"))
}

/// A string attribute that may be absent (but not of another type).
fn opt_s(item: &Item, k: &str) -> StoreResult<Option<String>> {
    match item.get(k) {
        None => Ok(None),
        Some(v) => v
            .as_s()
            .map(|v| Some(v.clone()))
            .map_err(|_| corrupt(item, k, "a string")),
    }
}

fn get_n(item: &Item, k: &str) -> StoreResult<i64> {
    opt_n(item, k)?.ok_or_else(|| corrupt(item, k, "a number"))
}

fn opt_n(item: &Item, k: &str) -> StoreResult<Option<i64>> {
    match item.get(k) {
        None => Ok(None),
        Some(v) => v
            .as_n()
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Some)
            .ok_or_else(|| corrupt(item, k, "an integer")),
    }
}

fn get_bool(item: &Item, k: &str) -> StoreResult<bool> {
    item.get(k)
        .and_then(|v| v.as_bool().ok())
        .copied()
        .ok_or_else(|| corrupt(item, k, "a boolean"))
}

fn get_doc(item: &Item) -> StoreResult<serde_json::Value> {
    serde_json::from_str(&get_s(item, "doc")?).map_err(|_| corrupt(item, "doc", "JSON"))
}

/// A group's settings, typed: a member missing or of the wrong type is a corrupt item.
fn get_settings(item: &Item) -> StoreResult<Settings> {
    let doc = get_s(item, "doc")?;
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(&doc)).map_err(|e| {
        // The path names the member, which serde's own message leaves out.
        StoreError::Corrupt(format!(
            "{}: attribute doc is not a group's settings: {}: {}",
            describe(item),
            e.path(),
            e.inner()
        ))
    })
}

fn settings_json(s: &Settings) -> String {
    serde_json::to_string(s).expect("settings serialise")
}

/// The sort key after its prefix.
fn sk_suffix(item: &Item, prefix: &str) -> StoreResult<String> {
    let sk = get_s(item, SORT_KEY)?;
    sk.strip_prefix(prefix)
        .map(str::to_string)
        .ok_or_else(|| corrupt(item, SORT_KEY, prefix))
}

fn key(pk: String, sk: String) -> Item {
    HashMap::from([
        (PARTITION_KEY.to_string(), s(pk)),
        (SORT_KEY.to_string(), s(sk)),
    ])
}

fn unavailable<E: std::error::Error + 'static>(e: E) -> StoreError {
    StoreError::Unavailable(DisplayErrorContext(e).to_string())
}

/// Which writes of a cancelled transaction failed their condition.
fn cancelled_conditions<R>(
    e: &aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
        R,
    >,
) -> Option<Vec<bool>> {
    let service = e.as_service_error()?;
    if let aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(t) = service {
        return Some(
            t.cancellation_reasons()
                .iter()
                .map(|r| r.code() == Some("ConditionalCheckFailed"))
                .collect(),
        );
    }
    None
}

fn is_conditional_failure<E: ProvideErrorMetadata>(e: &E) -> bool {
    e.code() == Some("ConditionalCheckFailedException")
}

/// A conditional write's outcome: its condition failing becomes `failed`, any other error
/// `Unavailable`.
fn conditional<O, E, R>(
    result: Result<O, aws_sdk_dynamodb::error::SdkError<E, R>>,
    failed: StoreError,
) -> StoreResult<()>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    match result {
        Ok(_) => Ok(()),
        Err(e) if e.as_service_error().is_some_and(is_conditional_failure) => Err(failed),
        Err(e) => Err(unavailable(e)),
    }
}

#[derive(Clone)]
pub struct DynamoStore {
    db: Client,
    table: String,
    secrets: Arc<Secrets>,
}

impl DynamoStore {
    pub fn new(
        sdk: &aws_config::SdkConfig,
        table: impl Into<String>,
        secrets: Arc<Secrets>,
    ) -> Self {
        let config = aws_sdk_dynamodb::config::Builder::from(sdk)
            .interceptor(crate::metrics::Counter::DynamoDb)
            .build();
        Self {
            db: Client::from_conf(config),
            table: table.into(),
            secrets,
        }
    }

    /// The table of PHANTOM_STATE_TABLE, secrets sealed with the KMS key of PHANTOM_SECRETS_KEY
    /// (an error if that is not set).
    pub fn from_env(sdk: &aws_config::SdkConfig, table: &str) -> Result<Self, String> {
        let secrets = Secrets::from_env(sdk)?;
        Ok(Self::new(sdk, table, Arc::new(secrets)))
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    async fn get(&self, pk: String, sk: String) -> StoreResult<Option<Item>> {
        let out = self
            .db
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .consistent_read(true)
            .send()
            .await
            .map_err(unavailable)?;
        Ok(out.item)
    }

    /// Items of one partition whose sort key starts with `prefix`, in order, after `after` (a sort
    /// key suffix), until `want` items pass `keep`.
    async fn query_prefix(
        &self,
        pk: &str,
        prefix: &str,
        after: Option<&str>,
        want: usize,
        keep: impl Fn(&Item) -> bool,
    ) -> StoreResult<Vec<Item>> {
        // BETWEEN is inclusive: start just past `after` (no name holds U+0000) and stop before the
        // next prefix (`#` + 1 is `$`). Key values may not be empty, hence the plain forms.
        let (condition, lo, hi) = match (prefix.is_empty(), after) {
            (false, a) => (
                "pk = :pk AND sk BETWEEN :lo AND :hi",
                Some(format!(
                    "{prefix}{}",
                    a.map(|a| format!("{a}\u{0}")).unwrap_or_default()
                )),
                Some(format!("{}$", prefix.trim_end_matches('#'))),
            ),
            (true, Some(a)) => ("pk = :pk AND sk > :lo", Some(a.to_string()), None),
            (true, None) => ("pk = :pk", None, None),
        };
        let mut values = HashMap::from([(":pk".to_string(), s(pk))]);
        values.extend(lo.map(|v| (":lo".to_string(), s(v))));
        values.extend(hi.map(|v| (":hi".to_string(), s(v))));
        let mut out = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let page = self
                .db
                .query()
                .table_name(&self.table)
                .key_condition_expression(condition)
                .set_expression_attribute_values(Some(values.clone()))
                .set_exclusive_start_key(start.take())
                .limit((want - out.len()).clamp(1, 1000) as i32)
                .consistent_read(true)
                .send()
                .await
                .map_err(unavailable)?;
            for item in page.items() {
                if keep(item) {
                    out.push(item.clone());
                    if out.len() >= want {
                        return Ok(out);
                    }
                }
            }
            match page.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => return Ok(out),
            }
        }
    }

    /// Items of one partition by sort keys, in any order; absent ones are skipped.
    async fn batch_get(&self, pk: &str, sks: &[String]) -> StoreResult<Vec<Item>> {
        let mut out = Vec::new();
        let mut unique: Vec<&String> = sks.iter().collect();
        unique.sort();
        unique.dedup();
        for chunk in unique.chunks(100) {
            let mut keys = KeysAndAttributes::builder().consistent_read(true);
            for sk in chunk {
                keys = keys.keys(key(pk.to_string(), sk.to_string()));
            }
            let mut request =
                HashMap::from([(self.table.clone(), keys.build().map_err(unavailable)?)]);
            while !request.is_empty() {
                let page = self
                    .db
                    .batch_get_item()
                    .set_request_items(Some(request))
                    .send()
                    .await
                    .map_err(unavailable)?;
                if let Some(items) = page.responses.and_then(|mut r| r.remove(&self.table)) {
                    out.extend(items);
                }
                request = page.unprocessed_keys.unwrap_or_default();
            }
        }
        Ok(out)
    }

    /// An access key of user `u`, new (its id must not exist), its secret sealed.
    async fn key_put(&self, u: &User, access_key_id: &str, secret: &str) -> StoreResult<Put> {
        let pk = format!("KEY#{access_key_id}");
        let sealed = self.secrets.seal(&pk, secret).await.map_err(sealing)?;
        Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(pk, "KEY".into())))
            .item("user", s(&u.name))
            .item("account_id", s(&u.account_id))
            .item(SEALED, s(sealed))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(unavailable)
    }

    fn key_delete(&self, access_key_id: &str) -> StoreResult<Delete> {
        Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(format!("KEY#{access_key_id}"), "KEY".into())))
            .build()
            .map_err(unavailable)
    }

    /// A conditional write on a user as read: its condition failing is `NotFound` if the user is
    /// gone, `Conflict` if it changed.
    async fn user_write_outcome<R: std::fmt::Debug + Send + Sync + 'static>(
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

    fn user_from(item: &Item) -> StoreResult<User> {
        Ok(User {
            name: get_s(item, SORT_KEY)?,
            account_id: get_s(item, "account_id")?,
            access_key_id: get_s(item, "access_key_id")?,
            created: get_s(item, "created")?,
            admin: get_bool(item, "admin")?,
            disabled: get_bool(item, "disabled")?,
        })
    }

    fn cloud_from(item: &Item) -> StoreResult<CloudRecord> {
        Ok(CloudRecord {
            name: get_s(item, SORT_KEY)?,
            endpoint: get_s(item, "endpoint")?,
            region: get_s(item, "region")?,
            zone: get_s(item, "zone")?,
            launch_templates: get_bool(item, "templates")?,
        })
    }

    /// A user's credentials for a cloud, their secret opened.
    async fn credentials_from(&self, user: &str, item: &Item) -> StoreResult<CloudCredentials> {
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

    fn launch_config_from(item: &Item) -> StoreResult<LaunchConfig> {
        Ok(LaunchConfig {
            name: sk_suffix(item, LC)?,
            cloud: get_s(item, "cloud")?,
            doc: get_doc(item)?,
        })
    }

    fn group_from(item: &Item) -> StoreResult<Group> {
        Ok(Group {
            name: sk_suffix(item, ASG)?,
            launch_configuration: get_s(item, "lc")?,
            cloud: get_s(item, "cloud")?,
            min: get_n(item, "min")?,
            max: get_n(item, "max")?,
            desired: get_n(item, "desired")?,
            version: get_n(item, "version")?,
            // Absent until the first launch, the first failure.
            launch_seq: opt_n(item, "launch_seq")?.unwrap_or(0),
            id: get_s(item, "gid")?,
            status: opt_s(item, "status")?,
            failures: opt_n(item, "failures")?.unwrap_or(0),
            retry_at_ms: opt_n(item, "retry_at")?.unwrap_or(0),
            // Absent until a group across clouds first has something to remember.
            holds: match opt_s(item, "holds")? {
                Some(h) => serde_json::from_str(&h)
                    .map_err(|_| corrupt(item, "holds", "the clouds' holds"))?,
                None => Default::default(),
            },
            settings: get_settings(item)?,
        })
    }

    fn instance_from(item: &Item) -> StoreResult<(String, Member)> {
        let lifecycle = get_s(item, "lifecycle")?;
        Ok((
            get_s(item, "group")?,
            Member {
                id: get_s(item, "id")?,
                cloud: get_s(item, "cloud")?,
                zone: get_s(item, "zone")?,
                lifecycle: Lifecycle::parse(&lifecycle)
                    .ok_or_else(|| corrupt(item, "lifecycle", "a lifecycle state"))?,
                healthy: get_bool(item, "healthy")?,
                launched_ms: get_n(item, "launched")?,
                protected: get_bool(item, "protected")?,
                launch_configuration: get_s(item, "lc")?,
                instance_type: get_s(item, "itype")?,
                waits: serde_json::from_str(&get_s(item, "waits")?)
                    .map_err(|_| corrupt(item, "waits", "a list of lifecycle waits"))?,
                rev: get_n(item, "rev")?,
            },
        ))
    }

    fn instance_put(&self, user: &str, g: &Group, m: &Member) -> StoreResult<Put> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(owner(user), format!("{INST}{}#{}", g.name, m.id))))
            .item("group", s(&g.name))
            .item("gid", s(&g.id))
            .item("id", s(&m.id))
            .item("zone", s(&m.zone))
            .item("lifecycle", s(m.lifecycle.as_str()))
            .item("healthy", AttributeValue::Bool(m.healthy))
            .item("launched", n(m.launched_ms))
            .item("protected", AttributeValue::Bool(m.protected))
            .item("lc", s(&m.launch_configuration))
            .item("itype", s(&m.instance_type))
            .item("cloud", s(&m.cloud))
            .item(
                "waits",
                s(serde_json::to_string(&m.waits).expect("waits serialize")),
            )
            .item("rev", n(m.rev + 1));
        // Conditional on the record as it was read: new, or still at the revision read.
        let put = if m.rev == 0 {
            put.condition_expression("attribute_not_exists(pk)")
        } else {
            put.condition_expression("rev = :rev")
                .expression_attribute_values(":rev", n(m.rev))
        };
        put.build().map_err(unavailable)
    }

    fn activity_put(&self, user: &str, a: &Activity) -> StoreResult<Put> {
        let mut item = key(owner(user), format!("{ACT}{}", activity_key(a)?));
        item.insert("doc".into(), s(a.doc.to_string()));
        item.insert("start".into(), n(a.start_ms));
        item.insert(
            TTL_ATTRIBUTE.into(),
            n(a.start_ms / 1000 + ACTIVITY_TTL_SECS),
        );
        Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .build()
            .map_err(unavailable)
    }

    /// The guard on the first transaction of a record: the group is still this one (by id), and
    /// the launch sequence and backoff change with it.
    fn record_guard(&self, user: &str, g: &Group, r: &Record) -> StoreResult<TransactWriteItem> {
        let group_key = key(owner(user), format!("{ASG}{}", g.name));
        let mut sets = Vec::new();
        let mut update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(group_key.clone()))
            .expression_attribute_values(":gid", s(&g.id));
        let mut condition = "gid = :gid".to_string();
        if let Some(next) = r.launch_seq {
            sets.push("launch_seq = :next");
            condition.push_str(" AND (attribute_not_exists(launch_seq) OR launch_seq = :seq)");
            update = update
                .expression_attribute_values(":seq", n(g.launch_seq))
                .expression_attribute_values(":next", n(next));
        }
        if let Some(d) = r.desired {
            sets.push("desired = :d, version = version + :one");
            condition.push_str(" AND version = :v");
            update = update
                .expression_attribute_values(":d", n(d))
                .expression_attribute_values(":one", n(1))
                .expression_attribute_values(":v", n(g.version));
        }
        if let Some(Backoff {
            failures,
            retry_at_ms,
        }) = r.backoff
        {
            sets.push("failures = :f, retry_at = :r");
            update = update
                .expression_attribute_values(":f", n(failures))
                .expression_attribute_values(":r", n(retry_at_ms));
        }
        if let Some(holds) = &r.holds {
            sets.push("holds = :h");
            update = update.expression_attribute_values(
                ":h",
                s(serde_json::to_string(holds).expect("holds serialize")),
            );
        }
        if sets.is_empty() {
            return Ok(TransactWriteItem::builder()
                .condition_check(self.group_check(user, g)?)
                .build());
        }
        let update = update
            .update_expression(format!("SET {}", sets.join(", ")))
            .condition_expression(condition)
            .build()
            .map_err(unavailable)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    fn group_check(&self, user: &str, g: &Group) -> StoreResult<ConditionCheck> {
        ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .condition_expression("gid = :gid")
            .expression_attribute_values(":gid", s(&g.id))
            .build()
            .map_err(unavailable)
    }
}

#[async_trait]
impl Directory for DynamoStore {
    async fn create_user(&self, user: &User, secret: &str) -> StoreResult<()> {
        let user_item = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(USERS.into(), user.name.clone())))
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
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().update(mark).build())
            .transact_items(
                TransactWriteItem::builder()
                    .delete(self.key_delete(&u.access_key_id)?)
                    .build(),
            )
            .send()
            .await;
        self.user_write_outcome(result, &u.name).await
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
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
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
}

#[async_trait]
impl LaunchConfigs for DynamoStore {
    async fn create_launch_config(&self, user: &str, lc: &LaunchConfig) -> StoreResult<()> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(owner(user), format!("{LC}{}", lc.name))))
            .item("cloud", s(&lc.cloud))
            .item("doc", s(lc.doc.to_string()))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().put(put).build())
            .transact_items(self.count_usage(user, "lcs", 1, MAX_LAUNCH_CONFIGS)?)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e).as_deref() {
                Some([true, ..]) => Err(StoreError::Exists),
                Some([_, true]) => Err(StoreError::Limit),
                _ => Err(unavailable(e)),
            },
        }
    }

    async fn usage(&self, user: &str) -> StoreResult<Usage> {
        let Some(item) = self.get(owner(user), USAGE.into()).await? else {
            return Ok(Usage::default());
        };
        // A count is added by the first write that needs it: absent means none yet.
        Ok(Usage {
            groups: opt_n(&item, "groups")?.unwrap_or(0),
            launch_configs: opt_n(&item, "lcs")?.unwrap_or(0),
        })
    }

    async fn delete_launch_config(&self, user: &str, name: &str) -> StoreResult<()> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{LC}{name}"))))
            .condition_expression("attribute_exists(pk) AND attribute_not_exists(used_by)")
            .build()
            .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().delete(delete).build())
            .transact_items(self.count_usage(user, "lcs", -1, MAX_LAUNCH_CONFIGS)?)
            .send()
            .await;
        let Err(e) = result else {
            return Ok(());
        };
        if !matches!(cancelled_conditions(&e).as_deref(), Some([true, ..])) {
            return Err(unavailable(e));
        }
        // Absent, or in use: the item says which.
        match self.get(owner(user), format!("{LC}{name}")).await? {
            Some(old) => {
                let mut by = old
                    .get("used_by")
                    .and_then(|v| v.as_ss().ok())
                    .cloned()
                    .ok_or_else(|| corrupt(&old, "used_by", "a string set"))?;
                by.sort();
                Err(StoreError::InUse(by))
            }
            None => Err(StoreError::NotFound),
        }
    }

    async fn launch_config(&self, user: &str, name: &str) -> StoreResult<Option<LaunchConfig>> {
        self.get(owner(user), format!("{LC}{name}"))
            .await?
            .as_ref()
            .map(Self::launch_config_from)
            .transpose()
    }

    async fn launch_configs(
        &self,
        user: &str,
        names: Option<&[String]>,
        after: Option<&str>,
        want: usize,
    ) -> StoreResult<Vec<LaunchConfig>> {
        let items = match names {
            None => {
                self.query_prefix(&owner(user), LC, after, want, |_| true)
                    .await?
            }
            Some(names) => {
                let sks: Vec<String> = names
                    .iter()
                    .filter(|n| after.is_none_or(|a| n.as_str() > a))
                    .map(|n| format!("{LC}{n}"))
                    .collect();
                self.batch_get(&owner(user), &sks).await?
            }
        };
        let mut lcs = items
            .iter()
            .map(Self::launch_config_from)
            .collect::<StoreResult<Vec<_>>>()?;
        lcs.sort_by(|a, b| a.name.cmp(&b.name));
        lcs.truncate(want);
        Ok(lcs)
    }
}

#[async_trait]
impl Groups for DynamoStore {
    async fn create_group(&self, user: &str, g: &Group) -> StoreResult<()> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .item("lc", s(&g.launch_configuration))
            .item("cloud", s(&g.cloud))
            .item("min", n(g.min))
            .item("max", n(g.max))
            .item("desired", n(g.desired))
            .item("version", n(g.version))
            .item("gid", s(&g.id))
            .item("doc", s(settings_json(&g.settings)))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(unavailable)?;
        let mut tx = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().put(put).build());
        // Every launch configuration the group uses is marked (a template group has none).
        let lcs = g.launch_configurations()?;
        for lc in &lcs {
            tx = tx.transact_items(self.lc_mark(user, lc, &g.name, "ADD")?);
        }
        let marks = lcs.len();
        for cloud in g.clouds()? {
            tx = tx.transact_items(self.count_group(user, &cloud, 1)?);
        }
        let result = tx
            .transact_items(self.count_usage(user, "groups", 1, MAX_GROUPS)?)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e).as_deref() {
                Some([true, ..]) => Err(StoreError::Exists),
                Some(c) if c.iter().skip(1).take(marks).any(|x| *x) => Err(StoreError::NotFound),
                // The usage count is the last write.
                Some(c) if c.last() == Some(&true) => Err(StoreError::Limit),
                _ => Err(unavailable(e)),
            },
        }
    }

    async fn group(&self, user: &str, name: &str) -> StoreResult<Option<Group>> {
        self.get(owner(user), format!("{ASG}{name}"))
            .await?
            .as_ref()
            .map(Self::group_from)
            .transpose()
    }

    async fn groups(
        &self,
        user: &str,
        names: Option<&[String]>,
        after: Option<&str>,
        want: usize,
        keep: GroupFilter<'_>,
    ) -> StoreResult<Vec<Group>> {
        let items = match names {
            // An unreadable item passes the filter here and fails loudly below.
            None => {
                self.query_prefix(&owner(user), ASG, after, want, |i| {
                    Self::group_from(i).map_or(true, |g| keep(&g))
                })
                .await?
            }
            Some(names) => {
                let sks: Vec<String> = names
                    .iter()
                    .filter(|n| after.is_none_or(|a| n.as_str() > a))
                    .map(|n| format!("{ASG}{n}"))
                    .collect();
                self.batch_get(&owner(user), &sks).await?
            }
        };
        let mut groups = Vec::new();
        for item in &items {
            let g = Self::group_from(item)?;
            if keep(&g) {
                groups.push(g);
            }
        }
        groups.sort_by(|a, b| a.name.cmp(&b.name));
        groups.truncate(want);
        Ok(groups)
    }

    async fn set_desired(&self, user: &str, g: &Group, desired: i64) -> StoreResult<()> {
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .update_expression("SET desired = :d, version = version + :one")
            .condition_expression("gid = :gid AND version = :v")
            .expression_attribute_values(":d", n(desired))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":gid", s(&g.id))
            .expression_attribute_values(":v", n(g.version))
            .send()
            .await;
        conditional(result, StoreError::Conflict)
    }

    async fn update_group_with(
        &self,
        user: &str,
        old: &Group,
        new: &Group,
        activities: &[Activity],
    ) -> StoreResult<()> {
        // The index of due groups follows the group's scheduled actions.
        let due = match new.due_ms() {
            Some(_) => ", due_pk = :due_pk, due = :due",
            None => " REMOVE due_pk, due",
        };
        let mut update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", old.name))))
            .update_expression(format!(
                "SET lc = :lc, #min = :min, #max = :max, desired = :d, doc = :doc, version = version + :one{due}"
            ))
            .condition_expression("gid = :gid AND version = :v")
            .expression_attribute_values(":gid", s(&old.id))
            .expression_attribute_names("#min", "min")
            .expression_attribute_names("#max", "max")
            .expression_attribute_values(":lc", s(&new.launch_configuration))
            .expression_attribute_values(":min", n(new.min))
            .expression_attribute_values(":max", n(new.max))
            .expression_attribute_values(":d", n(new.desired))
            .expression_attribute_values(":doc", s(settings_json(&new.settings)))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":v", n(old.version));
        if let Some(at) = new.due_ms() {
            update = update
                .expression_attribute_values(":due_pk", s(DUE))
                .expression_attribute_values(":due", n(at));
        }
        let update = update.build().map_err(unavailable)?;
        let mut tx = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().update(update).build());
        // The in-use marks move with the launch configurations the group uses (a template group
        // has none); the new ones come first so that the absence of one reads as NotFound.
        let (before, after) = (old.launch_configurations()?, new.launch_configurations()?);
        for lc in after.difference(&before) {
            tx = tx.transact_items(self.lc_mark(user, lc, &old.name, "ADD")?);
        }
        for lc in before.difference(&after) {
            tx = tx.transact_items(self.lc_mark(user, lc, &old.name, "DELETE")?);
        }
        // The health check's list counts the group on each of its clouds.
        let (was, now) = (old.clouds()?, new.clouds()?);
        for cloud in now.difference(&was) {
            tx = tx.transact_items(self.count_group(user, cloud, 1)?);
        }
        for cloud in was.difference(&now) {
            tx = tx.transact_items(self.count_group(user, cloud, -1)?);
        }
        // Last, so that a failed condition above keeps its position.
        for a in activities {
            tx = tx.transact_items(
                TransactWriteItem::builder()
                    .put(self.activity_put(user, a)?)
                    .build(),
            );
        }
        match tx.send().await {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e).as_deref() {
                Some([true, ..]) => Err(StoreError::Conflict),
                Some(c) if c.iter().skip(1).any(|x| *x) => Err(StoreError::NotFound),
                _ => Err(unavailable(e)),
            },
        }
    }

    async fn begin_delete(&self, user: &str, g: &Group) -> StoreResult<()> {
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .update_expression(
                "SET #st = :d, desired = :zero, #min = :zero, version = version + :one REMOVE due_pk, due",
            )
            .condition_expression("gid = :gid AND version = :v")
            .expression_attribute_values(":gid", s(&g.id))
            .expression_attribute_names("#st", "status")
            .expression_attribute_names("#min", "min")
            .expression_attribute_values(":d", s(DELETING))
            .expression_attribute_values(":zero", n(0))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":v", n(g.version))
            .send()
            .await;
        conditional(result, StoreError::Conflict)
    }

    async fn delete_group(&self, user: &str, g: &Group) -> StoreResult<()> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", g.name))))
            // The same group (a group deleted and made again under its name starts its versions
            // over), at the version read.
            .condition_expression("gid = :gid AND version = :v")
            .expression_attribute_values(":gid", s(&g.id))
            .expression_attribute_values(":v", n(g.version))
            .build()
            .map_err(unavailable)?;
        let mut tx = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().delete(delete).build());
        let lcs = g.launch_configurations()?;
        for lc in &lcs {
            tx = tx.transact_items(self.lc_mark(user, lc, &g.name, "DELETE")?);
        }
        let marks = lcs.len();
        for cloud in g.clouds()? {
            tx = tx.transact_items(self.count_group(user, &cloud, -1)?);
        }
        let result = tx
            .transact_items(self.count_usage(user, "groups", -1, MAX_GROUPS)?)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e).as_deref() {
                Some([true, ..]) => Err(StoreError::Conflict),
                Some(c) if c.iter().skip(1).take(marks).any(|x| *x) => Err(StoreError::NotFound),
                _ => Err(unavailable(e)),
            },
        }
    }
}

#[async_trait]
impl Fleet for DynamoStore {
    async fn take_lease(
        &self,
        user: &str,
        name: &str,
        holder: &str,
        now_ms: i64,
        ttl_ms: i64,
    ) -> StoreResult<Lease> {
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{name}"))))
            .update_expression("SET lease_owner = :h, lease_until = :until")
            .condition_expression(
                "attribute_exists(pk) AND (attribute_not_exists(lease_until) OR lease_until < :now OR lease_owner = :h)",
            )
            .expression_attribute_values(":h", s(holder))
            .expression_attribute_values(":until", n(now_ms + ttl_ms))
            .expression_attribute_values(":now", n(now_ms))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew)
            .return_values_on_condition_check_failure(
                aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure::AllOld,
            )
            .send()
            .await;
        match result {
            Ok(out) => Ok(Lease::Taken(Box::new(Self::group_from(
                &out.attributes.unwrap_or_default(),
            )?))),
            Err(e) => {
                let Some(aws_sdk_dynamodb::operation::update_item::UpdateItemError::ConditionalCheckFailedException(c)) = e.as_service_error() else {
                    return Err(unavailable(e));
                };
                let exists = match c.item() {
                    Some(_) => true,
                    None => self
                        .get(owner(user), format!("{ASG}{name}"))
                        .await?
                        .is_some(),
                };
                Ok(if exists { Lease::Busy } else { Lease::NoGroup })
            }
        }
    }

    async fn release_lease(
        &self,
        user: &str,
        name: &str,
        holder: &str,
        version: Option<i64>,
    ) -> StoreResult<()> {
        let mut update = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{name}"))))
            .update_expression("REMOVE lease_owner, lease_until")
            .expression_attribute_values(":h", s(holder));
        update = match version {
            Some(v) => update
                .condition_expression("lease_owner = :h AND version = :v")
                .expression_attribute_values(":v", n(v)),
            None => update.condition_expression("lease_owner = :h"),
        };
        conditional(update.send().await, StoreError::Conflict)
    }

    async fn instances(&self, user: &str, group: &str) -> StoreResult<Vec<Member>> {
        let items = self
            .query_prefix(
                &owner(user),
                &format!("{INST}{group}#"),
                None,
                usize::MAX,
                |_| true,
            )
            .await?;
        // The prefix also holds the instances of a group named `<group>#...`.
        let mut out = Vec::new();
        for item in &items {
            let (g, m) = Self::instance_from(item)?;
            if g == group {
                out.push(m);
            }
        }
        Ok(out)
    }

    async fn instances_between(
        &self,
        user: &str,
        first: &str,
        last: &str,
    ) -> StoreResult<Vec<(String, Member)>> {
        // Keys are `INST#<group>#<id>`: every group named from `first` on sorts at or after
        // `INST#<first>`. Above, a name that is a prefix of `last` followed by a character below
        // `#` (a space, `!`, `"`) would sort after `INST#<last>...`; cutting `last` before its first
        // such character makes the bound cover every name up to `last`. The names are checked below.
        let cut = last.find(|c: char| c <= '#').unwrap_or(last.len());
        let values = HashMap::from([
            (":pk".to_string(), s(owner(user))),
            (":lo".to_string(), s(format!("{INST}{first}"))),
            (
                ":hi".to_string(),
                s(format!("{INST}{}\u{10FFFF}", &last[..cut])),
            ),
        ]);
        let mut out = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let page = self
                .db
                .query()
                .table_name(&self.table)
                .key_condition_expression("pk = :pk AND sk BETWEEN :lo AND :hi")
                .set_expression_attribute_values(Some(values.clone()))
                .set_exclusive_start_key(start.take())
                .consistent_read(true)
                .send()
                .await
                .map_err(unavailable)?;
            for item in page.items() {
                let (g, m) = Self::instance_from(item)?;
                if first <= g.as_str() && g.as_str() <= last {
                    out.push((g, m));
                }
            }
            match page.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => break,
            }
        }
        // By group then id, as the other readers (the cut above can reorder names).
        out.sort_by(|a, b| (&a.0, &a.1.id).cmp(&(&b.0, &b.1.id)));
        Ok(out)
    }

    async fn all_instances(&self, user: &str) -> StoreResult<Vec<(String, Member)>> {
        self.query_prefix(&owner(user), INST, None, usize::MAX, |_| true)
            .await?
            .iter()
            .map(Self::instance_from)
            .collect()
    }

    async fn record(&self, user: &str, g: &Group, r: &Record) -> StoreResult<()> {
        if r.is_empty() {
            return Ok(());
        }
        let mut writes = Vec::new();
        for m in &r.put {
            writes.push(
                TransactWriteItem::builder()
                    .put(self.instance_put(user, g, m)?)
                    .build(),
            );
        }
        for id in &r.forget {
            let delete = Delete::builder()
                .table_name(&self.table)
                .set_key(Some(key(owner(user), format!("{INST}{}#{id}", g.name))))
                .build()
                .map_err(unavailable)?;
            writes.push(TransactWriteItem::builder().delete(delete).build());
        }
        for a in &r.activities {
            writes.push(
                TransactWriteItem::builder()
                    .put(self.activity_put(user, a)?)
                    .build(),
            );
        }
        // One transaction of up to 100 writes, each led by the group's guard (the first one also
        // moves the launch sequence and the backoff): a round's record is one request.
        let mut chunks = writes.chunks(99).peekable();
        let mut first = true;
        while first || chunks.peek().is_some() {
            let guard = if first {
                self.record_guard(user, g, r)?
            } else {
                TransactWriteItem::builder()
                    .condition_check(self.group_check(user, g)?)
                    .build()
            };
            let mut tx = self.db.transact_write_items().transact_items(guard);
            for w in chunks.next().unwrap_or_default() {
                tx = tx.transact_items(w.clone());
            }
            if let Err(e) = tx.send().await {
                return match cancelled_conditions(&e).as_deref() {
                    Some([true, ..]) => Err(self.why_guard_failed(user, g).await?),
                    // An instance record changed since it was read.
                    Some(c) if c.contains(&true) => Err(StoreError::Conflict),
                    _ => Err(unavailable(e)),
                };
            }
            first = false;
        }
        Ok(())
    }

    async fn watched(&self) -> StoreResult<Vec<Watched>> {
        self.query_prefix(WATCH, "", None, usize::MAX, |_| true)
            .await?
            .iter()
            .map(|i| {
                Ok(Watched {
                    user: get_s(i, "user")?,
                    cloud: get_s(i, "cloud")?,
                    groups: get_n(i, "groups")?,
                })
            })
            .collect()
    }

    async fn due(&self, now_ms: i64) -> StoreResult<Vec<(String, String)>> {
        let mut out = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            // The index is eventually consistent: the scheduler reads each group itself before
            // it fires anything.
            let page = self
                .db
                .query()
                .table_name(&self.table)
                .index_name(DUE_INDEX)
                .key_condition_expression("due_pk = :due_pk AND due <= :now")
                .expression_attribute_values(":due_pk", s(DUE))
                .expression_attribute_values(":now", n(now_ms))
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(unavailable)?;
            for item in page.items() {
                let user = get_s(item, PARTITION_KEY)?;
                let user = user
                    .strip_prefix("OWNER#")
                    .ok_or_else(|| corrupt(item, PARTITION_KEY, "an owner"))?;
                out.push((user.to_string(), sk_suffix(item, ASG)?));
            }
            match page.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => return Ok(out),
            }
        }
    }

    async fn unwatch(&self, user: &str, cloud: &str) -> StoreResult<()> {
        let result = self
            .db
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(watch_key(user, cloud)))
            .condition_expression("attribute_not_exists(pk) OR #groups <= :zero")
            .expression_attribute_names("#groups", "groups")
            .expression_attribute_values(":zero", n(0))
            .send()
            .await;
        conditional(result, StoreError::Conflict)
    }

    async fn activities(
        &self,
        user: &str,
        group: Option<&str>,
        after: Option<&str>,
        want: usize,
    ) -> StoreResult<Vec<(String, serde_json::Value)>> {
        let prefix = match group {
            Some(g) => format!("{ACT}{g}#"),
            None => ACT.to_string(),
        };
        let items = self
            .query_prefix(&owner(user), &prefix, after, want, |_| true)
            .await?;
        items
            .iter()
            .map(|i| Ok((sk_suffix(i, &prefix)?, get_doc(i)?)))
            .collect()
    }
}

impl DynamoStore {
    /// Marks a launch configuration as used (`ADD`) or no longer used (`DELETE`) by a group,
    /// inside a transaction; it must exist (an update of an absent item would create it).
    fn lc_mark(
        &self,
        user: &str,
        lc: &str,
        group: &str,
        how: &str,
    ) -> StoreResult<TransactWriteItem> {
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{LC}{lc}"))))
            .update_expression(format!("{how} used_by :g"))
            .expression_attribute_values(":g", AttributeValue::Ss(vec![group.to_string()]))
            .condition_expression("attribute_exists(pk)")
            .build()
            .map_err(unavailable)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// Counts one of the user's groups or launch configurations (`what`: `groups`, `lcs`) on or
    /// off, inside the transaction that creates or deletes it; counting on is conditional on the
    /// count being under `max`.
    fn count_usage(
        &self,
        user: &str,
        what: &str,
        by: i64,
        max: i64,
    ) -> StoreResult<TransactWriteItem> {
        let mut update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), USAGE.into())))
            .update_expression("ADD #n :by")
            .expression_attribute_names("#n", what)
            .expression_attribute_values(":by", n(by));
        if by > 0 {
            update = update
                .condition_expression("attribute_not_exists(#n) OR #n < :max")
                .expression_attribute_values(":max", n(max));
        }
        Ok(TransactWriteItem::builder()
            .update(update.build().map_err(unavailable)?)
            .build())
    }

    /// Counts a group on or off (user, cloud) on the health check's list, inside a transaction.
    fn count_group(&self, user: &str, cloud: &str, by: i64) -> StoreResult<TransactWriteItem> {
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(watch_key(user, cloud)))
            .update_expression("SET #u = :u, #c = :c ADD #groups :by")
            .expression_attribute_names("#u", "user")
            .expression_attribute_names("#c", "cloud")
            .expression_attribute_names("#groups", "groups")
            .expression_attribute_values(":u", s(user))
            .expression_attribute_values(":c", s(cloud))
            .expression_attribute_values(":by", n(by))
            .build()
            .map_err(unavailable)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// A record's guard failed: the group is gone (or another of the same name stands there), or
    /// its launch sequence moved.
    async fn why_guard_failed(&self, user: &str, g: &Group) -> StoreResult<StoreError> {
        let now = self.get(owner(user), format!("{ASG}{}", g.name)).await?;
        Ok(match now {
            Some(item) if get_s(&item, "gid")? == g.id => StoreError::Conflict,
            _ => StoreError::NotFound,
        })
    }
}
