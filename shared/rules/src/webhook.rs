//! Alert webhooks: an unguessable URL per scaling policy that runs it when POSTed to, so that
//! Prometheus Alertmanager, Grafana or curl can scale a group without AWS credentials. Pure: the
//! URL's shape, the secret and its check, and what a request asks for.
//!
//! The URL is `<api>/phantom/v1/webhooks/<user>/<group>/<id>.<secret>` (user and group
//! percent-encoded): the id names the webhook, the 32-character secret proves the caller may use
//! it. Only the secret's SHA-256 is stored, and it is compared in constant time.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub const PREFIX: &str = "/phantom/v1/webhooks/";

/// What a path segment escapes: all but RFC 3986's unreserved characters.
pub(crate) const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A new webhook: (id, secret, the secret's SHA-256 in hex).
pub fn new_webhook() -> (String, String, String) {
    let id = format!("wh-{}", &crate::identity::new_access_key_id()[4..]).to_lowercase();
    let secret: String = crate::identity::new_secret()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(32)
        .collect();
    let digest = digest(&secret);
    (id, secret, digest)
}

/// A secret's SHA-256 in hex, as stored.
pub fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Whether `secret` is the one whose SHA-256 is `stored`, in time that does not depend on where
/// they differ.
pub fn matches(secret: &str, stored: &str) -> bool {
    digest(secret).as_bytes().ct_eq(stored.as_bytes()).into()
}

/// The path of a webhook (below the API's base).
pub fn path(user: &str, group: &str, id: &str, secret: &str) -> String {
    let enc = |s: &str| utf8_percent_encode(s, SEGMENT).to_string();
    format!("{PREFIX}{}/{}/{id}.{secret}", enc(user), enc(group))
}

/// What a webhook path names.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    pub user: String,
    pub group: String,
    pub id: String,
    pub secret: String,
}

/// The target of a request's path (which may sit below a stage), if it is a webhook's.
pub fn target(path_and_query: &str) -> Option<Target> {
    let path = path_and_query.split('?').next()?;
    let (_, rest) = path.split_once(PREFIX)?;
    let mut parts = rest.split('/');
    let (user, group, last) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let dec = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .ok()
            .map(|c| c.into_owned())
    };
    let (id, secret) = last.split_once('.')?;
    Some(Target {
        user: dec(user)?,
        group: dec(group)?,
        id: id.to_string(),
        secret: secret.to_string(),
    })
}

/// What a call asks for.
#[derive(Debug, PartialEq)]
pub enum Call {
    /// Run the policy (a step policy with the metric and threshold given).
    Fire {
        metric: Option<f64>,
        breach: Option<f64>,
        /// For the activity: which alert, if the body is Alertmanager's (or Grafana's).
        alert: Option<String>,
    },
    /// Alertmanager's (or Grafana's) "resolved": nothing to do.
    Resolved,
}

/// Reads a call's body: Alertmanager's webhook payload (`status` firing or resolved, `alerts`
/// with their `labels.alertname`; Grafana sends the same shape), or a JSON object with
/// `MetricValue` and `BreachThreshold` for a step policy, or nothing. Anything else is an error.
pub fn call(body: &[u8]) -> Result<Call, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Call::Fire {
            metric: None,
            breach: None,
            alert: None,
        });
    }
    let v: Body = serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(body))
        .map_err(|e| match e.path().to_string().as_str() {
            "." => format!("The body must be a JSON object: {}", e.inner()),
            path => format!("{path} cannot be read: {}", e.inner()),
        })?;
    if v.status.as_deref() == Some("resolved") {
        return Ok(Call::Resolved);
    }
    let alert = v
        .common_labels
        .and_then(|l| l.alertname)
        .or_else(|| v.alerts.into_iter().next().and_then(|a| a.labels.alertname));
    Ok(Call::Fire {
        metric: v.metric_value,
        breach: v.breach_threshold,
        alert,
    })
}

/// What a call's body may hold: Alertmanager's payload, or Phantom's two numbers. Other members
/// are ignored (Alertmanager sends many).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    status: Option<String>,
    common_labels: Option<Labels>,
    #[serde(default)]
    alerts: Vec<Alert>,
    #[serde(rename = "MetricValue")]
    metric_value: Option<f64>,
    #[serde(rename = "BreachThreshold")]
    breach_threshold: Option<f64>,
}

#[derive(Deserialize)]
struct Alert {
    #[serde(default)]
    labels: Labels,
}

#[derive(Default, Deserialize)]
struct Labels {
    alertname: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_webhooks_path_names_its_group_and_proves_its_secret() {
        let (id, secret, stored) = new_webhook();
        assert_eq!(secret.len(), 32);
        assert!(matches(&secret, &stored));
        assert!(!matches("x", &stored));
        let mut wrong = secret.clone();
        wrong.replace_range(31.., if secret.ends_with('a') { "b" } else { "a" });
        assert!(!matches(&wrong, &stored));
        let p = path("alice", "web tier/1", &id, &secret);
        let t = target(&format!("/Prod{p}?x=1")).expect("a webhook path");
        assert_eq!(
            t,
            Target {
                user: "alice".into(),
                group: "web tier/1".into(),
                id,
                secret
            }
        );
        assert_eq!(target("/phantom/v1/ListClouds"), None);
        assert_eq!(target("/phantom/v1/webhooks/alice/web"), None);
    }

    #[test]
    fn alertmanagers_payloads_fire_or_resolve() {
        let firing = br#"{"version":"4","status":"firing","receiver":"phantom",
            "commonLabels":{"alertname":"HighCPU"},"alerts":[{"status":"firing","labels":{"alertname":"HighCPU"}}]}"#;
        assert_eq!(
            call(firing),
            Ok(Call::Fire {
                metric: None,
                breach: None,
                alert: Some("HighCPU".into())
            })
        );
        let resolved = br#"{"version":"4","status":"resolved","alerts":[{"status":"resolved"}]}"#;
        assert_eq!(call(resolved), Ok(Call::Resolved));
        assert!(matches!(call(b""), Ok(Call::Fire { alert: None, .. })));
        assert_eq!(
            call(br#"{"MetricValue": 92, "BreachThreshold": 80}"#),
            Ok(Call::Fire {
                metric: Some(92.0),
                breach: Some(80.0),
                alert: None
            })
        );
        assert!(call(b"not json").is_err());
        assert!(call(b"[1]").is_err());
        assert!(call(br#"{"MetricValue": "high"}"#).is_err());
        assert!(call(b"[1, 2]").is_err(), "not an object");
    }
}
