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
        other => Err(ApiError::invalid_action_because(
            other,
            "Phantom's STS issues session tokens and names the caller (docs/security.md)",
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
    let token = sessions::new_token();
    let expires_ms = at.app.clock.now_ms() + secs * 1000;
    let key = AccessKey {
        access_key_id: sessions::new_key_id(),
        secret: phantom_rules::identity::new_secret(),
        user: caller.user.clone(),
        account_id: caller.account_id.clone(),
        limits: caller.limits,
        // A session acts with its parent key's identity, read when it is used.
        identity: None,
        active: true,
        last_used: None,
        session: Some(Session {
            token_sha256: sessions::token_sha256(&token),
            expires_ms,
            parent,
        }),
    };
    match at.app.store.create_session(&key).await {
        Ok(()) => {}
        Err(StoreError::Exists) => {
            return Err(ApiError::resource_contention(
                "A new session's key id was taken; retry.",
            ))
        }
        Err(e) => return Err(e.into()),
    }
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
