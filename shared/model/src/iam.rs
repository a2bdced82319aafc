//! IAM inside an account (issue 63): the identities an account makes, their access keys and
//! policies, and the IAM actions' inputs and answers in botocore's `iam` shapes (read from the
//! decoded request as `request.rs`'s are).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An IAM user of an account (a Phantom user): its keys and inline policies live on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IamUser {
    /// The account: the Phantom user whose groups its identities act on.
    pub account: String,
    pub account_id: String,
    pub name: String,
    pub path: String,
    /// `AIDA` + 16 characters, as IAM's.
    pub user_id: String,
    pub created: String,
    pub tags: Vec<Tag>,
    /// Inline policies by name, each document as it was put.
    pub policies: BTreeMap<String, String>,
    /// Managed policies attached, by ARN, each with its default version's document as it was
    /// when attached or last set (kept in step by the write that changes it).
    #[serde(default)]
    pub attached: BTreeMap<String, String>,
    /// At most two (`phantom_rules::iam::identities::KEYS_PER_USER`).
    pub keys: Vec<IamKey>,
    /// Bumped by every write; a write is conditional on the version it read.
    pub version: u64,
}

/// An access key's metadata on its user (the secret lives on the key's own record alone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IamKey {
    pub access_key_id: String,
    pub active: bool,
    pub created: String,
}

/// What a key's record carries of the IAM user it belongs to, so that a request's policies are
/// read with its key (no second store round trip); or, for a role's session, of the role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub name: String,
    /// The user's id, or the role's.
    pub user_id: String,
    pub path: String,
    pub tags: Vec<Tag>,
    /// The user's (or role's) policy documents, as put.
    pub policies: Vec<String>,
    /// A role's session: its name (the identity is then the role's).
    #[serde(default)]
    pub role_session: Option<String>,
    /// A session policy (AssumeRole's `Policy`): the session may do only what it allows too.
    #[serde(default)]
    pub session_policies: Vec<String>,
}

impl Identity {
    /// The role's ARN, for a role's session.
    pub fn role_arn(&self, account_id: &str) -> Option<String> {
        self.role_session
            .as_ref()
            .map(|_| role_arn(account_id, &self.path, &self.name))
    }
}

/// A role: who may assume it (its trust policy), and what its sessions may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IamRole {
    pub account: String,
    pub account_id: String,
    pub name: String,
    pub path: String,
    /// `AROA` + 17 characters, as IAM's.
    pub role_id: String,
    pub created: String,
    pub description: Option<String>,
    pub trust_policy: String,
    /// How long its sessions may last (seconds, 3,600 to 43,200).
    pub max_session_secs: i64,
    pub tags: Vec<Tag>,
    pub policies: BTreeMap<String, String>,
    pub attached: BTreeMap<String, String>,
    pub version: u64,
}

impl IamRole {
    pub fn arn(&self) -> String {
        role_arn(&self.account_id, &self.path, &self.name)
    }

    /// The identity a session of it acts as.
    pub fn identity(&self, session: &str, session_policies: Vec<String>) -> Identity {
        Identity {
            name: self.name.clone(),
            user_id: self.role_id.clone(),
            path: self.path.clone(),
            tags: self.tags.clone(),
            policies: self
                .policies
                .values()
                .chain(self.attached.values())
                .cloned()
                .collect(),
            role_session: Some(session.to_string()),
            session_policies,
        }
    }
}

/// `arn:aws:iam::<account>:role<path><name>`.
pub fn role_arn(account_id: &str, path: &str, name: &str) -> String {
    format!("arn:aws:iam::{account_id}:role{path}{name}")
}

impl IamUser {
    /// The identity its keys carry.
    pub fn identity(&self) -> Identity {
        Identity {
            name: self.name.clone(),
            user_id: self.user_id.clone(),
            path: self.path.clone(),
            tags: self.tags.clone(),
            policies: self
                .policies
                .values()
                .chain(self.attached.values())
                .cloned()
                .collect(),
            role_session: None,
            session_policies: Vec::new(),
        }
    }

    pub fn arn(&self) -> String {
        user_arn(&self.account_id, &self.path, &self.name)
    }
}

/// A customer managed policy: its versions (at most five), the default one in force, and the
/// identities it is attached to (each keeps a copy of the default's document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagedPolicy {
    pub account: String,
    pub account_id: String,
    pub name: String,
    pub path: String,
    /// `ANPA` + 17 characters, as IAM's.
    pub policy_id: String,
    pub description: Option<String>,
    pub created: String,
    pub updated: String,
    pub versions: Vec<PolicyVersion>,
    pub default_version: String,
    /// The number of the next version made (`v<n>`).
    pub next_version: u32,
    /// The IAM users it is attached to, by name.
    pub users: Vec<String>,
    /// The roles it is attached to, by name.
    #[serde(default)]
    pub roles: Vec<String>,
    pub tags: Vec<Tag>,
    /// Bumped by every write; a write is conditional on the version it read.
    pub version: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyVersion {
    pub id: String,
    pub document: String,
    pub created: String,
}

impl ManagedPolicy {
    pub fn arn(&self) -> String {
        policy_arn(&self.account_id, &self.path, &self.name)
    }

    /// The default version's document.
    pub fn document(&self) -> Option<&str> {
        self.versions
            .iter()
            .find(|v| v.id == self.default_version)
            .map(|v| v.document.as_str())
    }
}

/// `arn:aws:iam::<account>:policy<path><name>`.
pub fn policy_arn(account_id: &str, path: &str, name: &str) -> String {
    format!("arn:aws:iam::{account_id}:policy{path}{name}")
}

/// `arn:aws:iam::<account>:user<path><name>`.
pub fn user_arn(account_id: &str, path: &str, name: &str) -> String {
    format!("arn:aws:iam::{account_id}:user{path}{name}")
}

/// The account's root, as IAM names it.
pub fn root_arn(account_id: &str) -> String {
    format!("arn:aws:iam::{account_id}:root")
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Tag {
    pub key: String,
    pub value: String,
}

// The actions' inputs.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateUser {
    pub user_name: String,
    pub path: Option<String>,
    pub permissions_boundary: Option<String>,
    #[serde(default)]
    pub tags: Vec<Tag>,
}

/// GetUser, ListAccessKeys, CreateAccessKey: the user, or (absent) the caller.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UserNamed {
    pub user_name: Option<String>,
    pub marker: Option<String>,
    pub max_items: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListUsers {
    pub path_prefix: Option<String>,
    pub marker: Option<String>,
    pub max_items: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteUser {
    pub user_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateAccessKey {
    pub user_name: Option<String>,
    pub access_key_id: String,
    pub status: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteAccessKey {
    pub user_name: Option<String>,
    pub access_key_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetAccessKeyLastUsed {
    pub access_key_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutUserPolicy {
    pub user_name: String,
    pub policy_name: String,
    pub policy_document: String,
}

/// GetUserPolicy, DeleteUserPolicy.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UserPolicy {
    pub user_name: String,
    pub policy_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListUserPolicies {
    pub user_name: String,
    pub marker: Option<String>,
    pub max_items: Option<i64>,
}

// The answers.

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct User {
    pub path: String,
    pub user_name: String,
    pub user_id: String,
    pub arn: String,
    pub create_date: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Tag>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct UserResponse {
    pub user: User,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListUsersResponse {
    pub users: Vec<User>,
    pub is_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NewAccessKey {
    pub user_name: String,
    pub access_key_id: String,
    pub status: String,
    pub secret_access_key: String,
    pub create_date: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateAccessKeyResponse {
    pub access_key: NewAccessKey,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AccessKeyMetadata {
    pub user_name: String,
    pub access_key_id: String,
    pub status: String,
    /// None for a root key (Phantom keeps no date of its own for them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create_date: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListAccessKeysResponse {
    pub access_key_metadata: Vec<AccessKeyMetadata>,
    pub is_truncated: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AccessKeyLastUsed {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_date: Option<String>,
    pub service_name: String,
    pub region: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetAccessKeyLastUsedResponse {
    pub user_name: String,
    pub access_key_last_used: AccessKeyLastUsed,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetUserPolicyResponse {
    pub user_name: String,
    pub policy_name: String,
    /// URL-encoded, as IAM answers it (the AWS CLI decodes it).
    pub policy_document: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListUserPoliciesResponse {
    pub policy_names: Vec<String>,
    pub is_truncated: bool,
}

// STS's inputs and answers.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetSessionToken {
    pub duration_seconds: Option<i64>,
    pub serial_number: Option<String>,
    pub token_code: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: String,
    pub expiration: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetSessionTokenResponse {
    pub credentials: Credentials,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetCallerIdentityResponse {
    pub user_id: String,
    pub account: String,
    pub arn: String,
}

// Managed policies' inputs and answers.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreatePolicy {
    pub policy_name: String,
    pub path: Option<String>,
    pub policy_document: String,
    pub description: Option<String>,
    #[serde(default)]
    pub tags: Vec<Tag>,
}

/// GetPolicy, DeletePolicy, ListPolicyVersions.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PolicyNamed {
    pub policy_arn: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListPolicies {
    pub scope: Option<String>,
    pub only_attached: Option<bool>,
    pub path_prefix: Option<String>,
    pub marker: Option<String>,
    pub max_items: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreatePolicyVersion {
    pub policy_arn: String,
    pub policy_document: String,
    pub set_as_default: Option<bool>,
}

/// GetPolicyVersion, DeletePolicyVersion, SetDefaultPolicyVersion.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct VersionNamed {
    pub policy_arn: String,
    pub version_id: String,
}

/// AttachUserPolicy, DetachUserPolicy.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UserAttachment {
    pub user_name: String,
    pub policy_arn: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListAttachedUserPolicies {
    pub user_name: String,
    pub path_prefix: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Policy {
    pub policy_name: String,
    pub policy_id: String,
    pub arn: String,
    pub path: String,
    pub default_version_id: String,
    pub attachment_count: i64,
    pub permissions_boundary_usage_count: i64,
    pub is_attachable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub create_date: String,
    pub update_date: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Tag>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PolicyResponse {
    pub policy: Policy,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListPoliciesResponse {
    pub policies: Vec<Policy>,
    pub is_truncated: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Version {
    /// URL-encoded, as IAM answers it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
    pub version_id: String,
    pub is_default_version: bool,
    pub create_date: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PolicyVersionResponse {
    pub policy_version: Version,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListPolicyVersionsResponse {
    pub versions: Vec<Version>,
    pub is_truncated: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AttachedPolicy {
    pub policy_name: String,
    pub policy_arn: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListAttachedPoliciesResponse {
    pub attached_policies: Vec<AttachedPolicy>,
    pub is_truncated: bool,
}

// Roles' inputs and answers.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateRole {
    pub role_name: String,
    pub path: Option<String>,
    pub assume_role_policy_document: String,
    pub description: Option<String>,
    pub max_session_duration: Option<i64>,
    pub permissions_boundary: Option<String>,
    #[serde(default)]
    pub tags: Vec<Tag>,
}

/// GetRole, DeleteRole.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RoleNamed {
    pub role_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListRoles {
    pub path_prefix: Option<String>,
    pub marker: Option<String>,
    pub max_items: Option<i64>,
}

/// UpdateAssumeRolePolicy.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateAssumeRolePolicy {
    pub role_name: String,
    pub policy_document: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutRolePolicy {
    pub role_name: String,
    pub policy_name: String,
    pub policy_document: String,
}

/// GetRolePolicy, DeleteRolePolicy.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RolePolicy {
    pub role_name: String,
    pub policy_name: String,
}

/// AttachRolePolicy, DetachRolePolicy.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RoleAttachment {
    pub role_name: String,
    pub policy_arn: String,
}

/// ListRolePolicies, ListAttachedRolePolicies.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RolePolicies {
    pub role_name: String,
    pub path_prefix: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Role {
    pub path: String,
    pub role_name: String,
    pub role_id: String,
    pub arn: String,
    pub create_date: String,
    /// URL-encoded, as IAM answers it.
    pub assume_role_policy_document: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub max_session_duration: i64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Tag>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RoleResponse {
    pub role: Role,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListRolesResponse {
    pub roles: Vec<Role>,
    pub is_truncated: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetRolePolicyResponse {
    pub role_name: String,
    pub policy_name: String,
    /// URL-encoded, as IAM answers it.
    pub policy_document: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AssumeRole {
    pub role_arn: String,
    pub role_session_name: String,
    #[serde(default)]
    pub policy_arns: Vec<PolicyDescriptor>,
    pub policy: Option<String>,
    pub duration_seconds: Option<i64>,
    #[serde(default)]
    pub tags: Vec<Tag>,
    pub external_id: Option<String>,
    pub serial_number: Option<String>,
    pub token_code: Option<String>,
    pub source_identity: Option<String>,
}

/// A managed session policy AssumeRole names (the shape `PolicyDescriptorType`).
#[derive(Debug, Deserialize)]
pub struct PolicyDescriptor {
    pub arn: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AssumedRoleUser {
    pub assumed_role_id: String,
    pub arn: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AssumeRoleResponse {
    pub credentials: Credentials,
    pub assumed_role_user: AssumedRoleUser,
    pub packed_policy_size: i64,
}

// The policy simulator's inputs and answers.

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Simulate {
    /// SimulatePrincipalPolicy's: the user or role whose policies are simulated.
    pub policy_source_arn: Option<String>,
    #[serde(default)]
    pub policy_input_list: Vec<String>,
    #[serde(default)]
    pub permissions_boundary_policy_input_list: Vec<String>,
    pub action_names: Vec<String>,
    #[serde(default)]
    pub resource_arns: Vec<String>,
    pub resource_policy: Option<String>,
    #[serde(default)]
    pub context_entries: Vec<ContextEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ContextEntry {
    pub context_key_name: Option<String>,
    #[serde(default)]
    pub context_key_values: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EvaluationResult {
    pub eval_action_name: String,
    pub eval_resource_name: String,
    /// `allowed`, `explicitDeny` or `implicitDeny`.
    pub eval_decision: String,
    pub missing_context_values: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SimulatePolicyResponse {
    pub evaluation_results: Vec<EvaluationResult>,
    pub is_truncated: bool,
}
