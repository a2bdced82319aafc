//! The account root's own keys, two at most as an IAM user's (IAM's key actions naming no user,
//! signed by the root): a second key made, either made Inactive or Active, one of two deleted
//! (the other then its only key). An administrator's RotateAccessKey still replaces the first.

use super::users::status;
use super::{concurrent, Ask};
use phantom_model::iam as m;
use phantom_model::user::User;
use phantom_seams::store::StoreError;
use phantom_wire::ApiError;

fn no_such_key(id: &str) -> ApiError {
    ApiError::no_such_entity(format!("The Access Key with id {id} cannot be found."))
}

fn outcome(r: Result<(), StoreError>, id: &str) -> Result<(), ApiError> {
    match r {
        Ok(()) => Ok(()),
        Err(StoreError::Conflict) => Err(concurrent()),
        Err(StoreError::NotFound) => Err(no_such_key(id)),
        Err(e) => Err(e.into()),
    }
}

pub async fn create(at: &Ask<'_>, root: User) -> Result<m::CreateAccessKeyResponse, ApiError> {
    if root.second_key.is_some() {
        return Err(ApiError::iam_limit_exceeded(
            "Cannot exceed quota for AccessKeysPerUser: 2",
        ));
    }
    let id = phantom_rules::identity::new_access_key_id();
    let secret = phantom_rules::identity::new_secret();
    outcome(at.app.store.add_root_key(&root, &id, &secret).await, &id)?;
    Ok(m::CreateAccessKeyResponse {
        access_key: m::NewAccessKey {
            user_name: root.name,
            access_key_id: id,
            status: status(true).into(),
            secret_access_key: secret,
            create_date: phantom_model::time::format_timestamp(at.app.clock.now()),
        },
    })
}

fn is_root_key(root: &User, id: &str) -> bool {
    root.access_key_id == id || root.second_key.as_deref() == Some(id)
}

pub async fn set_active(at: &Ask<'_>, root: User, id: &str, active: bool) -> Result<(), ApiError> {
    if !is_root_key(&root, id) {
        return Err(no_such_key(id));
    }
    outcome(
        at.app.store.set_root_key_active(&root, id, active).await,
        id,
    )?;
    at.app.keys.forget(id);
    Ok(())
}

pub async fn delete(at: &Ask<'_>, root: User, id: &str) -> Result<(), ApiError> {
    if !is_root_key(&root, id) {
        return Err(no_such_key(id));
    }
    if root.second_key.is_none() {
        return Err(ApiError::delete_conflict(
            "An account's root keeps one key at least: make a second first (an administrator's RotateAccessKey replaces it).",
        ));
    }
    outcome(at.app.store.delete_root_key(&root, id).await, id)?;
    at.app.keys.forget(id);
    Ok(())
}

pub async fn list(at: &Ask<'_>, root: User) -> Result<m::ListAccessKeysResponse, ApiError> {
    let ids = std::iter::once(root.access_key_id.clone()).chain(root.second_key.clone());
    let mut keys = Vec::new();
    for id in ids {
        // A disabled account's keys are gone: none is listed.
        if let Some(k) = at.app.store.access_key(&id).await? {
            keys.push(m::AccessKeyMetadata {
                user_name: root.name.clone(),
                access_key_id: id,
                status: status(k.active).into(),
                create_date: None,
            });
        }
    }
    Ok(m::ListAccessKeysResponse {
        access_key_metadata: keys,
        is_truncated: false,
    })
}
