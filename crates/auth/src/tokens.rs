//! Access tokens (JWT HS256 with the reference's claims), random opaque tokens
//! and their stored hashes.

use hmac::{Hmac, Mac};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Issuer and audience of staff tokens, as the reference sets them (clients check them).
pub const ISSUER: &str = "open-mercato";
pub const AUDIENCE: &str = "staff";

/// The claims of an access token.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Claims {
    pub sub: Uuid,
    pub sid: Uuid,
    #[serde(rename = "tenantId")]
    pub tenant_id: Option<Uuid>,
    #[serde(rename = "orgId")]
    pub org_id: Option<Uuid>,
    pub email: String,
    pub roles: Vec<String>,
    pub iat: i64,
    pub exp: i64,
    pub iss: String,
    pub aud: String,
}

/// Signs and verifies access tokens. The signing key is derived from the
/// configured secret as the reference derives it (HMAC-SHA256 of a fixed
/// label), so both systems accept each other's tokens given the same secret.
#[derive(Clone)]
pub struct TokenKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

impl TokenKeys {
    pub fn new(secret: &str) -> Self {
        let key = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
            Ok(mut mac) => {
                mac.update(b"open-mercato:jwt:v1:staff");
                hex::encode(mac.finalize().into_bytes())
            }
            // HMAC accepts keys of any length; this arm is unreachable in practice.
            Err(_) => secret.to_string(),
        };
        // The algorithm is pinned: `alg:none` and every other algorithm are refused.
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[ISSUER]);
        validation.set_audience(&[AUDIENCE]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = 0;
        Self {
            encoding: EncodingKey::from_secret(key.as_bytes()),
            decoding: DecodingKey::from_secret(key.as_bytes()),
            validation,
        }
    }

    pub fn sign(&self, claims: &Claims) -> Result<String, jsonwebtoken::errors::Error> {
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.encoding)
    }

    /// The claims of a valid, unexpired token signed with our key.
    pub fn verify(&self, token: &str) -> Option<Claims> {
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .ok()
            .map(|data| data.claims)
    }
}

/// 32 random bytes, hex-encoded (64 characters).
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        // The OS RNG failing is not recoverable in a sane way; fall back to
        // two v4 uuids (also from the OS RNG, through another path).
        let a = Uuid::new_v4();
        let b = Uuid::new_v4();
        bytes[..16].copy_from_slice(a.as_bytes());
        bytes[16..].copy_from_slice(b.as_bytes());
    }
    hex::encode(bytes)
}

/// What is stored for an opaque token: its SHA-256, hex-encoded.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: i64) -> Claims {
        Claims {
            sub: Uuid::new_v4(),
            sid: Uuid::new_v4(),
            tenant_id: None,
            org_id: None,
            email: "a@b.c".into(),
            roles: vec![],
            iat: 0,
            exp,
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
        }
    }

    #[test]
    fn sign_verify_and_refuse() {
        let keys = TokenKeys::new("secret-secret-secret");
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let good = keys.sign(&claims(now + 60)).unwrap_or_default();
        assert!(keys.verify(&good).is_some());
        let expired = keys.sign(&claims(now - 1)).unwrap_or_default();
        assert!(keys.verify(&expired).is_none());
        let other = TokenKeys::new("another-secret-value");
        assert!(other.verify(&good).is_none());
        assert!(keys.verify("garbage").is_none());
        assert_eq!(random_token().len(), 64);
        assert_ne!(random_token(), random_token());
        assert_eq!(token_hash("x").len(), 64);
    }
}
