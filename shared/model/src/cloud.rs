//! The clouds Phantom knows and the credentials each user has there.

/// A registered EC2-compatible cloud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudRecord {
    pub name: String,
    pub endpoint: String,
    pub region: String,
    /// The availability zone used for groups that name none.
    pub zone: String,
    /// Whether its EC2 API has launch templates (groups from a template are refused otherwise).
    pub launch_templates: bool,
    /// Whether it has load balancers (ELB and ELBv2, at its EC2 endpoint with `ec2.` read as
    /// `elasticloadbalancing.`): traffic sources are refused otherwise.
    pub load_balancers: bool,
    /// Whether it tells Phantom when a VM changes state: an AWS region whose EC2 state-change
    /// events reach the deployment's event bus (template.yaml's rule). Its pairs are looked at
    /// less often (`phantom_rules::pulse::Cadence::look_events`); the events do the rest.
    pub events: bool,
    /// Whether its EC2 API answers DescribeInstanceStatus (status checks and scheduled events).
    /// Found false, once, where the cloud answers that it has no such call; a cloud put again
    /// is asked again.
    pub status_checks: bool,
}

/// A user's credentials for one cloud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudCredentials {
    pub cloud: String,
    pub access_key_id: String,
    pub secret: String,
}
