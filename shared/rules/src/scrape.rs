//! Scrape credentials, pure: a Prometheus scrapes a user's group metrics from
//! `<api>/phantom/v1/metrics` with HTTP Basic authentication, the user's name and a password
//! Phantom made for it (`CreateScrapeCredential`). Only the password's SHA-256 is stored, and it is
//! compared in constant time, as a webhook's secret.

use base64::Engine;

pub const PATH: &str = "/phantom/v1/metrics";

/// What the endpoint answers with: Prometheus's text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A new password and its SHA-256 (hex).
pub fn new_password() -> (String, String) {
    let password: String = crate::identity::new_secret()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(32)
        .collect();
    let digest = crate::webhook::digest(&password);
    (password, digest)
}

/// The (user, password) of an `Authorization: Basic …` header; None for any other header.
pub fn basic(authorization: &str) -> Option<(String, String)> {
    let (scheme, encoded) = authorization.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// Whether `password` is the one whose SHA-256 is `stored`.
pub fn matches(password: &str, stored: &str) -> bool {
    crate::webhook::matches(password, stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_read_and_anything_else_is_not() {
        // RFC 7617's example.
        assert_eq!(
            basic("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),
            Some(("Aladdin".into(), "open sesame".into()))
        );
        assert_eq!(
            basic("basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==").unwrap().0,
            "Aladdin"
        );
        assert_eq!(basic("Bearer QWxhZGRpbjpvcGVuIHNlc2FtZQ=="), None);
        assert_eq!(basic("Basic !!!"), None);
        assert_eq!(basic("Basic QWxhZGRpbg=="), None, "no colon");
        assert_eq!(basic(""), None);
    }

    #[test]
    fn a_password_matches_only_its_digest() {
        let (password, digest) = new_password();
        assert_eq!(password.len(), 32);
        assert!(matches(&password, &digest));
        assert!(!matches("wrong", &digest));
        let (other, _) = new_password();
        assert_ne!(password, other);
    }
}
