//! Who is calling: the access key's user, once its SigV4 signature checks out.
//!
//! Access keys are cached in the function's memory for `KEY_CACHE_MS` (a warm Lambda answers most
//! requests without reading DynamoDB for the key): a key deleted or disabled stops working within
//! that time. Unknown keys are not cached, so a new user's key works at once.

use crate::HttpRequest;
use phantom_model::user::KeyUse;
use phantom_rules::iam::sessions;
use phantom_rules::identity::{AccessKey, Caller};
use phantom_seams::store::{Directory, Store};
use phantom_wire::shapes::Service;
use phantom_wire::sigv4::{self, SignedRequest};
use phantom_wire::ApiError;
use std::collections::HashMap;
use std::sync::Mutex;
use time::OffsetDateTime;

/// How long a looked-up access key is trusted without reading it again.
pub const KEY_CACHE_MS: i64 = 30_000;
/// Keys kept at most; past it the cache starts again empty (a bound, not an eviction policy).
const KEY_CACHE_ENTRIES: usize = 10_000;

#[derive(Default)]
pub struct KeyCache {
    keys: Mutex<HashMap<String, (AccessKey, i64)>>,
}

impl KeyCache {
    fn get(&self, access_key_id: &str, now_ms: i64) -> Option<AccessKey> {
        let keys = self.keys.lock().expect("no key cache user panics");
        keys.get(access_key_id)
            .filter(|(_, at)| now_ms - at < KEY_CACHE_MS)
            .map(|(k, _)| k.clone())
    }

    fn put(&self, key: &AccessKey, now_ms: i64) {
        let mut keys = self.keys.lock().expect("no key cache user panics");
        if keys.len() >= KEY_CACHE_ENTRIES {
            keys.clear();
        }
        keys.insert(key.access_key_id.clone(), (key.clone(), now_ms));
    }

    /// Drops a key this function changed (disabled, rotated): this function stops accepting it
    /// at once; others within `KEY_CACHE_MS`.
    pub fn forget(&self, access_key_id: &str) {
        let mut keys = self.keys.lock().expect("no key cache user panics");
        keys.remove(access_key_id);
    }

    /// The key, from the cache if it was read less than `KEY_CACHE_MS` ago.
    async fn lookup(
        &self,
        store: &dyn Directory,
        access_key_id: &str,
        now_ms: i64,
    ) -> Result<Option<AccessKey>, ApiError> {
        if let Some(k) = self.get(access_key_id, now_ms) {
            return Ok(Some(k));
        }
        let key = store.access_key(access_key_id).await?;
        if let Some(k) = &key {
            self.put(k, now_ms);
        }
        Ok(key)
    }
}

/// The access key a request was signed with (already authenticated), from the cache.
pub(crate) async fn key_of_request(
    app: &crate::App,
    req: &HttpRequest<'_>,
) -> Result<AccessKey, ApiError> {
    let auth = sigv4::authorization(req.headers)?;
    key(app, &auth.access_key_id)
        .await?
        .ok_or_else(ApiError::invalid_client_token_id)
}

/// An access key by its id, from the cache if it was read less than `KEY_CACHE_MS` ago.
pub(crate) async fn key(
    app: &crate::App,
    access_key_id: &str,
) -> Result<Option<AccessKey>, ApiError> {
    app.keys
        .lookup(app.store.as_ref(), access_key_id, app.clock.now_ms())
        .await
}

/// The caller of a request to `service` (Auto Scaling's signing name also covers Phantom's own API).
pub async fn authenticate(
    service: Service,
    store: &dyn Store,
    cache: &KeyCache,
    now: OffsetDateTime,
    req: &HttpRequest<'_>,
) -> Result<Caller, ApiError> {
    let auth = sigv4::authorization(req.headers)?;
    let signed = SignedRequest {
        method: req.method,
        path_and_query: req.path_and_query,
        headers: req.headers,
        body: req.body,
    };
    // Everything that needs no secret first: a malformed or stale request costs no lookup.
    let signed_at = sigv4::check_request_for(service.signing_name(), &signed, &auth, now)?;
    let now_ms = (now.unix_timestamp_nanos() / 1_000_000) as i64;
    let Some(key) = cache.lookup(store, &auth.access_key_id, now_ms).await? else {
        return Err(ApiError::invalid_client_token_id());
    };
    sigv4::verify(&signed, &auth, &key.secret, signed_at)?;
    // An Inactive key is refused as IAM refuses it, as though it did not exist.
    if !key.active {
        return Err(ApiError::invalid_client_token_id());
    }
    let token = req
        .headers
        .get("x-amz-security-token")
        .and_then(|v| v.to_str().ok());
    let Some(session) = key.session else {
        // A session token with a long-term key opens nothing.
        if token.is_some() {
            return Err(ApiError::invalid_client_token_id());
        }
        let key = record_use(store, cache, key, service, &auth.region, now).await;
        return Ok(Caller {
            user: key.user,
            account_id: key.account_id,
            limits: key.limits,
            identity: key.identity,
            access_key_id: Some(key.access_key_id),
            session: None,
        });
    };
    sessions::check(&session, token, now_ms).map_err(|r| match r {
        sessions::Refused::Invalid => ApiError::invalid_client_token_id(),
        sessions::Refused::Expired => ApiError::expired_token(),
    })?;
    // A role's session acts as the role (its record carries it), while the key that assumed
    // it is still the account's: a disabled account's sessions end with its keys.
    if let Some(role) = session.role.clone() {
        let parent = cache.lookup(store, &session.parent, now_ms).await?;
        if !parent.is_some_and(|p| p.active) {
            return Err(ApiError::invalid_client_token_id());
        }
        return Ok(Caller {
            user: key.user,
            account_id: key.account_id,
            limits: key.limits,
            identity: Some(role),
            access_key_id: Some(key.access_key_id),
            session: Some(session),
        });
    }
    // A session acts as the key it was issued to, as that key is now: its policies as they
    // are, and nothing once it is Inactive or deleted.
    let parent = cache.lookup(store, &session.parent, now_ms).await?;
    let Some(parent) = parent.filter(|p| p.active && p.session.is_none()) else {
        return Err(ApiError::invalid_client_token_id());
    };
    Ok(Caller {
        user: parent.user,
        account_id: parent.account_id,
        limits: parent.limits,
        identity: parent.identity,
        access_key_id: Some(key.access_key_id),
        session: Some(session),
    })
}

/// A key's use is recorded when the last one recorded is older than this (GetAccessKeyLastUsed
/// is as coarse as IAM's, which documents a delay of up to four hours).
pub const KEY_USE_EVERY_MS: i64 = 3_600_000;

/// Records the key's use on its record when the one there is older than `KEY_USE_EVERY_MS`; a
/// failed write is logged and the request goes on (its use is recorded by a later one).
async fn record_use(
    store: &dyn Store,
    cache: &KeyCache,
    mut key: AccessKey,
    service: Service,
    region: &str,
    now: OffsetDateTime,
) -> AccessKey {
    let now_ms = (now.unix_timestamp_nanos() / 1_000_000) as i64;
    let last_ms = key
        .last_used
        .as_ref()
        .and_then(|u| phantom_model::time::parse_timestamp(&u.at))
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64);
    if last_ms.is_some_and(|at| now_ms - at < KEY_USE_EVERY_MS) {
        return key;
    }
    let used = KeyUse {
        at: phantom_model::time::format_timestamp(now),
        service: service.signing_name().to_string(),
        region: region.to_string(),
    };
    match store.key_used(&key.access_key_id, &used).await {
        Ok(()) => {
            key.last_used = Some(used);
            cache.put(&key, now_ms);
        }
        Err(e) => tracing::warn!(error = %e, "a key's use could not be recorded"),
    }
    key
}
