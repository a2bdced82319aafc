//! Customer managed policies: versions (five at most, one the default), attached to users. An
//! attached user keeps a copy of the default version's document, and so do its keys' records:
//! attaching, detaching and every change of the default rewrite them in the same transaction as
//! the policy (`phantom_seams::store::IamChange`).

use super::{concurrent, no_such_user, Ask};
use phantom_model::iam::{self as m, IamRole, IamUser, ManagedPolicy, PolicyVersion};
use phantom_rules::iam::identities::{self, ATTACHMENTS, MAX_VERSIONS, POLICIES_PER_USER};
use phantom_seams::store::{IamChange, PolicySave, RoleSave, StoreError, UserSave};
use phantom_wire::ApiError;

fn no_such_policy(arn: &str) -> ApiError {
    ApiError::no_such_entity(format!("Policy {arn} does not exist or is not attachable."))
}

fn encoded(document: &str) -> String {
    percent_encoding::utf8_percent_encode(document, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn shown(p: &ManagedPolicy) -> m::Policy {
    m::Policy {
        policy_name: p.name.clone(),
        policy_id: p.policy_id.clone(),
        arn: p.arn(),
        path: p.path.clone(),
        default_version_id: p.default_version.clone(),
        attachment_count: (p.users.len() + p.roles.len()) as i64,
        permissions_boundary_usage_count: 0,
        is_attachable: true,
        description: p.description.clone(),
        create_date: p.created.clone(),
        update_date: p.updated.clone(),
        tags: p.tags.clone(),
    }
}

fn version(p: &ManagedPolicy, v: &PolicyVersion, with_document: bool) -> m::Version {
    m::Version {
        document: with_document.then(|| encoded(&v.document)),
        version_id: v.id.clone(),
        is_default_version: v.id == p.default_version,
        create_date: v.created.clone(),
    }
}

fn checked(document: &str) -> Result<(), ApiError> {
    phantom_rules::iam::parse(document).map_err(ApiError::malformed_policy_document)?;
    identities::check_managed_size(document).map_err(ApiError::iam_limit_exceeded)
}

fn now(at: &Ask<'_>) -> String {
    phantom_model::time::format_timestamp(at.app.clock.now())
}

/// The account's policy `arn` names, once `operation` is allowed on it.
pub(super) async fn policy(
    at: &Ask<'_>,
    operation: &str,
    arn: &str,
) -> Result<ManagedPolicy, ApiError> {
    at.allow(operation, arn)?;
    let Some((account, _, name)) = identities::parse_policy_arn(arn) else {
        return Err(ApiError::invalid_input(format!("ARN {arn} is not valid.")));
    };
    // AWS's managed policies (`arn:aws:iam::aws:policy/...`) are not kept here.
    if account != at.caller.account_id {
        return Err(no_such_policy(arn));
    }
    let found = at.app.store.managed_policy(&at.caller.user, name).await?;
    found
        .filter(|p| p.arn() == arn)
        .ok_or_else(|| no_such_policy(arn))
}

/// Writes `change`, IAM's words for what stops it.
async fn save(at: &Ask<'_>, change: IamChange<'_>) -> Result<(), ApiError> {
    let keys: Vec<String> = change
        .users
        .iter()
        .flat_map(|u| u.before.keys.iter().map(|k| k.access_key_id.clone()))
        .collect();
    match at.app.store.save_iam(&change).await {
        Ok(()) => {
            for k in keys {
                at.app.keys.forget(&k);
            }
            Ok(())
        }
        Err(StoreError::Conflict | StoreError::NotFound) => Err(concurrent()),
        Err(e) => Err(e.into()),
    }
}

/// `p` written as `after`, with every attached user's copy of its default document.
async fn save_with_users(
    at: &Ask<'_>,
    p: &ManagedPolicy,
    after: &ManagedPolicy,
) -> Result<(), ApiError> {
    let arn = p.arn();
    let mut users: Vec<(IamUser, IamUser)> = Vec::new();
    for name in &after.users {
        let Some(before) = at.app.store.iam_user(&at.caller.user, name).await? else {
            continue;
        };
        let mut changed = before.clone();
        if let Some(doc) = after.document() {
            changed.attached.insert(arn.clone(), doc.to_string());
        }
        users.push((before, changed));
    }
    let mut roles: Vec<(IamRole, IamRole)> = Vec::new();
    for name in &after.roles {
        let Some(before) = at.app.store.iam_role(&at.caller.user, name).await? else {
            continue;
        };
        let mut changed = before.clone();
        if let Some(doc) = after.document() {
            changed.attached.insert(arn.clone(), doc.to_string());
        }
        roles.push((before, changed));
    }
    let change = IamChange {
        users: users
            .iter()
            .map(|(before, after)| UserSave {
                before,
                after,
                new_key: None,
            })
            .collect(),
        policies: vec![PolicySave::Update { before: p, after }],
        roles: roles
            .iter()
            .map(|(before, after)| RoleSave::Update { before, after })
            .collect(),
        limits: at.caller.limits.as_ref(),
    };
    save(at, change).await
}

pub async fn create_policy(
    at: &Ask<'_>,
    r: m::CreatePolicy,
) -> Result<m::PolicyResponse, ApiError> {
    let path = r.path.unwrap_or_else(|| "/".into());
    let arn = m::policy_arn(&at.caller.account_id, &path, &r.policy_name);
    at.allow("CreatePolicy", &arn)?;
    identities::check_path(&path).map_err(ApiError::validation)?;
    checked(&r.policy_document)?;
    let created = now(at);
    let p = ManagedPolicy {
        account: at.caller.user.clone(),
        account_id: at.caller.account_id.clone(),
        name: r.policy_name,
        path,
        policy_id: identities::new_policy_id(),
        description: r.description,
        created: created.clone(),
        updated: created.clone(),
        versions: vec![PolicyVersion {
            id: "v1".into(),
            document: r.policy_document,
            created,
        }],
        default_version: "v1".into(),
        next_version: 2,
        users: Vec::new(),
        roles: Vec::new(),
        tags: r.tags,
        version: 0,
    };
    let change = IamChange {
        users: Vec::new(),
        policies: vec![PolicySave::Create(&p)],
        roles: Vec::new(),
        limits: None,
    };
    match at.app.store.save_iam(&change).await {
        Ok(()) => Ok(m::PolicyResponse { policy: shown(&p) }),
        Err(StoreError::Exists) => Err(ApiError::entity_already_exists(format!(
            "A policy called {} already exists. Duplicate names are not allowed.",
            p.name
        ))),
        Err(e) => Err(e.into()),
    }
}

pub async fn get_policy(at: &Ask<'_>, r: m::PolicyNamed) -> Result<m::PolicyResponse, ApiError> {
    let p = policy(at, "GetPolicy", &r.policy_arn).await?;
    Ok(m::PolicyResponse { policy: shown(&p) })
}

pub async fn list_policies(
    at: &Ask<'_>,
    r: m::ListPolicies,
) -> Result<m::ListPoliciesResponse, ApiError> {
    at.allow("ListPolicies", "*")?;
    // Phantom keeps no AWS managed policies: the `AWS` scope is empty.
    if r.scope.as_deref() == Some("AWS") {
        return Ok(m::ListPoliciesResponse {
            policies: Vec::new(),
            is_truncated: false,
        });
    }
    let prefix = r.path_prefix.unwrap_or_else(|| "/".into());
    let mut all = at.app.store.managed_policies(&at.caller.user).await?;
    all.retain(|p| p.path.starts_with(&prefix));
    all.retain(|p| r.only_attached != Some(true) || !p.users.is_empty() || !p.roles.is_empty());
    let (all, is_truncated) = super::page(all, |p| &p.name, r.marker, r.max_items);
    Ok(m::ListPoliciesResponse {
        policies: all.iter().map(shown).collect(),
        is_truncated,
    })
}

pub async fn delete_policy(at: &Ask<'_>, r: m::PolicyNamed) -> Result<(), ApiError> {
    let p = policy(at, "DeletePolicy", &r.policy_arn).await?;
    if !p.users.is_empty() || !p.roles.is_empty() {
        return Err(ApiError::delete_conflict(
            "Cannot delete a policy attached to entities.",
        ));
    }
    if p.versions.len() > 1 {
        return Err(ApiError::delete_conflict(
            "This policy has more than one version. Before you delete a policy, you must delete the policy's nondefault versions.",
        ));
    }
    let change = IamChange {
        users: Vec::new(),
        policies: vec![PolicySave::Delete(&p)],
        roles: Vec::new(),
        limits: None,
    };
    save(at, change).await
}

pub async fn create_policy_version(
    at: &Ask<'_>,
    r: m::CreatePolicyVersion,
) -> Result<m::PolicyVersionResponse, ApiError> {
    let p = policy(at, "CreatePolicyVersion", &r.policy_arn).await?;
    checked(&r.policy_document)?;
    if p.versions.len() >= MAX_VERSIONS {
        return Err(ApiError::iam_limit_exceeded(format!(
            "A managed policy can have up to {MAX_VERSIONS} versions. Before you create a new version, you must delete an existing version."
        )));
    }
    let mut after = p.clone();
    let v = PolicyVersion {
        id: format!("v{}", p.next_version),
        document: r.policy_document,
        created: now(at),
    };
    after.next_version += 1;
    after.updated = v.created.clone();
    after.versions.push(v.clone());
    if r.set_as_default == Some(true) {
        after.default_version = v.id.clone();
    }
    save_with_users(at, &p, &after).await?;
    Ok(m::PolicyVersionResponse {
        policy_version: version(&after, &v, false),
    })
}

fn no_such_version(arn: &str, id: &str) -> ApiError {
    ApiError::no_such_entity(format!("Policy {arn} version {id} does not exist."))
}

pub async fn get_policy_version(
    at: &Ask<'_>,
    r: m::VersionNamed,
) -> Result<m::PolicyVersionResponse, ApiError> {
    let p = policy(at, "GetPolicyVersion", &r.policy_arn).await?;
    let v = p
        .versions
        .iter()
        .find(|v| v.id == r.version_id)
        .ok_or_else(|| no_such_version(&r.policy_arn, &r.version_id))?;
    Ok(m::PolicyVersionResponse {
        policy_version: version(&p, v, true),
    })
}

pub async fn list_policy_versions(
    at: &Ask<'_>,
    r: m::PolicyNamed,
) -> Result<m::ListPolicyVersionsResponse, ApiError> {
    let p = policy(at, "ListPolicyVersions", &r.policy_arn).await?;
    Ok(m::ListPolicyVersionsResponse {
        versions: p
            .versions
            .iter()
            .rev()
            .map(|v| version(&p, v, false))
            .collect(),
        is_truncated: false,
    })
}

pub async fn delete_policy_version(at: &Ask<'_>, r: m::VersionNamed) -> Result<(), ApiError> {
    let p = policy(at, "DeletePolicyVersion", &r.policy_arn).await?;
    if r.version_id == p.default_version {
        return Err(ApiError::delete_conflict(
            "Cannot delete the default version of a policy.",
        ));
    }
    let mut after = p.clone();
    after.versions.retain(|v| v.id != r.version_id);
    if after.versions.len() == p.versions.len() {
        return Err(no_such_version(&r.policy_arn, &r.version_id));
    }
    let change = IamChange {
        users: Vec::new(),
        policies: vec![PolicySave::Update {
            before: &p,
            after: &after,
        }],
        roles: Vec::new(),
        limits: None,
    };
    save(at, change).await
}

pub async fn set_default_policy_version(at: &Ask<'_>, r: m::VersionNamed) -> Result<(), ApiError> {
    let p = policy(at, "SetDefaultPolicyVersion", &r.policy_arn).await?;
    if !p.versions.iter().any(|v| v.id == r.version_id) {
        return Err(no_such_version(&r.policy_arn, &r.version_id));
    }
    let mut after = p.clone();
    after.default_version = r.version_id;
    after.updated = now(at);
    save_with_users(at, &p, &after).await
}

pub async fn attach_user_policy(at: &Ask<'_>, r: m::UserAttachment) -> Result<(), ApiError> {
    let user = at.user("AttachUserPolicy", Some(&r.user_name)).await?;
    let p = policy(at, "AttachUserPolicy", &r.policy_arn).await?;
    if user.attached.contains_key(&r.policy_arn) {
        return Ok(());
    }
    if user.attached.len() >= POLICIES_PER_USER {
        return Err(ApiError::iam_limit_exceeded(format!(
            "Cannot exceed quota for PoliciesPerUser: {POLICIES_PER_USER}"
        )));
    }
    if p.users.len() + p.roles.len() >= ATTACHMENTS {
        return Err(ApiError::iam_limit_exceeded(format!(
            "Phantom attaches a managed policy to at most {ATTACHMENTS} identities (a new default version changes each at once)."
        )));
    }
    let mut user_after = user.clone();
    let document = p.document().ok_or_else(|| no_such_policy(&r.policy_arn))?;
    user_after
        .attached
        .insert(r.policy_arn.clone(), document.to_string());
    let mut after = p.clone();
    after.users.push(user.name.clone());
    attach_change(at, (&user, &user_after), (&p, &after)).await
}

pub async fn detach_user_policy(at: &Ask<'_>, r: m::UserAttachment) -> Result<(), ApiError> {
    let user = at.user("DetachUserPolicy", Some(&r.user_name)).await?;
    let p = policy(at, "DetachUserPolicy", &r.policy_arn).await?;
    let mut user_after = user.clone();
    if user_after.attached.remove(&r.policy_arn).is_none() {
        return Err(ApiError::no_such_entity(format!(
            "Policy {} was not found.",
            r.policy_arn
        )));
    }
    let mut after = p.clone();
    after.users.retain(|u| !u.eq_ignore_ascii_case(&user.name));
    attach_change(at, (&user, &user_after), (&p, &after)).await
}

async fn attach_change(
    at: &Ask<'_>,
    (user, user_after): (&IamUser, &IamUser),
    (p, after): (&ManagedPolicy, &ManagedPolicy),
) -> Result<(), ApiError> {
    let change = IamChange {
        users: vec![UserSave {
            before: user,
            after: user_after,
            new_key: None,
        }],
        policies: vec![PolicySave::Update { before: p, after }],
        roles: Vec::new(),
        limits: at.caller.limits.as_ref(),
    };
    save(at, change).await
}

pub async fn list_attached_user_policies(
    at: &Ask<'_>,
    r: m::ListAttachedUserPolicies,
) -> Result<m::ListAttachedPoliciesResponse, ApiError> {
    let user = at
        .user("ListAttachedUserPolicies", Some(&r.user_name))
        .await
        .map_err(|e| match e.code {
            "NoSuchEntity" => no_such_user(&r.user_name),
            _ => e,
        })?;
    let prefix = r.path_prefix.unwrap_or_else(|| "/".into());
    Ok(m::ListAttachedPoliciesResponse {
        attached_policies: user
            .attached
            .keys()
            .filter_map(|arn| {
                let (_, path, name) = identities::parse_policy_arn(arn)?;
                path.starts_with(&prefix).then(|| m::AttachedPolicy {
                    policy_name: name.to_string(),
                    policy_arn: arn.clone(),
                })
            })
            .collect(),
        is_truncated: false,
    })
}
