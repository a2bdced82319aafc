//! Who is calling: the access key's user, once its SigV4 signature checks out.

use crate::HttpRequest;
use phantom::identity::Caller;
use phantom::sigv4::{self, SignedRequest};
use phantom::store::Directory;
use phantom::ApiError;
use time::OffsetDateTime;

pub async fn authenticate(
    store: &dyn Directory,
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
    let signed_at = sigv4::check_request(&signed, &auth, now)?;
    let Some(key) = store.access_key(&auth.access_key_id).await? else {
        return Err(ApiError::invalid_client_token_id());
    };
    sigv4::verify(&signed, &auth, &key.secret, signed_at)?;
    Ok(Caller {
        user: key.user,
        account_id: key.account_id,
    })
}
