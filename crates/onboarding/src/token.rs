//! Verification tokens: 32 random bytes sent as 64 hex digits; only their
//! SHA-256 is stored, so the table alone opens no workspace.

use sha2::{Digest, Sha256};

/// Length of a token as sent (hex).
pub const TOKEN_LEN: usize = 64;

/// A fresh token (32 bytes from the OS RNG, hex).
pub fn generate() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(hex::encode(bytes))
}

/// What is stored for `token`: its SHA-256, hex.
pub fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Whether `token` looks like one we send (64 lower-case hex digits).
pub fn well_formed(token: &str) -> bool {
    token.len() == TOKEN_LEN
        && token
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_hex_and_stored_hashed() {
        let a = generate().unwrap();
        let b = generate().unwrap();
        assert_ne!(a, b);
        assert!(well_formed(&a));
        assert_ne!(hash(&a), a);
        assert_eq!(hash(&a).len(), 64);
        assert!(!well_formed("abc"));
        assert!(!well_formed(&a.to_uppercase()));
    }
}
