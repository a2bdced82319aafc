//! Without ForceDelete a group with instances is refused (as AWS); an empty one goes at once. With
//! ForceDelete the group turns `Delete in progress` (desired 0) and the provisioner terminates its
//! VMs, then removes it.

use super::{group_not_found, string, CAS_ATTEMPTS};
use crate::App;
use phantom::identity::Caller;
use phantom::store::StoreError;
use phantom::{ApiError, ApiResult};
use serde_json::Value;

pub async fn run(app: &App, caller: &Caller, input: Value) -> ApiResult<Option<Value>> {
    let name = string(&input, "AutoScalingGroupName");
    let force = input["ForceDelete"].as_bool().unwrap_or(false);
    for _ in 0..CAS_ATTEMPTS {
        let Some(g) = app.store.group(&caller.user, name).await? else {
            return Err(group_not_found(name));
        };
        if g.deleting() {
            return Ok(None);
        }
        let has_instances = !app.store.instances(&caller.user, name).await?.is_empty();
        let result = match (has_instances, force) {
            (false, _) => app.store.delete_group(&caller.user, &g).await,
            (true, false) => {
                return Err(ApiError::resource_in_use(
                    "You cannot delete an AutoScalingGroup while there are instances or pending Spot instance request(s) still in the group.",
                ))
            }
            (true, true) => app.store.begin_delete(&caller.user, &g).await,
        };
        match result {
            Ok(()) => {
                if has_instances {
                    super::reconcile(app, caller, name, "DeleteAutoScalingGroup").await;
                }
                return Ok(None);
            }
            Err(StoreError::Conflict) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(StoreError::Conflict.into())
}
