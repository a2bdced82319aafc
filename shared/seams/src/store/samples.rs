//! Groups' metrics as the store holds them (EnableMetricsCollection): groups and their instances
//! read, `group_metrics::samples` applied. For a user's scrape, the api's scrape of every user's
//! groups and the health check's CloudWatch lines.

use super::{Page, Store, StoreResult};
use futures::stream::{self, StreamExt};
use phantom_rules::group::Group;
use phantom_rules::group_metrics::{self, GroupSamples};
use std::collections::BTreeMap;

/// A user with at least this many groups due is read whole (its groups, then all its instances:
/// two Queries) rather than group by group (two reads each).
pub const BY_USER: usize = 8;
/// Reads in flight at once.
const PARALLEL: usize = 16;

/// Every group of the user with metrics enabled, in name order: two Queries whatever the number
/// of groups (each paged by the store at 1 MB), none of instances if no group has metrics.
pub async fn of_user(store: &dyn Store, user: &str) -> StoreResult<Vec<GroupSamples>> {
    let groups = store
        .groups(user, Page::ALL, &|g| !g.settings.enabled_metrics.is_empty())
        .await?;
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let groups: Vec<&Group> = groups.iter().collect();
    with_instances(store, user, &groups, true).await
}

/// The samples of `groups` (metrics enabled), by name, their instances read with one Query of
/// all the user's (`whole`) or a Query a group.
async fn with_instances(
    store: &dyn Store,
    user: &str,
    groups: &[&Group],
    whole: bool,
) -> StoreResult<Vec<GroupSamples>> {
    let mut members: BTreeMap<String, Vec<_>> = BTreeMap::new();
    if whole {
        for (group, m) in store.all_instances(user).await? {
            members.entry(group).or_default().push(m);
        }
    } else {
        for g in groups {
            members.insert(g.name.clone(), store.instances(user, &g.name).await?);
        }
    }
    let mut out: Vec<GroupSamples> = groups
        .iter()
        .map(|g| GroupSamples {
            user: user.to_string(),
            group: g.name.clone(),
            samples: group_metrics::samples(g, members.get(&g.name).map_or(&[][..], Vec::as_slice)),
        })
        .collect();
    out.sort_by(|a, b| a.group.cmp(&b.group));
    Ok(out)
}

/// One user's due groups as read once (`groups_of_due`).
pub struct DueGroups {
    pub user: String,
    /// The user's groups on the index of due groups.
    pub due: usize,
    /// Those still there, by name; an error if the store could not be read.
    pub groups: StoreResult<Vec<Group>>,
}

/// The groups on the index of due groups, read once, by user: a user with `BY_USER` or more due
/// groups with one Query of its groups (kept: the due ones), the others group by group (a
/// GetItem each; one gone since is left out); each user's read on its own, so that one failing
/// spares the others.
pub async fn groups_of_due(store: &dyn Store, due: &[(String, String)]) -> Vec<DueGroups> {
    // Owned, so that the reads' futures are Send whatever the borrows' lifetimes.
    let mut by_user: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (user, group) in due {
        by_user.entry(user.clone()).or_default().push(group.clone());
    }
    let mut reads: Vec<DueGroups> = stream::iter(by_user)
        .map(|(user, names)| async move {
            let read = async {
                if names.len() >= BY_USER {
                    return store
                        .groups(&user, Page::ALL, &|g| names.contains(&g.name))
                        .await;
                }
                let mut found = Vec::new();
                for name in &names {
                    found.extend(store.group(&user, name).await?);
                }
                Ok(found)
            };
            let groups = read.await;
            DueGroups {
                due: names.len(),
                groups,
                user,
            }
        })
        .buffer_unordered(PARALLEL)
        .collect()
        .await;
    reads.sort_by(|a, b| a.user.cmp(&b.user));
    reads
}

/// The metrics of those of the user's `groups` with metrics enabled, by name: their instances
/// read with one Query of all the user's if there are `BY_USER` or more, else group by group.
pub async fn of_groups(
    store: &dyn Store,
    user: &str,
    groups: &[Group],
) -> StoreResult<Vec<GroupSamples>> {
    let metered: Vec<&Group> = groups
        .iter()
        .filter(|g| !g.settings.enabled_metrics.is_empty())
        .collect();
    with_instances(store, user, &metered, metered.len() >= BY_USER).await
}

/// What `of_due` read of one user's due groups.
pub struct Read {
    pub user: String,
    /// The user's groups on the index of due groups (with metrics enabled or not).
    pub due: usize,
    /// Those with metrics enabled, by name; an error if the store could not be read.
    pub groups: StoreResult<Vec<GroupSamples>>,
}

/// The due groups with metrics enabled, by user (`groups_of_due`, then `of_groups`).
pub async fn of_due(store: &dyn Store, due: &[(String, String)]) -> Vec<Read> {
    of_due_groups(store, groups_of_due(store, due).await).await
}

/// `of_due` from the due groups already read (the health check reads them once for its run).
pub async fn of_due_groups(store: &dyn Store, due: Vec<DueGroups>) -> Vec<Read> {
    let mut reads: Vec<Read> = stream::iter(due)
        .map(|d| async move {
            let groups = match d.groups {
                Ok(groups) => of_groups(store, &d.user, &groups).await,
                Err(e) => Err(e),
            };
            Read {
                user: d.user,
                due: d.due,
                groups,
            }
        })
        .buffer_unordered(PARALLEL)
        .collect()
        .await;
    reads.sort_by(|a, b| a.user.cmp(&b.user));
    reads
}
