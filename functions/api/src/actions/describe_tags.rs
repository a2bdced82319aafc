use crate::App;
use phantom::identity::Caller;
use phantom::{paging, tags, ApiResult};
use serde_json::{json, Value};

/// The tags of the caller's groups, by group then key, filtered and paged.
pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let limit = paging::max_records(input["MaxRecords"].as_i64())?;
    let after = paging::resume_after(input["NextToken"].as_str())?;
    let filters = tags::parse_filters(&input["Filters"])?;
    let groups = app
        .store
        .groups(&caller.user, None, None, usize::MAX, &|_| true)
        .await?;
    let mut found: Vec<&tags::TagDescription> = groups
        .iter()
        .flat_map(|g| &g.settings.tags)
        .filter(|t| tags::matches(t, &filters))
        .filter(|t| {
            after
                .as_deref()
                .is_none_or(|a| tags::position(t).as_str() > a)
        })
        .collect();
    found.sort_by_key(|t| tags::position(t));
    let positions: Vec<String> = found.iter().map(|t| tags::position(t)).collect();
    let page = paging::page(
        positions.into_iter().zip(found).collect(),
        limit,
        |(p, _)| p,
    );
    Ok(Some(json!({
        "Tags": page.items.into_iter().map(|(_, t)| t).collect::<Vec<_>>(),
        "NextToken": page.next_token,
    })))
}
