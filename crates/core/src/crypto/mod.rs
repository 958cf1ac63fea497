//! Secrets at rest: AES-256-GCM encryption with rotating keys, and keyed
//! hashes for looking encrypted values up.
//!
//! - **Keys.** `STOA_ENCRYPTION_KEY` is the current key: 32 random bytes,
//!   written as base64 (standard or URL-safe, padding optional) or as 64 hex
//!   digits (`openssl rand -base64 32`). `STOA_ENCRYPTION_KEYS` lists earlier
//!   keys (comma-separated, same format) that still decrypt old values; new
//!   writes always use the current key. A key's id is derived from the key
//!   itself (the first 8 hex digits of a SHA-256), so nobody assigns ids.
//! - **Ciphertext.** `enc:v2:<key id>:<base64(nonce ‖ ciphertext ‖ tag)>`,
//!   with a fresh 96-bit nonce per value. The key id picks the key that
//!   decrypts it. The value is bound to where it is stored ([`Binding`]:
//!   purpose, tenant, record) as AES-GCM associated data: copied into another
//!   tenant's or record's row it no longer decrypts ([`CryptoError::Tampered`]).
//! - **Legacy values.** `enc:v1:` (unbound, from before binding) and values
//!   without a prefix (plaintext rows from before encryption) still decrypt
//!   until the module's re-encryption pass has rewritten them all; the pass
//!   then calls [`KeyRing::refuse_legacy`], and from then on a legacy value is
//!   refused ([`CryptoError::Legacy`]): a plaintext written into the column
//!   behind the module's back is never served as a secret.
//! - **Lookups.** GCM is randomised, so equal values never have equal
//!   ciphertexts. [`KeyRing::lookup_hash`] is an HMAC-SHA256 under a key
//!   derived from the current encryption key (`<key id>:<hex>`); to find a
//!   row whose hash may still be under an older key, match any of
//!   [`KeyRing::lookup_hashes`].
//!
//! Production requires a key wherever a module stores secrets; in development
//! (`STOA_ENV=development`) one is generated when none is set, as for
//! `STOA_JWT_SECRET` (`cargo xtask dev` keeps a generated key in `.stoa/`).

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::config::{ConfigError, Env};

/// The prefix of every ciphertext this module writes (bound values).
pub const PREFIX: &str = "enc:v2:";
/// The prefix of unbound ciphertexts written before [`Binding`] existed.
pub const LEGACY_PREFIX: &str = "enc:v1:";

/// Where an encrypted value lives, authenticated with it (AES-GCM associated
/// data): a module's purpose (`devices.push_token`), the tenant and the
/// record (an id, or a natural key that does not change). A ciphertext moved
/// to another tenant or record fails to decrypt.
#[derive(Clone, Copy, Debug)]
pub struct Binding<'a> {
    pub purpose: &'static str,
    pub tenant: uuid::Uuid,
    pub record: &'a str,
}

impl Binding<'_> {
    fn aad(&self) -> Vec<u8> {
        format!("stoa\0{}\0{}\0{}", self.purpose, self.tenant, self.record).into_bytes()
    }
}
/// The variable holding the current key.
pub const KEY_VAR: &str = "STOA_ENCRYPTION_KEY";
/// The variable holding earlier keys, for decryption only.
pub const OLD_KEYS_VAR: &str = "STOA_ENCRYPTION_KEYS";

/// Why a value could not be encrypted or decrypted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CryptoError {
    #[error("the value was encrypted with key {0}, which is not configured")]
    UnknownKey(String),
    #[error("the encrypted value is malformed")]
    Malformed,
    #[error("the encrypted value does not decrypt (wrong key or tampered)")]
    Tampered,
    #[error("no random numbers available")]
    Random,
    #[error("a legacy (plaintext or unbound) value is no longer accepted")]
    Legacy,
}

struct DataKey {
    id: String,
    cipher: Aes256Gcm,
    /// HMAC key for lookup hashes, derived from the encryption key.
    mac: [u8; 32],
}

impl DataKey {
    fn new(bytes: &[u8; 32]) -> Self {
        let digest = Sha256::new()
            .chain_update(b"stoa key id\0")
            .chain_update(bytes)
            .finalize();
        let id = hex::encode(&digest[..4]);
        let mac = match <Hmac<Sha256> as Mac>::new_from_slice(bytes) {
            Ok(m) => m
                .chain_update(b"stoa lookup hash v1")
                .finalize()
                .into_bytes()
                .into(),
            // HMAC takes keys of any length; keep a defined value anyway.
            Err(_) => Sha256::digest(bytes).into(),
        };
        Self {
            id,
            cipher: Aes256Gcm::new(bytes.into()),
            mac,
        }
    }

    fn hash(&self, value: &str) -> String {
        let tag = match <Hmac<Sha256> as Mac>::new_from_slice(&self.mac) {
            Ok(m) => hex::encode(m.chain_update(value.as_bytes()).finalize().into_bytes()),
            Err(_) => hex::encode(
                Sha256::new()
                    .chain_update(self.mac)
                    .chain_update(value)
                    .finalize(),
            ),
        };
        format!("{}:{tag}", self.id)
    }
}

/// The current key and the earlier ones still accepted for decryption.
pub struct KeyRing {
    current: DataKey,
    previous: Vec<DataKey>,
    /// Whether legacy values (plaintext, `enc:v1:`) still decrypt: until the
    /// re-encryption pass has run ([`KeyRing::refuse_legacy`]).
    legacy: AtomicBool,
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRing")
            .field("current", &self.current.id)
            .field(
                "previous",
                &self.previous.iter().map(|k| &k.id).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// An encrypted value and its lookup hash, ready to store.
#[derive(Clone, PartialEq, Eq)]
pub struct Sealed {
    pub ciphertext: String,
    pub hash: String,
}

impl fmt::Debug for Sealed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealed")
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

/// Parses a key: base64 (any common alphabet, padding optional) or 64 hex
/// digits, decoding to exactly 32 bytes.
pub fn parse_key(raw: &str) -> Result<[u8; 32], String> {
    let raw = raw.trim();
    let decoded = if raw.len() == 64 && raw.chars().all(|c| c.is_ascii_hexdigit()) {
        hex::decode(raw).ok()
    } else {
        [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
            .iter()
            .find_map(|engine| engine.decode(raw).ok())
    };
    let bytes = decoded.ok_or("must be base64 or hex")?;
    <[u8; 32]>::try_from(bytes.as_slice())
        .map_err(|_| format!("must decode to 32 bytes, not {}", bytes.len()))
}

/// 32 random bytes as base64: a new key (`cargo xtask dev`, development).
pub fn generate_key() -> Result<String, CryptoError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|_| CryptoError::Random)?;
    Ok(STANDARD.encode(bytes))
}

impl KeyRing {
    /// A ring from raw keys: `current` encrypts, every key decrypts.
    pub fn new(current: &[u8; 32], previous: &[[u8; 32]]) -> Self {
        Self {
            current: DataKey::new(current),
            previous: previous.iter().map(DataKey::new).collect(),
            legacy: AtomicBool::new(true),
        }
    }

    /// Reads [`KEY_VAR`] and [`OLD_KEYS_VAR`]. Without a current key,
    /// development (`STOA_ENV=development`) generates one (the `bool` says so)
    /// and anything else is a configuration error naming the variable.
    pub fn from_vars(vars: &HashMap<String, String>) -> Result<(Self, bool), ConfigError> {
        let env = Env(vars);
        let development = env.get("STOA_ENV").is_some_and(|v| {
            v.eq_ignore_ascii_case("development") || v.eq_ignore_ascii_case("dev")
        });
        let bad = |var: &'static str| move |message: String| ConfigError { var, message };
        let mut previous = Vec::new();
        if let Some(list) = env.get(OLD_KEYS_VAR) {
            for raw in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                previous.push(parse_key(raw).map_err(bad(OLD_KEYS_VAR))?);
            }
        }
        let (current, generated) = match env.get(KEY_VAR) {
            Some(raw) => (parse_key(raw).map_err(bad(KEY_VAR))?, false),
            None if development => {
                let raw = generate_key().map_err(|e| bad(KEY_VAR)(e.to_string()))?;
                (parse_key(&raw).map_err(bad(KEY_VAR))?, true)
            }
            None => {
                return Err(ConfigError {
                    var: KEY_VAR,
                    message: "is required: 32 random bytes as base64 or hex, e.g. \
                              `openssl rand -base64 32` (STOA_ENV=development generates one)"
                        .into(),
                });
            }
        };
        Ok((Self::new(&current, &previous), generated))
    }

    /// [`Self::from_vars`] over the process environment.
    pub fn from_env() -> Result<(Self, bool), ConfigError> {
        Self::from_vars(&std::env::vars().collect())
    }

    /// The id of the key new values are encrypted with.
    pub fn current_id(&self) -> &str {
        &self.current.id
    }

    fn key(&self, id: &str) -> Option<&DataKey> {
        std::iter::once(&self.current)
            .chain(&self.previous)
            .find(|k| k.id == id)
    }

    /// From now on, legacy values (plaintext, `enc:v1:`) are refused: call
    /// it once the module's re-encryption pass has rewritten every one.
    pub fn refuse_legacy(&self) {
        self.legacy.store(false, Ordering::Relaxed);
    }

    /// Whether legacy values still decrypt.
    pub fn accepts_legacy(&self) -> bool {
        self.legacy.load(Ordering::Relaxed)
    }

    fn seal_raw(&self, plaintext: &str, aad: &[u8]) -> Result<String, CryptoError> {
        let mut nonce = [0u8; 12];
        getrandom::fill(&mut nonce).map_err(|_| CryptoError::Random)?;
        let payload = Payload {
            msg: plaintext.as_bytes(),
            aad,
        };
        let sealed = self
            .current
            .cipher
            .encrypt(&Nonce::from(nonce), payload)
            .map_err(|_| CryptoError::Malformed)?;
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        Ok(format!(
            "{}:{}",
            self.current.id,
            STANDARD_NO_PAD.encode(bytes)
        ))
    }

    fn open_raw(&self, rest: &str, aad: &[u8]) -> Result<String, CryptoError> {
        let (id, data) = rest.split_once(':').ok_or(CryptoError::Malformed)?;
        let key = self
            .key(id)
            .ok_or_else(|| CryptoError::UnknownKey(id.to_string()))?;
        let bytes = STANDARD_NO_PAD
            .decode(data)
            .map_err(|_| CryptoError::Malformed)?;
        if bytes.len() < 12 + 16 {
            return Err(CryptoError::Malformed);
        }
        let (nonce, sealed) = bytes.split_at(12);
        let nonce: [u8; 12] = nonce.try_into().map_err(|_| CryptoError::Malformed)?;
        let payload = Payload { msg: sealed, aad };
        let plain = key
            .cipher
            .decrypt(&Nonce::from(nonce), payload)
            .map_err(|_| CryptoError::Tampered)?;
        String::from_utf8(plain).map_err(|_| CryptoError::Malformed)
    }

    /// Encrypts `plaintext` with the current key, bound to `binding`.
    pub fn encrypt(&self, plaintext: &str, binding: &Binding<'_>) -> Result<String, CryptoError> {
        Ok(format!(
            "{PREFIX}{}",
            self.seal_raw(plaintext, &binding.aad())?
        ))
    }

    /// Decrypts a value stored under `binding`. Legacy values (an unbound
    /// `enc:v1:` ciphertext, a plaintext) come back while
    /// [`Self::accepts_legacy`], and are [`CryptoError::Legacy`] after.
    pub fn decrypt(&self, stored: &str, binding: &Binding<'_>) -> Result<String, CryptoError> {
        if let Some(rest) = stored.strip_prefix(PREFIX) {
            return self.open_raw(rest, &binding.aad());
        }
        if !self.accepts_legacy() {
            return Err(CryptoError::Legacy);
        }
        match stored.strip_prefix(LEGACY_PREFIX) {
            Some(rest) => self.open_raw(rest, &[]),
            None => Ok(stored.to_string()),
        }
    }

    /// An unbound `enc:v1:` ciphertext, as written before binding: only for
    /// tests and tools that plant legacy rows.
    #[doc(hidden)]
    pub fn encrypt_legacy(&self, plaintext: &str) -> Result<String, CryptoError> {
        Ok(format!("{LEGACY_PREFIX}{}", self.seal_raw(plaintext, &[])?))
    }

    /// Whether `stored` is a bound value under the current key (else it is a
    /// legacy value or under an older key, and should be rewritten).
    pub fn is_current(&self, stored: &str) -> bool {
        stored
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split_once(':'))
            .is_some_and(|(id, _)| id == self.current.id)
    }

    /// The lookup hash of `value` under the current key.
    pub fn lookup_hash(&self, value: &str) -> String {
        self.current.hash(value)
    }

    /// The lookup hashes of `value` under every configured key (current
    /// first): rows written before a rotation match one of the older ones.
    pub fn lookup_hashes(&self, value: &str) -> Vec<String> {
        std::iter::once(&self.current)
            .chain(&self.previous)
            .map(|k| k.hash(value))
            .collect()
    }

    /// Encrypts `plaintext` (bound to `binding`) and hashes it for lookups,
    /// with the current key.
    pub fn seal(&self, plaintext: &str, binding: &Binding<'_>) -> Result<Sealed, CryptoError> {
        Ok(Sealed {
            ciphertext: self.encrypt(plaintext, binding)?,
            hash: self.lookup_hash(plaintext),
        })
    }
}

#[cfg(test)]
mod tests;
