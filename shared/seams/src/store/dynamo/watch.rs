//! CloudWatch's data: a partition per metric, its datapoints by time (`MDATA#<user>#<metric>` /
//! `<ms>#<id>`), and the account's list of metrics (`OWNER#<user>` / `METRIC#<namespace>#<metric>`).
//! Both expire with the data (`RETENTION_MS`, DynamoDB's TTL).

use super::*;
use crate::store::Watch;
use crate::store::ALARM_HISTORY_TTL_SECS;
use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
use phantom_model::cloudwatch::{
    AlarmHistoryItem, Datum, Dimension, MetricId, Stats, StoredAlarm, Tag,
};
use phantom_rules::metric_data::RETENTION_MS;
use sha2::{Digest, Sha256};

const MDATA: &str = "MDATA#";
const METRIC: &str = "METRIC#";
const ALARM: &str = "ALARM#";
const AHIST: &str = "AHIST#";
/// The partition of the index `due` that lists alarms (every alarm, `due` 0: each run).
const ALARMS_DUE: &str = "ALARMS";
/// BatchWriteItem's most items a call.
const BATCH: usize = 25;
/// Times in a sort key: Unix ms, zero-padded so that they sort as numbers.
const MS_DIGITS: usize = 15;

/// A metric's key: its namespace, name and dimensions hashed (a metric's whole name may be longer
/// than a key may be).
fn metric_key(m: &MetricId) -> String {
    let mut h = Sha256::new();
    for part in [&m.namespace, &m.name] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for d in &m.dimensions {
        h.update(d.name.as_bytes());
        h.update([0]);
        h.update(d.value.as_bytes());
        h.update([0]);
    }
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn data_pk(user: &str, m: &MetricId) -> String {
    format!("{MDATA}{user}#{}", metric_key(m))
}

fn ms_key(ms: i64) -> String {
    format!("{:0width$}", ms.max(0), width = MS_DIGITS)
}

fn f(v: f64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

fn get_f(item: &Item, k: &str) -> StoreResult<f64> {
    item.get(k)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse::<f64>().ok())
        .ok_or_else(|| corrupt(item, k, "a number"))
}

fn dimensions(ds: &[Dimension]) -> AttributeValue {
    AttributeValue::L(
        ds.iter()
            .map(|d| {
                AttributeValue::M(HashMap::from([
                    ("n".to_string(), s(&d.name)),
                    ("v".to_string(), s(&d.value)),
                ]))
            })
            .collect(),
    )
}

fn get_dimensions(item: &Item) -> StoreResult<Vec<Dimension>> {
    let Some(AttributeValue::L(list)) = item.get("dims") else {
        return Err(corrupt(item, "dims", "a list"));
    };
    list.iter()
        .map(|d| match d {
            AttributeValue::M(m) => Ok(Dimension {
                name: get_s(m, "n")?,
                value: get_s(m, "v")?,
            }),
            _ => Err(corrupt(item, "dims", "a list of maps")),
        })
        .collect()
}

fn tags(ts: &[Tag]) -> AttributeValue {
    AttributeValue::L(
        ts.iter()
            .map(|t| {
                AttributeValue::M(HashMap::from([
                    ("k".to_string(), s(&t.key)),
                    ("v".to_string(), s(&t.value)),
                ]))
            })
            .collect(),
    )
}

fn get_tags(item: &Item) -> StoreResult<Vec<Tag>> {
    let Some(AttributeValue::L(list)) = item.get("tags") else {
        return Err(corrupt(item, "tags", "a list"));
    };
    list.iter()
        .map(|t| match t {
            AttributeValue::M(m) => Ok(Tag {
                key: get_s(m, "k")?,
                value: get_s(m, "v")?,
            }),
            _ => Err(corrupt(item, "tags", "a list of maps")),
        })
        .collect()
}

fn stored_alarm(item: &Item) -> StoreResult<StoredAlarm> {
    Ok(StoredAlarm {
        alarm: get_typed(item, "an alarm")?,
        tags: get_tags(item)?,
        version: get_n(item, "version")?,
        acted_ms: opt_n(item, "acted")?,
    })
}

impl DynamoStore {
    /// Writes `items` in batches, again for what DynamoDB left unprocessed.
    async fn write_all(&self, items: Vec<Item>) -> StoreResult<()> {
        for chunk in items.chunks(BATCH) {
            let mut requests: Vec<WriteRequest> = chunk
                .iter()
                .map(|i| {
                    let put = PutRequest::builder()
                        .set_item(Some(i.clone()))
                        .build()
                        .map_err(unavailable)?;
                    Ok(WriteRequest::builder().put_request(put).build())
                })
                .collect::<StoreResult<_>>()?;
            for attempt in 0.. {
                let out = self
                    .db
                    .batch_write_item()
                    .request_items(&self.table, requests)
                    .send()
                    .await
                    .map_err(unavailable)?;
                requests = out
                    .unprocessed_items
                    .and_then(|mut u| u.remove(&self.table))
                    .unwrap_or_default();
                if requests.is_empty() {
                    break;
                }
                if attempt == 4 {
                    return Err(StoreError::Unavailable(format!(
                        "{} datapoints left unwritten by DynamoDB",
                        requests.len()
                    )));
                }
                tokio::time::sleep(std::time::Duration::from_millis(50 << attempt)).await;
            }
        }
        Ok(())
    }
}

#[async_trait]
impl Watch for DynamoStore {
    async fn put_data(&self, user: &str, data: &[Datum], listed: &[MetricId]) -> StoreResult<()> {
        let mut items = Vec::with_capacity(data.len() + 1);
        let mut newest: HashMap<&MetricId, i64> = HashMap::new();
        for d in data {
            let mut item = key(
                data_pk(user, &d.metric),
                format!("{}#{}", ms_key(d.at_ms), &phantom_rules::ids::uuid()[..8]),
            );
            item.insert("c".into(), f(d.stats.count));
            item.insert("s".into(), f(d.stats.sum));
            item.insert("mn".into(), f(d.stats.min));
            item.insert("mx".into(), f(d.stats.max));
            if let Some(u) = &d.unit {
                item.insert("u".into(), s(u));
            }
            item.insert("hr".into(), AttributeValue::Bool(d.high_resolution));
            item.insert(TTL_ATTRIBUTE.into(), n((d.at_ms + RETENTION_MS) / 1000));
            items.push(item);
            let at = newest.entry(&d.metric).or_insert(d.at_ms);
            *at = (*at).max(d.at_ms);
        }
        for (m, at) in newest.into_iter().filter(|(m, _)| !listed.contains(m)) {
            let mut item = key(
                owner(user),
                format!("{METRIC}{}#{}", m.namespace, metric_key(m)),
            );
            item.insert("ns".into(), s(&m.namespace));
            item.insert("name".into(), s(&m.name));
            item.insert("dims".into(), dimensions(&m.dimensions));
            item.insert("last".into(), n(at));
            item.insert(TTL_ATTRIBUTE.into(), n((at + RETENTION_MS) / 1000));
            items.push(item);
        }
        self.write_all(items).await
    }

    async fn data(
        &self,
        user: &str,
        metric: &MetricId,
        from_ms: i64,
        to_ms: i64,
    ) -> StoreResult<Vec<Datum>> {
        if from_ms >= to_ms {
            return Ok(Vec::new());
        }
        // `<ms>#...` sorts below `<ms>$`: the range [from, to) is `from` .. just below `to`.
        let values = HashMap::from([
            (":pk".to_string(), s(data_pk(user, metric))),
            (":lo".to_string(), s(ms_key(from_ms))),
            (":hi".to_string(), s(ms_key(to_ms))),
        ]);
        let query = self
            .db
            .query()
            .table_name(&self.table)
            .key_condition_expression("pk = :pk AND sk BETWEEN :lo AND :hi")
            .set_expression_attribute_values(Some(values))
            .consistent_read(false);
        let mut out = Vec::new();
        let now_secs = phantom_model::time::now_ms() / 1000;
        Self::each_page(query, |items| {
            for i in items {
                // TTL deletes within days of expiry: an expired datum is not read.
                if opt_n(i, TTL_ATTRIBUTE)?.is_some_and(|e| e < now_secs) {
                    continue;
                }
                let sk = get_s(i, SORT_KEY)?;
                let at_ms = sk
                    .split('#')
                    .next()
                    .and_then(|ms| ms.parse::<i64>().ok())
                    .ok_or_else(|| corrupt(i, SORT_KEY, "a time"))?;
                if at_ms >= to_ms {
                    continue;
                }
                out.push(Datum {
                    metric: metric.clone(),
                    at_ms,
                    unit: opt_s(i, "u")?,
                    stats: Stats {
                        count: get_f(i, "c")?,
                        sum: get_f(i, "s")?,
                        min: get_f(i, "mn")?,
                        max: get_f(i, "mx")?,
                    },
                    high_resolution: get_bool(i, "hr")?,
                });
            }
            Ok(true)
        })
        .await?;
        Ok(out)
    }

    async fn metrics(
        &self,
        user: &str,
        namespace: Option<&str>,
    ) -> StoreResult<Vec<(MetricId, i64)>> {
        let prefix = match namespace {
            Some(ns) => format!("{METRIC}{ns}#"),
            None => METRIC.to_string(),
        };
        let items = self
            .query_prefix_read(&owner(user), &prefix, None, usize::MAX, |_| true, false)
            .await?;
        let now_secs = phantom_model::time::now_ms() / 1000;
        let mut out = Vec::new();
        for i in &items {
            if opt_n(i, TTL_ATTRIBUTE)?.is_some_and(|e| e < now_secs) {
                continue;
            }
            let ns = get_s(i, "ns")?;
            // `METRIC#a#` also begins `METRIC#a#b#...`: another namespace.
            if namespace.is_some_and(|n| n != ns) {
                continue;
            }
            let m = MetricId::new(&ns, &get_s(i, "name")?, &get_dimensions(i)?);
            out.push((m, get_n(i, "last")?));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    async fn alarm(&self, user: &str, name: &str) -> StoreResult<Option<StoredAlarm>> {
        self.get(owner(user), format!("{ALARM}{name}"))
            .await?
            .as_ref()
            .map(stored_alarm)
            .transpose()
    }

    async fn alarms(&self, user: &str) -> StoreResult<Vec<StoredAlarm>> {
        self.query_prefix(&owner(user), ALARM, None, usize::MAX, |_| true)
            .await?
            .iter()
            .map(stored_alarm)
            .collect()
    }

    async fn put_alarm(
        &self,
        user: &str,
        alarm: &StoredAlarm,
        history: &[AlarmHistoryItem],
    ) -> StoreResult<()> {
        let mut item = key(owner(user), format!("{ALARM}{}", alarm.alarm.alarm_name));
        let doc = serde_json::to_string(&alarm.alarm).expect("an alarm serialises");
        item.insert("doc".into(), s(doc));
        item.insert("tags".into(), tags(&alarm.tags));
        item.insert("version".into(), n(alarm.version + 1));
        if let Some(at) = alarm.acted_ms {
            item.insert("acted".into(), n(at));
        }
        item.insert("due_pk".into(), s(ALARMS_DUE));
        item.insert("due".into(), n(0));
        let put = if alarm.version == 0 {
            Put::builder()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression("attribute_not_exists(pk)")
        } else {
            Put::builder()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression("version = :v")
                .expression_attribute_values(":v", n(alarm.version))
        }
        .build()
        .map_err(unavailable)?;
        let mut tx = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().put(put).build());
        let now_ms = phantom_model::time::now_ms();
        for (i, h) in history.iter().enumerate() {
            let at = phantom_model::time::parse_timestamp(&h.timestamp)
                .map_or(now_ms, |t| (t.unix_timestamp_nanos() / 1_000_000) as i64);
            let inverted = 9_999_999_999_999 - at;
            // Newest first: by time, then by the write (the alarm's version), then within it.
            let version = 999_999_999_999 - (alarm.version + 1);
            let within = 999 - i.min(999);
            let mut hist = key(
                owner(user),
                format!(
                    "{AHIST}{}#{inverted:013}#{version:012}#{within:03}",
                    h.alarm_name
                ),
            );
            hist.insert(
                "doc".into(),
                s(serde_json::to_string(h).expect("a history item serialises")),
            );
            hist.insert(TTL_ATTRIBUTE.into(), n(at / 1000 + ALARM_HISTORY_TTL_SECS));
            let put = Put::builder()
                .table_name(&self.table)
                .set_item(Some(hist))
                .build()
                .map_err(unavailable)?;
            tx = tx.transact_items(TransactWriteItem::builder().put(put).build());
        }
        match tx.send().await {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e) {
                Some(reasons) if reasons.first() == Some(&true) => Err(if alarm.version == 0 {
                    StoreError::Exists
                } else {
                    StoreError::Conflict
                }),
                _ => Err(unavailable(e)),
            },
        }
    }

    async fn delete_alarm(&self, user: &str, name: &str) -> StoreResult<()> {
        let result = self
            .db
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ALARM}{name}"))))
            .condition_expression("attribute_exists(pk)")
            .send()
            .await;
        conditional(result, StoreError::NotFound)
    }

    async fn alarm_history(
        &self,
        user: &str,
        name: Option<&str>,
    ) -> StoreResult<Vec<AlarmHistoryItem>> {
        let prefix = match name {
            Some(n) => format!("{AHIST}{n}#"),
            None => AHIST.to_string(),
        };
        let now_secs = phantom_model::time::now_ms() / 1000;
        let mut out = Vec::new();
        for i in self
            .query_prefix_read(&owner(user), &prefix, None, usize::MAX, |_| true, false)
            .await?
        {
            if opt_n(&i, TTL_ATTRIBUTE)?.is_some_and(|e| e < now_secs) {
                continue;
            }
            let h: AlarmHistoryItem = get_typed(&i, "an alarm's history item")?;
            // `AHIST#a#` also begins the items of an alarm named `a#b`.
            if name.is_some_and(|n| n != h.alarm_name) {
                continue;
            }
            out.push(h);
        }
        out.sort_by(|a, b| b.timestamp.cmp(&a.timestamp));
        Ok(out)
    }

    async fn due_alarms(&self) -> StoreResult<Vec<(String, String)>> {
        self.due_in(ALARMS_DUE, 0, ALARM).await
    }
}
