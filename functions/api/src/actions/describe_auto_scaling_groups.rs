use super::names;
use crate::App;
use phantom::group::{matches_filters, parse_filters};
use phantom::identity::Caller;
use phantom::paging;
use phantom::reconcile::Member;
use phantom::ApiResult;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

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
            &|g| matches_filters(&g.settings.tags, &filters),
        )
        .await?;
    let page = paging::page(found, limit, |g| &g.name);
    // The instances of the page's groups only. Named groups: one read each, at once. A listing:
    // one read over the names from the page's first group to its last (a page is in name order),
    // keeping those of the page.
    let mut instances: BTreeMap<String, Vec<Member>> = BTreeMap::new();
    if wanted.is_some() {
        let reads = page
            .items
            .iter()
            .map(|g| app.store.instances(&caller.user, &g.name));
        for (g, members) in page
            .items
            .iter()
            .zip(futures::future::join_all(reads).await)
        {
            instances.insert(g.name.clone(), members?);
        }
    } else if let (Some(first), Some(last)) = (page.items.first(), page.items.last()) {
        let on_page: BTreeSet<&str> = page.items.iter().map(|g| g.name.as_str()).collect();
        for (group, m) in app
            .store
            .instances_between(&caller.user, &first.name, &last.name)
            .await?
        {
            if on_page.contains(group.as_str()) {
                instances.entry(group).or_default().push(m);
            }
        }
    }
    let now = app.clock.now_ms();
    let docs: Vec<Value> = page
        .items
        .iter()
        .map(|g| {
            let mut d = g.describe();
            d["Instances"] = instances
                .remove(&g.name)
                .unwrap_or_default()
                .iter()
                .map(|m| g.describe_member(m, now))
                .collect();
            d
        })
        .collect();
    Ok(Some(json!({
        "AutoScalingGroups": docs,
        "NextToken": page.next_token,
    })))
}
