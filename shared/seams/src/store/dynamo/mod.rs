//! The DynamoDB adapter: one table, keys that start with the owner.
//!
//! | pk              | sk                 | holds                                     |
//! |-----------------|--------------------|-------------------------------------------|
//! | `USERS`         | user name          | a user (account id, access key id, admin, disabled) |
//! | `KEY#<akid>`    | `KEY`              | an access key: secret (sealed), account, its IAM user's identity and policies (none: the root's), status, last use |
//! | `BUCKET#<account>` | the class (`Describe`, `Mutate`, `Publish`) | the account's request bucket shared by every api instance: GCRA's next arrival time `tat` (µs; an hour's TTL) |
//! | `TRAIL#<account>` | `<ms>#<event id>` | an event of the account's audit trail (JSON in `doc`, 90 days) |
//! | `IAM#<account>` | `USER#<name>`      | an IAM user of the account (keys, inline policies, as JSON in `doc`), its version |
//! | `CLOUDS`        | cloud name         | a cloud: EC2 endpoint, region, zone       |
//! | `OWNER#<user>`  | `CRED#<cloud>`     | the user's credentials for a cloud (secret sealed) |
//! | `OWNER#<user>`  | `LC#<name>`        | a launch configuration (+ groups using it) |
//! | `OWNER#<user>`  | `ASG#<name>`       | an auto scaling group (+ the provisioner's lease) |
//! | `OWNER#<user>`  | `INST#<group>#<id>` | an instance of a group (its id also in `vm`, the index of VMs) |
//! | `OWNER#<user>`  | `ACT#<group>#<inverted ms>#<id>` | a scaling activity, newest first |
//! | `OWNER#<user>`  | `NOTE#<group>#<id>` | a notification recorded, not yet sent (`Fleet::notices`) |
//! | `OWNER#<user>`  | `LAUNCH#<group>#<token>` | a LaunchInstances request and, once carried out, its result (a day) |
//! | `OWNER#<user>`  | `BEAT#<group>#<id>` | a VM's last heartbeat (a day) |
//! | `OWNER#<user>`  | `USAGE`            | the user's group and launch configuration counts (limits) |
//! | `WATCH`         | `<cloud>#<user>`   | the health check's list: the user's group count there, what its last full sweep saw |
//! | `PULSE`         | `PULSE`            | the pulse's lease: the sequence of the last tick, until when the chain counts as alive |
//! | `METRICS`       | `SOURCE`           | the metric source: Prometheus's URL, instance label, auth (secret sealed) |
//! | `MDATA#<user>#<metric>` | `<ms>#<id>` | a CloudWatch datapoint published (15 days); `<metric>` hashes namespace, name and dimensions |
//! | `OWNER#<user>`  | `METRIC#<namespace>#<metric>` | a metric published to: its name and dimensions, when last (15 days) |
//! | `OWNER#<user>`  | `ALARM#<name>`     | a CloudWatch alarm (its `MetricAlarm` in `doc`), tags, version, when its actions last ran |
//! | `OWNER#<user>`  | `AHIST#<name>#<inverted ms>#<inverted version>#<n>` | an alarm's history item (30 days) |
//!
//! Index `due` (sparse, keys only): a group with work for the scheduled run carries `due_pk`
//! (always `DUE`) and `due` (when its first scheduled action is due, Unix ms, or 0 while it has a
//! target tracking policy); the run queries `due <= now` and reads nothing of the other groups.
//! Every alarm carries `due_pk` `ALARMS` and `due` 0: the run lists the alarms by that partition.
//!
//! Index `asks` (sparse, keys only): a group with an ask no round has answered (`Ask`) carries
//! `ask_pk` (always `ASK`), `ask_at` (when the oldest was made, Unix ms) and `ask_n` (how many).
//! The write that asks sets them; a round that read them removes them as it gives the lease back,
//! on the condition that `ask_n` is still what it read. So the index holds only the asks not yet
//! answered, and the pulse queries `ask_at <= now - grace`.
//!
//! Secrets are stored sealed (`crate::secrets`: envelope encryption with KMS), never in plain text.
//!
//! Uniqueness and in-use rules are conditions on the writes themselves (transactions where two
//! items change together), never a read followed by a write.

mod buckets;
mod directory;
mod fleet;
mod groups;
mod identities;
mod item;
mod launch_configs;
mod trail;
mod watch;

use item::*;

use super::{
    activity_key, Ask, Backoff, Claim, CloudCredentials, CloudRecord, Directory, Fleet,
    GroupFilter, Groups, LaunchConfigs, Lease, MetricAuth, MetricSource, Page, PairView,
    PulseLease, Record, StoreError, StoreResult, Usage, Watched, BEAT_TTL_SECS, LAUNCH_TTL_SECS,
    MAX_GROUPS, MAX_LAUNCH_CONFIGS, NOTICE_TTL_SECS, PARTITION_KEY, SORT_KEY, TTL_ATTRIBUTE,
};
use crate::secrets::{SecretError, Secrets};
use async_trait::async_trait;
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata};
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, KeysAndAttributes, Put, TransactWriteItem, Update,
};
use aws_sdk_dynamodb::Client;
use phantom_model::activity::{Activity, ScalingActivity};
use phantom_model::group::{Group, Settings, DELETING};
use phantom_model::instance::{Lifecycle, Market, Member};
use phantom_model::launch_config::LaunchConfig;
use phantom_model::notification::Notice;
use phantom_model::sync_launch::SyncLaunch;
use phantom_model::user::{AccessKey, User};
use std::collections::HashMap;
use std::sync::Arc;

type Item = HashMap<String, AttributeValue>;

const LC: &str = "LC#";
const ASG: &str = "ASG#";
const CRED: &str = "CRED#";
const INST: &str = "INST#";
const ACT: &str = "ACT#";
const NOTE: &str = "NOTE#";
const LAUNCH: &str = "LAUNCH#";
const BEAT: &str = "BEAT#";
/// Scaling activities are kept six weeks, as AWS keeps them (DynamoDB TTL on `expires`).
const ACTIVITY_TTL_SECS: i64 = 6 * 7 * 24 * 3600;
const USERS: &str = "USERS";
const CLOUDS: &str = "CLOUDS";
const WATCH: &str = "WATCH";
const PULSE: &str = "PULSE";
const USAGE: &str = "USAGE";
const METRICS: &str = "METRICS";
const SOURCE: &str = "SOURCE";
/// The metric source's secret is sealed with its item's key as associated data.
const METRIC_SOURCE_CONTEXT: &str = "METRICS#SOURCE";
/// The index of groups with a scheduled action due (template.yaml declares it; the check in
/// infra/check_template.py compares them).
pub const DUE_INDEX: &str = "due";
/// The index of instance records by their VM's id (KEYS_ONLY): `Fleet::owners_of`.
pub const VM_INDEX: &str = "vms";
pub const VM_PARTITION: &str = "vm";
pub const VM_SORT: &str = "sk";
pub const DUE_PARTITION: &str = "due_pk";
pub const DUE_SORT: &str = "due";
const DUE: &str = "DUE";
/// The index of groups with an unanswered ask (`Ask`).
pub const ASK_INDEX: &str = "asks";
pub const ASK_PARTITION: &str = "ask_pk";
pub const ASK_SORT: &str = "ask_at";
const ASK: &str = "ASK";
const ASK_COUNT: &str = "ask_n";
/// What an update that asks sets (an older ask left unanswered keeps its time), and adds.
const ASK_SET: &str = "ask_pk = :ask_pk, ask_at = if_not_exists(ask_at, :ask_at)";
const ASK_ADD: &str = " ADD ask_n :ask_one";

/// The part of a SET that keeps `ask` (`ASK_SET`, after a comma), or nothing.
fn asks(ask: Ask) -> String {
    ask.map_or_else(String::new, |_| format!(", {ASK_SET}"))
}

/// The ADD clause that counts `ask` (`ASK_ADD`), or nothing.
fn counts(ask: Ask) -> &'static str {
    ask.map_or("", |_| ASK_ADD)
}

/// The values of `ASK_SET` and `ASK_ADD` for an ask made at `at_ms`.
fn ask_values(at_ms: i64) -> [(&'static str, AttributeValue); 3] {
    [
        (":ask_pk", s(ASK)),
        (":ask_at", n(at_ms)),
        (":ask_one", n(1)),
    ]
}

/// The attribute of a secret, sealed (`crate::secrets`): never the secret itself.
const SEALED: &str = "sealed";

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
        self.query_prefix_read(pk, prefix, after, want, keep, true)
            .await
    }

    /// The same, read strongly consistent or not (half the read units).
    async fn query_prefix_read(
        &self,
        pk: &str,
        prefix: &str,
        after: Option<&str>,
        want: usize,
        keep: impl Fn(&Item) -> bool,
        consistent: bool,
    ) -> StoreResult<Vec<Item>> {
        // BETWEEN is inclusive: start just past `after` (no name holds U+0000) and stop before the
        // next prefix (`#` + 1 is `$`). Key values may not be empty, hence the plain forms.
        let (condition, lo, hi) = match (prefix.is_empty(), after) {
            (false, a) => (
                "pk = :pk AND sk BETWEEN :lo AND :hi",
                Some(a.map_or_else(|| prefix.to_string(), |a| format!("{prefix}{a}\u{0}"))),
                Some(format!("{}$", prefix.trim_end_matches('#'))),
            ),
            (true, Some(a)) => ("pk = :pk AND sk > :lo", Some(a.to_string()), None),
            (true, None) => ("pk = :pk", None, None),
        };
        let mut values = HashMap::from([(":pk".to_string(), s(pk))]);
        values.extend(lo.map(|v| (":lo".to_string(), s(v))));
        values.extend(hi.map(|v| (":hi".to_string(), s(v))));
        let query = self
            .db
            .query()
            .table_name(&self.table)
            .key_condition_expression(condition)
            .set_expression_attribute_values(Some(values))
            .limit(want.clamp(1, 1000) as i32)
            .consistent_read(consistent);
        let mut out = Vec::new();
        Self::each_page(query, |items| {
            for item in items {
                if keep(item) {
                    out.push(item.clone());
                    if out.len() >= want {
                        return Ok(false);
                    }
                }
            }
            Ok(true)
        })
        .await?;
        Ok(out)
    }

    /// The (user, name) of the items the index `due` lists under `partition` with a due time
    /// at or before `now_ms`, their sort keys' names after `prefix`.
    async fn due_in(
        &self,
        partition: &str,
        now_ms: i64,
        prefix: &str,
    ) -> StoreResult<Vec<(String, String)>> {
        let due = (DUE_INDEX, DUE_PARTITION, DUE_SORT);
        self.listed_by_time(due, partition, now_ms, prefix).await
    }

    /// The (user, name) of the items a sparse index (name, partition and sort attributes) lists
    /// under `partition` with a time at or before `at_ms`, their sort keys' names after `prefix`.
    async fn listed_by_time(
        &self,
        (index, partition_key, sort_key): (&str, &str, &str),
        partition: &str,
        at_ms: i64,
        prefix: &str,
    ) -> StoreResult<Vec<(String, String)>> {
        let query = self
            .db
            .query()
            .table_name(&self.table)
            .index_name(index)
            .key_condition_expression("#p = :p AND #t <= :at")
            .expression_attribute_names("#p", partition_key)
            .expression_attribute_names("#t", sort_key)
            .expression_attribute_values(":p", s(partition))
            .expression_attribute_values(":at", n(at_ms));
        let mut out = Vec::new();
        Self::each_page(query, |items| {
            for item in items {
                let user = get_s(item, PARTITION_KEY)?;
                let user = user
                    .strip_prefix("OWNER#")
                    .ok_or_else(|| corrupt(item, PARTITION_KEY, "an owner"))?;
                out.push((user.to_string(), sk_suffix(item, prefix)?));
            }
            Ok(true)
        })
        .await?;
        Ok(out)
    }

    /// Reads every page of `query`, each from where the last ended, handing each to `take` until
    /// it says to stop (false).
    async fn each_page(
        query: QueryFluentBuilder,
        mut take: impl FnMut(&[Item]) -> StoreResult<bool>,
    ) -> StoreResult<()> {
        // From where the query says to start, if it says (a page's cursor), else the first.
        let mut start: Option<Item> = query.get_exclusive_start_key().clone();
        loop {
            let page = query
                .clone()
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(unavailable)?;
            if !take(page.items())? {
                return Ok(());
            }
            match page.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => return Ok(()),
            }
        }
    }

    /// The user's items of kind `prefix` in `page` (by query, or by key when it names them) that
    /// pass `keep`; not yet in order.
    async fn page_of(
        &self,
        user: &str,
        prefix: &str,
        page: Page<'_>,
        keep: impl Fn(&Item) -> bool,
    ) -> StoreResult<Vec<Item>> {
        let pk = owner(user);
        match page.names {
            None => {
                self.query_prefix(&pk, prefix, page.after, page.want, keep)
                    .await
            }
            Some(names) => {
                let sks: Vec<String> = names
                    .iter()
                    .filter(|n| page.after.is_none_or(|a| n.as_str() > a))
                    .map(|n| format!("{prefix}{n}"))
                    .collect();
                self.batch_get(&pk, &sks).await
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
}

/// The first `want` of `all` by name.
fn in_order<T>(mut all: Vec<T>, name: impl Fn(&T) -> &String, want: usize) -> Vec<T> {
    all.sort_by(|a, b| name(a).cmp(name(b)));
    all.truncate(want);
    all
}
