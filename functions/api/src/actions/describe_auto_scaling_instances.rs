use crate::App;
use phantom::identity::Caller;
use phantom::{paging, ApiResult};
use serde_json::{json, Value};

/// AWS allows at most 50 records a page here.
const MAX: usize = 50;

pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let limit = paging::max_records_within(input["MaxRecords"].as_i64(), MAX, MAX)?;
    let after = paging::resume_after(input["NextToken"].as_str())?;
    let ids = super::names(&input, "InstanceIds");
    // Instances are few per user: read them all (one Query), page by instance id.
    let mut all: Vec<(String, Value)> = app
        .store
        .all_instances(&caller.user)
        .await?
        .into_iter()
        .filter(|(_, m)| ids.as_ref().is_none_or(|ids| ids.contains(&m.id)))
        .filter(|(_, m)| after.as_ref().is_none_or(|a| m.id > *a))
        .map(|(group, m)| (m.id.clone(), m.describe_in(&group)))
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let page = paging::page(all, limit, |(id, _)| id);
    let docs: Vec<Value> = page.items.into_iter().map(|(_, d)| d).collect();
    Ok(Some(json!({
        "AutoScalingInstances": docs,
        "NextToken": page.next_token,
    })))
}
