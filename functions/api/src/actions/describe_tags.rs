use crate::App;
use phantom_model::request::DescribeTags;
use phantom_model::response;
use phantom_rules::identity::Caller;
use phantom_rules::tags;
use phantom_wire::{paging, ApiResult};

/// The tags of the caller's groups, by group then key, filtered and paged.
pub async fn run(
    app: &App,
    caller: &Caller,
    input: DescribeTags,
) -> ApiResult<response::DescribeTags> {
    let limit = paging::max_records(input.paging.max_records)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let filters = tags::parse_filters(&input.filters)?;
    let groups = app.store.all_groups(&caller.user).await?;
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
    Ok(response::DescribeTags {
        tags: page.items.into_iter().map(|(_, t)| t.clone()).collect(),
        next_token: page.next_token,
    })
}
