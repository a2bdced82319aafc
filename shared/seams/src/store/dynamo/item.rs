//! An item's attributes: writing them, and reading them as a type (a missing or mistyped one is
//! `StoreError::Corrupt`, never a default), the keys, and how a failed write reads.

use super::*;

/// What a user's credentials for a cloud are sealed for: their item.
pub(super) fn credentials_context(user: &str, cloud: &str) -> String {
    format!("{}/{CRED}{cloud}", owner(user))
}

pub(super) fn sealing(e: SecretError) -> StoreError {
    match e {
        SecretError::Unavailable(m) => StoreError::Unavailable(m),
        SecretError::Unreadable(m) => StoreError::Corrupt(m),
    }
}

pub(super) fn watch_key(user: &str, cloud: &str) -> Item {
    key(WATCH.into(), format!("{cloud}#{user}"))
}

pub(super) fn owner(user: &str) -> String {
    format!("OWNER#{user}")
}

pub(super) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

pub(super) fn n(v: i64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// The key of an item, for the errors of the readers below.
pub(super) fn describe(item: &Item) -> String {
    let part = |k: &str| {
        item.get(k)
            .and_then(|v| v.as_s().ok())
            .map_or("?", |v| v.as_str())
    };
    format!("{}/{}", part(PARTITION_KEY), part(SORT_KEY))
}

pub(super) fn corrupt(item: &Item, k: &str, want: &str) -> StoreError {
    StoreError::Corrupt(format!(
        "{}: attribute {k} missing or not {want}",
        describe(item)
    ))
}

/// A string attribute that must be there.
pub(super) fn get_s(item: &Item, k: &str) -> StoreResult<String> {
    opt_s(item, k)?.ok_or_else(|| corrupt(item, k, "a string"))
}

/// A string attribute that may be absent (but not of another type).
pub(super) fn opt_s(item: &Item, k: &str) -> StoreResult<Option<String>> {
    match item.get(k) {
        None => Ok(None),
        Some(v) => v
            .as_s()
            .map(|v| Some(v.clone()))
            .map_err(|_| corrupt(item, k, "a string")),
    }
}

pub(super) fn get_n(item: &Item, k: &str) -> StoreResult<i64> {
    opt_n(item, k)?.ok_or_else(|| corrupt(item, k, "a number"))
}

pub(super) fn opt_n(item: &Item, k: &str) -> StoreResult<Option<i64>> {
    match item.get(k) {
        None => Ok(None),
        Some(v) => v
            .as_n()
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Some)
            .ok_or_else(|| corrupt(item, k, "an integer")),
    }
}

pub(super) fn get_bool(item: &Item, k: &str) -> StoreResult<bool> {
    item.get(k)
        .and_then(|v| v.as_bool().ok())
        .copied()
        .ok_or_else(|| corrupt(item, k, "a boolean"))
}

/// The item's `doc` as `what` (a group's settings, a launch configuration), typed: a member
/// missing or of the wrong type is a corrupt item.
pub(super) fn get_typed<T: serde::de::DeserializeOwned>(item: &Item, what: &str) -> StoreResult<T> {
    let doc = get_s(item, "doc")?;
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(&doc)).map_err(|e| {
        // The path names the member, which serde's own message leaves out.
        StoreError::Corrupt(format!(
            "{}: attribute doc is not {what}: {}: {}",
            describe(item),
            e.path(),
            e.inner()
        ))
    })
}

pub(super) fn settings_json(s: &Settings) -> String {
    serde_json::to_string(s).expect("settings serialise")
}

/// The sort key after its prefix.
pub(super) fn sk_suffix(item: &Item, prefix: &str) -> StoreResult<String> {
    let sk = get_s(item, SORT_KEY)?;
    sk.strip_prefix(prefix)
        .map(str::to_string)
        .ok_or_else(|| corrupt(item, SORT_KEY, prefix))
}

pub(super) fn key(pk: String, sk: String) -> Item {
    HashMap::from([
        (PARTITION_KEY.to_string(), s(pk)),
        (SORT_KEY.to_string(), s(sk)),
    ])
}

pub(super) fn unavailable<E: std::error::Error + 'static>(e: E) -> StoreError {
    StoreError::Unavailable(DisplayErrorContext(e).to_string())
}

/// Which writes of a cancelled transaction failed their condition.
pub(super) fn cancelled_conditions<R>(
    e: &aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
        R,
    >,
) -> Option<Vec<bool>> {
    let service = e.as_service_error()?;
    if let aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(t) = service {
        return Some(
            t.cancellation_reasons()
                .iter()
                .map(|r| r.code() == Some("ConditionalCheckFailed"))
                .collect(),
        );
    }
    None
}

pub(super) fn is_conditional_failure<E: ProvideErrorMetadata>(e: &E) -> bool {
    e.code() == Some("ConditionalCheckFailedException")
}

/// A conditional write's outcome: its condition failing becomes `failed`, any other error
/// `Unavailable`.
pub(super) fn conditional<O, E, R>(
    result: Result<O, aws_sdk_dynamodb::error::SdkError<E, R>>,
    failed: StoreError,
) -> StoreResult<()>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    match result {
        Ok(_) => Ok(()),
        Err(e) if e.as_service_error().is_some_and(is_conditional_failure) => Err(failed),
        Err(e) => Err(unavailable(e)),
    }
}
