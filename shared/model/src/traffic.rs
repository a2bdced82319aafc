//! Load balancers, typed: the traffic sources a group's VMs are registered with (a classic load
//! balancer by name, an ELBv2 or VPC Lattice target group by ARN), each in AWS's attachment states.

use serde::{Deserialize, Serialize};

/// What a traffic source is, in AWS's `Type` words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    /// A classic load balancer, named.
    #[serde(rename = "elb")]
    Elb,
    /// An ELBv2 (application, network, gateway) target group, by ARN.
    #[serde(rename = "elbv2")]
    Elbv2,
    /// A VPC Lattice target group (of instances), by ARN.
    #[serde(rename = "vpc-lattice")]
    VpcLattice,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Elb => "elb",
            Self::Elbv2 => "elbv2",
            Self::VpcLattice => "vpc-lattice",
        }
    }
}

/// A traffic source on a cloud.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Source {
    pub identifier: String,
    #[serde(rename = "Type")]
    pub kind: Kind,
}

/// AWS's states of an attachment (DescribeLoadBalancers, DescribeLoadBalancerTargetGroups,
/// DescribeTrafficSources). `Removed` is not kept: a source is gone once its VMs are deregistered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttachState {
    /// Its VMs are being registered.
    Adding,
    /// Every InService VM is registered.
    Added,
    /// And (with HealthCheckType ELB) at least one passes the load balancer's health check.
    InService,
    /// Detached: its VMs are being deregistered.
    Removing,
}

impl AttachState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Adding => "Adding",
            Self::Added => "Added",
            Self::InService => "InService",
            Self::Removing => "Removing",
        }
    }
}

/// One traffic source of a group (its settings' `PhantomTraffic`): its state, how long a VM
/// deregistered from it keeps draining (a target group's deregistration delay, a classic load
/// balancer's connection draining timeout, read when it was attached), and the group's VMs
/// registered with it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Attachment {
    #[serde(flatten)]
    pub source: Source,
    pub state: AttachState,
    pub drain_secs: i64,
    pub registered: Vec<String>,
}
