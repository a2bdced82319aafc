//! Each account's audit trail: `TRAIL#<account>` / `trail_key` (when, then the event's id), the
//! event as JSON in `doc`, kept 90 days (DynamoDB's TTL).

use super::*;
use crate::store::{trail_key, Trail, TrailFilter};
use phantom_model::trail::TrailEvent;

fn partition(account: &str) -> String {
    format!("TRAIL#{account}")
}

#[async_trait]
impl Trail for DynamoStore {
    async fn put_event(&self, account: &str, e: &TrailEvent) -> StoreResult<()> {
        let expires = (e.at_ms + phantom_rules::trail::RETENTION_MS) / 1000;
        self.db
            .put_item()
            .table_name(&self.table)
            .set_item(Some(key(partition(account), trail_key(e))))
            .item(
                "doc",
                s(serde_json::to_string(e).expect("an event serializes")),
            )
            .item(TTL_ATTRIBUTE, n(expires))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn events(
        &self,
        account: &str,
        start_ms: i64,
        end_ms: i64,
        cursor: Option<&str>,
        want: usize,
        keep: TrailFilter<'_>,
    ) -> StoreResult<(Vec<TrailEvent>, Option<String>)> {
        let pk = partition(account);
        // `~` sorts after every event id's characters: the whole of the last millisecond.
        let query = self
            .db
            .query()
            .table_name(&self.table)
            .key_condition_expression("pk = :pk AND sk BETWEEN :lo AND :hi")
            .expression_attribute_values(":pk", s(&pk))
            .expression_attribute_values(":lo", s(format!("{start_ms:013}#")))
            .expression_attribute_values(":hi", s(format!("{end_ms:013}#~")))
            .scan_index_forward(false)
            .limit(want.clamp(1, 1000) as i32)
            .set_exclusive_start_key(cursor.map(|c| key(pk.clone(), c.to_string())));
        let mut out = Vec::new();
        let mut next = None;
        Self::each_page(query, |items| {
            for item in items {
                let doc = get_s(item, "doc")?;
                let e: TrailEvent = serde_json::from_str(&doc)
                    .map_err(|_| corrupt(item, "doc", "a trail event"))?;
                if keep(&e) {
                    out.push(e);
                    if out.len() >= want {
                        next = Some(get_s(item, SORT_KEY)?);
                        return Ok(false);
                    }
                }
            }
            Ok(true)
        })
        .await?;
        Ok((out, next))
    }
}
