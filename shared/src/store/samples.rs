//! A group's metrics as the store holds them (EnableMetricsCollection): the group and its
//! instances read, `group_metrics::samples` applied. For the health check's CloudWatch lines and
//! the api's scrape of every user's groups.

use super::{Store, StoreResult};
use crate::group_metrics::{self, GroupSamples};

/// The group's enabled metrics now; None if it is gone or has none enabled (it is on the index
/// of due groups for another reason). Two reads: the group, then (metrics enabled) its instances.
pub async fn of(store: &dyn Store, user: &str, group: &str) -> StoreResult<Option<GroupSamples>> {
    let Some(g) = store.group(user, group).await? else {
        return Ok(None);
    };
    if g.settings.enabled_metrics.is_empty() {
        return Ok(None);
    }
    let members = store.instances(user, group).await?;
    Ok(Some(GroupSamples {
        user: user.to_string(),
        group: group.to_string(),
        samples: group_metrics::samples(&g, &members),
    }))
}
