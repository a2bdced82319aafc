//! Roles: a trust policy says who may assume one (STS's AssumeRole, `sts.rs`), its inline and
//! attached managed policies what its sessions may do.

use super::managed;
use super::{concurrent, Ask};
use phantom_model::iam::{self as m, IamRole};
use phantom_rules::iam::identities::{self, ATTACHMENTS, POLICIES_PER_USER};
use phantom_rules::iam::sessions;
use phantom_seams::store::{IamChange, PolicySave, RoleSave, StoreError};
use phantom_wire::ApiError;

fn no_such_role(name: &str) -> ApiError {
    ApiError::no_such_entity(format!("The role with name {name} cannot be found."))
}

fn encoded(document: &str) -> String {
    percent_encoding::utf8_percent_encode(document, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn shown(r: &IamRole) -> m::Role {
    m::Role {
        path: r.path.clone(),
        role_name: r.name.clone(),
        role_id: r.role_id.clone(),
        arn: r.arn(),
        create_date: r.created.clone(),
        assume_role_policy_document: encoded(&r.trust_policy),
        description: r.description.clone(),
        max_session_duration: r.max_session_secs,
        tags: r.tags.clone(),
    }
}

/// The account's role `name`, once `operation` is allowed on it.
pub(super) async fn role(at: &Ask<'_>, operation: &str, name: &str) -> Result<IamRole, ApiError> {
    let found = at.app.store.iam_role(&at.caller.user, name).await?;
    let path = found.as_ref().map_or("/", |r| r.path.as_str());
    at.allow(operation, &m::role_arn(&at.caller.account_id, path, name))?;
    found.ok_or_else(|| no_such_role(name))
}

async fn save(
    at: &Ask<'_>,
    roles: Vec<RoleSave<'_>>,
    policies: Vec<PolicySave<'_>>,
) -> Result<(), ApiError> {
    let change = IamChange {
        users: Vec::new(),
        policies,
        roles,
        limits: None,
    };
    match at.app.store.save_iam(&change).await {
        Ok(()) => Ok(()),
        Err(StoreError::Conflict | StoreError::NotFound) => Err(concurrent()),
        Err(e) => Err(e.into()),
    }
}

/// `role` (as read) written as `after`.
async fn save_role(at: &Ask<'_>, role: &IamRole, after: &IamRole) -> Result<(), ApiError> {
    let update = RoleSave::Update {
        before: role,
        after,
    };
    save(at, vec![update], Vec::new()).await
}

fn trust_checked(document: &str) -> Result<(), ApiError> {
    phantom_rules::iam::parse_trust(document)
        .map(|_| ())
        .map_err(ApiError::malformed_policy_document)
}

pub async fn create_role(at: &Ask<'_>, r: m::CreateRole) -> Result<m::RoleResponse, ApiError> {
    let path = r.path.unwrap_or_else(|| "/".into());
    at.allow(
        "CreateRole",
        &m::role_arn(&at.caller.account_id, &path, &r.role_name),
    )?;
    identities::check_path(&path).map_err(ApiError::validation)?;
    trust_checked(&r.assume_role_policy_document)?;
    if r.permissions_boundary.is_some() {
        return Err(ApiError::invalid_input(
            "Phantom does not keep permissions boundaries; a role's policies are all it is allowed.",
        ));
    }
    let max = sessions::role_max_secs(r.max_session_duration).map_err(ApiError::validation)?;
    let role = IamRole {
        account: at.caller.user.clone(),
        account_id: at.caller.account_id.clone(),
        name: r.role_name,
        path,
        role_id: sessions::new_role_id(),
        created: phantom_model::time::format_timestamp(at.app.clock.now()),
        description: r.description,
        trust_policy: r.assume_role_policy_document,
        max_session_secs: max,
        tags: r.tags,
        policies: Default::default(),
        attached: Default::default(),
        version: 0,
    };
    let change = IamChange {
        users: Vec::new(),
        policies: Vec::new(),
        roles: vec![RoleSave::Create(&role)],
        limits: None,
    };
    match at.app.store.save_iam(&change).await {
        Ok(()) => Ok(m::RoleResponse { role: shown(&role) }),
        Err(StoreError::Exists) => Err(ApiError::entity_already_exists(format!(
            "Role with name {} already exists.",
            role.name
        ))),
        Err(e) => Err(e.into()),
    }
}

pub async fn get_role(at: &Ask<'_>, r: m::RoleNamed) -> Result<m::RoleResponse, ApiError> {
    let role = role(at, "GetRole", &r.role_name).await?;
    Ok(m::RoleResponse { role: shown(&role) })
}

pub async fn list_roles(at: &Ask<'_>, r: m::ListRoles) -> Result<m::ListRolesResponse, ApiError> {
    let prefix = r.path_prefix.unwrap_or_else(|| "/".into());
    at.allow(
        "ListRoles",
        &format!("arn:aws:iam::{}:role{prefix}*", at.caller.account_id),
    )?;
    let mut roles = at.app.store.iam_roles(&at.caller.user).await?;
    roles.retain(|x| x.path.starts_with(&prefix));
    let (roles, is_truncated) = super::page(roles, |x| &x.name, r.marker, r.max_items);
    Ok(m::ListRolesResponse {
        roles: roles.iter().map(shown).collect(),
        is_truncated,
    })
}

pub async fn delete_role(at: &Ask<'_>, r: m::RoleNamed) -> Result<(), ApiError> {
    let role = role(at, "DeleteRole", &r.role_name).await?;
    if !role.policies.is_empty() {
        return Err(ApiError::delete_conflict(
            "Cannot delete entity, must delete policies first.",
        ));
    }
    if !role.attached.is_empty() {
        return Err(ApiError::delete_conflict(
            "Cannot delete entity, must detach all policies first.",
        ));
    }
    save(at, vec![RoleSave::Delete(&role)], Vec::new()).await
}

pub async fn update_assume_role_policy(
    at: &Ask<'_>,
    r: m::UpdateAssumeRolePolicy,
) -> Result<(), ApiError> {
    let role = role(at, "UpdateAssumeRolePolicy", &r.role_name).await?;
    trust_checked(&r.policy_document)?;
    let mut after = role.clone();
    after.trust_policy = r.policy_document;
    save_role(at, &role, &after).await
}

pub async fn put_role_policy(at: &Ask<'_>, r: m::PutRolePolicy) -> Result<(), ApiError> {
    let role = role(at, "PutRolePolicy", &r.role_name).await?;
    phantom_rules::iam::parse(&r.policy_document).map_err(ApiError::malformed_policy_document)?;
    let mut after = role.clone();
    after.policies.insert(r.policy_name, r.policy_document);
    // A role's inline policies share IAM's quota for a role: 10,240 characters.
    let used: usize = after
        .policies
        .values()
        .map(|p| p.chars().filter(|c| !c.is_whitespace()).count())
        .sum();
    if used > 10_240 {
        return Err(ApiError::iam_limit_exceeded(
            "Maximum policy size of 10240 bytes exceeded for role",
        ));
    }
    save_role(at, &role, &after).await
}

fn no_such_policy(name: &str) -> ApiError {
    ApiError::no_such_entity(format!("The role policy with name {name} cannot be found."))
}

pub async fn get_role_policy(
    at: &Ask<'_>,
    r: m::RolePolicy,
) -> Result<m::GetRolePolicyResponse, ApiError> {
    let role = role(at, "GetRolePolicy", &r.role_name).await?;
    let document = role
        .policies
        .get(&r.policy_name)
        .ok_or_else(|| no_such_policy(&r.policy_name))?;
    Ok(m::GetRolePolicyResponse {
        role_name: role.name.clone(),
        policy_name: r.policy_name,
        policy_document: encoded(document),
    })
}

pub async fn list_role_policies(
    at: &Ask<'_>,
    r: m::RolePolicies,
) -> Result<m::ListUserPoliciesResponse, ApiError> {
    let role = role(at, "ListRolePolicies", &r.role_name).await?;
    Ok(m::ListUserPoliciesResponse {
        policy_names: role.policies.keys().cloned().collect(),
        is_truncated: false,
    })
}

pub async fn delete_role_policy(at: &Ask<'_>, r: m::RolePolicy) -> Result<(), ApiError> {
    let role = role(at, "DeleteRolePolicy", &r.role_name).await?;
    let mut after = role.clone();
    if after.policies.remove(&r.policy_name).is_none() {
        return Err(no_such_policy(&r.policy_name));
    }
    save_role(at, &role, &after).await
}

pub async fn attach_role_policy(at: &Ask<'_>, r: m::RoleAttachment) -> Result<(), ApiError> {
    let role = role(at, "AttachRolePolicy", &r.role_name).await?;
    let p = managed::policy(at, "AttachRolePolicy", &r.policy_arn).await?;
    if role.attached.contains_key(&r.policy_arn) {
        return Ok(());
    }
    if role.attached.len() >= POLICIES_PER_USER {
        return Err(ApiError::iam_limit_exceeded(format!(
            "Cannot exceed quota for PoliciesPerRole: {POLICIES_PER_USER}"
        )));
    }
    if p.users.len() + p.roles.len() >= ATTACHMENTS {
        return Err(ApiError::iam_limit_exceeded(format!(
            "Phantom attaches a managed policy to at most {ATTACHMENTS} identities (a new default version changes each at once)."
        )));
    }
    let document = p.document().ok_or_else(|| {
        ApiError::no_such_entity(format!("Policy {} has no default version.", r.policy_arn))
    })?;
    let mut after = role.clone();
    after
        .attached
        .insert(r.policy_arn.clone(), document.to_string());
    let mut p_after = p.clone();
    p_after.roles.push(role.name.clone());
    save(
        at,
        vec![RoleSave::Update {
            before: &role,
            after: &after,
        }],
        vec![PolicySave::Update {
            before: &p,
            after: &p_after,
        }],
    )
    .await
}

pub async fn detach_role_policy(at: &Ask<'_>, r: m::RoleAttachment) -> Result<(), ApiError> {
    let role = role(at, "DetachRolePolicy", &r.role_name).await?;
    let p = managed::policy(at, "DetachRolePolicy", &r.policy_arn).await?;
    let mut after = role.clone();
    if after.attached.remove(&r.policy_arn).is_none() {
        return Err(ApiError::no_such_entity(format!(
            "Policy {} was not found.",
            r.policy_arn
        )));
    }
    let mut p_after = p.clone();
    p_after
        .roles
        .retain(|x| !x.eq_ignore_ascii_case(&role.name));
    save(
        at,
        vec![RoleSave::Update {
            before: &role,
            after: &after,
        }],
        vec![PolicySave::Update {
            before: &p,
            after: &p_after,
        }],
    )
    .await
}

pub async fn list_attached_role_policies(
    at: &Ask<'_>,
    r: m::RolePolicies,
) -> Result<m::ListAttachedPoliciesResponse, ApiError> {
    let role = role(at, "ListAttachedRolePolicies", &r.role_name).await?;
    let prefix = r.path_prefix.unwrap_or_else(|| "/".into());
    Ok(m::ListAttachedPoliciesResponse {
        attached_policies: role
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
