//! Load balancers in a round: the group's VMs registered with its traffic sources while they
//! serve and deregistered as they stop (before any is terminated: `reconcile` holds a leaving VM
//! for its sources' drain time), the sources' states moved, and with HealthCheckType ELB (or
//! VPC_LATTICE) the VMs a load balancer (or target group) reports failing handed to `decide` as
//! unhealthy. The attachments are written as a
//! compare-and-set on the group as leased; a lost write is decided again by the next round (ELB's
//! register and deregister are idempotent).

use crate::Provisioner;
use phantom_model::instance::Member;
use phantom_rules::group::Group;
use phantom_rules::health::Checks;
use phantom_rules::reconcile::Plan;
use phantom_rules::traffic::{self, AttachState, Attachment};
use phantom_seams::cloud::Balancers;
use phantom_seams::store::StoreError;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Source id -> VM -> whether it passes the source's health check.
pub(crate) type Health = BTreeMap<String, BTreeMap<String, bool>>;

impl Provisioner {
    /// The load balancers of one of the group's clouds, if it has sources attached and the cloud
    /// has load balancers.
    pub(crate) async fn balancers(
        &self,
        owner: &str,
        g: &Group,
        cloud: &str,
    ) -> Result<Option<Arc<dyn Balancers>>, StoreError> {
        if !g
            .settings
            .traffic
            .iter()
            .any(|a| traffic::placed(&a.source, &g.cloud).0 == cloud)
        {
            return Ok(None);
        }
        let Some(record) = self.store.cloud(cloud).await? else {
            return Ok(None);
        };
        let Some(creds) = self.store.cloud_credentials(owner, cloud).await? else {
            return Ok(None);
        };
        Ok(self.lookups.balancers(&record, &creds))
    }

    /// What each source on `cloud` whose kind judges the group's health (HealthCheckType ELB,
    /// VPC_LATTICE) says of its VMs (a source that cannot be asked says nothing: no VM is judged
    /// by it this time).
    pub(crate) async fn lb_health(
        &self,
        g: &Group,
        cloud: &str,
        lbs: Option<&Arc<dyn Balancers>>,
    ) -> Health {
        let mut out = Health::new();
        let checks = Checks::of(g);
        let Some(lbs) = lbs else {
            return out;
        };
        for a in &g.settings.traffic {
            let (on, local) = traffic::placed(&a.source, &g.cloud);
            if a.state == AttachState::Removing || on != cloud || !checks.judged_by(a.source.kind) {
                continue;
            }
            match lbs.health(&local).await {
                Ok(h) => {
                    out.insert(a.source.identifier.clone(), h);
                }
                Err(e) => {
                    tracing::warn!(group = g.name, source = a.source.identifier, error = %e, "load balancer health unread")
                }
            }
        }
        out
    }

    /// On `cloud`: registers what serves there once `plan` is carried out and deregisters what
    /// stops serving; returns `current` with that cloud's sources moved on. A source whose call
    /// failed keeps what it had, and the next round tries again.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn balance(
        &self,
        g: &Group,
        cloud: &str,
        lbs: Option<&Arc<dyn Balancers>>,
        current: &[Attachment],
        members: &[Member],
        plan: &Plan,
        health: &Health,
    ) -> Vec<Attachment> {
        let Some(lbs) = lbs else {
            return current.to_vec();
        };
        let here: Vec<Attachment> = current
            .iter()
            .filter(|a| traffic::placed(&a.source, &g.cloud).0 == cloud)
            .cloned()
            .collect();
        let leaving: BTreeSet<String> = plan
            .terminate
            .iter()
            .chain(&plan.hold)
            .chain(&plan.gone)
            .map(|(id, _)| id.clone())
            .chain(plan.to_pool.iter().cloned())
            .chain(plan.detach.iter().cloned())
            .collect();
        let serving = if g.deleting() {
            BTreeSet::new()
        } else {
            // VMs the round adopts serve from its record on: registered now (found by the
            // simulator, seed 1643, where no later round came to register them).
            let adopted: Vec<Member> = members.iter().chain(&plan.adopt).cloned().collect();
            traffic::serving(&adopted, &plan.in_service, &leaving)
        };
        let checks = Checks::of(g);
        let add = !phantom_rules::processes::suspended(&g.settings.suspended_processes)
            .iter()
            .any(|p| p == "AddToLoadBalancer");
        let step = traffic::step(&here, &serving, health, checks, add);
        let local = |s: &traffic::Source| traffic::placed(s, &g.cloud).1;
        let mut failed: BTreeSet<String> = BTreeSet::new();
        for (source, ids) in &step.deregister {
            if let Err(e) = lbs.deregister(&local(source), ids).await {
                tracing::warn!(group = g.name, source = source.identifier, error = %e, "deregister failed");
                failed.insert(source.identifier.clone());
            }
        }
        for (source, ids) in &step.register {
            if let Err(e) = lbs.register(&local(source), ids).await {
                tracing::warn!(group = g.name, source = source.identifier, error = %e, "register failed");
                failed.insert(source.identifier.clone());
            }
        }
        if !step.is_empty() {
            tracing::info!(
                group = g.name,
                cloud,
                registered = step
                    .register
                    .iter()
                    .map(|(_, ids)| ids.len())
                    .sum::<usize>(),
                deregistered = step
                    .deregister
                    .iter()
                    .map(|(_, ids)| ids.len())
                    .sum::<usize>(),
                failed = failed.len(),
                "load balancers"
            );
        }
        let mut next: Vec<Attachment> = Vec::new();
        for a in current {
            let mine = here.iter().any(|h| h.source == a.source);
            if !mine || failed.contains(&a.source.identifier) {
                next.push(a.clone());
            } else if let Some(n) = step.attachments.iter().find(|n| n.source == a.source) {
                next.push(n.clone());
            }
            // Otherwise a source being removed, now deregistered: gone.
        }
        next
    }

    /// Writes the group's attachments if they changed, as a compare-and-set on the group as
    /// leased.
    pub(crate) async fn write_traffic(
        &self,
        owner: &str,
        g: &Group,
        attachments: Vec<Attachment>,
    ) -> Result<(), StoreError> {
        if attachments == g.settings.traffic {
            return Ok(());
        }
        let mut new = g.clone();
        new.settings.traffic = attachments;
        traffic::show(&mut new.settings);
        match self.store.update_group(owner, g, &new, None).await {
            Ok(()) | Err(StoreError::Conflict) | Err(StoreError::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
