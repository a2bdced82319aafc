//! The cloud seam: what Phantom asks of an EC2-compatible cloud (which VMs carry a group's tags,
//! launch some, terminate, stop and start some; look up, tag and untag VMs launched outside it), as traits with
//! two adapters: EC2's Query API without its SDK (`ec2_query` for the api's look-ups and the
//! health check's looks, `ec2_cloud` for the provisioner's `Cloud`), and an in-memory cloud
//! (`memory`, feature `memory`: tests and tools only) that can be told to fail the ways real
//! clouds do. No AWS types here.

pub mod ec2_cloud;
pub mod ec2_query;
pub mod elb_query;
pub mod lattice_rest;
pub mod launch;
#[cfg(any(test, feature = "memory"))]
pub mod memory;
pub(crate) mod signed;

use async_trait::async_trait;
use phantom_model::cloud::{CloudCredentials, CloudRecord};
pub use phantom_model::instance::Tagged;
use phantom_model::instance::{CloudState, LaunchedWith, Seen};
pub use phantom_model::launch_template::TemplateName;
pub use phantom_model::status::InstanceStatus;
use phantom_model::traffic::Source;
use phantom_rules::template::TemplateRef;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use launch::{launch_request, LaunchRequest};

/// Tags every VM carries: who owns it and which group (by name and by id) it belongs to.
pub const TAG_OWNER: &str = "phantom:owner";
pub const TAG_GROUP: &str = "phantom:group";
pub const TAG_GROUP_ID: &str = "phantom:group-id";
/// Tagged on a VM launched into its group's warm pool, so that one whose launch was not recorded
/// is found as the pool's.
pub const TAG_WARM_POOL: &str = "phantom:warm-pool";

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

    /// The cloud answered without something its API always gives (an instance's id, state,
    /// zone, type or launch time): an error, never a default.
    pub fn unreadable(what: impl std::fmt::Display) -> Self {
        Self::new("UnreadableAnswer", format!("the cloud's answer has {what}"))
    }
}

impl std::fmt::Display for CloudError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for CloudError {}

/// What the api asks a cloud before it answers (read only), so that AttachInstances of a VM that
/// is not there and a group from a launch template that is not there are refused at once, as AWS
/// refuses them. The provisioner's clouds answer it too (`Cloud` includes it).
#[async_trait]
pub trait Lookup: Send + Sync {
    /// The VMs with these ids that exist (an unknown id is simply absent), with Phantom's tags
    /// where they carry them.
    async fn describe(&self, ids: &[String]) -> Result<Vec<Tagged>, CloudError>;
    /// What the VM `id` was launched with (None: the cloud has no such VM), for a launch
    /// configuration made from it.
    async fn launched_with(&self, id: &str) -> Result<Option<LaunchedWith>, CloudError>;
    /// The id and state of every VM tagged as the owner's that is not terminated (every page of
    /// 1000): what the pulse looks at.
    async fn states(&self, owner: &str) -> Result<Vec<(String, CloudState)>, CloudError>;
    /// The launch template as the cloud names it (its id and name) and the number of the version
    /// asked for (`$Latest` and `$Default` resolved), if it exists there at that version
    /// (DescribeLaunchTemplateVersions).
    async fn template(&self, t: &TemplateRef) -> Result<Option<FoundTemplate>, CloudError>;
    /// The zone of each of these subnets that exists (an unknown id is simply absent).
    async fn subnet_zones(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError>;
    /// The name of each of these zone ids the cloud has (id, name; an unknown id is simply
    /// absent): DescribeAvailabilityZones.
    async fn zone_names(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError>;
    /// The zone of each of these capacity reservations (id, zone): DescribeCapacityReservations.
    /// A reservation it does not have is the cloud's error, in its words.
    async fn reservation_zones(&self, ids: &[String]) -> Result<Vec<(String, String)>, CloudError>;
    /// The status checks and scheduled events of these VMs (DescribeInstanceStatus with
    /// IncludeAllInstances: by id, 100 at a time, for a few; every page of the account's, kept to
    /// these, for many). A VM the cloud does not have is absent (EC2 refuses a call naming one:
    /// it is asked again without, `without_unknown`). A cloud without the call answers an error
    /// that `no_status_checks` knows.
    async fn statuses(&self, ids: &[String]) -> Result<Vec<InstanceStatus>, CloudError>;
}

/// How many ids one DescribeInstanceStatus names at most (EC2's limit).
pub const STATUS_IDS_PER_CALL: usize = 100;
/// Past this many VMs, their statuses are read by pages of 1000 of the account's (its other VMs
/// dropped) rather than by id, 100 a call: fewer calls.
pub const STATUS_BY_ID_MAX: usize = 300;

/// The instance ids an `InvalidInstanceID.NotFound` names (EC2: "The instance ID 'i-1' does
/// not exist", "The instance IDs 'i-1, i-2' do not exist"): a call by id that names a VM gone
/// for good fails whole, so the caller asks again without them.
pub fn ids_not_found(e: &CloudError) -> Vec<String> {
    if e.code != "InvalidInstanceID.NotFound" {
        return Vec::new();
    }
    e.message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.len() > 2 && w.starts_with("i-"))
        .map(str::to_string)
        .collect()
}

/// Asks `call` for `ids`, and again without those a `InvalidInstanceID.NotFound` names, until
/// it answers or names none it was asked for.
pub async fn without_unknown<T, F, Fut>(mut ids: Vec<String>, call: F) -> Result<Vec<T>, CloudError>
where
    F: Fn(Vec<String>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<T>, CloudError>>,
{
    loop {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        match call(ids.clone()).await {
            Err(e) => {
                let gone = ids_not_found(&e);
                let before = ids.len();
                ids.retain(|id| !gone.contains(id));
                if ids.len() == before {
                    return Err(e);
                }
            }
            ok => return ok,
        }
    }
}

/// Whether a cloud's error says it has no DescribeInstanceStatus at all (not that it failed
/// this once): its VMs are then judged by their state alone.
pub fn no_status_checks(e: &CloudError) -> bool {
    matches!(
        e.code.as_str(),
        "UnsupportedOperation" | "InvalidAction" | "NotImplemented" | "UnknownOperation"
    )
}

/// A launch template version as its cloud answers for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundTemplate {
    pub name: TemplateName,
    /// The version's number (`$Latest` or `$Default` as it is now).
    pub version: String,
}

/// One cloud, as one user's credentials reach it.
#[async_trait]
pub trait Cloud: Lookup {
    /// The owner's tagged VMs that are not terminated, of one group (by id) or all (every page).
    /// EC2 lists a terminated VM for about an hour: at a VM's death a minute, a group's list would
    /// grow by 60 VMs that nothing decides on. A recorded VM missing here is asked by id
    /// (`Lookup::describe`), which still finds it terminated.
    async fn tagged(&self, owner: &str, group_id: Option<&str>) -> Result<Vec<Tagged>, CloudError>;
    /// Launches `req.count` VMs, idempotent by `req.client_token`: the same token returns the VMs
    /// of the first call, as EC2's RunInstances does.
    async fn launch(&self, req: &LaunchRequest) -> Result<Vec<Seen>, CloudError>;
    /// Terminates VMs (terminating a terminated VM is fine).
    async fn terminate(&self, ids: &[String]) -> Result<(), CloudError>;
    /// Stops running VMs (StopInstances), hibernating them if asked: a warm pool's VMs wait so.
    async fn stop(&self, ids: &[String], hibernate: bool) -> Result<(), CloudError>;
    /// Starts stopped VMs (StartInstances): a warm pool's VMs joining the group.
    async fn start(&self, ids: &[String]) -> Result<(), CloudError>;
    /// Sets tags on VMs (CreateTags): an attached VM gets its group's.
    async fn tag(&self, ids: &[String], tags: &[(String, String)]) -> Result<(), CloudError>;
    /// Removes tags, by key, from VMs (DeleteTags): a detached VM leaves its group's behind.
    async fn untag(&self, ids: &[String], keys: &[&str]) -> Result<(), CloudError>;
    /// The spot price now of each of these instance types, per zone (DescribeSpotPriceHistory
    /// from now): what a MixedInstancesPolicy's price strategies order the types by.
    async fn spot_prices(&self, types: &[String]) -> Result<Vec<SpotPrice>, CloudError>;
    /// Every instance type the cloud offers, with its attributes (DescribeInstanceTypes): what
    /// InstanceRequirements select from.
    async fn instance_types(
        &self,
    ) -> Result<Vec<phantom_model::instance_type::InstanceTypeInfo>, CloudError>;
}

/// What a spot VM of one type costs an hour in one zone now.
#[derive(Debug, Clone, PartialEq)]
pub struct SpotPrice {
    pub instance_type: String,
    pub zone: String,
    pub price: f64,
}

/// The price of each type in `zone` (the cheapest zone's when `zone` is None or has none): what
/// `phantom_rules::distribution` orders spot types by.
pub fn prices_in(prices: &[SpotPrice], zone: Option<&str>) -> BTreeMap<String, f64> {
    let mut anywhere: BTreeMap<String, f64> = BTreeMap::new();
    let mut here: BTreeMap<String, f64> = BTreeMap::new();
    for p in prices {
        let low = anywhere.entry(p.instance_type.clone()).or_insert(p.price);
        *low = low.min(p.price);
        if Some(p.zone.as_str()) == zone {
            here.insert(p.instance_type.clone(), p.price);
        }
    }
    anywhere.extend(here);
    anywhere
}

/// An image a cloud offers a user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub id: String,
    pub name: String,
    pub description: String,
    pub architecture: String,
}

/// A key pair a user has on a cloud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPair {
    pub name: String,
    pub fingerprint: String,
}

/// What a user has on a cloud, for Phantom's own API and the console: the images they can
/// launch and their key pairs, and importing an SSH key (the convenience Nimbus Phantom's web
/// application offered by talking to the clouds on the user's behalf).
#[async_trait]
pub trait Catalog: Send + Sync {
    /// Available images, by id.
    async fn images(&self) -> Result<Vec<Image>, CloudError>;
    /// The user's key pairs, by name.
    async fn key_pairs(&self) -> Result<Vec<KeyPair>, CloudError>;
    /// Imports an OpenSSH public key (ImportKeyPair) and returns the fingerprint the cloud gives.
    async fn import_key_pair(&self, name: &str, public_key: &str) -> Result<String, CloudError>;
}

/// Key types EC2 imports.
const KEY_TYPES: &[&str] = &[
    "ssh-rsa",
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
];

/// Whether `text` is one OpenSSH public key line (`<type> <base64> [comment]`, the base64 naming
/// the same type), so a cloud is never sent anything else. Some clouds (moto) fail with 500 on
/// material they cannot parse, where EC2 says InvalidKey.Format.
pub fn check_public_key(text: &str) -> Result<(), String> {
    let bad = |why: &str| {
        Err(format!(
            "PublicKeyMaterial is not an OpenSSH public key: {why}."
        ))
    };
    let mut fields = text.split_whitespace();
    let (Some(kind), Some(body)) = (fields.next(), fields.next()) else {
        return bad("expected a key type and the key");
    };
    if !KEY_TYPES.contains(&kind) {
        return bad(&format!("the type must be one of {}", KEY_TYPES.join(", ")));
    }
    let Ok(blob) = aws_smithy_types::base64::decode(body) else {
        return bad("the key is not base64");
    };
    // The blob starts with the type again, as a 4-byte length and the name.
    let named = blob
        .get(..4)
        .map(|n| u32::from_be_bytes([n[0], n[1], n[2], n[3]]) as usize)
        .and_then(|n| blob.get(4..4 + n));
    if named != Some(kind.as_bytes()) {
        return bad("the key does not match its type");
    }
    Ok(())
}

/// Makes the client for a registered cloud with a user's credentials there.
pub trait Connect: Send + Sync {
    fn connect(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Cloud>;
}

/// A cloud's load balancers (ELB, ELBv2) and VPC Lattice target groups, with a user's
/// credentials there.
#[async_trait]
pub trait Balancers: Send + Sync {
    /// How long a VM deregistered from `s` keeps draining (s), or `None` if the cloud has no such
    /// load balancer or target group.
    async fn drain_secs(&self, s: &Source) -> Result<Option<i64>, CloudError>;
    async fn register(&self, s: &Source, ids: &[String]) -> Result<(), CloudError>;
    async fn deregister(&self, s: &Source, ids: &[String]) -> Result<(), CloudError>;
    /// The VMs registered with `s` whose health is known: whether each passes its health check.
    async fn health(&self, s: &Source) -> Result<BTreeMap<String, bool>, CloudError>;
}

#[async_trait]
pub trait ConnectLookup: Send + Sync {
    fn lookup(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Lookup>;
    /// The cloud's load balancers: none for a cloud registered without them.
    fn balancers(
        &self,
        cloud: &CloudRecord,
        creds: &CloudCredentials,
    ) -> Option<Arc<dyn Balancers>>;
    fn catalog(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Catalog>;
    /// Whether the cloud's EC2 endpoint answers now (any HTTP answer, even a refusal).
    async fn reachable(&self, cloud: &CloudRecord) -> bool;
}

/// EC2's error codes that mean "no such launch template (or version)".
pub fn template_not_found(code: &str) -> bool {
    code.starts_with("InvalidLaunchTemplateName.") || code.starts_with("InvalidLaunchTemplateId.")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_ids_ec2_says_it_does_not_have_are_read_from_its_message() {
        let one = super::CloudError::new(
            "InvalidInstanceID.NotFound",
            "The instance ID 'i-0123456789abcdef0' does not exist",
        );
        assert_eq!(super::ids_not_found(&one), ["i-0123456789abcdef0"]);
        let two = super::CloudError::new(
            "InvalidInstanceID.NotFound",
            "The instance IDs 'i-1a, i-2b' do not exist",
        );
        assert_eq!(super::ids_not_found(&two), ["i-1a", "i-2b"]);
        let other = super::CloudError::new("InternalError", "i-1a failed");
        assert!(super::ids_not_found(&other).is_empty());
    }

    #[test]
    fn public_keys_are_checked_before_any_cloud_sees_them() {
        let good = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM1YNyk9TcXmFTOUOsK9nX6eJJP/UW9B8k6WseljSEye me@laptop";
        assert_eq!(super::check_public_key(good), Ok(()));
        for bad in [
            "",
            "not a key",
            "ssh-ed25519",
            "ssh-dss AAAAB3NzaC1kc3M=",
            "ssh-ed25519 %%%%",
            "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIM1YNyk9TcXmFTOUOsK9nX6eJJP/UW9B8k6WseljSEye",
        ] {
            assert!(super::check_public_key(bad).is_err(), "{bad}");
        }
    }
}
