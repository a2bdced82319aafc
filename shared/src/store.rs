//! The DynamoDB adapter: one table, keys that start with the owner.
//!
//! | pk              | sk                 | holds                                     |
//! |-----------------|--------------------|-------------------------------------------|
//! | `USERS`         | user name          | a user (account id, access key id)        |
//! | `KEY#<akid>`    | `KEY`              | an access key: secret, user               |
//! | `CLOUDS`        | cloud name         | a cloud: EC2 endpoint, region, zone       |
//! | `OWNER#<user>`  | `CRED#<cloud>`     | the user's credentials for a cloud        |
//! | `OWNER#<user>`  | `LC#<name>`        | a launch configuration (+ groups using it) |
//! | `OWNER#<user>`  | `ASG#<name>`       | an auto scaling group (+ the provisioner's lease) |
//! | `OWNER#<user>`  | `INST#<group>#<id>` | an instance of a group                   |
//! | `OWNER#<user>`  | `ACT#<group>#<inverted ms>#<id>` | a scaling activity, newest first |
//!
//! Uniqueness and in-use rules are conditions on the writes themselves (transactions where two
//! items change together), never a read followed by a write.

use crate::activity::Activity;
use crate::group::{Group, DELETING};
use crate::identity::{AccessKey, User};
use crate::launch_config::LaunchConfig;
use crate::reconcile::{Lifecycle, Member};
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata};
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, DeleteRequest, KeysAndAttributes, Put, PutRequest,
    TransactWriteItem, Update, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use std::collections::HashMap;

type Item = HashMap<String, AttributeValue>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The item to create exists already.
    Exists,
    /// The item to change, or one it depends on, does not exist.
    NotFound,
    /// The item is referenced by these others (a launch configuration by its groups).
    InUse(Vec<String>),
    /// A compare-and-set lost to a concurrent writer.
    Conflict,
    /// DynamoDB could not be reached or refused for another reason.
    Unavailable(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exists => write!(f, "already exists"),
            Self::NotFound => write!(f, "not found"),
            Self::InUse(by) => write!(f, "in use by {}", by.join(", ")),
            Self::Conflict => write!(f, "concurrent update"),
            Self::Unavailable(m) => write!(f, "DynamoDB: {m}"),
        }
    }
}

impl std::error::Error for StoreError {}

pub type StoreResult<T> = Result<T, StoreError>;

/// What a client sees of a store failure that no action turned into its own error: a conflict it
/// may retry, or our fault. The details go to the log, not to the client.
impl From<StoreError> for crate::ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict => crate::ApiError::resource_contention(
                "The resource was changed by another request; retry.",
            ),
            other => {
                tracing::error!(error = %other, "store failure");
                crate::ApiError::internal("An internal error occurred; retry the request.")
            }
        }
    }
}

/// A registered EC2-compatible cloud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cloud {
    pub name: String,
    pub endpoint: String,
    pub region: String,
    /// The availability zone used for groups that name none.
    pub zone: String,
}

/// The name the cloud seam uses for a registered cloud.
pub type CloudRecord = Cloud;

/// A user's credentials for one cloud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudCredentials {
    pub cloud: String,
    pub access_key_id: String,
    pub secret: String,
}

/// The table's key attributes and its TTL attribute (template.yaml declares the same; the check in
/// infra/check_template.py compares them).
pub const PARTITION_KEY: &str = "pk";
pub const SORT_KEY: &str = "sk";
pub const TTL_ATTRIBUTE: &str = "expires";

const LC: &str = "LC#";
const ASG: &str = "ASG#";
const CRED: &str = "CRED#";
const INST: &str = "INST#";
const ACT: &str = "ACT#";
/// Scaling activities are kept six weeks, as AWS keeps them (DynamoDB TTL on `expires`).
const ACTIVITY_TTL_SECS: i64 = 6 * 7 * 24 * 3600;
const USERS: &str = "USERS";
const CLOUDS: &str = "CLOUDS";

fn owner(user: &str) -> String {
    format!("OWNER#{user}")
}

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn n(v: i64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

fn get_s(item: &Item, k: &str) -> String {
    item.get(k)
        .and_then(|v| v.as_s().ok())
        .cloned()
        .unwrap_or_default()
}

fn get_n(item: &Item, k: &str) -> i64 {
    item.get(k)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or_default()
}

fn get_bool(item: &Item, k: &str) -> bool {
    item.get(k)
        .and_then(|v| v.as_bool().ok())
        .copied()
        .unwrap_or_default()
}

fn get_doc(item: &Item) -> serde_json::Value {
    serde_json::from_str(&get_s(item, "doc")).unwrap_or_default()
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
pub struct Store {
    db: Client,
    table: String,
}

impl Store {
    pub fn new(sdk: &aws_config::SdkConfig, table: impl Into<String>) -> Self {
        let config = aws_sdk_dynamodb::config::Builder::from(sdk)
            .interceptor(crate::metrics::Counter::DynamoDb)
            .build();
        Self {
            db: Client::from_conf(config),
            table: table.into(),
        }
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

    // ---- users and access keys ----

    pub async fn create_user(&self, user: &User, secret: &str) -> StoreResult<()> {
        let user_item = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(USERS.into(), user.name.clone())))
            .item("account_id", s(&user.account_id))
            .item("access_key_id", s(&user.access_key_id))
            .item("created", s(&user.created))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(unavailable)?;
        let key_item = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(
                format!("KEY#{}", user.access_key_id),
                "KEY".into(),
            )))
            .item("user", s(&user.name))
            .item("account_id", s(&user.account_id))
            .item("secret", s(secret))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(unavailable)?;
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

    pub async fn users(&self) -> StoreResult<Vec<User>> {
        let items = self
            .query_prefix(USERS, "", None, usize::MAX, |_| true)
            .await?;
        Ok(items
            .iter()
            .map(|i| User {
                name: get_s(i, "sk"),
                account_id: get_s(i, "account_id"),
                access_key_id: get_s(i, "access_key_id"),
                created: get_s(i, "created"),
            })
            .collect())
    }

    pub async fn access_key(&self, access_key_id: &str) -> StoreResult<Option<AccessKey>> {
        let item = self
            .get(format!("KEY#{access_key_id}"), "KEY".into())
            .await?;
        Ok(item.map(|i| AccessKey {
            access_key_id: access_key_id.to_string(),
            secret: get_s(&i, "secret"),
            user: get_s(&i, "user"),
            account_id: get_s(&i, "account_id"),
        }))
    }

    // ---- clouds ----

    /// Registers a cloud, or updates its endpoint, region and zone.
    pub async fn put_cloud(&self, cloud: &Cloud) -> StoreResult<()> {
        self.db
            .put_item()
            .table_name(&self.table)
            .set_item(Some(key(CLOUDS.into(), cloud.name.clone())))
            .item("endpoint", s(&cloud.endpoint))
            .item("region", s(&cloud.region))
            .item("zone", s(&cloud.zone))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    fn cloud_from(item: &Item) -> Cloud {
        Cloud {
            name: get_s(item, "sk"),
            endpoint: get_s(item, "endpoint"),
            region: get_s(item, "region"),
            zone: get_s(item, "zone"),
        }
    }

    pub async fn cloud(&self, name: &str) -> StoreResult<Option<Cloud>> {
        Ok(self
            .get(CLOUDS.into(), name.into())
            .await?
            .map(|i| Self::cloud_from(&i)))
    }

    pub async fn clouds(&self) -> StoreResult<Vec<Cloud>> {
        let items = self
            .query_prefix(CLOUDS, "", None, usize::MAX, |_| true)
            .await?;
        Ok(items.iter().map(Self::cloud_from).collect())
    }

    /// Sets a user's credentials for a cloud; both must exist.
    pub async fn put_cloud_credentials(
        &self,
        user: &str,
        creds: &CloudCredentials,
    ) -> StoreResult<()> {
        let exists = |pk: &str, sk: &str| {
            ConditionCheck::builder()
                .table_name(&self.table)
                .set_key(Some(key(pk.into(), sk.into())))
                .condition_expression("attribute_exists(pk)")
                .build()
                .map_err(unavailable)
        };
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(owner(user), format!("{CRED}{}", creds.cloud))))
            .item("access_key_id", s(&creds.access_key_id))
            .item("secret", s(&creds.secret))
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

    pub async fn cloud_credentials(
        &self,
        user: &str,
        cloud: &str,
    ) -> StoreResult<Option<CloudCredentials>> {
        let item = self.get(owner(user), format!("{CRED}{cloud}")).await?;
        Ok(item.map(|i| CloudCredentials {
            cloud: cloud.to_string(),
            access_key_id: get_s(&i, "access_key_id"),
            secret: get_s(&i, "secret"),
        }))
    }

    // ---- launch configurations ----

    pub async fn create_launch_config(&self, user: &str, lc: &LaunchConfig) -> StoreResult<()> {
        let result = self
            .db
            .put_item()
            .table_name(&self.table)
            .set_item(Some(key(owner(user), format!("{LC}{}", lc.name))))
            .item("cloud", s(&lc.cloud))
            .item("doc", s(lc.doc.to_string()))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await;
        conditional(result, StoreError::Exists)
    }

    /// Deletes a launch configuration no group uses.
    pub async fn delete_launch_config(&self, user: &str, name: &str) -> StoreResult<()> {
        let result = self
            .db
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{LC}{name}"))))
            .condition_expression("attribute_exists(pk) AND attribute_not_exists(used_by)")
            .return_values_on_condition_check_failure(
                aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure::AllOld,
            )
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => {
                let Some(aws_sdk_dynamodb::operation::delete_item::DeleteItemError::ConditionalCheckFailedException(c)) = e.as_service_error() else {
                    return Err(unavailable(e));
                };
                // DynamoDB returns the old item when it exists; an emulator may not, so look.
                let old = match c.item() {
                    Some(old) => Some(old.clone()),
                    None => self.get(owner(user), format!("{LC}{name}")).await?,
                };
                match old {
                    Some(old) => Err(StoreError::InUse(
                        old.get("used_by")
                            .and_then(|v| v.as_ss().ok())
                            .cloned()
                            .unwrap_or_default(),
                    )),
                    None => Err(StoreError::NotFound),
                }
            }
        }
    }

    fn launch_config_from(item: &Item) -> LaunchConfig {
        LaunchConfig {
            name: get_s(item, "sk").trim_start_matches(LC).to_string(),
            cloud: get_s(item, "cloud"),
            doc: get_doc(item),
        }
    }

    pub async fn launch_config(&self, user: &str, name: &str) -> StoreResult<Option<LaunchConfig>> {
        let item = self.get(owner(user), format!("{LC}{name}")).await?;
        Ok(item.as_ref().map(Self::launch_config_from))
    }

    /// Up to `want` launch configurations in name order after `after`, all or only `names`.
    pub async fn launch_configs(
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
        let mut lcs: Vec<LaunchConfig> = items.iter().map(Self::launch_config_from).collect();
        lcs.sort_by(|a, b| a.name.cmp(&b.name));
        lcs.truncate(want);
        Ok(lcs)
    }

    // ---- groups ----

    fn group_put(&self, user: &str, g: &Group) -> StoreResult<Put> {
        Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .item("lc", s(&g.launch_configuration))
            .item("cloud", s(&g.cloud))
            .item("min", n(g.min))
            .item("max", n(g.max))
            .item("desired", n(g.desired))
            .item("version", n(g.version))
            .item("gid", s(&g.id))
            .item("doc", s(g.doc.to_string()))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(unavailable)
    }

    /// Creates a group and records it as a user of its launch configuration, which must exist.
    pub async fn create_group(&self, user: &str, g: &Group) -> StoreResult<()> {
        let uses = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(
                owner(user),
                format!("{LC}{}", g.launch_configuration),
            )))
            .update_expression("ADD used_by :g")
            .expression_attribute_values(":g", AttributeValue::Ss(vec![g.name.clone()]))
            .condition_expression("attribute_exists(pk)")
            .build()
            .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(
                TransactWriteItem::builder()
                    .put(self.group_put(user, g)?)
                    .build(),
            )
            .transact_items(TransactWriteItem::builder().update(uses).build())
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e).as_deref() {
                Some([true, ..]) => Err(StoreError::Exists),
                Some([_, true]) => Err(StoreError::NotFound),
                _ => Err(unavailable(e)),
            },
        }
    }

    fn group_from(item: &Item) -> Group {
        Group {
            name: get_s(item, "sk").trim_start_matches(ASG).to_string(),
            launch_configuration: get_s(item, "lc"),
            cloud: get_s(item, "cloud"),
            min: get_n(item, "min"),
            max: get_n(item, "max"),
            desired: get_n(item, "desired"),
            version: get_n(item, "version"),
            launch_seq: get_n(item, "launch_seq"),
            id: get_s(item, "gid"),
            status: item.get("status").and_then(|v| v.as_s().ok()).cloned(),
            failures: get_n(item, "failures"),
            retry_at_ms: get_n(item, "retry_at"),
            doc: get_doc(item),
        }
    }

    pub async fn group(&self, user: &str, name: &str) -> StoreResult<Option<Group>> {
        let item = self.get(owner(user), format!("{ASG}{name}")).await?;
        Ok(item.as_ref().map(Self::group_from))
    }

    /// Up to `want` groups in name order after `after` that pass `keep`, all or only `names`.
    pub async fn groups(
        &self,
        user: &str,
        names: Option<&[String]>,
        after: Option<&str>,
        want: usize,
        keep: impl Fn(&Group) -> bool,
    ) -> StoreResult<Vec<Group>> {
        let mut groups: Vec<Group> = match names {
            None => self
                .query_prefix(&owner(user), ASG, after, want, |i| {
                    keep(&Self::group_from(i))
                })
                .await?
                .iter()
                .map(Self::group_from)
                .collect(),
            Some(names) => {
                let sks: Vec<String> = names
                    .iter()
                    .filter(|n| after.is_none_or(|a| n.as_str() > a))
                    .map(|n| format!("{ASG}{n}"))
                    .collect();
                self.batch_get(&owner(user), &sks)
                    .await?
                    .iter()
                    .map(Self::group_from)
                    .filter(|g| keep(g))
                    .collect()
            }
        };
        groups.sort_by(|a, b| a.name.cmp(&b.name));
        groups.truncate(want);
        Ok(groups)
    }

    /// Compare-and-set of the desired capacity: fails with `Conflict` if the group changed since
    /// `expected_version` was read.
    pub async fn set_desired(
        &self,
        user: &str,
        name: &str,
        desired: i64,
        expected_version: i64,
    ) -> StoreResult<()> {
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{name}"))))
            .update_expression("SET desired = :d, version = version + :one")
            .condition_expression("version = :v")
            .expression_attribute_values(":d", n(desired))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":v", n(expected_version))
            .send()
            .await;
        conditional(result, StoreError::Conflict)
    }

    /// Deletes a group as read at `expected_version` and releases its launch configuration.
    pub async fn delete_group(&self, user: &str, g: &Group) -> StoreResult<()> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .condition_expression("version = :v")
            .expression_attribute_values(":v", n(g.version))
            .build()
            .map_err(unavailable)?;
        let release = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(
                owner(user),
                format!("{LC}{}", g.launch_configuration),
            )))
            .update_expression("DELETE used_by :g")
            .expression_attribute_values(":g", AttributeValue::Ss(vec![g.name.clone()]))
            .condition_expression("attribute_exists(pk)")
            .build()
            .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().delete(delete).build())
            .transact_items(TransactWriteItem::builder().update(release).build())
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e).as_deref() {
                Some([true, ..]) => Err(StoreError::Conflict),
                _ => Err(unavailable(e)),
            },
        }
    }

    // ---- the provisioner's lease, deletion, backoff ----

    /// Takes the group's lease until `now_ms + ttl_ms` if nobody holds it (or theirs expired), and
    /// returns the group as it stands, in one conditional write.
    pub async fn take_lease(
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
            )))),
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

    /// Gives the lease back, but only if the group is still at `version`: a change made while the
    /// lease was held fails this with `Conflict`, and the holder reconciles again.
    pub async fn release_lease(
        &self,
        user: &str,
        name: &str,
        holder: &str,
        version: i64,
    ) -> StoreResult<()> {
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{name}"))))
            .update_expression("REMOVE lease_owner, lease_until")
            .condition_expression("lease_owner = :h AND version = :v")
            .expression_attribute_values(":h", s(holder))
            .expression_attribute_values(":v", n(version))
            .send()
            .await;
        conditional(result, StoreError::Conflict)
    }

    /// Starts a forced delete: desired and min 0, `Delete in progress`; compare-and-set.
    pub async fn begin_delete(&self, user: &str, g: &Group) -> StoreResult<()> {
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .update_expression(
                "SET #st = :d, desired = :zero, #min = :zero, version = version + :one",
            )
            .condition_expression("version = :v")
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

    /// Records launch failures in a row and when to try again (no version change: it is not a
    /// change of what the user wants).
    pub async fn set_backoff(
        &self,
        user: &str,
        name: &str,
        failures: i64,
        retry_at_ms: i64,
    ) -> StoreResult<()> {
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{name}"))))
            .update_expression("SET failures = :f, retry_at = :r")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":f", n(failures))
            .expression_attribute_values(":r", n(retry_at_ms))
            .send()
            .await;
        conditional(result, StoreError::NotFound)
    }

    // ---- instances ----

    fn instance_from(item: &Item) -> (String, Member) {
        (
            get_s(item, "group"),
            Member {
                id: get_s(item, "id"),
                zone: get_s(item, "zone"),
                lifecycle: Lifecycle::parse(&get_s(item, "lifecycle")),
                healthy: get_bool(item, "healthy"),
                launched_ms: get_n(item, "launched"),
                protected: get_bool(item, "protected"),
                launch_configuration: get_s(item, "lc"),
                instance_type: get_s(item, "itype"),
            },
        )
    }

    /// Records instances of a group, in one transaction per 99 that also checks the group (this
    /// one, by id) still exists (`NotFound` otherwise) and, for launches, moves its `launch_seq`
    /// from `g.launch_seq` to `advance_to`.
    pub async fn put_instances(
        &self,
        user: &str,
        g: &Group,
        members: &[Member],
        advance_to: Option<i64>,
    ) -> StoreResult<()> {
        for (i, chunk) in members.chunks(99).enumerate() {
            let group_key = key(owner(user), format!("{ASG}{}", g.name));
            let guard = match advance_to.filter(|_| i == 0) {
                Some(next) => TransactWriteItem::builder().update(
                    Update::builder()
                        .table_name(&self.table)
                        .set_key(Some(group_key))
                        .update_expression("SET launch_seq = :next")
                        .condition_expression(
                            "gid = :gid AND (attribute_not_exists(launch_seq) OR launch_seq = :seq)",
                        )
                        .expression_attribute_values(":gid", s(&g.id))
                        .expression_attribute_values(":seq", n(g.launch_seq))
                        .expression_attribute_values(":next", n(next))
                        .build()
                        .map_err(unavailable)?,
                ),
                None => TransactWriteItem::builder().condition_check(
                    ConditionCheck::builder()
                        .table_name(&self.table)
                        .set_key(Some(group_key))
                        .condition_expression("gid = :gid")
                        .expression_attribute_values(":gid", s(&g.id))
                        .build()
                        .map_err(unavailable)?,
                ),
            };
            let mut tx = self.db.transact_write_items().transact_items(guard.build());
            for m in chunk {
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
                    .item("cloud", s(&g.cloud))
                    .build()
                    .map_err(unavailable)?;
                tx = tx.transact_items(TransactWriteItem::builder().put(put).build());
            }
            match tx.send().await {
                Ok(_) => {}
                Err(e) => {
                    return match cancelled_conditions(&e).as_deref() {
                        Some([true, ..]) => Err(StoreError::NotFound),
                        _ => Err(unavailable(e)),
                    }
                }
            }
        }
        Ok(())
    }

    pub async fn set_lifecycle(
        &self,
        user: &str,
        group: &str,
        id: &str,
        lifecycle: Lifecycle,
        healthy: bool,
    ) -> StoreResult<()> {
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{INST}{group}#{id}"))))
            .update_expression("SET lifecycle = :l, healthy = :h")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":l", s(lifecycle.as_str()))
            .expression_attribute_values(":h", AttributeValue::Bool(healthy))
            .send()
            .await;
        // An instance forgotten meanwhile has nothing left to update.
        match conditional(result, StoreError::NotFound) {
            Err(StoreError::NotFound) => Ok(()),
            other => other,
        }
    }

    pub async fn delete_instances(
        &self,
        user: &str,
        group: &str,
        ids: &[String],
    ) -> StoreResult<()> {
        let deletes = ids.iter().map(|id| {
            WriteRequest::builder()
                .delete_request(
                    DeleteRequest::builder()
                        .set_key(Some(key(owner(user), format!("{INST}{group}#{id}"))))
                        .build()
                        .expect("the key is set"),
                )
                .build()
        });
        self.batch_write(deletes.collect()).await
    }

    /// BatchWriteItem, 25 to a request, until nothing is left unprocessed.
    async fn batch_write(&self, writes: Vec<WriteRequest>) -> StoreResult<()> {
        for chunk in writes.chunks(25) {
            let mut pending = HashMap::from([(self.table.clone(), chunk.to_vec())]);
            while pending.values().any(|w| !w.is_empty()) {
                let out = self
                    .db
                    .batch_write_item()
                    .set_request_items(Some(pending))
                    .send()
                    .await
                    .map_err(unavailable)?;
                pending = out.unprocessed_items.unwrap_or_default();
            }
        }
        Ok(())
    }

    /// The recorded instances of one group.
    pub async fn instances(&self, user: &str, group: &str) -> StoreResult<Vec<Member>> {
        let items = self
            .query_prefix(
                &owner(user),
                &format!("{INST}{group}#"),
                None,
                usize::MAX,
                |_| true,
            )
            .await?;
        Ok(items.iter().map(|i| Self::instance_from(i).1).collect())
    }

    /// The user's credentials for every cloud.
    pub async fn all_cloud_credentials(&self, user: &str) -> StoreResult<Vec<CloudCredentials>> {
        let items = self
            .query_prefix(&owner(user), CRED, None, usize::MAX, |_| true)
            .await?;
        Ok(items
            .iter()
            .map(|i| CloudCredentials {
                cloud: get_s(i, "sk")[CRED.len()..].to_string(),
                access_key_id: get_s(i, "access_key_id"),
                secret: get_s(i, "secret"),
            })
            .collect())
    }

    /// Every recorded instance of the user's groups, as (group, instance), by group then id.
    pub async fn all_instances(&self, user: &str) -> StoreResult<Vec<(String, Member)>> {
        let items = self
            .query_prefix(&owner(user), INST, None, usize::MAX, |_| true)
            .await?;
        Ok(items.iter().map(Self::instance_from).collect())
    }

    // ---- scaling activities ----

    pub async fn put_activities(&self, user: &str, activities: &[Activity]) -> StoreResult<()> {
        let puts = activities.iter().map(|a| {
            // Inverted time in the sort key lists the newest first.
            let inverted = 9_999_999_999_999 - a.start_ms;
            let id = a.doc["ActivityId"].as_str().unwrap_or_default();
            let mut item = key(owner(user), format!("{ACT}{}#{inverted:013}#{id}", a.group));
            item.insert("doc".into(), s(a.doc.to_string()));
            item.insert("start".into(), n(a.start_ms));
            item.insert(
                TTL_ATTRIBUTE.into(),
                n(a.start_ms / 1000 + ACTIVITY_TTL_SECS),
            );
            WriteRequest::builder()
                .put_request(
                    PutRequest::builder()
                        .set_item(Some(item))
                        .build()
                        .expect("the item is set"),
                )
                .build()
        });
        self.batch_write(puts.collect()).await
    }

    /// Activities of one group (newest first) or of all, after the sort-key suffix `after`.
    /// Returns (sort-key suffix, document) pairs so the caller can page.
    pub async fn activities(
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
        Ok(items
            .iter()
            .map(|i| (get_s(i, "sk")[prefix.len()..].to_string(), get_doc(i)))
            .collect())
    }
}

/// The outcome of `take_lease`.
#[derive(Debug)]
pub enum Lease {
    Taken(Box<Group>),
    Busy,
    NoGroup,
}
