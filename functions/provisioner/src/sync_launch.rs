//! LaunchInstances carried out: a request the api recorded is launched at the placement it
//! names, under the group's lease, its VMs' client tokens its own (a retry after a crash gets the
//! same VMs), and recorded with its answer and the group's new desired capacity in one write.

use super::*;
use act::Destination;
use phantom_rules::sync_launch::{self, SyncLaunch};

/// How often a LaunchInstances launch whose answer was lost is asked again in one round.
const UNANSWERED_TRIES: usize = 3;

impl Provisioner {
    /// The group's oldest LaunchInstances request not yet carried out, carried out; None if it
    /// has none.
    pub(crate) async fn sync_launch(
        &self,
        owner: &str,
        g: &Group,
        ctx: &Context<'_>,
        before: Before,
        cloud: &dyn Cloud,
        members: &[Member],
    ) -> Result<Option<Round>, StoreError> {
        let pending = self.store.launches(owner, &g.name).await?;
        let Some(l) = pending
            .into_iter()
            .filter(|l| l.result.is_none())
            .min_by_key(|l| l.asked_ms)
        else {
            return Ok(None);
        };
        let mut acted = Acted::default();
        let market = sync_launch::market(g);
        match &market {
            Ok(market) => {
                let on = On {
                    token: format!("{}-li-{}", g.id, l.client_token),
                    ..On::home(g)
                };
                let at = [sync_launch::placement(&l, *market)];
                let into = Destination::Group {
                    fallback: false,
                    named: true,
                };
                // An answer lost may hide VMs launched: asked again with the same tokens, the
                // cloud gives them (found by the simulator, seed 2504 of mix 5: the request was
                // answered as failed, and its VMs adopted and scaled in).
                for _ in 0..UNANSWERED_TRIES {
                    acted = Acted::default();
                    self.launch_into(owner, g, &on, cloud, &at, into, &mut acted)
                        .await?;
                    if !acted.launch_unanswered || !acted.launched.is_empty() {
                        break;
                    }
                }
                // Still no answer: the request stays, and a message of its own asks for the
                // round that carries it out (a follow-up's round would not: it is no
                // LaunchInstances message).
                if acted.launch_unanswered && acted.launched.is_empty() {
                    tracing::warn!(
                        group = g.name,
                        client_token = l.client_token,
                        "LaunchInstances unanswered; asked again in 2 s"
                    );
                    let again = Reconcile::new(owner, &g.name, sync_launch::REASON);
                    self.enqueue(&again, 2).await;
                    return Ok(Some(Round::moved()));
                }
            }
            // The group changed since the api checked it.
            Err(e) => acted.launch_failed = Some(format!("InvalidParameter: {}", e.message())),
        }
        let refused = acted
            .launch_failed
            .as_deref()
            .map(|why| why.split_once(": ").unwrap_or(("LaunchFailed", why)));
        let done = sync_launch::finished(&l, &acted.launched, market.ok(), refused);
        let units: i64 = acted.launched.iter().map(|m| m.weight.unwrap_or(1)).sum();
        let desired = sync_launch::desired_after(g, &l, units);
        // Recorded already (a round adopted them after a crash): not recorded again.
        acted
            .launched
            .retain(|m| !members.iter().any(|known| known.id == m.id));
        let plan = Plan {
            launch_waits: phantom_rules::lifecycle::waits(&g.target().hooks, true, ctx.now_ms),
            capacity_from: g.desired,
            capacity_to: desired,
            ..Plan::default()
        };
        let mut r = round::record(ctx, before, members, &plan, &acted);
        r.desired = Some(desired);
        r.launches.push(done);
        log_launch(g, &l, &acted);
        match self.write(owner, g, &mut r).await {
            Ok(()) => {
                // A refused launch set the group's backoff: the rounds it holds back queue
                // nothing, so its end is asked for here, as a round's failed launch asks (found
                // by the simulator, seed 310 of mix 16: the group stayed empty until a sweep).
                self.retry_later(owner, g, &r).await;
                Ok(Some(Round::Acted {
                    launched: acted.launched.len(),
                    terminated: 0,
                    waiting: true,
                }))
            }
            // The group changed under the round: the next takes the request again, and its
            // tokens give it the same VMs.
            Err(StoreError::Conflict) => Ok(Some(Round::moved())),
            Err(StoreError::NotFound) => {
                let ids: Vec<String> = acted.launched.iter().map(|m| m.id.clone()).collect();
                if !ids.is_empty() {
                    if let Err(e) = cloud.terminate(&ids).await {
                        tracing::warn!(group = g.name, error = %e, "could not terminate; left to the orphan sweep");
                    }
                }
                Ok(Some(Round::moved()))
            }
            Err(e) => Err(e),
        }
    }
}

fn log_launch(g: &Group, l: &SyncLaunch, acted: &Acted) {
    tracing::info!(
        group = g.name,
        client_token = l.client_token,
        requested = l.requested,
        launched = acted.launched.len(),
        failed = acted.launch_failed.as_deref(),
        "LaunchInstances"
    );
}
