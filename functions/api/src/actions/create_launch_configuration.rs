use crate::App;
use phantom_model::request::CreateLaunchConfiguration;
use phantom_rules::identity::Caller;
use phantom_rules::launch_config::{self, cloud_of, unknown_cloud};
use phantom_seams::store::{StoreError, MAX_LAUNCH_CONFIGS};
use phantom_wire::{ApiError, ApiResult};

pub async fn run(
    app: &App,
    caller: &Caller,
    mut input: CreateLaunchConfiguration,
) -> ApiResult<()> {
    let name = input.launch_configuration_name.clone();
    let name = &name;
    let cloud = cloud_of(name, app.config.default_cloud.as_deref())?;
    // From an instance: what the request leaves out, as the instance was launched (its cloud
    // read first, to say an unknown one as such).
    if let Some(id) = input.instance_id.clone() {
        if app.store.cloud(&cloud).await?.is_none() {
            return Err(unknown(app, &cloud).await);
        }
        let vm = super::lookups::launched_with(app, caller, &cloud, &id).await?;
        launch_config::from_instance(&mut input, &vm);
    }
    let arn = launch_config::arn(
        &app.config.region,
        &caller.account_id,
        &phantom_rules::ids::uuid(),
        name,
    );
    let lc = launch_config::from_input(&input, cloud, arn, app.clock.now())?;
    match app.store.create_launch_config(&caller.user, &lc).await {
        Ok(()) => Ok(()),
        // The cloud is not registered (a condition of the write): the error names those that are.
        Err(StoreError::NotFound) => Err(unknown(app, &lc.cloud).await),
        Err(StoreError::Exists) => Err(ApiError::already_exists(format!(
            "Launch Configuration by this name already exists - A launch configuration already exists with the name {name}"
        ))),
        Err(StoreError::Limit) => Err(ApiError::limit_exceeded(format!(
            "You have requested more launch configurations than your current limit of {MAX_LAUNCH_CONFIGS} allows."
        ))),
        Err(e) => Err(e.into()),
    }
}

/// A cloud that is not registered, in words that name those that are.
async fn unknown(app: &App, cloud: &str) -> ApiError {
    match app.store.clouds().await {
        Ok(clouds) => {
            let known: Vec<String> = clouds.into_iter().map(|c| c.name).collect();
            unknown_cloud(cloud, &known).into()
        }
        Err(e) => e.into(),
    }
}
