//! A cloud's sign that a VM is at risk of interruption (`AtRisk`: EC2's rebalance
//! recommendation or spot interruption warning): for each group with CapacityRebalance that has
//! the VM recorded, the record is marked (a conditional write, read again when another writer
//! moved it) and the group's round is queued; the round replaces it launch-first
//! (`phantom_rules::rebalance`).

use crate::Provisioner;
use phantom_rules::reconcile::Member;
use phantom_seams::queue::{AtRisk, Reconcile, Work};
use phantom_seams::store::cas::{compare_and_set, Try};
use phantom_seams::store::{Record, StoreError};

impl Provisioner {
    /// Marks the VM at risk in each group that replaces at-risk VMs; returns the rounds queued.
    pub async fn at_risk(&self, e: &AtRisk) -> Result<usize, String> {
        let now = self.clock.now_ms();
        let mut msgs: Vec<Work> = Vec::new();
        let owners = self
            .store
            .owners_of(&e.instance)
            .await
            .map_err(|e| e.to_string())?;
        for (owner, group) in owners {
            let marked = compare_and_set(|| async {
                let Some(g) = self.store.group(&owner, &group).await? else {
                    return Ok(Try::Done(false));
                };
                if !g.settings.capacity_rebalance || g.deleting() {
                    return Ok(Try::Done(false));
                }
                let members = self.store.instances(&owner, &group).await?;
                let Some(m) = members
                    .iter()
                    .find(|m| m.id == e.instance && phantom_rules::rebalance::marks(m))
                else {
                    return Ok(Try::Done(false));
                };
                let r = Record {
                    put: vec![Member {
                        at_risk_ms: Some(now),
                        ..m.clone()
                    }],
                    ..Record::default()
                };
                match self.store.record(&owner, &g, &r).await {
                    Ok(()) => Ok(Try::Done(true)),
                    Err(StoreError::Conflict) => Ok(Try::Lost),
                    Err(StoreError::NotFound) => Ok(Try::Done(false)),
                    Err(e) => Err(e),
                }
            })
            .await
            .map_err(|e: StoreError| e.to_string())?;
            if marked {
                msgs.push(Reconcile::new(&owner, &group, "rebalance").into());
            }
        }
        if let (Some(q), false) = (&self.queue, msgs.is_empty()) {
            q.send_all(&msgs)
                .await
                .map_err(|e| format!("reconciles not queued: {e}"))?;
        }
        Ok(msgs.len())
    }
}
