//! A group's clouds as its tags say (`phantom:clouds`, `phantom:policy`; `phantom::spread`),
//! checked whenever a group is created or changed: a value that cannot be used is refused with a
//! ValidationError naming the tag and the problem, with nothing written.

use crate::App;
use phantom::group::Group;
use phantom::identity::Caller;
use phantom::spread::{Policy, Spread, TAG_CLOUDS};
use phantom::{ApiError, ApiResult};

fn bad(problem: impl std::fmt::Display) -> ApiError {
    ApiError::validation(format!("Tag {TAG_CLOUDS}: {problem}"))
}

/// The group as it will be stored: its tags readable, its own cloud listed, and a `fixed`
/// group's desired capacity the sum of its clouds' counts (set so when the tags change; refused
/// when only the capacity does).
pub(super) fn settled(old: Option<&Group>, mut next: Group) -> ApiResult<Group> {
    let Some(spread) = next.spread()? else {
        return Ok(next);
    };
    if next.launch_configuration.is_empty() {
        return Err(bad(
            "a group across clouds launches from a launch configuration on each cloud (<name>@<cloud>), not from a launch template.",
        ));
    }
    if !spread.sites.iter().any(|s| s.cloud == next.cloud) {
        return Err(bad(format!(
            "the group's own cloud {} (of its launch configuration {}) must be listed.",
            next.cloud, next.launch_configuration
        )));
    }
    if spread.policy == Policy::Overflow && next.desired > spread.total() {
        return Err(bad(format!(
            "its clouds hold at most {} VMs, fewer than the desired capacity {}.",
            spread.total(),
            next.desired
        )));
    }
    if spread.policy == Policy::Fixed {
        let total = spread.total();
        let tags_changed = old.is_none_or(|o| o.spread().ok().flatten().as_ref() != Some(&spread));
        if tags_changed {
            next.desired = total;
        } else if next.desired != total {
            return Err(ApiError::validation(format!(
                "A fixed group's desired capacity is the sum of its clouds' counts ({total}): change tag {TAG_CLOUDS} to change it."
            )));
        }
        if total < next.min || total > next.max {
            return Err(bad(format!(
                "a fixed group keeps {total} VMs, outside its MinSize {} and MaxSize {}.",
                next.min, next.max
            )));
        }
    }
    Ok(next)
}

/// Each listed cloud is registered, the caller has credentials there, and the group's launch
/// configuration exists for it (`web@sierra` for a group from `web@hotel`). The store's write
/// checks the launch configurations again (they are marked in use in the same transaction).
pub(super) async fn check(app: &App, caller: &Caller, g: &Group) -> ApiResult<()> {
    let Some(spread) = g.spread()? else {
        return Ok(());
    };
    let registered = app.store.clouds().await?;
    let mine = app.store.all_cloud_credentials(&caller.user).await?;
    for site in &spread.sites {
        let cloud = &site.cloud;
        if !registered.iter().any(|c| c.name == *cloud) {
            return Err(bad(format!("cloud {cloud} is not registered.")));
        }
        if !mine.iter().any(|c| c.cloud == *cloud) {
            return Err(bad(format!("you have no credentials for cloud {cloud}.")));
        }
        let lc = Spread::launch_configuration_on(&g.launch_configuration, cloud);
        if app.store.launch_config(&caller.user, &lc).await?.is_none() {
            return Err(bad(format!(
                "there is no launch configuration {lc} for cloud {cloud}: create it first."
            )));
        }
    }
    Ok(())
}
