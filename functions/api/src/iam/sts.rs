//! STS: GetSessionToken's short-lived credentials (a key that acts as the caller's, with a token
//! every request must carry, until it expires) and GetCallerIdentity.

use super::Ask;
use phantom_model::iam as m;
use phantom_model::user::{AccessKey, Session};
use phantom_rules::iam::{principal, sessions};
use phantom_seams::store::StoreError;
use phantom_wire::query::{self, Document};
use phantom_wire::ApiError;

pub async fn dispatch(
    at: &Ask<'_>,
    operation: &str,
    input: Document,
) -> Result<Option<Document>, ApiError> {
    match operation {
        "GetSessionToken" => query::output(get_session_token(at, query::input(input)?).await?),
        "GetCallerIdentity" => query::output(get_caller_identity(at)),
        "AssumeRole" => query::output(assume_role(at, query::input(input)?).await?),
        other => Err(ApiError::invalid_action_because(
            other,
            "Phantom's STS issues session tokens, assumes roles and names the caller (docs/security.md)",
        )),
    }
}

async fn get_session_token(
    at: &Ask<'_>,
    r: m::GetSessionToken,
) -> Result<m::GetSessionTokenResponse, ApiError> {
    let caller = at.caller;
    if caller.session.is_some() {
        return Err(ApiError::access_denied(
            "Cannot call GetSessionToken with session credentials",
        ));
    }
    // No policy governs it, as STS's: it authenticates, it grants nothing the key has not.
    if r.serial_number.is_some() || r.token_code.is_some() {
        return Err(ApiError::access_denied(
            "MultiFactorAuthentication failed: Phantom keeps no MFA devices.",
        ));
    }
    let root = caller.identity.is_none();
    let secs = sessions::duration_secs(r.duration_seconds, root).map_err(ApiError::validation)?;
    let Some(parent) = caller.access_key_id.clone() else {
        return Err(ApiError::access_denied(
            "Only a signed request gets a session.",
        ));
    };
    // A session acts with its parent key's identity, read when it is used.
    let (key, token, expires_ms) = session_key(at, secs, parent, None);
    store_session(at, &key).await?;
    let expiration =
        phantom_model::time::format_timestamp(phantom_model::time::from_ms(expires_ms));
    Ok(m::GetSessionTokenResponse {
        credentials: m::Credentials {
            access_key_id: key.access_key_id,
            secret_access_key: key.secret,
            session_token: token,
            expiration,
        },
    })
}

/// Who the caller is: needs no permission, as STS's.
fn get_caller_identity(at: &Ask<'_>) -> m::GetCallerIdentityResponse {
    let c = at.caller;
    m::GetCallerIdentityResponse {
        user_id: c
            .identity
            .as_ref()
            .map_or_else(|| c.account_id.clone(), |i| i.user_id.clone()),
        account: c.account_id.clone(),
        arn: principal::arn(&c.account_id, c.identity.as_ref()),
    }
}

/// A session policy's most characters (STS's packed size, as the share of it a policy takes).
const SESSION_POLICY_CHARS: usize = 2048;

async fn assume_role(at: &Ask<'_>, r: m::AssumeRole) -> Result<m::AssumeRoleResponse, ApiError> {
    let caller = at.caller;
    let action = "sts:AssumeRole";
    if r.serial_number.is_some() || r.token_code.is_some() {
        return Err(ApiError::access_denied(
            "MultiFactorAuthentication failed: Phantom keeps no MFA devices.",
        ));
    }
    if r.source_identity.is_some() {
        return Err(ApiError::validation(
            "Phantom does not keep a session's SourceIdentity.",
        ));
    }
    let denied = |d| crate::authorize::refusal(caller, action, &r.role_arn, d);
    // A role of this account (Phantom's accounts assume no other's).
    let role = match phantom_rules::iam::identities::parse_role_arn(&r.role_arn) {
        Some((account, name)) if account == caller.account_id => {
            at.app.store.iam_role(&caller.user, name).await?
        }
        _ => None,
    };
    let Some(role) = role.filter(|x| x.arn() == r.role_arn) else {
        return Err(denied(phantom_rules::iam::Decision::ImplicitDeny));
    };
    let mut extra = vec![("sts:RoleSessionName", r.role_session_name.as_str())];
    if let Some(id) = &r.external_id {
        extra.push(("sts:ExternalId", id));
    }
    let ctx = crate::authorize::context(at.app, caller, at.req, &extra);
    let trust = phantom_rules::iam::parse_trust(&role.trust_policy)
        .map_err(|e| ApiError::internal(format!("a stored trust policy does not read: {e}")))?;
    let own_arn = principal::arn(&caller.account_id, caller.identity.as_ref());
    let role_arn = caller
        .identity
        .as_ref()
        .and_then(|i| i.role_arn(&caller.account_id));
    let asker = phantom_rules::iam::trust::Asker {
        account_id: &caller.account_id,
        arn: &own_arn,
        role_arn: role_arn.as_deref(),
    };
    let trusted = phantom_rules::iam::trust::trusts(&trust, &asker, action, &ctx);
    let own = crate::authorize::decision(caller, action, &r.role_arn, &ctx);
    if !phantom_rules::iam::trust::may_assume(trusted, own) {
        return Err(denied(own));
    }
    let chained = caller
        .identity
        .as_ref()
        .is_some_and(|i| i.role_session.is_some());
    let secs = sessions::role_session_secs(r.duration_seconds, role.max_session_secs, chained)
        .map_err(ApiError::validation)?;
    let mut session_policies = Vec::new();
    let mut packed = 0;
    if let Some(p) = r.policy {
        phantom_rules::iam::parse(&p).map_err(ApiError::malformed_policy_document)?;
        packed += p.chars().filter(|c| !c.is_whitespace()).count();
        session_policies.push(p);
    }
    for descriptor in &r.policy_arns {
        let Some(arn) = descriptor.arn.as_deref() else {
            return Err(ApiError::validation(
                "Each of PolicyArns names its policy (arn).",
            ));
        };
        // Named for the session, not read by the caller: no iam:GetPolicy needed.
        let found = match phantom_rules::iam::identities::parse_policy_arn(arn) {
            Some((account, _, name)) if account == caller.account_id => {
                at.app.store.managed_policy(&caller.user, name).await?
            }
            _ => None,
        };
        let Some(doc) = found.as_ref().and_then(|p| p.document()) else {
            return Err(ApiError::validation(format!(
                "The policy {arn} is not one of this account's."
            )));
        };
        let doc = doc.to_string();
        packed += doc.chars().filter(|c| !c.is_whitespace()).count();
        session_policies.push(doc);
    }
    if packed > SESSION_POLICY_CHARS {
        return Err(ApiError::packed_policy_too_large(format!(
            "Packed policy consumes {}% of allotted space, please use smaller policy for session.",
            packed * 100 / SESSION_POLICY_CHARS
        )));
    }
    let mut identity = role.identity(&r.role_session_name, session_policies);
    // Session tags stand beside the role's, over any of the same key.
    for t in r.tags {
        identity.tags.retain(|x| x.key != t.key);
        identity.tags.push(t);
    }
    let Some(parent) = caller.access_key_id.clone() else {
        return Err(ApiError::access_denied(
            "Only a signed request assumes a role.",
        ));
    };
    let assumed = m::AssumedRoleUser {
        assumed_role_id: format!("{}:{}", role.role_id, r.role_session_name),
        arn: principal::arn(&caller.account_id, Some(&identity)),
    };
    let (key, token, expires_ms) = session_key(at, secs, parent, Some(identity));
    store_session(at, &key).await?;
    Ok(m::AssumeRoleResponse {
        credentials: m::Credentials {
            access_key_id: key.access_key_id,
            secret_access_key: key.secret,
            session_token: token,
            expiration: phantom_model::time::format_timestamp(phantom_model::time::from_ms(
                expires_ms,
            )),
        },
        assumed_role_user: assumed,
        packed_policy_size: (packed * 100 / SESSION_POLICY_CHARS) as i64,
    })
}

/// A new session's key for the caller, lasting `secs`, issued by key `parent`, as `role` if it
/// is a role's: the key, its token, when it expires (Unix ms).
fn session_key(
    at: &Ask<'_>,
    secs: i64,
    parent: String,
    role: Option<phantom_model::iam::Identity>,
) -> (AccessKey, String, i64) {
    let caller = at.caller;
    let token = sessions::new_token();
    let expires_ms = at.app.clock.now_ms() + secs * 1000;
    let key = AccessKey {
        access_key_id: sessions::new_key_id(),
        secret: phantom_rules::identity::new_secret(),
        user: caller.user.clone(),
        account_id: caller.account_id.clone(),
        limits: caller.limits,
        identity: None,
        active: true,
        last_used: None,
        session: Some(Session {
            token_sha256: sessions::token_sha256(&token),
            expires_ms,
            parent,
            role,
        }),
    };
    (key, token, expires_ms)
}

async fn store_session(at: &Ask<'_>, key: &AccessKey) -> Result<(), ApiError> {
    match at.app.store.create_session(key).await {
        Ok(()) => Ok(()),
        Err(StoreError::Exists) => Err(ApiError::resource_contention(
            "A new session's key id was taken; retry.",
        )),
        Err(e) => Err(e.into()),
    }
}
