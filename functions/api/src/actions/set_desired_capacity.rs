use super::{group_not_found, pending_delete};
use crate::App;
use phantom_model::request::SetDesiredCapacity;
use phantom_rules::group::check_new_desired;
use phantom_rules::identity::Caller;
use phantom_seams::store::cas::{compare_and_set, Try};
use phantom_wire::ApiResult;

pub async fn run(app: &App, caller: &Caller, input: SetDesiredCapacity) -> ApiResult<()> {
    let name = &input.auto_scaling_group_name;
    let desired = input.desired_capacity;
    // Read, check against the bounds read, write only if nothing changed since (version).
    compare_and_set(|| async {
        let Some(g) = app.store.group(&caller.user, name).await? else {
            return Err(group_not_found(name));
        };
        if g.deleting() {
            return Err(pending_delete());
        }
        check_new_desired(&g, desired)?;
        if input.honor_cooldown == Some(true) {
            super::policies::check_cooldown(&g, app.clock.now_ms())?;
        }
        // A fixed group across clouds keeps the sum of its clouds' counts.
        super::across::settled(
            Some(&g),
            phantom_rules::group::Group {
                desired,
                ..g.clone()
            },
        )?;
        if g.desired == desired {
            return Ok(Try::Done(()));
        }
        let written = Try::of(
            app.store
                .set_desired(&caller.user, &g, desired, Some(app.clock.now_ms()))
                .await,
        )?;
        if let Try::Done(()) = written {
            super::reconcile(app, caller, name, "SetDesiredCapacity").await;
        }
        Ok(written)
    })
    .await
}
