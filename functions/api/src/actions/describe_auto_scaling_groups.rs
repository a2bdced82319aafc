use super::names;
use crate::App;
use phantom::group::{matches_filters, parse_filters};
use phantom::identity::Caller;
use phantom::paging;
use phantom::ApiResult;
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let limit = paging::max_records(input["MaxRecords"].as_i64())?;
    let after = paging::resume_after(input["NextToken"].as_str())?;
    let filters = parse_filters(&input["Filters"])?;
    let wanted = names(&input, "AutoScalingGroupNames");
    let found = app
        .store
        .groups(
            &caller.user,
            wanted.as_deref(),
            after.as_deref(),
            limit + 1,
            &|g| matches_filters(&g.doc, &filters),
        )
        .await?;
    let page = paging::page(found, limit, |g| &g.name);
    // One Query for the instances of all the user's groups, rather than one per group.
    let mut instances: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    if !page.items.is_empty() {
        for (group, m) in app.store.all_instances(&caller.user).await? {
            instances.entry(group).or_default().push(m.describe());
        }
    }
    let docs: Vec<Value> = page
        .items
        .iter()
        .map(|g| {
            let mut d = g.describe();
            d["Instances"] = Value::Array(instances.remove(&g.name).unwrap_or_default());
            d
        })
        .collect();
    Ok(Some(json!({
        "AutoScalingGroups": docs,
        "NextToken": page.next_token,
    })))
}
