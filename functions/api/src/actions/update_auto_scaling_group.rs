use super::{change_group, launch_config_not_found, lookups};
use crate::App;
use phantom_model::request::UpdateAutoScalingGroup;
use phantom_rules::group;
use phantom_rules::identity::Caller;
use phantom_rules::template;
use phantom_wire::{ApiError, ApiResult};

/// Every setting of the model, checked as at creation; sizes as AWS adjusts them; a new launch
/// configuration or template applies to VMs launched from now on. A group stays on its cloud: its
/// VMs are watched there, so a launch configuration or template of another cloud is refused.
pub async fn run(app: &App, caller: &Caller, mut input: UpdateAutoScalingGroup) -> ApiResult<()> {
    group::check_new_launch_source(&input.settings)?;
    // AWS's words for a group that is not there, on this action only.
    let Some(found) = app
        .store
        .group(&caller.user, &input.auto_scaling_group_name)
        .await?
    else {
        return Err(ApiError::validation(
            "AutoScalingGroup name not found - null",
        ));
    };
    lookups::name_zone_ids(app, caller, &found.cloud, &mut input.settings).await?;
    let name = &input.auto_scaling_group_name;
    let s = &input.settings;
    // The launch configuration's cloud (the store re-checks that it exists when it moves the
    // in-use mark).
    let lc_cloud = match s.launch_configuration_name.as_deref() {
        Some(lc_name) => Some(
            app.store
                .launch_config(&caller.user, lc_name)
                .await?
                .ok_or_else(|| launch_config_not_found(lc_name))?
                .cloud,
        ),
        None => None,
    };
    // The new templates as their cloud names them.
    let mut template_names = Vec::new();
    let template_cloud = match template::of(
        s.launch_template.as_ref(),
        s.mixed_instances_policy.as_ref(),
    )? {
        Some(spec) => {
            let cloud = lookups::template_cloud(app, &spec).await?;
            // A template on another cloud than the group's is refused below without asking.
            if found.cloud == cloud.name {
                template_names = lookups::check_templates(app, caller, &cloud.name, &spec).await?;
            }
            Some(cloud.name)
        }
        None => None,
    };
    // New subnets bring their zones (on the group's own cloud); new zones alone must be those
    // of the subnets the group has.
    let subnets = match (&s.vpc_zone_identifier, &s.availability_zones) {
        (Some(new), _) => group::subnet_ids(Some(new)),
        (None, Some(_)) => group::subnet_ids(found.settings.vpc_zone_identifier.as_deref()),
        (None, None) => Vec::new(),
    };
    let subnet_zones = lookups::subnet_zones(app, caller, &found.cloud, &subnets).await?;
    let reservation_zones = lookups::reservation_zones(app, caller, &found.cloud, s).await?;
    change_group(app, caller, name, Some("UpdateAutoScalingGroup"), |g| {
        if let (Some(cloud), Some(lc)) = (
            lc_cloud.as_deref().filter(|c| *c != g.cloud),
            &s.launch_configuration_name,
        ) {
            return Err(ApiError::validation(format!(
                "The launch configuration {lc} is for cloud '{cloud}', but AutoScalingGroup {name} runs on cloud '{}': a group's launch configuration stays on its cloud.",
                g.cloud
            )));
        }
        if let Some(cloud) = template_cloud.as_deref().filter(|c| *c != g.cloud) {
            return Err(ApiError::validation(format!(
                "The launch template is on cloud '{cloud}', but AutoScalingGroup {name} runs on cloud '{}': a group's launch template stays on its cloud.",
                g.cloud
            )));
        }
        let moves = s.launch_configuration_name.is_some()
            || s.launch_template.is_some()
            || s.mixed_instances_policy.is_some();
        let refreshing_to = phantom_rules::refresh::active(&g.settings.instance_refreshes)
            .is_some_and(|r| r.desired_configuration.is_some());
        if moves && refreshing_to {
            // AWS's words: the refresh moves the group to its DesiredConfiguration when it ends.
            return Err(ApiError::validation(
                "An active instance refresh with a desired configuration exists. All configuration \
                 options derived from the desired configuration are not available for update \
                 while the instance refresh is active.",
            ));
        }
        if s.mixed_instances_policy.is_some() && g.settings.warm_pool_configuration.is_some() {
            return Err(ApiError::validation(
                "You can't add a mixed instances policy to an Auto Scaling group that has a warm pool.",
            ));
        }
        let mut next = group::update(g, &input)?;
        if template_cloud.is_some() {
            next.settings.template_names = template_names.clone();
        } else if s.launch_configuration_name.is_some() {
            next.settings.template_names.clear();
        }
        if let Some(found) = &subnet_zones {
            let given = s.availability_zones.as_deref();
            group::in_subnet_zones(&mut next.settings, given, found)?;
        }
        if let Some(z) = &reservation_zones {
            next.settings.reservation_zones = z.clone();
        }
        phantom_rules::reservation::check_zones(&next.settings, &next.subnets())?;
        Ok(next)
    })
    .await?;
    Ok(())
}
