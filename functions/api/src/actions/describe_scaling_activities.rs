use crate::App;
use phantom::identity::Caller;
use phantom::{paging, ApiError, ApiResult};
use serde_json::{json, Value};

const MAX: i64 = 100;

pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let requested = input["MaxRecords"].as_i64();
    if requested.is_some_and(|n| !(1..=MAX).contains(&n)) {
        return Err(ApiError::validation(format!(
            "1 validation error detected: Value '{}' at 'maxRecords' failed to satisfy constraint: Member must have value between 1 and {MAX}",
            requested.unwrap_or_default()
        )));
    }
    let limit = requested.unwrap_or(MAX) as usize;
    let after = paging::resume_after(input["NextToken"].as_str())?;
    let group = input["AutoScalingGroupName"].as_str();
    let ids = super::names(&input, "ActivityIds");
    let found = match &ids {
        // By id: look through the group's (or all) activities.
        Some(ids) => app
            .store
            .activities(&caller.user, group, after.as_deref(), usize::MAX)
            .await?
            .into_iter()
            .filter(|(_, doc)| ids.iter().any(|id| doc["ActivityId"] == id.as_str()))
            .take(limit + 1)
            .collect(),
        None => {
            app.store
                .activities(&caller.user, group, after.as_deref(), limit + 1)
                .await?
        }
    };
    let page = paging::page(found, limit, |(k, _)| k);
    let docs: Vec<Value> = page.items.into_iter().map(|(_, d)| d).collect();
    Ok(Some(json!({
        "Activities": docs,
        "NextToken": page.next_token,
    })))
}
