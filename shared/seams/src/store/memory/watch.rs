//! CloudWatch's data: datapoints by metric, dropped once past their retention.

use super::*;
use crate::store::Watch;
use phantom_model::cloudwatch::{AlarmHistoryItem, Datum, MetricId, StoredAlarm};
use phantom_rules::metric_data::RETENTION_MS;

#[async_trait]
impl Watch for MemoryStore {
    async fn put_data(&self, user: &str, data: &[Datum], _listed: &[MetricId]) -> StoreResult<()> {
        // The listing is read from the data itself here: always as fresh as it.
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

    async fn alarm(&self, user: &str, name: &str) -> StoreResult<Option<StoredAlarm>> {
        let out = self.state(1).alarms.get(&owned(user, name)).cloned();
        self.done(Ok(out)).await
    }

    async fn alarms(&self, user: &str) -> StoreResult<Vec<StoredAlarm>> {
        let out = {
            let st = self.state(1);
            st.alarms
                .iter()
                .filter(|((u, _), _)| u == user)
                .map(|(_, a)| a.clone())
                .collect()
        };
        self.done(Ok(out)).await
    }

    async fn put_alarm(
        &self,
        user: &str,
        alarm: &StoredAlarm,
        history: &[AlarmHistoryItem],
    ) -> StoreResult<()> {
        let out = {
            let mut st = self.state(1);
            let key = owned(user, &alarm.alarm.alarm_name);
            match (st.alarms.get(&key).map(|a| a.version), alarm.version) {
                (None, 0) => Ok(()),
                (Some(_), 0) => Err(StoreError::Exists),
                (Some(v), want) if v == want => Ok(()),
                _ => Err(StoreError::Conflict),
            }
            .map(|()| {
                let mut stored = alarm.clone();
                stored.version += 1;
                st.alarms.insert(key.clone(), stored);
                st.alarm_history
                    .entry(key)
                    .or_default()
                    .extend(history.iter().cloned());
            })
        };
        self.done(out).await
    }

    async fn delete_alarm(&self, user: &str, name: &str) -> StoreResult<()> {
        let out = match self.state(1).alarms.remove(&owned(user, name)) {
            Some(_) => Ok(()),
            None => Err(StoreError::NotFound),
        };
        self.done(out).await
    }

    async fn alarm_history(
        &self,
        user: &str,
        name: Option<&str>,
    ) -> StoreResult<Vec<AlarmHistoryItem>> {
        let out = {
            let st = self.state(1);
            let mut items: Vec<AlarmHistoryItem> = st
                .alarm_history
                .iter()
                .filter(|((u, n), _)| u == user && name.is_none_or(|want| want == n))
                .flat_map(|(_, h)| h.iter().rev().cloned())
                .collect();
            // Newest first (the last written first among those of one time); ISO 8601 times of
            // one format sort as text.
            items.sort_by(|a, b| b.timestamp.cmp(&a.timestamp));
            items
        };
        self.done(Ok(out)).await
    }

    async fn due_alarms(&self) -> StoreResult<Vec<(String, String)>> {
        let out = self.state(1).alarms.keys().cloned().collect();
        self.done(Ok(out)).await
    }
}
