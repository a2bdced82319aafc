//! CloudWatch's data: datapoints by metric, dropped once past their retention.

use super::*;
use crate::store::Watch;
use phantom_model::cloudwatch::{Datum, MetricId};
use phantom_rules::metric_data::RETENTION_MS;

#[async_trait]
impl Watch for MemoryStore {
    async fn put_data(&self, user: &str, data: &[Datum]) -> StoreResult<()> {
        {
            // One BatchWriteItem per 25 datapoints, as the DynamoDB adapter writes them.
            let mut st = self.state(data.len().div_ceil(25).max(1));
            for d in data {
                let kept = st
                    .data
                    .entry((user.to_string(), d.metric.clone()))
                    .or_default();
                let at = kept.partition_point(|k| k.at_ms <= d.at_ms);
                kept.insert(at, d.clone());
            }
        }
        self.done(Ok(())).await
    }

    async fn data(
        &self,
        user: &str,
        metric: &MetricId,
        from_ms: i64,
        to_ms: i64,
    ) -> StoreResult<Vec<Datum>> {
        let out = {
            let st = self.state(1);
            let newest = st.data.get(&(user.to_string(), metric.clone()));
            // What DynamoDB's TTL would have dropped by the newest datapoint's time.
            let expired = newest
                .and_then(|d| d.last())
                .map_or(i64::MIN, |d| d.at_ms - RETENTION_MS);
            newest
                .into_iter()
                .flatten()
                .filter(|d| d.at_ms >= from_ms.max(expired) && d.at_ms < to_ms)
                .cloned()
                .collect()
        };
        self.done(Ok(out)).await
    }

    async fn metrics(
        &self,
        user: &str,
        namespace: Option<&str>,
    ) -> StoreResult<Vec<(MetricId, i64)>> {
        let out = {
            let st = self.state(1);
            st.data
                .iter()
                .filter(|((u, m), _)| u == user && namespace.is_none_or(|n| m.namespace == n))
                .filter_map(|((_, m), d)| Some((m.clone(), d.last()?.at_ms)))
                .collect()
        };
        self.done(Ok(out)).await
    }
}
