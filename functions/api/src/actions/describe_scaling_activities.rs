use crate::App;
use phantom_model::request::DescribeScalingActivities;
use phantom_model::response;
use phantom_rules::identity::Caller;
use phantom_wire::{paging, ApiResult};

const MAX: usize = 100;

pub async fn run(
    app: &App,
    caller: &Caller,
    input: DescribeScalingActivities,
) -> ApiResult<response::Activities> {
    let limit = paging::max_records_within(input.paging.max_records, MAX, MAX)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let group = input.auto_scaling_group_name.as_deref();
    let ids = super::names(input.activity_ids);
    let found = match &ids {
        // By id: look through the group's (or all) activities.
        Some(ids) => app
            .store
            .activities(&caller.user, group, after.as_deref(), usize::MAX)
            .await?
            .into_iter()
            .filter(|(_, a)| ids.contains(&a.activity_id))
            .take(limit + 1)
            .collect(),
        None => {
            app.store
                .activities(&caller.user, group, after.as_deref(), limit + 1)
                .await?
        }
    };
    let page = paging::page(found, limit, |(k, _)| k);
    Ok(response::Activities {
        activities: page.items.into_iter().map(|(_, d)| d).collect(),
        next_token: page.next_token,
    })
}
