//! A group's clouds as its tags say (`phantom:clouds`, `phantom:policy`; `phantom_rules::spread`),
//! checked whenever a group is created or changed: a value that cannot be used is refused with a
//! ValidationError naming the tag and the problem, with nothing written.

use crate::App;
use phantom_rules::group::Group;
use phantom_rules::group::GroupRules;
use phantom_rules::identity::Caller;
use phantom_rules::spread::{bad_clouds as bad, Spread};
use phantom_wire::{ApiError, ApiResult};

pub(super) use phantom_rules::spread::settled;

/// Each listed cloud is registered, the caller has credentials there, and the group's launch
/// configuration exists for it (`web@sierra` for a group from `web@hotel`), or its launch
/// template does there (`fleet@sierra`, asked of the cloud as for the group's own). The store's
/// write checks the launch configurations again (they are marked in use in the same
/// transaction).
pub(super) async fn check(app: &App, caller: &Caller, g: &Group) -> ApiResult<()> {
    let Some(spread) = g.spread()? else {
        return Ok(());
    };
    // `settled` has refused a group across clouds with neither, or with a template's id.
    let template = phantom_rules::template::of(
        g.launching().launch_template,
        g.launching().mixed_instances_policy,
    )?;
    let own = match (g.launch_configuration(), &template) {
        (Some(lc), _) => Some(lc),
        (None, Some(_)) => None,
        (None, None) => {
            return Err(ApiError::from(bad(
                "a group across clouds launches from a launch configuration or a launch template on each cloud.",
            )))
        }
    };
    let registered = app.store.clouds().await?;
    let mine = app.store.all_cloud_credentials(&caller.user).await?;
    for site in &spread.sites {
        let cloud = &site.cloud;
        if !registered.iter().any(|c| c.name == *cloud) {
            return Err(ApiError::from(bad(format!(
                "cloud {cloud} is not registered."
            ))));
        }
        if !mine.iter().any(|c| c.cloud == *cloud) {
            return Err(ApiError::from(bad(format!(
                "you have no credentials for cloud {cloud}."
            ))));
        }
        if let Some(own) = own {
            let lc = phantom_rules::on_cloud::launch_configuration(own, cloud);
            if app.store.launch_config(&caller.user, &lc).await?.is_none() {
                return Err(ApiError::from(bad(format!(
                    "there is no launch configuration {lc} for cloud {cloud}: create it first."
                ))));
            }
        }
    }
    if let (None, Some(spec)) = (own, &template) {
        check_templates(app, caller, &spread, spec).await?;
    }
    Ok(())
}

/// A launch template (and its overrides') is on each of the group's clouds, by name (`settled`
/// refuses an id, which differs from cloud to cloud), each a cloud with templates.
pub(super) async fn check_templates(
    app: &App,
    caller: &Caller,
    spread: &Spread,
    spec: &phantom_rules::template::Spec,
) -> ApiResult<()> {
    if spec.templates().iter().any(|t| t.name.is_none()) {
        return Err(ApiError::from(bad(
            "a group across clouds launches from the launch template of one name on each cloud (<name>@<cloud>): give LaunchTemplateName, not an id, which differs from cloud to cloud.",
        )));
    }
    let registered = app.store.clouds().await?;
    for site in &spread.sites {
        let cloud = &site.cloud;
        let Some(record) = registered.iter().find(|c| c.name == *cloud) else {
            return Err(ApiError::from(bad(format!(
                "cloud {cloud} is not registered."
            ))));
        };
        phantom_rules::template::check_cloud(cloud, record.launch_templates)?;
        for t in spec.templates() {
            super::lookups::check_template(app, caller, cloud, t).await?;
        }
    }
    Ok(())
}
