//! Users and their access keys: who a verified request acts for, and how keys are minted.

pub use phantom_model::user::{AccessKey, Caller, User};

/// A new user with fresh ids, and the secret of its access key (shown once, then only kept).
pub fn new_user(name: &str, admin: bool, created: String) -> Result<(User, String), String> {
    if !valid_user_name(name) {
        return Err(format!(
            "User name '{name}' must be 1 to 64 letters, digits, '-', '_' or '.'."
        ));
    }
    let user = User {
        name: name.to_string(),
        account_id: new_account_id(),
        access_key_id: new_access_key_id(),
        created,
        admin,
        disabled: false,
        limits: None,
        scrape_sha256: None,
        second_key: None,
    };
    Ok((user, new_secret()))
}

pub(crate) fn random_from(alphabet: &[u8], n: usize) -> String {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    // 256 is a multiple of neither alphabet's length, so reject the biased tail.
    let limit = 256 - (256 % alphabet.len());
    let mut out = String::with_capacity(n);
    let mut buf = bytes.into_iter();
    while out.len() < n {
        let b = match buf.next() {
            Some(b) => b,
            None => {
                let mut one = [0u8; 1];
                getrandom::fill(&mut one).expect("the OS random source works");
                one[0]
            }
        };
        if (b as usize) < limit {
            out.push(alphabet[b as usize % alphabet.len()] as char);
        }
    }
    out
}

/// `PKIA` + 16 characters, the shape of an AWS access key id (Phantom's own prefix).
pub fn new_access_key_id() -> String {
    format!(
        "PKIA{}",
        random_from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    )
}

/// 40 characters, as AWS secret keys are.
pub fn new_secret() -> String {
    random_from(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        40,
    )
}

/// A 12-digit account number for a user's ARNs.
pub fn new_account_id() -> String {
    let digits = random_from(b"0123456789", 12);
    // Never a leading zero: some clients treat account ids as numbers.
    format!(
        "{}{}",
        ((digits.as_bytes()[0] - b'0') % 9) + 1,
        &digits[1..]
    )
}

/// User names become key prefixes and appear in ARNs and tags: keep them plain.
pub fn valid_user_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_aws_shapes() {
        let k = new_access_key_id();
        assert_eq!(k.len(), 20);
        assert!(k.starts_with("PKIA"));
        assert_eq!(new_secret().len(), 40);
        assert_ne!(new_secret(), new_secret());
        let a = new_account_id();
        assert_eq!(a.len(), 12);
        assert!(a.bytes().all(|b| b.is_ascii_digit()) && !a.starts_with('0'));
        assert!(valid_user_name("alice-1"));
        assert!(!valid_user_name("a#b"));
        assert!(!valid_user_name(""));
    }
}
