//! Each account's shared request buckets: `BUCKET#<account>` / the class, GCRA's next arrival
//! time in `tat` (µs). A take is one conditional UpdateItem, no read: DynamoDB cannot take the
//! maximum of the stored time and now, so the two cases are two conditions, the likely one first
//! (a bucket in use, its time ahead of now; or an idle one, its time past); both failing is a
//! refusal.

use super::*;
use crate::store::Buckets;
use phantom_rules::throttle::Take;

/// An idle bucket's item is removed an hour after its time (DynamoDB's TTL).
const KEPT_SECS: i64 = 3600;

#[async_trait]
impl Buckets for DynamoStore {
    async fn take_tokens(
        &self,
        account: &str,
        class: &str,
        take: Take,
        now_us: i64,
        idle: bool,
    ) -> StoreResult<bool> {
        let item = key(format!("BUCKET#{account}"), class.to_string());
        let expires = n(now_us / 1_000_000 + KEPT_SECS);
        let busy = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(item.clone()))
            .update_expression("SET tat = tat + :cost, #e = :exp")
            .condition_expression("tat > :now AND tat <= :lim")
            .expression_attribute_names("#e", TTL_ATTRIBUTE)
            .expression_attribute_values(":cost", n(take.cost_us))
            .expression_attribute_values(":now", n(now_us))
            .expression_attribute_values(":lim", n(now_us + take.limit_us - take.cost_us))
            .expression_attribute_values(":exp", expires.clone());
        let fresh = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(item))
            .update_expression("SET tat = :next, #e = :exp")
            .condition_expression("attribute_not_exists(tat) OR tat <= :now")
            .expression_attribute_names("#e", TTL_ATTRIBUTE)
            .expression_attribute_values(":next", n(now_us + take.cost_us))
            .expression_attribute_values(":now", n(now_us))
            .expression_attribute_values(":exp", expires);
        let order = match idle {
            true => [fresh, busy],
            false => [busy, fresh],
        };
        for update in order {
            match update.send().await {
                Ok(_) => return Ok(true),
                Err(e) if e.as_service_error().is_some_and(is_conditional_failure) => {}
                Err(e) => return Err(unavailable(e)),
            }
        }
        Ok(false)
    }
}
