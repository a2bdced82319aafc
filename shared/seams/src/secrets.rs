//! Secrets at rest: envelope encryption, so that a copy of the table reveals no access key's
//! secret and no user's cloud credentials.
//!
//! Each secret is encrypted with AES-256-GCM under a data key of its own, which KMS generates
//! (GenerateDataKey under the deployment's key, `PHANTOM_SECRETS_KEY`) and which is stored only
//! encrypted, beside it. Opening a secret asks KMS to decrypt its data key (Decrypt); a function
//! keeps the data keys it opened for `DATA_KEY_CACHE_MS`, so a warm function asks KMS once per
//! secret in that time, not once per request. The item a secret belongs to is the cipher's
//! associated data: a sealed secret copied into another item does not open.
//!
//! Stored form: `v1:` base64(encrypted data key) `:` base64(nonce ‖ ciphertext ‖ tag).

use crate::cloud::signed::Deployed;
use async_trait::async_trait;
use aws_smithy_types::base64;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long an opened data key is kept in memory: KMS is asked once an hour per secret and warm
/// function instance (at 100,000 VMs a shorter time costs more than the rest of the bill,
/// docs/scale.md); a disabled key stops the functions within this time.
pub const DATA_KEY_CACHE_MS: u64 = 60 * 60 * 1000;
/// Data keys kept at most; past it the cache starts again empty (a bound, not a policy).
const CACHE_ENTRIES: usize = 10_000;
const VERSION: &str = "v1";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretError {
    /// The key service could not be reached or refused.
    Unavailable(String),
    /// The stored form is not one this code wrote, or it does not open (tampered, moved).
    Unreadable(String),
}

impl std::fmt::Display for SecretError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unavailable(m) => write!(f, "key service unavailable: {m}"),
            Self::Unreadable(m) => write!(f, "sealed secret unreadable: {m}"),
        }
    }
}

impl std::error::Error for SecretError {}

/// A 256-bit data key.
pub type DataKey = [u8; 32];

/// Where data keys come from: KMS (`Kms`), or a fixed key for tests (`FixedKeys`).
#[async_trait]
pub trait KeyService: Send + Sync {
    /// A new data key, and the same encrypted under the master key.
    async fn generate(&self) -> Result<(DataKey, Vec<u8>), SecretError>;
    /// The data key inside an encrypted one.
    async fn decrypt(&self, encrypted: &[u8]) -> Result<DataKey, SecretError>;
}

/// Seals and opens secrets (see the module's comment).
pub struct Secrets {
    keys: Arc<dyn KeyService>,
    opened: Mutex<HashMap<Vec<u8>, (DataKey, Instant)>>,
}

impl Secrets {
    pub fn new(keys: Arc<dyn KeyService>) -> Self {
        Self {
            keys,
            opened: Mutex::new(HashMap::new()),
        }
    }

    /// KMS with the deployment's key, from the environment (`PHANTOM_SECRETS_KEY`): an error if it
    /// is not set, never plain text instead.
    pub fn from_env(sdk: &aws_config::SdkConfig) -> Result<Self, String> {
        let key = std::env::var(crate::config::env::SECRETS_KEY)
            .ok()
            .filter(|k| !k.is_empty())
            .ok_or_else(|| {
                format!(
                    "{} is not set: secrets are stored encrypted with that KMS key",
                    crate::config::env::SECRETS_KEY
                )
            })?;
        Ok(Self::new(Arc::new(Kms::new(sdk, key))))
    }

    /// `plaintext`, sealed for the item named `context`.
    pub async fn seal(&self, context: &str, plaintext: &str) -> Result<String, SecretError> {
        let (data_key, encrypted) = self.keys.generate().await?;
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).expect("the OS random source works");
        let mut sealed = plaintext.as_bytes().to_vec();
        cipher(&data_key)
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context.as_bytes()),
                &mut sealed,
            )
            .map_err(|_| SecretError::Unreadable("cannot encrypt".into()))?;
        self.remember(&encrypted, data_key);
        let mut body = nonce.to_vec();
        body.extend_from_slice(&sealed);
        Ok(format!(
            "{VERSION}:{}:{}",
            base64::encode(&encrypted),
            base64::encode(&body)
        ))
    }

    /// The secret sealed for the item named `context`.
    pub async fn open(&self, context: &str, stored: &str) -> Result<String, SecretError> {
        let unreadable = |why: &str| SecretError::Unreadable(format!("{context}: {why}"));
        let mut parts = stored.split(':');
        let (Some(VERSION), Some(key), Some(body), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(unreadable("not a sealed secret"));
        };
        let encrypted = base64::decode(key).map_err(|_| unreadable("bad data key"))?;
        let mut body = base64::decode(body).map_err(|_| unreadable("bad body"))?;
        if body.len() < NONCE_LEN {
            return Err(unreadable("too short"));
        }
        let data_key = match self.recall(&encrypted) {
            Some(k) => k,
            None => {
                let k = self.keys.decrypt(&encrypted).await?;
                self.remember(&encrypted, k);
                k
            }
        };
        let (nonce, sealed) = body.split_at_mut(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| unreadable("nonce"))?;
        let plain = cipher(&data_key)
            .open_in_place(nonce, Aad::from(context.as_bytes()), sealed)
            .map_err(|_| unreadable("does not open (altered, or another item's)"))?;
        String::from_utf8(plain.to_vec()).map_err(|_| unreadable("not text"))
    }

    fn recall(&self, encrypted: &[u8]) -> Option<DataKey> {
        let opened = self.opened.lock().expect("no data key cache user panics");
        opened
            .get(encrypted)
            .filter(|(_, at)| at.elapsed() < Duration::from_millis(DATA_KEY_CACHE_MS))
            .map(|(k, _)| *k)
    }

    fn remember(&self, encrypted: &[u8], key: DataKey) {
        let mut opened = self.opened.lock().expect("no data key cache user panics");
        if opened.len() >= CACHE_ENTRIES {
            opened.clear();
        }
        opened.insert(encrypted.to_vec(), (key, Instant::now()));
    }
}

fn cipher(key: &DataKey) -> LessSafeKey {
    LessSafeKey::new(UnboundKey::new(&AES_256_GCM, key).expect("a 256-bit key"))
}

/// KMS: GenerateDataKey and Decrypt under one key (id, ARN or alias), each one signed call of
/// KMS's JSON protocol through the clouds' signed client (no function links aws-sdk-kms), with the
/// function's own credentials read at each call (a role's are renewed).
pub struct Kms {
    kms: Deployed,
    key_id: String,
}

/// A KMS call never holds its caller longer.
const KMS_TIMEOUT: Duration = Duration::from_secs(5);

impl Kms {
    pub fn new(sdk: &aws_config::SdkConfig, key_id: impl Into<String>) -> Self {
        Self {
            kms: Deployed::new(sdk, "kms", "", KMS_TIMEOUT),
            key_id: key_id.into(),
        }
    }

    /// `TrentService.<action>` with this input: KMS's answer.
    async fn call(
        &self,
        action: &str,
        input: serde_json::Value,
    ) -> Result<serde_json::Value, SecretError> {
        let answer = async {
            let client = self.kms.client().await?;
            client
                .json("1.1", &format!("TrentService.{action}"), &input)
                .await
        };
        crate::metrics::timed(crate::metrics::Counter::Kms, answer)
            .await
            .map_err(|e| SecretError::Unavailable(format!("{action}: {}: {}", e.code, e.message)))
    }
}

/// A base64 blob of KMS's answer: `what` in it.
fn blob(answer: &serde_json::Value, what: &str) -> Result<Vec<u8>, SecretError> {
    answer[what]
        .as_str()
        .and_then(|b| base64::decode(b).ok())
        .ok_or_else(|| SecretError::Unavailable(format!("KMS returned no {what}")))
}

fn data_key(bytes: &[u8]) -> Result<DataKey, SecretError> {
    DataKey::try_from(bytes)
        .map_err(|_| SecretError::Unavailable("KMS returned no 256-bit data key".into()))
}

#[async_trait]
impl KeyService for Kms {
    async fn generate(&self) -> Result<(DataKey, Vec<u8>), SecretError> {
        let input = serde_json::json!({"KeyId": self.key_id, "KeySpec": "AES_256"});
        let out = self.call("GenerateDataKey", input).await?;
        Ok((
            data_key(&blob(&out, "Plaintext")?)?,
            blob(&out, "CiphertextBlob")?,
        ))
    }

    async fn decrypt(&self, encrypted: &[u8]) -> Result<DataKey, SecretError> {
        let input = serde_json::json!({
            "KeyId": self.key_id,
            "CiphertextBlob": base64::encode(encrypted),
        });
        data_key(&blob(&self.call("Decrypt", input).await?, "Plaintext")?)
    }
}

/// A master key in memory instead of KMS, for tests: data keys "encrypted" under it with the
/// same cipher. Counts its calls, as KMS would bill them.
pub struct FixedKeys {
    master: DataKey,
    pub calls: std::sync::atomic::AtomicU64,
}

impl FixedKeys {
    pub fn new(master: DataKey) -> Self {
        Self {
            master,
            calls: Default::default(),
        }
    }

    fn count(&self) {
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[async_trait]
impl KeyService for FixedKeys {
    async fn generate(&self) -> Result<(DataKey, Vec<u8>), SecretError> {
        self.count();
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source works");
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).expect("the OS random source works");
        let mut sealed = key.to_vec();
        cipher(&self.master)
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::empty(),
                &mut sealed,
            )
            .map_err(|_| SecretError::Unavailable("cannot encrypt".into()))?;
        let mut encrypted = nonce.to_vec();
        encrypted.extend_from_slice(&sealed);
        Ok((key, encrypted))
    }

    async fn decrypt(&self, encrypted: &[u8]) -> Result<DataKey, SecretError> {
        self.count();
        let mut encrypted = encrypted.to_vec();
        if encrypted.len() < NONCE_LEN {
            return Err(SecretError::Unavailable(
                "InvalidCiphertextException".into(),
            ));
        }
        let (nonce, sealed) = encrypted.split_at_mut(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce)
            .map_err(|_| SecretError::Unavailable("InvalidCiphertextException".into()))?;
        let plain = cipher(&self.master)
            .open_in_place(nonce, Aad::empty(), sealed)
            .map_err(|_| SecretError::Unavailable("InvalidCiphertextException".into()))?;
        data_key(plain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    fn secrets() -> (Secrets, Arc<FixedKeys>) {
        let keys = Arc::new(FixedKeys::new([7; 32]));
        (Secrets::new(keys.clone()), keys)
    }

    #[tokio::test]
    async fn a_sealed_secret_opens_for_its_item_only() {
        let (s, _) = secrets();
        let sealed = s.seal("KEY#PKIA1", "wJalrXUtnFEMI/K7MDENG").await.unwrap();
        assert!(!sealed.contains("wJalrXUtnFEMI"), "{sealed}");
        assert_eq!(
            s.open("KEY#PKIA1", &sealed).await.unwrap(),
            "wJalrXUtnFEMI/K7MDENG"
        );
        // Moved to another item, altered, or not sealed at all: an error, never text.
        assert!(matches!(
            s.open("KEY#PKIA2", &sealed).await,
            Err(SecretError::Unreadable(_))
        ));
        let mut altered = sealed.clone();
        let last = altered.pop().unwrap();
        altered.push(if last == 'A' { 'B' } else { 'A' });
        assert!(s.open("KEY#PKIA1", &altered).await.is_err());
        assert!(s.open("KEY#PKIA1", "wJalrXUtnFEMI/K7MDENG").await.is_err());
        assert!(s.open("KEY#PKIA1", "v1:AAAA:AAAA").await.is_err());
        // The same secret sealed twice differs (a data key and nonce each).
        assert_ne!(
            s.seal("KEY#PKIA1", "x").await.unwrap(),
            s.seal("KEY#PKIA1", "x").await.unwrap()
        );
    }

    #[tokio::test]
    async fn a_warm_function_asks_the_key_service_once_per_secret() {
        let (writer, _) = secrets();
        let sealed = writer.seal("c", "secret").await.unwrap();
        // Another function (its own cache) opens it: one Decrypt, then none.
        let keys = Arc::new(FixedKeys::new([7; 32]));
        let reader = Secrets::new(keys.clone());
        for _ in 0..5 {
            assert_eq!(reader.open("c", &sealed).await.unwrap(), "secret");
        }
        assert_eq!(keys.calls.load(Ordering::Relaxed), 1);
        // Under another master key it does not open.
        let stranger = Secrets::new(Arc::new(FixedKeys::new([8; 32])));
        assert!(matches!(
            stranger.open("c", &sealed).await,
            Err(SecretError::Unavailable(_))
        ));
    }
}
