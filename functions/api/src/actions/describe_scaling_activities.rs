use crate::App;
use phantom::identity::Caller;
use phantom::{paging, ApiResult};
use serde_json::{json, Value};

const MAX: usize = 100;

pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let limit = paging::max_records_within(input["MaxRecords"].as_i64(), MAX, MAX)?;
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
