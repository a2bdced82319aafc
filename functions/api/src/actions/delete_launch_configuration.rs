use super::{launch_config_not_found, string};
use crate::App;
use phantom::identity::Caller;
use phantom::store::StoreError;
use phantom::{ApiError, ApiResult};
use serde_json::Value;

pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let name = string(&input, "LaunchConfigurationName");
    match app.store.delete_launch_config(&caller.user, name).await {
        Ok(()) => Ok(None),
        Err(StoreError::NotFound) => Err(launch_config_not_found(name)),
        Err(StoreError::InUse(groups)) => Err(ApiError::resource_in_use(format!(
            "Cannot delete launch configuration {name} because it is attached to AutoScalingGroup {}",
            groups.join(", ")
        ))),
        Err(e) => Err(e.into()),
    }
}
