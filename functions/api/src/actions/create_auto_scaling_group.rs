use super::{across, launch_config_not_found, lookups, string};
use crate::App;
use phantom::group::{self, NewGroupContext};
use phantom::identity::Caller;
use phantom::launch_config::unknown_cloud;
use phantom::store::{StoreError, MAX_GROUPS};
use phantom::template;
use phantom::{ApiError, ApiResult};
use serde_json::Value;

pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let name = string(&input, "AutoScalingGroupName");
    let lc_name = input["LaunchConfigurationName"].as_str();
    // The launch configuration gives the group its cloud; the write below re-checks that it still
    // exists, so a concurrent DeleteLaunchConfiguration cannot slip in between.
    let lc = match lc_name {
        Some(n) => Some(
            app.store
                .launch_config(&caller.user, n)
                .await?
                .ok_or_else(|| launch_config_not_found(n))?,
        ),
        None => None,
    };
    // Or the launch template's cloud (the cloud resolves the template when it launches).
    let spec = template::of(&input)?;
    let cloud_name = match (&lc, &spec) {
        (Some(lc), _) => Some(lc.cloud.clone()),
        (None, Some(spec)) => Some(spec.cloud_or(app.config.default_cloud.as_deref())?),
        (None, None) => None,
    };
    let cloud = match &cloud_name {
        Some(name) => Some(
            app.store
                .cloud(name)
                .await?
                .ok_or_else(|| unknown_cloud(name, &[]))?,
        ),
        None => None,
    };
    if let (None, Some(c), Some(spec)) = (&lc, &cloud, &spec) {
        template::check_cloud(&c.name, c.launch_templates)?;
        lookups::check_template(app, caller, &c.name, &spec.template).await?;
    }
    let account = &caller.account_id;
    let ctx = NewGroupContext {
        id: uuid::Uuid::new_v4().to_string(),
        region: &app.config.region,
        account,
        cloud: cloud.as_ref().map(|c| c.name.clone()).unwrap_or_default(),
        default_zone: cloud.as_ref().map(|c| c.zone.as_str()).unwrap_or_default(),
        now: app.clock.now(),
    };
    let g = group::from_input(&input, ctx)?;
    // A fixed group across clouds keeps the sum of its clouds' counts: a DesiredCapacity given
    // must be that sum.
    let asked = input["DesiredCapacity"].as_i64();
    let g = across::settled(None, g)?;
    if asked.is_some_and(|d| d != g.desired) {
        return Err(ApiError::validation(format!(
            "A fixed group's desired capacity is the sum of its clouds' counts ({}): leave DesiredCapacity out or give that.",
            g.desired
        )));
    }
    across::check(app, caller, &g).await?;
    match app.store.create_group(&caller.user, &g).await {
        Ok(()) => {
            super::reconcile(app, caller, name, "CreateAutoScalingGroup").await;
            Ok(None)
        }
        Err(StoreError::Exists) => Err(ApiError::already_exists(format!(
            "AutoScalingGroup by this name already exists - A group with the name {name} already exists"
        ))),
        Err(StoreError::NotFound) => {
            let names: Vec<String> = g.launch_configurations()?.into_iter().collect();
            Err(launch_config_not_found(&names.join(", ")))
        }
        Err(StoreError::Limit) => Err(ApiError::limit_exceeded(format!(
            "You have requested more Auto Scaling groups than your current limit of {MAX_GROUPS} allows."
        ))),
        Err(e) => Err(e.into()),
    }
}
