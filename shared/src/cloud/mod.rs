//! The cloud seam: what Phantom asks of an EC2-compatible cloud (which VMs carry a group's tags,
//! launch some, terminate some; look up, tag and untag VMs launched outside it), as a trait with two adapters: EC2
//! (`phantom-cloud`, the only crate with aws-sdk-ec2) and an in-memory cloud (`memory`) that can be
//! told to fail the ways real clouds do. No AWS types here.

pub mod ec2_query;
pub mod launch;
pub mod memory;

use crate::reconcile::Seen;
use crate::store::{CloudCredentials, CloudRecord};
use crate::template::TemplateRef;
use async_trait::async_trait;
use std::sync::Arc;

pub use launch::{launch_request, LaunchRequest};

/// Tags every VM carries: who owns it and which group (by name and by id) it belongs to.
pub const TAG_OWNER: &str = "phantom:owner";
pub const TAG_GROUP: &str = "phantom:group";
pub const TAG_GROUP_ID: &str = "phantom:group-id";

/// What a cloud said when it refused, or why it could not be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudError {
    pub code: String,
    pub message: String,
}

impl CloudError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }

    /// The cloud could not be reached, or its answer was lost.
    pub fn unreachable(message: impl Into<String>) -> Self {
        Self::new("CloudUnreachable", message)
    }
}

impl std::fmt::Display for CloudError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for CloudError {}

/// A VM with Phantom's tags, as the cloud shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tagged {
    pub seen: Seen,
    pub group: String,
    pub group_id: String,
}

/// What the api asks a cloud before it answers (read only), so that AttachInstances of a VM that
/// is not there and a group from a launch template that is not there are refused at once, as AWS
/// refuses them. The provisioner's clouds answer it too (`Cloud` includes it).
#[async_trait]
pub trait Lookup: Send + Sync {
    /// The VMs with these ids that exist (an unknown id is simply absent), with Phantom's tags
    /// where they carry them (empty strings where not).
    async fn describe(&self, ids: &[String]) -> Result<Vec<Tagged>, CloudError>;
    /// Whether the launch template exists there at its version (DescribeLaunchTemplateVersions).
    async fn template_exists(&self, t: &TemplateRef) -> Result<bool, CloudError>;
}

/// One cloud, as one user's credentials reach it.
#[async_trait]
pub trait Cloud: Lookup {
    /// The owner's tagged VMs, of one group (by id) or all (every page).
    async fn tagged(&self, owner: &str, group_id: Option<&str>) -> Result<Vec<Tagged>, CloudError>;
    /// Launches `req.count` VMs, idempotent by `req.client_token`: the same token returns the VMs
    /// of the first call, as EC2's RunInstances does.
    async fn launch(&self, req: &LaunchRequest) -> Result<Vec<Seen>, CloudError>;
    /// Terminates VMs (terminating a terminated VM is fine).
    async fn terminate(&self, ids: &[String]) -> Result<(), CloudError>;
    /// Sets tags on VMs (CreateTags): an attached VM gets its group's.
    async fn tag(&self, ids: &[String], tags: &[(String, String)]) -> Result<(), CloudError>;
    /// Removes tags, by key, from VMs (DeleteTags): a detached VM leaves its group's behind.
    async fn untag(&self, ids: &[String], keys: &[&str]) -> Result<(), CloudError>;
}

/// Makes the client for a registered cloud with a user's credentials there.
pub trait Connect: Send + Sync {
    fn connect(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Cloud>;
}

/// The api's way to a cloud: lookups only, so the api needs no aws-sdk-ec2 (`ec2_query`).
pub trait ConnectLookup: Send + Sync {
    fn lookup(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Lookup>;
}

/// EC2's error codes that mean "no such launch template (or version)".
pub fn template_not_found(code: &str) -> bool {
    code.starts_with("InvalidLaunchTemplateName.") || code.starts_with("InvalidLaunchTemplateId.")
}
