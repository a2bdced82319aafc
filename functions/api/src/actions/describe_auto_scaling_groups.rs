use super::names;
use crate::App;
use phantom_model::request::DescribeAutoScalingGroups;
use phantom_model::response;
use phantom_rules::group::{matches_filters, parse_filters};
use phantom_rules::identity::Caller;
use phantom_rules::reconcile::Member;
use phantom_seams::store::Page;
use phantom_wire::paging;
use phantom_wire::ApiResult;
use std::collections::{BTreeMap, BTreeSet};

pub async fn run(
    app: &App,
    caller: &Caller,
    input: DescribeAutoScalingGroups,
) -> ApiResult<response::DescribeAutoScalingGroups> {
    let limit = paging::max_records(input.paging.max_records)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let filters = parse_filters(&input.filters)?;
    let wanted = names(input.auto_scaling_group_names);
    let found = app
        .store
        .groups(
            &caller.user,
            Page {
                names: wanted.as_deref(),
                after: after.as_deref(),
                want: limit + 1,
            },
            &|g| matches_filters(&g.settings.tags, &filters),
        )
        .await?;
    let page = paging::page(found, limit, |g| &g.name);
    // The instances of the page's groups only. Named groups: one read each, at once. A listing:
    // one read over the names from the page's first group to its last (a page is in name order),
    // keeping those of the page.
    // IncludeInstances false: none read, none shown.
    let include = input.include_instances != Some(false);
    let mut instances: BTreeMap<String, Vec<Member>> = BTreeMap::new();
    if include && wanted.is_some() {
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
    } else if let (true, Some(first), Some(last)) = (include, page.items.first(), page.items.last())
    {
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
    let groups = page
        .items
        .into_iter()
        .map(|g| {
            // A group without instances has none in the map.
            let members = instances.remove(&g.name).unwrap_or_default();
            let (warm, in_group): (Vec<_>, Vec<_>) =
                members.iter().partition(|m| m.lifecycle.is_warm());
            let shown = in_group.iter().map(|m| g.describe_member(m, now)).collect();
            // Unread, the pool's VMs are not counted either.
            g.describe(shown, include.then_some(warm.len() as i64))
        })
        .collect();
    Ok(response::DescribeAutoScalingGroups {
        auto_scaling_groups: groups,
        next_token: page.next_token,
    })
}
