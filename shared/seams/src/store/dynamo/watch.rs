//! CloudWatch's data: a partition per metric, its datapoints by time (`MDATA#<user>#<metric>` /
//! `<ms>#<id>`), and the account's list of metrics (`OWNER#<user>` / `METRIC#<namespace>#<metric>`).
//! Both expire with the data (`RETENTION_MS`, DynamoDB's TTL).

use super::*;
use crate::store::Watch;
use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
use phantom_model::cloudwatch::{Datum, Dimension, MetricId, Stats};
use phantom_rules::metric_data::RETENTION_MS;
use sha2::{Digest, Sha256};

const MDATA: &str = "MDATA#";
const METRIC: &str = "METRIC#";
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
    async fn put_data(&self, user: &str, data: &[Datum]) -> StoreResult<()> {
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
        for (m, at) in newest {
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
}
