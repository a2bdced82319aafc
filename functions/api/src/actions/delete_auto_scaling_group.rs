//! Without ForceDelete a group with instances is refused (as AWS); an empty one goes at once. With
//! ForceDelete the group turns `Delete in progress` (desired 0) and the provisioner terminates its
//! VMs, then removes it. A group's DeletionProtection refuses ForceDelete, or any deletion.

use crate::App;
use phantom_model::request::DeleteAutoScalingGroup;
use phantom_rules::identity::Caller;
use phantom_seams::store::cas::{compare_and_set, Try};
use phantom_wire::{ApiError, ApiResult};

pub async fn run(app: &App, caller: &Caller, input: DeleteAutoScalingGroup) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    let force = input.force_delete == Some(true);
    compare_and_set(|| async {
        let Some(g) = app.store.group(&caller.user, name).await? else {
            // AWS quotes the name here, and only here; teardown scripts match on it.
            return Err(ApiError::validation(format!(
                "AutoScalingGroup name not found - AutoScalingGroup '{name}' not found"
            )));
        };
        if g.deleting() {
            return Ok(Try::Done(()));
        }
        phantom_rules::group::check_deletion(&g, force)?;
        let has_instances = !app.store.instances(&caller.user, name).await?.is_empty();
        let result = match (has_instances, force) {
            (false, _) => app.store.delete_group(&caller.user, &g).await,
            (true, false) => {
                return Err(ApiError::resource_in_use(
                    "You cannot delete an AutoScalingGroup while there are instances or pending Spot instance request(s) still in the group.",
                ))
            }
            (true, true) => {
                let ask = Some(app.clock.now_ms());
                app.store.begin_delete(&caller.user, &g, ask).await
            }
        };
        let written = Try::of(result)?;
        if let (Try::Done(()), true) = (&written, has_instances) {
            super::reconcile(app, caller, name, "DeleteAutoScalingGroup").await;
        }
        Ok(written)
    })
    .await
}
