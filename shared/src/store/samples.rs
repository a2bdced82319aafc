//! Groups' metrics as the store holds them (EnableMetricsCollection): groups and their instances
//! read, `group_metrics::samples` applied. For a user's scrape, the api's scrape of every user's
//! groups and the health check's CloudWatch lines.

use super::{Store, StoreResult};
use crate::group_metrics::{self, GroupSamples};
use futures::stream::{self, StreamExt};
use std::collections::BTreeMap;

/// A user with at least this many groups due is read whole (its groups, then all its instances:
/// two Queries) rather than group by group (two reads each).
pub const BY_USER: usize = 8;
/// Reads in flight at once.
const PARALLEL: usize = 16;

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

/// Every group of the user with metrics enabled, in name order: two Queries whatever the number
/// of groups (each paged by the store at 1 MB), none of instances if no group has metrics.
pub async fn of_user(store: &dyn Store, user: &str) -> StoreResult<Vec<GroupSamples>> {
    let groups = store
        .groups(user, None, None, usize::MAX, &|g| {
            !g.settings.enabled_metrics.is_empty()
        })
        .await?;
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let mut members: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for (group, m) in store.all_instances(user).await? {
        members.entry(group).or_default().push(m);
    }
    Ok(groups
        .iter()
        .map(|g| GroupSamples {
            user: user.to_string(),
            group: g.name.clone(),
            samples: group_metrics::samples(g, members.get(&g.name).map_or(&[][..], Vec::as_slice)),
        })
        .collect())
}

/// What `of_due` read of one user's due groups.
pub struct Read {
    pub user: String,
    /// The user's groups on the index of due groups (with metrics enabled or not).
    pub due: usize,
    /// Those with metrics enabled, by name; an error if the store could not be read.
    pub groups: StoreResult<Vec<GroupSamples>>,
}

/// The due groups (the index of due groups: those with metrics enabled among them) with metrics
/// enabled, by user: a user with `BY_USER` or more due groups read whole, the others group by
/// group; each user's read on its own, so that one failing spares the others.
pub async fn of_due(store: &dyn Store, due: &[(String, String)]) -> Vec<Read> {
    // Owned, so that the reads' futures are Send whatever the borrows' lifetimes.
    let mut by_user: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (user, group) in due {
        by_user.entry(user.clone()).or_default().push(group.clone());
    }
    let mut reads: Vec<Read> = stream::iter(by_user)
        .map(|(user, groups)| async move {
            let read = async {
                if groups.len() >= BY_USER {
                    return of_user(store, &user).await;
                }
                let mut found = Vec::new();
                for group in &groups {
                    found.extend(of(store, &user, group).await?);
                }
                Ok(found)
            };
            let groups_read = read.await;
            Read {
                due: groups.len(),
                groups: groups_read,
                user,
            }
        })
        .buffer_unordered(PARALLEL)
        .collect()
        .await;
    reads.sort_by(|a, b| a.user.cmp(&b.user));
    reads
}
