use crate::App;
use phantom_model::request::DescribeAutoScalingInstances;
use phantom_model::response;
use phantom_rules::identity::Caller;
use phantom_wire::{paging, ApiResult};

/// AWS allows at most 50 records a page here.
const MAX: usize = 50;

pub async fn run(
    app: &App,
    caller: &Caller,
    input: DescribeAutoScalingInstances,
) -> ApiResult<response::DescribeAutoScalingInstances> {
    let limit = paging::max_records_within(input.paging.max_records, MAX, MAX)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let ids = super::names(input.instance_ids);
    // Instances are few per user: read them all (one Query), page by instance id.
    let mut all: Vec<(String, response::Instance)> = app
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
    Ok(response::DescribeAutoScalingInstances {
        auto_scaling_instances: page.items.into_iter().map(|(_, d)| d).collect(),
        next_token: page.next_token,
    })
}
