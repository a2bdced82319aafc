//! The VMs a group has had since a moment: those it has now and those its activities since then
//! brought in (a launch, from the warm pool or not, an attachment). A predictive policy's history
//! is read over them all: the VMs of last week are not this week's.

use super::{Store, StoreError, StoreResult};
use phantom_model::group::Group;
use phantom_rules::activity;
use std::collections::BTreeSet;

/// Activities read at a time.
const BATCH: usize = 100;

pub async fn since(
    store: &dyn Store,
    user: &str,
    g: &Group,
    since_ms: i64,
) -> StoreResult<Vec<String>> {
    let mut ids: BTreeSet<String> = store
        .instances(user, &g.name)
        .await?
        .into_iter()
        .map(|m| m.id)
        .collect();
    let mut cursor: Option<String> = None;
    loop {
        let batch = store
            .activities(user, Some(&g.name), cursor.as_deref(), BATCH)
            .await?;
        let done = batch.len() < BATCH;
        cursor = batch.last().map(|(k, _)| k.clone());
        // A group's activities come newest first: stop at the first one before `since_ms`.
        for (_, a) in &batch {
            let start_ms = a.start_ms().ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "activity {} has a StartTime that cannot be read: {}",
                    a.activity_id, a.start_time
                ))
            })?;
            if start_ms < since_ms {
                return Ok(ids.into_iter().collect());
            }
            // An earlier group of the same name had VMs of its own.
            if a.auto_scaling_group_arn == g.settings.arn {
                ids.extend(activity::joined(a).map(str::to_string));
            }
        }
        if done {
            return Ok(ids.into_iter().collect());
        }
    }
}
