//! Key secrets: `omk_` + 8 lowercase hex + `.` + 48 lowercase hex, as the
//! reference makes them. The first 12 characters (`omk_` + 8 hex) are the
//! public `keyPrefix`; only the prefix and the SHA-256 of the whole secret are
//! stored.
//!
//! A fast hash is right here, unlike for passwords: the part after the dot is
//! 24 bytes (192 bits) from the OS random generator, so guessing it is hopeless
//! however many hashes per second an attacker computes. A slow hash would only
//! make every API request slower.

use sha2::{Digest, Sha256};
use stoa_acl::API_KEY_PREFIX;
use subtle::ConstantTimeEq;

/// Length of a secret: `omk_` (4) + 8 hex + `.` + 48 hex.
pub const SECRET_LEN: usize = 61;
/// Length of the public prefix: `omk_` + 8 hex.
pub const PREFIX_LEN: usize = 12;

/// A freshly generated secret and what is stored of it.
#[derive(Clone, PartialEq, Eq)]
pub struct NewSecret {
    pub secret: String,
    pub prefix: String,
    pub hash: String,
}

impl std::fmt::Debug for NewSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewSecret")
            .field("prefix", &self.prefix)
            .field("secret", &"[redacted]")
            .finish()
    }
}

/// Generates a secret from the OS random generator (4 bytes for the prefix,
/// 24 for the rest).
pub fn generate() -> Result<NewSecret, getrandom::Error> {
    let mut prefix_bytes = [0u8; 4];
    let mut body = [0u8; 24];
    getrandom::fill(&mut prefix_bytes)?;
    getrandom::fill(&mut body)?;
    let secret = format!(
        "{API_KEY_PREFIX}{}.{}",
        hex::encode(prefix_bytes),
        hex::encode(body)
    );
    Ok(NewSecret {
        prefix: secret[..PREFIX_LEN].to_string(),
        hash: hash(&secret),
        secret,
    })
}

/// The stored hash of a secret: SHA-256, lowercase hex.
pub fn hash(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// The prefix of a well-formed secret, `None` for anything else (which is
/// refused without asking the database).
pub fn prefix_of(secret: &str) -> Option<&str> {
    let bytes = secret.as_bytes();
    let lower_hex = |b: &u8| matches!(b, b'0'..=b'9' | b'a'..=b'f');
    let well_formed = bytes.len() == SECRET_LEN
        && secret.starts_with(API_KEY_PREFIX)
        && bytes[4..PREFIX_LEN].iter().all(lower_hex)
        && bytes[PREFIX_LEN] == b'.'
        && bytes[PREFIX_LEN + 1..].iter().all(lower_hex);
    well_formed.then(|| &secret[..PREFIX_LEN])
}

/// Whether `secret` hashes to `stored`, compared in constant time.
pub fn matches(secret: &str, stored: &str) -> bool {
    hash(secret).as_bytes().ct_eq(stored.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_secrets_have_the_reference_format() {
        let a = generate().unwrap_or_else(|e| panic!("{e}"));
        let b = generate().unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(a.secret, b.secret);
        assert_eq!(a.secret.len(), SECRET_LEN);
        assert_eq!(prefix_of(&a.secret), Some(a.prefix.as_str()));
        assert!(a.prefix.starts_with("omk_") && a.prefix.len() == PREFIX_LEN);
        assert_eq!(a.hash.len(), 64);
        assert!(matches(&a.secret, &a.hash));
        assert!(!matches(&b.secret, &a.hash));
        assert!(!format!("{a:?}").contains(&a.secret));
    }

    #[test]
    fn malformed_secrets_have_no_prefix() {
        let good = format!("omk_0123abcd.{}", "a".repeat(48));
        assert!(prefix_of(&good).is_some());
        for bad in [
            String::new(),
            "omk_".into(),
            format!("omk_0123ABCD.{}", "a".repeat(48)),
            format!("omk_0123abcd.{}", "a".repeat(47)),
            format!("omk_0123abcd.{}", "a".repeat(49)),
            format!("omk_0123abcd-{}", "a".repeat(48)),
            format!("omk_0123abcg.{}", "a".repeat(48)),
            format!("xmk_0123abcd.{}", "a".repeat(48)),
            format!("omk_0123abcd.{}é", "a".repeat(46)),
        ] {
            assert!(prefix_of(&bad).is_none(), "{bad}");
        }
    }
}
