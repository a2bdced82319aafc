//! IAM users and their access keys: two a user, so a key is rotated by adding the new one,
//! moving the tools to it, then making the old one Inactive and deleting it.

use super::{concurrent, no_such_user, Ask};
use phantom_model::iam::{self as m, IamKey, IamUser};
use phantom_rules::iam::identities::{self, KEYS_PER_USER};
use phantom_seams::store::StoreError;
use phantom_wire::ApiError;

fn now(at: &Ask<'_>) -> String {
    phantom_model::time::format_timestamp(at.app.clock.now())
}

fn shown(u: &IamUser) -> m::User {
    m::User {
        path: u.path.clone(),
        user_name: u.name.clone(),
        user_id: u.user_id.clone(),
        arn: u.arn(),
        create_date: u.created.clone(),
        tags: u.tags.clone(),
    }
}

pub async fn create_user(at: &Ask<'_>, r: m::CreateUser) -> Result<m::UserResponse, ApiError> {
    let path = r.path.unwrap_or_else(|| "/".into());
    let arn = m::user_arn(&at.caller.account_id, &path, &r.user_name);
    at.allow("CreateUser", &arn)?;
    identities::check_path(&path).map_err(ApiError::validation)?;
    if r.permissions_boundary.is_some() {
        return Err(ApiError::invalid_input(
            "Phantom does not keep permissions boundaries; a user's policies are all it is allowed.",
        ));
    }
    let u = IamUser {
        account: at.caller.user.clone(),
        account_id: at.caller.account_id.clone(),
        name: r.user_name,
        path,
        user_id: identities::new_user_id(),
        created: now(at),
        tags: r.tags,
        policies: Default::default(),
        attached: Default::default(),
        keys: Vec::new(),
        version: 0,
    };
    match at.app.store.create_iam_user(&u).await {
        Ok(()) => Ok(m::UserResponse { user: shown(&u) }),
        Err(StoreError::Exists) => Err(ApiError::entity_already_exists(format!(
            "User with name {} already exists.",
            u.name
        ))),
        Err(e) => Err(e.into()),
    }
}

pub async fn get_user(at: &Ask<'_>, r: m::UserNamed) -> Result<m::UserResponse, ApiError> {
    if r.user_name.is_none() && at.caller.identity.is_none() {
        // The root asking of itself.
        let arn = m::root_arn(&at.caller.account_id);
        at.allow("GetUser", &arn)?;
        let account = at.app.store.user(&at.caller.user).await?;
        let created = account
            .map(|a| a.created)
            .ok_or_else(|| no_such_user(&at.caller.user))?;
        return Ok(m::UserResponse {
            user: m::User {
                path: "/".into(),
                user_name: at.caller.user.clone(),
                user_id: at.caller.account_id.clone(),
                arn,
                create_date: created,
                tags: Vec::new(),
            },
        });
    }
    let u = at.user("GetUser", r.user_name.as_deref()).await?;
    Ok(m::UserResponse { user: shown(&u) })
}

pub async fn list_users(at: &Ask<'_>, r: m::ListUsers) -> Result<m::ListUsersResponse, ApiError> {
    let prefix = r.path_prefix.unwrap_or_else(|| "/".into());
    let arn = format!("arn:aws:iam::{}:user{prefix}*", at.caller.account_id);
    at.allow("ListUsers", &arn)?;
    let mut users = at.app.store.iam_users(&at.caller.user).await?;
    users.retain(|u| u.path.starts_with(&prefix));
    let (users, is_truncated) = super::page(users, |u| &u.name, r.marker, r.max_items);
    Ok(m::ListUsersResponse {
        marker: is_truncated
            .then(|| users.last().map(|u| u.name.clone()))
            .flatten(),
        users: users.iter().map(shown).collect(),
        is_truncated,
    })
}

pub async fn delete_user(at: &Ask<'_>, r: m::DeleteUser) -> Result<(), ApiError> {
    let u = at.user("DeleteUser", Some(&r.user_name)).await?;
    if let Some(why) = identities::delete_conflict(&u) {
        return Err(ApiError::delete_conflict(why));
    }
    match at.app.store.delete_iam_user(&u).await {
        Ok(()) => Ok(()),
        Err(StoreError::NotFound) => Err(no_such_user(&u.name)),
        Err(StoreError::Conflict) => Err(concurrent()),
        Err(e) => Err(e.into()),
    }
}

/// Writes `after` over `before` with its keys' records (and `new_key`), as the store does.
pub(super) async fn save(
    at: &Ask<'_>,
    before: &IamUser,
    after: &IamUser,
    new_key: Option<(&str, &str)>,
) -> Result<(), ApiError> {
    let limits = at.caller.limits.as_ref();
    match at
        .app
        .store
        .save_iam_user(before, after, new_key, limits)
        .await
    {
        Ok(()) => {
            // This instance stops trusting what it cached of the user's keys at once.
            for k in before.keys.iter().chain(&after.keys) {
                at.app.keys.forget(&k.access_key_id);
            }
            Ok(())
        }
        Err(StoreError::NotFound) => Err(no_such_user(&before.name)),
        Err(StoreError::Conflict) => Err(concurrent()),
        Err(e) => Err(e.into()),
    }
}

pub async fn create_access_key(
    at: &Ask<'_>,
    r: m::UserNamed,
) -> Result<m::CreateAccessKeyResponse, ApiError> {
    if let Some(root) = root_asking(at, "CreateAccessKey", r.user_name.as_deref()).await? {
        return super::root_keys::create(at, root).await;
    }
    let before = at.user("CreateAccessKey", r.user_name.as_deref()).await?;
    if before.keys.len() >= KEYS_PER_USER {
        return Err(ApiError::iam_limit_exceeded(format!(
            "Cannot exceed quota for AccessKeysPerUser: {KEYS_PER_USER}"
        )));
    }
    let id = phantom_rules::identity::new_access_key_id();
    let secret = phantom_rules::identity::new_secret();
    let created = now(at);
    let mut after = before.clone();
    after.keys.push(IamKey {
        access_key_id: id.clone(),
        active: true,
        created: created.clone(),
    });
    save(at, &before, &after, Some((&id, &secret))).await?;
    Ok(m::CreateAccessKeyResponse {
        access_key: m::NewAccessKey {
            user_name: after.name,
            access_key_id: id,
            status: status(true).into(),
            secret_access_key: secret,
            create_date: created,
        },
    })
}

/// The account (its root), when the root asks of its own keys (naming no user).
async fn root_asking(
    at: &Ask<'_>,
    operation: &str,
    named: Option<&str>,
) -> Result<Option<phantom_model::user::User>, ApiError> {
    if named.is_some() || at.caller.identity.is_some() {
        return Ok(None);
    }
    at.allow(operation, &m::root_arn(&at.caller.account_id))?;
    let account = at.app.store.user(&at.caller.user).await?;
    account
        .map(Some)
        .ok_or_else(|| ApiError::internal("The caller's user record is missing."))
}

pub(super) fn status(active: bool) -> &'static str {
    if active {
        "Active"
    } else {
        "Inactive"
    }
}

fn no_such_key(id: &str) -> ApiError {
    ApiError::no_such_entity(format!("The Access Key with id {id} cannot be found."))
}

pub async fn update_access_key(at: &Ask<'_>, r: m::UpdateAccessKey) -> Result<(), ApiError> {
    if let Some(root) = root_asking(at, "UpdateAccessKey", r.user_name.as_deref()).await? {
        return super::root_keys::set_active(at, root, &r.access_key_id, r.status == "Active")
            .await;
    }
    let before = at.user("UpdateAccessKey", r.user_name.as_deref()).await?;
    let mut after = before.clone();
    let key = after
        .keys
        .iter_mut()
        .find(|k| k.access_key_id == r.access_key_id)
        .ok_or_else(|| no_such_key(&r.access_key_id))?;
    // The model's enum is checked as the request is read: Active or Inactive.
    key.active = r.status == "Active";
    save(at, &before, &after, None).await
}

pub async fn delete_access_key(at: &Ask<'_>, r: m::DeleteAccessKey) -> Result<(), ApiError> {
    if let Some(root) = root_asking(at, "DeleteAccessKey", r.user_name.as_deref()).await? {
        return super::root_keys::delete(at, root, &r.access_key_id).await;
    }
    let before = at.user("DeleteAccessKey", r.user_name.as_deref()).await?;
    let mut after = before.clone();
    after.keys.retain(|k| k.access_key_id != r.access_key_id);
    if after.keys.len() == before.keys.len() {
        return Err(no_such_key(&r.access_key_id));
    }
    save(at, &before, &after, None).await
}

pub async fn list_access_keys(
    at: &Ask<'_>,
    r: m::UserNamed,
) -> Result<m::ListAccessKeysResponse, ApiError> {
    if let Some(root) = root_asking(at, "ListAccessKeys", r.user_name.as_deref()).await? {
        return super::root_keys::list(at, root).await;
    }
    let u = at.user("ListAccessKeys", r.user_name.as_deref()).await?;
    Ok(m::ListAccessKeysResponse {
        access_key_metadata: u
            .keys
            .iter()
            .map(|k| m::AccessKeyMetadata {
                user_name: u.name.clone(),
                access_key_id: k.access_key_id.clone(),
                status: status(k.active).into(),
                create_date: Some(k.created.clone()),
            })
            .collect(),
        is_truncated: false,
    })
}

pub async fn get_access_key_last_used(
    at: &Ask<'_>,
    r: m::GetAccessKeyLastUsed,
) -> Result<m::GetAccessKeyLastUsedResponse, ApiError> {
    let key = at.app.store.access_key(&r.access_key_id).await?;
    // Another account's key is not this account's to ask about, nor is its existence.
    let Some(key) = key.filter(|k| k.user == at.caller.user) else {
        return Err(ApiError::access_denied(format!(
            "The access key {} is not one of this account's.",
            r.access_key_id
        )));
    };
    let (user_name, arn) = match &key.identity {
        Some(i) => (
            i.name.clone(),
            m::user_arn(&at.caller.account_id, &i.path, &i.name),
        ),
        None => (key.user.clone(), m::root_arn(&at.caller.account_id)),
    };
    at.allow("GetAccessKeyLastUsed", &arn)?;
    let used = key.last_used.as_ref();
    Ok(m::GetAccessKeyLastUsedResponse {
        user_name,
        access_key_last_used: m::AccessKeyLastUsed {
            last_used_date: used.map(|u| u.at.clone()),
            // IAM's words for a key never used.
            service_name: used.map_or("N/A".into(), |u| u.service.clone()),
            region: used.map_or("N/A".into(), |u| u.region.clone()),
        },
    })
}
