use super::launch_config_not_found;
use crate::App;
use phantom_model::request::DeleteLaunchConfiguration;
use phantom_rules::identity::Caller;
use phantom_seams::store::StoreError;
use phantom_wire::{ApiError, ApiResult};

pub async fn run(app: &App, caller: &Caller, input: DeleteLaunchConfiguration) -> ApiResult<()> {
    let name = &input.launch_configuration_name;
    match app.store.delete_launch_config(&caller.user, name).await {
        Ok(()) => Ok(()),
        Err(StoreError::NotFound) => Err(launch_config_not_found(name)),
        Err(StoreError::InUse(groups)) => Err(ApiError::resource_in_use(format!(
            "Cannot delete launch configuration {name} because it is attached to AutoScalingGroup {}",
            groups.join(", ")
        ))),
        Err(e) => Err(e.into()),
    }
}
