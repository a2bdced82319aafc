//! Heartbeats, pure: for VMs Phantom cannot reach (a private cloud behind NAT), each VM calls its
//! group's heartbeat URL every interval (its user data can carry the URL), and a VM silent for
//! its threshold of intervals is Unhealthy: the dead man's switch people build by hand with
//! SetInstanceHealth. A group asks for it with the probe `heartbeat://?interval=30&unhealthy=3`
//! (`phantom_rules::probe`).
//!
//! The URL is `<api>/phantom/v1/heartbeats/<access key id>/<group>/<mac>?instance=<id>`: the mac is
//! HMAC-SHA256 of the group's name under the owner's secret access key, so it is known before the
//! group is made (GetHeartbeatUrl), nothing is stored for it, and rotating the key revokes it. It
//! is compared in constant time.

use crate::webhook::SEGMENT;
use percent_encoding::{percent_decode_str, utf8_percent_encode};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub const PREFIX: &str = "/phantom/v1/heartbeats/";

/// HMAC-SHA256 (RFC 2104) of `message` under `key`, in hex.
fn hmac(key: &[u8], message: &[u8]) -> String {
    const BLOCK: usize = 64;
    let mut k = [0u8; BLOCK];
    if key.len() > BLOCK {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |b: u8| k.map(|x| x ^ b);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    hex::encode(
        Sha256::new()
            .chain_update(pad(0x5c))
            .chain_update(inner)
            .finalize(),
    )
}

/// The mac of a group's heartbeat URL under its owner's secret access key.
pub fn mac(secret_access_key: &str, group: &str) -> String {
    hmac(
        secret_access_key.as_bytes(),
        format!("phantom-heartbeat\n{group}").as_bytes(),
    )
}

/// Whether `given` is the group's mac under the key, in time that does not depend on where they
/// differ.
pub fn matches(secret_access_key: &str, group: &str, given: &str) -> bool {
    mac(secret_access_key, group)
        .as_bytes()
        .ct_eq(given.as_bytes())
        .into()
}

/// The path of a group's heartbeat URL (below the API's base), without the instance.
pub fn path(access_key_id: &str, group: &str, secret_access_key: &str) -> String {
    let enc = |s: &str| utf8_percent_encode(s, SEGMENT).to_string();
    format!(
        "{PREFIX}{}/{}/{}",
        enc(access_key_id),
        enc(group),
        mac(secret_access_key, group)
    )
}

/// What a heartbeat's path names.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    pub access_key_id: String,
    pub group: String,
    pub mac: String,
    pub instance: String,
}

/// The heartbeat a path and query names; None if it is not one (`instance` is required, and
/// looks like an instance id).
pub fn target(path_and_query: &str) -> Option<Target> {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let rest = path.split(PREFIX).nth(1)?;
    let mut parts = rest.split('/');
    let dec = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .ok()
            .map(|s| s.into_owned())
    };
    let (key, group, mac) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || key.is_empty() || group.is_empty() || mac.is_empty() {
        return None;
    }
    let instance = form_urlencoded_value(query, "instance")?;
    let id_like = instance.len() <= 19
        && instance.starts_with("i-")
        && instance[2..].chars().all(|c| c.is_ascii_alphanumeric());
    id_like.then(|| Target {
        access_key_id: dec(key).unwrap_or_default(),
        group: dec(group).unwrap_or_default(),
        mac: mac.to_string(),
        instance,
    })
}

fn form_urlencoded_value(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name)
            .then(|| {
                percent_decode_str(v)
                    .decode_utf8()
                    .ok()
                    .map(|v| v.into_owned())
            })
            .flatten()
    })
}

/// Whether a VM's silence makes it Unhealthy: no heartbeat for `unhealthy` intervals, counted
/// from its last one, or from when it joined the group if it never called; a VM that never
/// called is judged only past its grace period. With what that looks like to a user.
pub fn silent(
    last_ms: Option<i64>,
    joined_ms: i64,
    graced: bool,
    interval_ms: i64,
    unhealthy: u32,
    now_ms: i64,
) -> Option<String> {
    let from = last_ms.unwrap_or(joined_ms);
    if now_ms - from < interval_ms * i64::from(unhealthy) || (last_ms.is_none() && !graced) {
        return None;
    }
    let at = |ms: i64| phantom_model::time::format_seconds(phantom_model::time::from_ms(ms));
    Some(match last_ms {
        Some(last) => format!(
            "no heartbeat since {} (one expected every {} s, {unhealthy} missed)",
            at(last),
            interval_ms / 1000
        ),
        None => format!(
            "no heartbeat since it joined the group at {} (one expected every {} s)",
            at(joined_ms),
            interval_ms / 1000
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_is_rfc_4231s() {
        // RFC 4231, test case 2.
        assert_eq!(
            hmac(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        assert_eq!(
            hmac(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            ),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_heartbeat_path_names_its_key_group_and_instance_and_only_the_key_makes_its_mac() {
        let p = path("PKIAUSER", "web api", "s3cret");
        let t = target(&format!("{p}?instance=i-0abc123")).unwrap();
        assert_eq!(t.access_key_id, "PKIAUSER");
        assert_eq!(t.group, "web api");
        assert_eq!(t.instance, "i-0abc123");
        assert!(matches("s3cret", "web api", &t.mac));
        assert!(!matches("other", "web api", &t.mac));
        assert!(!matches("s3cret", "web", &t.mac));
        assert_eq!(target(&p), None, "the instance is required");
        assert_eq!(target(&format!("{p}?instance=web")), None);
        assert_eq!(target(&format!("{p}/more?instance=i-1")), None);
    }

    #[test]
    fn a_vm_is_silent_after_its_threshold_of_intervals() {
        let min = 60_000;
        assert_eq!(silent(Some(0), 0, true, 30_000, 3, 89_000), None);
        let why = silent(Some(0), 0, true, 30_000, 3, 90_000).unwrap();
        assert!(
            why.starts_with("no heartbeat since 1970-01-01T00:00:00Z"),
            "{why}"
        );
        // Never called: judged from when it joined, once past its grace period.
        assert_eq!(silent(None, 0, false, 30_000, 3, 10 * min), None);
        assert!(silent(None, 0, true, 30_000, 3, 10 * min)
            .unwrap()
            .contains("since it joined"));
    }
}
