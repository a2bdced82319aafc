//! A user's inline policies: each document read as IAM reads it when it is put
//! (`phantom_rules::iam::document`), and carried by the user's keys' records from then on.

use super::users::save;
use super::Ask;
use phantom_model::iam as m;
use phantom_rules::iam::identities;
use phantom_wire::ApiError;

fn no_such_policy(name: &str) -> ApiError {
    ApiError::no_such_entity(format!("The user policy with name {name} cannot be found."))
}

pub async fn put_user_policy(at: &Ask<'_>, r: m::PutUserPolicy) -> Result<(), ApiError> {
    let before = at.user("PutUserPolicy", Some(&r.user_name)).await?;
    phantom_rules::iam::parse(&r.policy_document).map_err(ApiError::malformed_policy_document)?;
    let mut after = before.clone();
    after.policies.insert(r.policy_name, r.policy_document);
    identities::check_inline_size(&after.policies).map_err(ApiError::iam_limit_exceeded)?;
    save(at, &before, &after, None).await
}

pub async fn get_user_policy(
    at: &Ask<'_>,
    r: m::UserPolicy,
) -> Result<m::GetUserPolicyResponse, ApiError> {
    let u = at.user("GetUserPolicy", Some(&r.user_name)).await?;
    let document = u
        .policies
        .get(&r.policy_name)
        .ok_or_else(|| no_such_policy(&r.policy_name))?;
    Ok(m::GetUserPolicyResponse {
        user_name: u.name.clone(),
        policy_name: r.policy_name,
        policy_document: percent_encoding::utf8_percent_encode(
            document,
            percent_encoding::NON_ALPHANUMERIC,
        )
        .to_string(),
    })
}

pub async fn list_user_policies(
    at: &Ask<'_>,
    r: m::ListUserPolicies,
) -> Result<m::ListUserPoliciesResponse, ApiError> {
    let u = at.user("ListUserPolicies", Some(&r.user_name)).await?;
    Ok(m::ListUserPoliciesResponse {
        policy_names: u.policies.keys().cloned().collect(),
        is_truncated: false,
    })
}

pub async fn delete_user_policy(at: &Ask<'_>, r: m::UserPolicy) -> Result<(), ApiError> {
    let before = at.user("DeleteUserPolicy", Some(&r.user_name)).await?;
    let mut after = before.clone();
    if after.policies.remove(&r.policy_name).is_none() {
        return Err(no_such_policy(&r.policy_name));
    }
    save(at, &before, &after, None).await
}
