//! A user's scaling activities, newest first: of one group or all, by id, by `Filters` (start
//! time bounds, status), and only those of groups that exist unless `IncludeDeletedGroups`: a
//! group deleted, or deleted and made again under its name, keeps its activities (six weeks)
//! under its own ARN.

use crate::App;
use phantom_model::activity::ScalingActivity;
use phantom_model::request::DescribeScalingActivities;
use phantom_model::response;
use phantom_rules::activity::Filters;
use phantom_rules::identity::Caller;
use phantom_wire::{paging, ApiError, ApiResult};
use std::collections::BTreeSet;

const MAX: usize = 100;

/// When an activity started (Unix ms): Phantom writes it, so one it cannot read is an error.
fn start_of(a: &ScalingActivity) -> ApiResult<i64> {
    a.start_ms().ok_or_else(|| {
        ApiError::internal(format!(
            "activity {} has a StartTime that cannot be read: {}",
            a.activity_id, a.start_time
        ))
    })
}
/// Activities read from the store at a time while looking for a page of those kept.
const BATCH: usize = 200;

pub async fn run(
    app: &App,
    caller: &Caller,
    input: DescribeScalingActivities,
) -> ApiResult<response::Activities> {
    let limit = paging::max_records_within(input.paging.max_records, MAX, MAX)?;
    let after = paging::resume_after(input.paging.next_token.as_deref())?;
    let group = input.auto_scaling_group_name.as_deref();
    let filters = Filters::parse(&input.filters, group.is_some())?;
    let ids = super::names(input.activity_ids);
    // The ARNs of the groups whose activities show (None: deleted ones' too), read beside the
    // first batch of activities.
    let live = async {
        if input.include_deleted_groups == Some(true) {
            return Ok(None);
        }
        let arns: BTreeSet<String> = match group {
            Some(name) => app
                .store
                .group(&caller.user, name)
                .await?
                .into_iter()
                .map(|g| g.settings.arn)
                .collect(),
            None => app
                .store
                .all_groups(&caller.user)
                .await?
                .into_iter()
                .map(|g| g.settings.arn)
                .collect(),
        };
        Ok::<_, ApiError>(Some(arns))
    };
    let first = app
        .store
        .activities(&caller.user, group, after.as_deref(), BATCH);
    let (live, first) = futures::join!(live, first);
    let live: Option<BTreeSet<String>> = live?;
    let mut first = Some(first?);
    let keeps = |a: &ScalingActivity, start_ms: i64| {
        ids.as_ref().is_none_or(|ids| ids.contains(&a.activity_id))
            && live
                .as_ref()
                .is_none_or(|live| live.contains(&a.auto_scaling_group_arn))
            && filters.keeps(a, start_ms)
    };
    // Read on until a page and one more are kept, or the activities run out (a group's run
    // newest first: none past the lower bound is read).
    let mut found = Vec::new();
    let mut cursor = after;
    'reading: loop {
        let batch = match first.take() {
            Some(batch) => batch,
            None => {
                app.store
                    .activities(&caller.user, group, cursor.as_deref(), BATCH)
                    .await?
            }
        };
        let done = batch.len() < BATCH;
        cursor = batch.last().map(|(k, _)| k.clone());
        for (k, a) in batch {
            let start_ms = start_of(&a)?;
            if group.is_some() && filters.from_ms.is_some_and(|from| start_ms < from) {
                break 'reading;
            }
            if keeps(&a, start_ms) {
                found.push((k, a));
            }
        }
        if done || found.len() > limit {
            break;
        }
    }
    found.truncate(limit + 1);
    let page = paging::page(found, limit, |(k, _)| k);
    Ok(response::Activities {
        activities: page.items.into_iter().map(|(_, d)| d).collect(),
        next_token: page.next_token,
    })
}
