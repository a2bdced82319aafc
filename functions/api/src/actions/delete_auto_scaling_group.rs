use super::{group_not_found, string, CAS_ATTEMPTS};
use crate::App;
use phantom::identity::Caller;
use phantom::store::StoreError;
use phantom::ApiResult;
use serde_json::Value;

pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let name = string(&input, "AutoScalingGroupName");
    for _ in 0..CAS_ATTEMPTS {
        let Some(g) = app.store.group(&caller.user, name).await? else {
            return Err(group_not_found(name));
        };
        match app.store.delete_group(&caller.user, &g).await {
            Ok(()) => return Ok(None),
            Err(StoreError::Conflict) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(StoreError::Conflict.into())
}
