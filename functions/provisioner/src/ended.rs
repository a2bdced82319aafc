//! What a round decides on: the cloud's list of the group's VMs that are not terminated (those its
//! answer shows with the group's tags), and the recorded ones that list leaves out, as the cloud describes them by id (terminated, for about
//! an hour on EC2, then unknown).

use phantom_seams::cloud::{Cloud, CloudError, Tagged};
use std::collections::BTreeSet;

/// The owner's VMs on the cloud that are not terminated (of one group, by id, or all) that the
/// answer shows with those tags: a VM untagged a moment ago may still match EC2's filters.
pub(crate) async fn tagged(
    cloud: &dyn Cloud,
    owner: &str,
    group_id: Option<&str>,
) -> Result<Vec<Tagged>, CloudError> {
    let mut listed = cloud.tagged(owner, group_id).await?;
    listed.retain(|t| t.carries(owner, group_id));
    Ok(listed)
}

/// `listed` with the VMs of `recorded` it leaves out, as the cloud describes them by id: one
/// DescribeInstances, and only when any is left out. A VM ended outside Phantom is then seen
/// terminated, as before the list left terminated VMs out, not missing.
pub(crate) async fn with_ended<'a>(
    cloud: &dyn Cloud,
    mut listed: Vec<Tagged>,
    recorded: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<Tagged>, CloudError> {
    let known: BTreeSet<&str> = listed.iter().map(|t| t.seen.id.as_str()).collect();
    let missing: Vec<String> = recorded
        .into_iter()
        .filter(|id| !known.contains(id))
        .map(str::to_string)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !missing.is_empty() {
        listed.extend(cloud.describe(&missing).await?);
    }
    Ok(listed)
}
