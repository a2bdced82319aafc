use super::{change_group, launch_config_not_found, lookups, string};
use crate::App;
use phantom::group;
use phantom::identity::Caller;
use phantom::template;
use phantom::{ApiError, ApiResult};
use serde_json::Value;

/// Every setting of the model, checked as at creation; sizes as AWS adjusts them; a new launch
/// configuration or template applies to VMs launched from now on. A group stays on its cloud: its
/// VMs are watched there, so a launch configuration or template of another cloud is refused.
pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let name = string(&input, "AutoScalingGroupName");
    // The launch configuration's cloud (the store re-checks that it exists when it moves the
    // in-use mark).
    let lc_cloud = match input["LaunchConfigurationName"].as_str() {
        Some(lc_name) => Some(
            app.store
                .launch_config(&caller.user, lc_name)
                .await?
                .ok_or_else(|| launch_config_not_found(lc_name))?
                .cloud,
        ),
        None => None,
    };
    let template_cloud = match template::of(&input)? {
        Some(spec) => {
            let cloud_name = spec.cloud_or(app.config.default_cloud.as_deref())?;
            let cloud = app
                .store
                .cloud(&cloud_name)
                .await?
                .ok_or_else(|| phantom::launch_config::unknown_cloud(&cloud_name, &[]))?;
            template::check_cloud(&cloud.name, cloud.launch_templates)?;
            // A template on another cloud than the group's is refused below without asking.
            let group_cloud = app.store.group(&caller.user, name).await?.map(|g| g.cloud);
            if group_cloud.as_deref() == Some(cloud.name.as_str()) {
                lookups::check_template(app, caller, &cloud.name, &spec.template).await?;
            }
            Some(cloud.name)
        }
        None => None,
    };
    change_group(app, caller, name, Some("UpdateAutoScalingGroup"), |g| {
        if let Some(cloud) = lc_cloud.as_deref().filter(|c| *c != g.cloud) {
            return Err(ApiError::validation(format!(
                "The launch configuration {} is for cloud '{cloud}', but AutoScalingGroup {name} runs on cloud '{}': a group's launch configuration stays on its cloud.",
                input["LaunchConfigurationName"].as_str().unwrap_or_default(),
                g.cloud
            )));
        }
        if let Some(cloud) = template_cloud.as_deref().filter(|c| *c != g.cloud) {
            return Err(ApiError::validation(format!(
                "The launch template is on cloud '{cloud}', but AutoScalingGroup {name} runs on cloud '{}': a group's launch template stays on its cloud.",
                g.cloud
            )));
        }
        group::update(g, &input)
    })
    .await?;
    Ok(None)
}
