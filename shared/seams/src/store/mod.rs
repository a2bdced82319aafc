//! The store seam: Phantom's state by role, as traits with two adapters that give the same
//! outcomes: DynamoDB (`dynamo`, the one table of template.yaml) and in memory (`memory`, for the
//! in-process tests and the simulation; compiled only with the feature `memory`, never into the
//! Lambda packages). `tests/tests/store_contract.rs` runs one suite against both.
//!
//! Every rule that two writers could race on is a condition on the write itself (a transaction
//! where two records change together), never a read followed by a write; a lost condition is a
//! `StoreError`, which the caller turns into AWS's error.

pub mod cas;
pub mod dynamo;
pub mod listed;
pub mod members;
#[cfg(any(test, feature = "memory"))]
pub mod memory;
pub mod samples;

use async_trait::async_trait;
use phantom_model::activity::{Activity, ScalingActivity};
use phantom_model::cloudwatch::{AlarmHistoryItem, Datum, MetricId, StoredAlarm};
use phantom_model::group::Group;
use phantom_model::iam::{IamRole, IamUser, ManagedPolicy};
use phantom_model::instance::Member;
use phantom_model::launch_config::LaunchConfig;
use phantom_model::notification::Notice;
pub use phantom_model::pulse::{Lease as PulseLease, PairView};
use phantom_model::sync_launch::SyncLaunch;
use phantom_model::trail::TrailEvent;
use phantom_model::user::{AccessKey, KeyUse, User};

pub use phantom_model::cloud::{CloudCredentials, CloudRecord};
pub use phantom_model::record::{Backoff, Record};
pub use phantom_model::tracking::{MetricAuth, MetricSource};

pub use dynamo::DynamoStore;
pub use listed::Listed;
#[cfg(any(test, feature = "memory"))]
pub use memory::{MemoryStore, StoreFault};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The item to create exists already.
    Exists,
    /// The item to change, or one it depends on, does not exist.
    NotFound,
    /// The item is referenced by these others (a launch configuration by its groups).
    InUse(Vec<String>),
    /// A compare-and-set lost to a concurrent writer.
    Conflict,
    /// The store could not be reached or refused for another reason.
    Unavailable(String),
    /// A stored item cannot be read back (an attribute missing or of the wrong type).
    Corrupt(String),
    /// The user has as many of these as `LIMITS` allows.
    Limit,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exists => write!(f, "already exists"),
            Self::NotFound => write!(f, "not found"),
            Self::InUse(by) => write!(f, "in use by {}", by.join(", ")),
            Self::Conflict => write!(f, "concurrent update"),
            Self::Unavailable(m) => write!(f, "store unavailable: {m}"),
            Self::Corrupt(m) => write!(f, "stored item unreadable: {m}"),
            Self::Limit => write!(f, "account limit reached"),
        }
    }
}

impl std::error::Error for StoreError {}

pub type StoreResult<T> = Result<T, StoreError>;

/// A group the store cannot mark and count (its clouds tags unreadable) is not written.
impl From<phantom_model::Refusal> for StoreError {
    fn from(e: phantom_model::Refusal) -> Self {
        Self::Corrupt(e.message().to_string())
    }
}

/// What a client sees of a store failure that no action turned into its own error: a conflict it
/// may retry, a store that could not be reached (503, which SDKs retry), or our fault. The
/// details go to the log, not to the client.
impl From<StoreError> for phantom_wire::ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict => phantom_wire::ApiError::resource_contention(
                "The resource was changed by another request; retry.",
            ),
            StoreError::Limit => {
                phantom_wire::ApiError::limit_exceeded("An account limit was reached.")
            }
            StoreError::Unavailable(why) => {
                tracing::error!(error = %why, "store unavailable");
                phantom_wire::ApiError::service_unavailable(
                    "The service could not reach its store; retry the request.",
                )
            }
            other => {
                tracing::error!(error = %other, "store failure");
                phantom_wire::ApiError::internal("An internal error occurred; retry the request.")
            }
        }
    }
}

/// How many groups and launch configurations a user may have (AWS's default quotas per Region):
/// kept by the writes that create them, as a condition on a per-user count.
pub const MAX_GROUPS: i64 = 500;
pub const MAX_LAUNCH_CONFIGS: i64 = 200;

/// A user's groups and launch configurations, as counted against the limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub groups: i64,
    pub launch_configs: i64,
}

/// The outcome of `Fleet::take_lease`.
#[derive(Debug)]
pub enum Lease {
    Taken(Box<Group>),
    /// Another holder's, until `until_ms` (Unix ms) unless it renews it.
    Busy {
        until_ms: i64,
    },
    NoGroup,
}

/// A (user, cloud) on the health check's list: the user has `groups` groups on that cloud. It stays
/// listed at 0 until a sweep finds nothing of the user's left there (`Fleet::unwatch`), so VMs of
/// a group deleted mid-launch are still found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watched {
    pub user: String,
    pub cloud: String,
    pub groups: i64,
    /// What the pair's last full sweep saw (None: never swept since it was listed).
    pub view: Option<PairView>,
}

/// One write of an account's IAM users and managed policies, all or nothing.
pub struct IamChange<'a> {
    pub users: Vec<UserSave<'a>>,
    pub policies: Vec<PolicySave<'a>>,
    pub roles: Vec<RoleSave<'a>>,
    /// The account's request limits, which the users' keys carry.
    pub limits: Option<&'a phantom_model::limits::Limits>,
}

/// A user as read, as it is to be, and the key to create for it (id, secret).
pub struct UserSave<'a> {
    pub before: &'a IamUser,
    pub after: &'a IamUser,
    pub new_key: Option<(&'a str, &'a str)>,
}

pub enum RoleSave<'a> {
    Create(&'a IamRole),
    /// As read, and as it is to be (its version one more).
    Update {
        before: &'a IamRole,
        after: &'a IamRole,
    },
    Delete(&'a IamRole),
}

pub enum PolicySave<'a> {
    Create(&'a ManagedPolicy),
    /// As read, and as it is to be (its version one more).
    Update {
        before: &'a ManagedPolicy,
        after: &'a ManagedPolicy,
    },
    Delete(&'a ManagedPolicy),
}

/// An account's IAM users, with their keys' records, which carry each user's identity and
/// policies so that a request reads them with its key (issue 63).
#[async_trait]
pub trait Identities: Send + Sync {
    async fn iam_user(&self, account: &str, name: &str) -> StoreResult<Option<IamUser>>;
    /// The account's IAM users, by name.
    async fn iam_users(&self, account: &str) -> StoreResult<Vec<IamUser>>;
    /// Creates `u` (with no keys): `Exists` if its name is taken in the account.
    async fn create_iam_user(&self, u: &IamUser) -> StoreResult<()>;
    /// Writes `after` in place of `before` (as read), its version one more, with its keys'
    /// records together: each key of `after` carries its identity, status and `limits`;
    /// `new_key` (id, secret) is created; a key gone from `after` is deleted. `NotFound` if the
    /// user is gone, `Conflict` if it changed since `before` was read.
    async fn save_iam_user(
        &self,
        before: &IamUser,
        after: &IamUser,
        new_key: Option<(&str, &str)>,
        limits: Option<&phantom_model::limits::Limits>,
    ) -> StoreResult<()> {
        self.save_iam(&IamChange {
            users: vec![UserSave {
                before,
                after,
                new_key,
            }],
            policies: Vec::new(),
            roles: Vec::new(),
            limits,
        })
        .await
    }
    /// Writes every part of `change` at once, or none: each user as `save_iam_user` writes
    /// it, each managed policy created, changed or deleted. `Exists` if a created policy's name
    /// or a new key's id is taken, `NotFound` if a user or policy is gone, `Conflict` if one
    /// changed since it was read.
    async fn save_iam(&self, change: &IamChange<'_>) -> StoreResult<()>;
    async fn managed_policy(&self, account: &str, name: &str)
        -> StoreResult<Option<ManagedPolicy>>;
    /// The account's managed policies, by name.
    async fn managed_policies(&self, account: &str) -> StoreResult<Vec<ManagedPolicy>>;
    async fn iam_role(&self, account: &str, name: &str) -> StoreResult<Option<IamRole>>;
    /// The account's roles, by name.
    async fn iam_roles(&self, account: &str) -> StoreResult<Vec<IamRole>>;
    /// Deletes `u` (as read, with no keys left): `NotFound` if it is gone, `Conflict` if it
    /// changed since.
    async fn delete_iam_user(&self, u: &IamUser) -> StoreResult<()>;
    /// Rewrites every IAM user's keys of `account` (as read) with the account's limits and, with
    /// `active`, that status (an account disabled stops its IAM users' keys too); a user changed
    /// meanwhile is read again. Each user is its own write.
    async fn rewrite_iam_keys(&self, account: &User, active: Option<bool>) -> StoreResult<()> {
        for listed in self.iam_users(&account.name).await? {
            let mut before = listed;
            loop {
                let mut after = before.clone();
                if let Some(a) = active {
                    after.keys.iter_mut().for_each(|k| k.active = a);
                }
                let limits = account.limits.as_ref();
                match self.save_iam_user(&before, &after, None, limits).await {
                    Ok(()) | Err(StoreError::NotFound) => break,
                    Err(StoreError::Conflict) => {
                        match self.iam_user(&account.name, &before.name).await? {
                            Some(again) => before = again,
                            None => break,
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }
    /// Records a key's last use on its record: `NotFound` if the key is gone.
    async fn key_used(&self, access_key_id: &str, used: &KeyUse) -> StoreResult<()>;
    /// Creates a session's key (`key.session` set; its secret sealed as a key's), kept until a
    /// while after it expires (DynamoDB's TTL): `Exists` if its id is taken.
    async fn create_session(&self, key: &AccessKey) -> StoreResult<()>;
}

/// A trail event's place in its account's trail: when, then its id (newest last).
pub fn trail_key(e: &TrailEvent) -> String {
    format!("{:013}#{}", e.at_ms, e.event_id)
}

/// What keeps an event in a lookup.
pub type TrailFilter<'a> = &'a (dyn Fn(&TrailEvent) -> bool + Send + Sync);

/// Each account's audit trail (issue 63), kept `phantom_rules::trail::RETENTION_MS`.
#[async_trait]
pub trait Trail: Send + Sync {
    async fn put_event(&self, account: &str, e: &TrailEvent) -> StoreResult<()>;
    /// The account's events from `start_ms` to `end_ms` (inclusive), newest first, after
    /// `cursor` (`trail_key` of the last event of a page before), until `want` pass `keep`:
    /// them, and the cursor of the next page (None: no more).
    async fn events(
        &self,
        account: &str,
        start_ms: i64,
        end_ms: i64,
        cursor: Option<&str>,
        want: usize,
        keep: TrailFilter<'_>,
    ) -> StoreResult<(Vec<TrailEvent>, Option<String>)>;
}

/// Each account's request buckets, shared by every api instance (`phantom_rules::throttle::gcra`).
#[async_trait]
pub trait Buckets: Send + Sync {
    /// Takes `take` from `account`'s bucket `class` at `now_us`: whether it held them. `idle`
    /// says the bucket is likely full (its last arrival time known to this instance is past),
    /// the case the DynamoDB adapter tries first.
    async fn take_tokens(
        &self,
        account: &str,
        class: &str,
        take: phantom_rules::throttle::Take,
        now_us: i64,
        idle: bool,
    ) -> StoreResult<bool>;
}

/// Users and their access keys, clouds, and each user's credentials per cloud.
#[async_trait]
pub trait Directory: Send + Sync {
    /// A user and its access key, together; `Exists` if either exists.
    async fn create_user(&self, user: &User, secret: &str) -> StoreResult<()>;
    /// Every user, by name.
    async fn users(&self) -> StoreResult<Vec<User>>;
    async fn user(&self, name: &str) -> StoreResult<Option<User>>;
    async fn access_key(&self, access_key_id: &str) -> StoreResult<Option<AccessKey>>;
    /// Disables user `u` (as read): deletes its access key, so nothing it signs is accepted, and
    /// marks it disabled, together. `NotFound` if it is gone, `Conflict` if its key changed since.
    /// Its groups and VMs stay.
    async fn disable_user(&self, u: &User) -> StoreResult<()>;
    /// Sets (or, with None, clears) the user's request limits, on the user and on its access key
    /// together: `NotFound` if the user is gone, `Conflict` if its key changed since `u` was read.
    async fn set_limits(
        &self,
        u: &User,
        limits: Option<&phantom_model::limits::Limits>,
    ) -> StoreResult<()>;
    /// Gives user `u` (as read) a new access key in place of its old one, and enables it:
    /// `NotFound` if it is gone, `Conflict` if its key changed since, `Exists` if the new id is
    /// taken.
    /// Sets (or with None removes) the SHA-256 of the user's scrape password: `NotFound` if
    /// there is no such user.
    async fn set_scrape(&self, user: &str, sha256: Option<&str>) -> StoreResult<()>;
    async fn rotate_access_key(
        &self,
        u: &User,
        access_key_id: &str,
        secret: &str,
    ) -> StoreResult<()>;
    /// Gives the root of account `u` (as read) a second key: `Conflict` if it changed since (it
    /// has one now), `NotFound` if it is gone, `Exists` if the id is taken.
    async fn add_root_key(&self, u: &User, access_key_id: &str, secret: &str) -> StoreResult<()>;
    /// Sets a root key of `u`'s Active or Inactive: `NotFound` if the key is gone.
    async fn set_root_key_active(
        &self,
        u: &User,
        access_key_id: &str,
        active: bool,
    ) -> StoreResult<()>;
    /// Deletes a root key of `u` (as read; one of two: the other becomes its only key):
    /// `Conflict` if `u` changed since, `NotFound` if it is gone.
    async fn delete_root_key(&self, u: &User, access_key_id: &str) -> StoreResult<()>;
    /// Registers a cloud, or updates its endpoint, region and zone.
    async fn put_cloud(&self, cloud: &CloudRecord) -> StoreResult<()>;
    /// Removes a cloud: `NotFound` if it is not registered, `InUse` with the users the health
    /// check still watches there (their groups, or VMs it has not yet found gone). Users'
    /// credentials for it stay, for a cloud registered again under the name.
    async fn delete_cloud(&self, name: &str) -> StoreResult<()>;
    async fn cloud(&self, name: &str) -> StoreResult<Option<CloudRecord>>;
    /// Records that the cloud has no DescribeInstanceStatus (`CloudRecord::status_checks`):
    /// `NotFound` if it is not registered.
    async fn no_status_checks(&self, name: &str) -> StoreResult<()>;
    /// Every cloud, by name.
    async fn clouds(&self) -> StoreResult<Vec<CloudRecord>>;
    /// Sets a user's credentials for a cloud; `NotFound` unless both exist.
    async fn put_cloud_credentials(&self, user: &str, creds: &CloudCredentials) -> StoreResult<()>;
    async fn cloud_credentials(
        &self,
        user: &str,
        cloud: &str,
    ) -> StoreResult<Option<CloudCredentials>>;
    /// Removes a user's credentials for a cloud: `NotFound` if there are none.
    async fn delete_cloud_credentials(&self, user: &str, cloud: &str) -> StoreResult<()>;
    /// The user's credentials for every cloud, by cloud.
    async fn all_cloud_credentials(&self, user: &str) -> StoreResult<Vec<CloudCredentials>>;
    /// Sets the deployment's metric source (target tracking's Prometheus), or replaces it.
    async fn put_metric_source(&self, source: &MetricSource) -> StoreResult<()>;
    /// The deployment's metric source, its secret opened; None if none is set.
    async fn metric_source(&self) -> StoreResult<Option<MetricSource>>;
    /// Removes the metric source: `NotFound` if there is none.
    async fn delete_metric_source(&self) -> StoreResult<()>;
}

/// Launch configurations.
#[async_trait]
pub trait LaunchConfigs: Send + Sync {
    /// `NotFound` if its cloud is not registered, `Exists` if the name is taken, `Limit` if the
    /// user has `MAX_LAUNCH_CONFIGS`.
    async fn create_launch_config(&self, user: &str, lc: &LaunchConfig) -> StoreResult<()>;
    /// The user's counts against the limits.
    async fn usage(&self, user: &str) -> StoreResult<Usage>;
    /// `NotFound`, or `InUse` with the names of the groups using it (sorted).
    async fn delete_launch_config(&self, user: &str, name: &str) -> StoreResult<()>;
    async fn launch_config(&self, user: &str, name: &str) -> StoreResult<Option<LaunchConfig>>;
    async fn launch_configs(&self, user: &str, page: Page<'_>) -> StoreResult<Vec<LaunchConfig>>;
}

/// A page of a list in name order: up to `want` after `after`, of all or only `names`.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    pub names: Option<&'a [String]>,
    pub after: Option<&'a str>,
    pub want: usize,
}

impl Page<'_> {
    /// Everything, in one page.
    pub const ALL: Page<'static> = Page {
        names: None,
        after: None,
        want: usize::MAX,
    };
}

/// A filter on groups as they are read.
pub type GroupFilter<'a> = &'a (dyn Fn(&Group) -> bool + Send + Sync);

/// A holder's claim on a group's lease, made at `now_ms` for `ttl_ms`.
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    pub user: &'a str,
    pub group: &'a str,
    pub holder: &'a str,
    pub now_ms: i64,
    pub ttl_ms: i64,
}

impl Claim<'_> {
    /// When the lease runs out if nobody renews it.
    pub fn until_ms(&self) -> i64 {
        self.now_ms + self.ttl_ms
    }
}

/// A writer's ask for a round of the group it changes: when it asked (Unix ms), or None. The
/// write keeps it on the group, in the same request, with the count of asks unanswered
/// (`Group::asks`). A round that took the lease after it clears it as it gives the lease back,
/// if no ask came since (`Fleet::release_lease`). A writer that died between its write and its
/// message, or a round that died, leaves the ask behind, and the pulse queues the round
/// (`Fleet::asked`). The oldest unanswered ask's time is the one kept.
pub type Ask = Option<i64>;

/// Auto Scaling groups: what the user asks for.
#[async_trait]
pub trait Groups: Send + Sync {
    /// Creates a group and records it as a user of its launch configuration, and (user, cloud) on
    /// the health check's list: `Exists`, `NotFound` if the launch configuration is gone, or
    /// `Limit` if the user has `MAX_GROUPS`.
    async fn create_group(&self, user: &str, g: &Group, ask: Ask) -> StoreResult<()>;
    async fn group(&self, user: &str, name: &str) -> StoreResult<Option<Group>>;
    /// The groups of `page` that pass `keep`.
    async fn groups(
        &self,
        user: &str,
        page: Page<'_>,
        keep: GroupFilter<'_>,
    ) -> StoreResult<Vec<Group>>;
    /// Every group of the user's.
    async fn all_groups(&self, user: &str) -> StoreResult<Vec<Group>> {
        self.groups(user, Page::ALL, &|_| true).await
    }
    /// Compare-and-set of the desired capacity of group `g` as read: `Conflict` if it changed since
    /// (another version) or is another group of the same name (another id). Version + 1.
    async fn set_desired(&self, user: &str, g: &Group, desired: i64, ask: Ask) -> StoreResult<()>;
    /// Replaces the sizes, launch configuration and document of group `old` (as read: `Conflict`
    /// if it changed since) with `new`'s, and moves the in-use mark if the launch configuration
    /// changed (`NotFound` if the new one is gone). Version + 1. The index of due groups follows
    /// `new.due_ms()`.
    async fn update_group(
        &self,
        user: &str,
        old: &Group,
        new: &Group,
        ask: Ask,
    ) -> StoreResult<()> {
        self.update_group_with(user, old, new, &[], ask).await
    }
    /// `update_group`, and these scaling activities written in the same transaction (a scheduled
    /// action's firing and its record are one write).
    async fn update_group_with(
        &self,
        user: &str,
        old: &Group,
        new: &Group,
        activities: &[Activity],
        ask: Ask,
    ) -> StoreResult<()>;
    /// Starts a forced delete (desired and min 0, `Delete in progress`, off the index of due
    /// groups); compare-and-set.
    async fn begin_delete(&self, user: &str, g: &Group, ask: Ask) -> StoreResult<()>;
    /// Deletes a group as read, the same one (by id) at its version (`Conflict` otherwise),
    /// releases its launch configuration and counts it off the health check's list.
    async fn delete_group(&self, user: &str, g: &Group) -> StoreResult<()>;
}

/// What the provisioner keeps: the lease on a group, instance records, scaling activities.
#[async_trait]
pub trait Fleet: Send + Sync {
    /// Takes the group's lease until the claim's end if nobody holds it (or theirs ran out) and
    /// returns the group as it stands, in one conditional write.
    async fn take_lease(&self, claim: Claim<'_>) -> StoreResult<Lease>;
    /// Extends the lease to the claim's end while it is still the claim's holder's (a holder at
    /// work renews it, so that a short lease runs out soon only for a holder that died): false if
    /// it is not (given back, or run out and taken by another).
    async fn renew_lease(&self, claim: Claim<'_>) -> StoreResult<bool>;
    /// Gives the lease back if it is `holder`'s and the group is still as `seen` (read under the
    /// lease): its version, and no ask since (`Group::asks`). It answers the asks seen. A change
    /// made meanwhile, or an ask, fails this with `Conflict`, and the holder reconciles again.
    /// With nothing seen, the holder gives it up whatever changed, asks left as they are (it stops
    /// early, and a queued message or the pulse carries on).
    async fn release_lease(
        &self,
        user: &str,
        name: &str,
        holder: &str,
        seen: Option<&Group>,
    ) -> StoreResult<()>;
    /// The recorded instances of one group, by id.
    async fn instances(&self, user: &str, group: &str) -> StoreResult<Vec<Member>>;
    /// Every recorded instance of the user's groups, as (group, instance), by group then id.
    async fn all_instances(&self, user: &str) -> StoreResult<Vec<(String, Member)>>;
    /// The recorded instances of the groups named `first` to `last` (inclusive, by name), as
    /// (group, instance), by group then id: one read for a page of groups.
    async fn instances_between(
        &self,
        user: &str,
        first: &str,
        last: &str,
    ) -> StoreResult<Vec<(String, Member)>>;
    /// Writes one round's record for group `g` (as read, by its id): `NotFound` if that group is
    /// gone, `Conflict` if `launch_seq` is to advance and it moved since `g` was read, or if
    /// `desired` is to be set and the group's version moved, or if an instance it puts changed
    /// since it was read (`Member::rev`: a new one must not exist, a read one must be at its
    /// revision). The instances are stored at revision `rev + 1`.
    async fn record(&self, user: &str, g: &Group, r: &Record) -> StoreResult<()>;
    /// Every (user, cloud) the health check sweeps, by cloud then user.
    async fn watched(&self) -> StoreResult<Vec<Watched>>;
    /// Every group with an ask (`Ask`) made at or before `at_ms` that no round has answered, as
    /// (user, group): what the pulse queues rounds for. An index, eventually consistent, that
    /// holds only the groups with an ask (a round at work on one is listed until it is done).
    async fn asked(&self, at_ms: i64) -> StoreResult<Vec<(String, String)>>;
    /// Leaves an ask made at `at_ms` on the group, changing nothing else: for a round whose next
    /// message the queue refused, so that the pulse queues it (`NotFound` if the group is gone).
    async fn ask(&self, user: &str, name: &str, at_ms: i64) -> StoreResult<()>;
    /// Every group with a scheduled action due at `now_ms` (`Group::due_ms`), as (user, group):
    /// what the scheduler reads, never the groups with nothing due. It may lag a write a little
    /// (DynamoDB's index is eventually consistent): the scheduler reads each group before firing.
    async fn due(&self, now_ms: i64) -> StoreResult<Vec<(String, String)>>;
    /// Takes (user, cloud) off the health check's list if it has no groups: `Conflict` if it has.
    async fn unwatch(&self, user: &str, cloud: &str) -> StoreResult<()>;
    /// Whose records (user, group) hold the VM with this id: what a cloud's state-change event
    /// is taken to (an index, eventually consistent; ids of different clouds may repeat).
    async fn owners_of(&self, instance_id: &str) -> StoreResult<Vec<(String, String)>>;
    /// Keeps what a full sweep of (user, cloud) saw on its entry of the list; `NotFound` if the
    /// pair left the list meanwhile (it is not put back).
    async fn set_view(&self, user: &str, cloud: &str, view: &PairView) -> StoreResult<()>;
    /// The pulse's lease (`phantom_rules::pulse`), read strongly consistent.
    async fn pulse(&self) -> StoreResult<Option<PulseLease>>;
    /// Writes the pulse's lease if its sequence is still `expect` (0: no lease yet): `Conflict`
    /// if another tick or starter moved it.
    async fn put_pulse(&self, expect: u64, lease: &PulseLease) -> StoreResult<()>;
    /// The group's notices recorded and not yet sent (a crash came between), oldest first.
    async fn notices(&self, user: &str, group: &str) -> StoreResult<Vec<Notice>>;
    /// Forgets a notice once it was sent.
    async fn sent(&self, user: &str, group: &str, id: &str) -> StoreResult<()>;
    /// Records a LaunchInstances request of the group, pending: `Exists` if its client token
    /// has one already. Kept a day (`LAUNCH_TTL_SECS`); `Record::launches` finishes it.
    async fn put_launch(&self, user: &str, group: &str, l: &SyncLaunch) -> StoreResult<()>;
    /// The group's LaunchInstances requests (pending and finished), by client token.
    async fn launches(&self, user: &str, group: &str) -> StoreResult<Vec<SyncLaunch>>;
    /// A VM of the group called its heartbeat URL at `at_ms` (`phantom_rules::heartbeat`): kept a
    /// day (`BEAT_TTL_SECS`), overwritten by the next.
    async fn beat(&self, user: &str, group: &str, instance: &str, at_ms: i64) -> StoreResult<()>;
    /// The group's VMs' last heartbeats, by instance id.
    async fn beats(&self, user: &str, group: &str) -> StoreResult<Vec<(String, i64)>>;
    /// Activities of one group or of all, newest first, after the key `after`; returns (key,
    /// document) pairs so the caller can page.
    async fn activities(
        &self,
        user: &str,
        group: Option<&str>,
        after: Option<&str>,
        want: usize,
    ) -> StoreResult<Vec<(String, ScalingActivity)>>;
}

/// All of it: what the api and the provisioner are built from.
/// CloudWatch's data of an account at Phantom's endpoint: published datapoints, kept
/// `phantom_rules::metric_data::RETENTION_MS`, and the metrics they name.
#[async_trait]
pub trait Watch: Send + Sync {
    /// Keeps `data` and marks each of its metrics published to at its datum's time, but those
    /// in `listed` (the caller wrote their listing lately: `metrics` may then say they were last
    /// published to up to that long ago).
    async fn put_data(&self, user: &str, data: &[Datum], listed: &[MetricId]) -> StoreResult<()>;
    /// The datapoints of `metric` in `[from_ms, to_ms)`, oldest first.
    async fn data(
        &self,
        user: &str,
        metric: &MetricId,
        from_ms: i64,
        to_ms: i64,
    ) -> StoreResult<Vec<Datum>>;
    /// The metrics published to (in `namespace`, if given), each with when it last was (Unix
    /// ms), in the order of their namespace, name and dimensions.
    async fn metrics(
        &self,
        user: &str,
        namespace: Option<&str>,
    ) -> StoreResult<Vec<(MetricId, i64)>>;
    /// The account's alarm `name`.
    async fn alarm(&self, user: &str, name: &str) -> StoreResult<Option<StoredAlarm>>;
    /// The account's alarms, by name.
    async fn alarms(&self, user: &str) -> StoreResult<Vec<StoredAlarm>>;
    /// Writes `alarm` as version `alarm.version + 1` if the stored one is still at
    /// `alarm.version` (0: none is stored; else `Exists`), with `history` in the same write;
    /// `Conflict` if it moved.
    async fn put_alarm(
        &self,
        user: &str,
        alarm: &StoredAlarm,
        history: &[AlarmHistoryItem],
    ) -> StoreResult<()>;
    /// Deletes the alarm (`NotFound` if there is none); its history stays until it expires.
    async fn delete_alarm(&self, user: &str, name: &str) -> StoreResult<()>;
    /// The history of the alarm `name` (all the account's alarms: `None`), newest first, kept
    /// `ALARM_HISTORY_TTL_SECS`.
    async fn alarm_history(
        &self,
        user: &str,
        name: Option<&str>,
    ) -> StoreResult<Vec<AlarmHistoryItem>>;
    /// Every account's alarms, (user, name), for the scheduled run to evaluate.
    async fn due_alarms(&self) -> StoreResult<Vec<(String, String)>>;
}

/// An alarm's history is kept 30 days, as CloudWatch keeps it.
pub const ALARM_HISTORY_TTL_SECS: i64 = 30 * 24 * 3600;

pub trait Store:
    Directory + Identities + Trail + Buckets + LaunchConfigs + Groups + Fleet + Watch
{
}
impl<T: Directory + Identities + Trail + Buckets + LaunchConfigs + Groups + Fleet + Watch> Store
    for T
{
}

/// The table's key attributes and its TTL attribute (template.yaml declares the same; the check in
/// infra/check_template.py compares them).
pub const PARTITION_KEY: &str = "pk";
pub const SORT_KEY: &str = "sk";
pub const TTL_ATTRIBUTE: &str = "expires";
/// A notice that could not be sent for a day is forgotten (its target gone, most likely).
pub const NOTICE_TTL_SECS: i64 = 24 * 3600;
/// How long a LaunchInstances request is kept: a retry with its client token within it gets
/// the same answer.
pub const LAUNCH_TTL_SECS: i64 = 24 * 3600;
/// How long a VM's last heartbeat is kept: one silent for a day is long replaced.
pub const BEAT_TTL_SECS: i64 = 24 * 3600;

/// An activity's key below its owner: newest first (inverted time), then its id. Both adapters
/// page activities by it, so their NextTokens agree.
pub fn activity_key(a: &Activity) -> StoreResult<String> {
    let id = &a.doc.activity_id;
    let inverted = 9_999_999_999_999 - a.start_ms;
    Ok(format!("{}#{inverted:013}#{id}", a.group))
}

/// Whether what follows a group's prefix in an activity key is one of that group's (its time and
/// id), not one of a group whose name only begins with it (`a` and `a#1`).
pub fn activity_of_group(after_prefix: &str) -> bool {
    after_prefix.split_once('#').is_some_and(|(time, id)| {
        time.len() == 13 && time.bytes().all(|b| b.is_ascii_digit()) && !id.contains('#')
    })
}
