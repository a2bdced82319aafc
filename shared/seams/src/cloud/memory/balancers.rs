//! The memory cloud's load balancers: classic load balancers and target groups (ELBv2 and VPC
//! Lattice) it is told of,
//! the VMs registered with each, and the VMs a test makes fail their health check. A VM that is
//! not alive is not reported (ELBv2's `unused`); registering one that is not there is refused, as
//! ELB refuses it.

use super::clouds::Nowhere;
use super::*;
use crate::cloud::Balancers;
use phantom_model::traffic::{Kind, Source};

/// One load balancer or target group.
#[derive(Debug, Default, Clone)]
pub(super) struct Balancer {
    drain_secs: i64,
    registered: BTreeSet<String>,
    failing: BTreeSet<String>,
}

fn not_found(s: &Source) -> CloudError {
    match s.kind {
        Kind::Elb => CloudError::new(
            "LoadBalancerNotFound",
            format!("There is no ACTIVE Load Balancer named '{}'", s.identifier),
        ),
        Kind::Elbv2 => CloudError::new(
            "TargetGroupNotFound",
            format!("One or more target groups not found: {}", s.identifier),
        ),
        Kind::VpcLattice => CloudError::new(
            "ResourceNotFoundException",
            format!("Target group {} not found", s.identifier),
        ),
    }
}

impl MemoryCloud {
    /// A load balancer or target group of this cloud, its VMs draining `drain_secs` once
    /// deregistered.
    pub fn add_balancer(&self, s: &Source, drain_secs: i64) {
        self.state().balancers.insert(
            s.identifier.clone(),
            Balancer {
                drain_secs,
                ..Balancer::default()
            },
        );
    }

    /// The VMs registered with `identifier` now.
    pub fn registered(&self, identifier: &str) -> Vec<String> {
        self.state()
            .balancers
            .get(identifier)
            .map(|b| b.registered.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// From now on `id` fails (`true`) or passes `identifier`'s health check.
    pub fn fail_health_check(&self, identifier: &str, id: &str, failing: bool) {
        let mut st = self.state();
        let b = st
            .balancers
            .get_mut(identifier)
            .expect("a load balancer the test added");
        if failing {
            b.failing.insert(id.to_string());
        } else {
            b.failing.remove(id);
        }
    }
}

#[async_trait]
impl Balancers for MemoryCloud {
    async fn drain_secs(&self, s: &Source) -> Result<Option<i64>, CloudError> {
        self.enter().await?;
        let out = self
            .state()
            .balancers
            .get(&s.identifier)
            .map(|b| b.drain_secs);
        self.trip.step().await;
        Ok(out)
    }

    async fn register(&self, s: &Source, ids: &[String]) -> Result<(), CloudError> {
        self.enter().await?;
        {
            let mut st = self.state();
            if let Some(id) = ids
                .iter()
                .find(|id| !st.vms.get(*id).is_some_and(|vm| vm.state.alive()))
            {
                return Err(CloudError::new(
                    "InvalidTarget",
                    format!("The following targets are not in a running state: {id}"),
                ));
            }
            let b = st
                .balancers
                .get_mut(&s.identifier)
                .ok_or_else(|| not_found(s))?;
            b.registered.extend(ids.iter().cloned());
        }
        self.trip.step().await;
        Ok(())
    }

    async fn deregister(&self, s: &Source, ids: &[String]) -> Result<(), CloudError> {
        self.enter().await?;
        {
            let mut st = self.state();
            let b = st
                .balancers
                .get_mut(&s.identifier)
                .ok_or_else(|| not_found(s))?;
            for id in ids {
                b.registered.remove(id);
            }
        }
        self.trip.step().await;
        Ok(())
    }

    async fn health(&self, s: &Source) -> Result<BTreeMap<String, bool>, CloudError> {
        self.enter().await?;
        let out = {
            let st = self.state();
            let b = st
                .balancers
                .get(&s.identifier)
                .ok_or_else(|| not_found(s))?;
            b.registered
                .iter()
                .filter(|id| {
                    st.vms
                        .get(*id)
                        .is_some_and(|vm| vm.state == CloudState::Running)
                })
                .map(|id| (id.clone(), !b.failing.contains(id)))
                .collect()
        };
        self.trip.step().await;
        Ok(out)
    }
}

#[async_trait]
impl Balancers for Nowhere {
    async fn drain_secs(&self, _: &Source) -> Result<Option<i64>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn register(&self, _: &Source, _: &[String]) -> Result<(), CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn deregister(&self, _: &Source, _: &[String]) -> Result<(), CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn health(&self, _: &Source) -> Result<BTreeMap<String, bool>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
}
