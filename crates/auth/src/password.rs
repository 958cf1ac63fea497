//! Password hashing (argon2id, off the async executor) and the password policy.

use std::sync::LazyLock;

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};
use stoa_core::AppError;
use stoa_core::config::{ConfigError, Env};

/// OWASP's minimum for argon2id: 19 MiB, 2 iterations, 1 lane.
fn argon2() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// A hash to verify against when the account does not exist, so an unknown
/// e-mail costs the same time as a wrong password.
static DUMMY_HASH: LazyLock<Option<String>> =
    LazyLock::new(|| hash_blocking("not-a-real-password-0").ok());

fn hash_blocking(password: &str) -> Result<String, String> {
    argon2()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

fn verify_blocking(password: &str, hash: &str) -> bool {
    match PasswordHash::new(hash) {
        Ok(parsed) => argon2()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// Hashes a password on the blocking pool.
pub async fn hash_password(password: String) -> Result<String, AppError> {
    tokio::task::spawn_blocking(move || hash_blocking(&password))
        .await
        .map_err(AppError::internal)?
        .map_err(AppError::internal)
}

/// Verifies `password` against `hash`; with no hash, burns one verification
/// against a dummy and answers false.
pub async fn verify_password(password: String, hash: Option<String>) -> Result<bool, AppError> {
    tokio::task::spawn_blocking(move || match hash {
        Some(hash) => verify_blocking(&password, &hash),
        None => {
            if let Some(dummy) = DUMMY_HASH.as_deref() {
                let _ = verify_blocking(&password, dummy);
            }
            false
        }
    })
    .await
    .map_err(AppError::internal)
}

/// The password rules (`OM_PASSWORD_*`), as the reference has them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswordPolicy {
    pub min_length: usize,
    pub require_digit: bool,
    pub require_uppercase: bool,
    pub require_special: bool,
}

impl Default for PasswordPolicy {
    fn default() -> Self {
        Self {
            min_length: 6,
            require_digit: true,
            require_uppercase: true,
            require_special: true,
        }
    }
}

/// Longest accepted password (argon2 is fine with more, but nobody needs it).
pub const MAX_PASSWORD_LEN: usize = 256;

impl PasswordPolicy {
    pub fn from_env(env: &Env<'_>) -> Result<Self, ConfigError> {
        let d = Self::default();
        Ok(Self {
            min_length: env.parse_or("OM_PASSWORD_MIN_LENGTH", d.min_length)?,
            require_digit: env.flag("OM_PASSWORD_REQUIRE_DIGIT", d.require_digit)?,
            require_uppercase: env.flag("OM_PASSWORD_REQUIRE_UPPERCASE", d.require_uppercase)?,
            require_special: env.flag("OM_PASSWORD_REQUIRE_SPECIAL", d.require_special)?,
        })
    }

    /// The rules `password` breaks (empty = acceptable).
    pub fn violations(&self, password: &str) -> Vec<String> {
        let mut out = Vec::new();
        let len = password.chars().count();
        if len < self.min_length {
            out.push(format!("at least {} characters", self.min_length));
        }
        if len > MAX_PASSWORD_LEN {
            out.push(format!("at most {MAX_PASSWORD_LEN} characters"));
        }
        if self.require_digit && !password.chars().any(|c| c.is_ascii_digit()) {
            out.push("a digit".into());
        }
        if self.require_uppercase && !password.chars().any(|c| c.is_uppercase()) {
            out.push("an uppercase letter".into());
        }
        if self.require_special && !password.chars().any(|c| !c.is_alphanumeric()) {
            out.push("a special character".into());
        }
        out
    }

    /// `Err` with a message naming what is missing.
    pub fn check(&self, password: &str) -> Result<(), String> {
        let v = self.violations(password);
        if v.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "Password does not meet the requirements: needs {}.",
                v.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy() {
        let p = PasswordPolicy::default();
        assert!(p.check("Secret1!").is_ok());
        assert_eq!(p.violations("secret").len(), 3);
        assert!(p.check("S1!").is_err());
        let lax = PasswordPolicy {
            min_length: 3,
            require_digit: false,
            require_uppercase: false,
            require_special: false,
        };
        assert!(lax.check("abc").is_ok());
    }

    #[test]
    fn hashes_verify() {
        let hash = hash_blocking("Secret1!").unwrap_or_default();
        assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(verify_blocking("Secret1!", &hash));
        assert!(!verify_blocking("secret1!", &hash));
        assert!(!verify_blocking("x", "not a hash"));
    }
}
