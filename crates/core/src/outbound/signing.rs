//! Webhook signatures, in the Standard Webhooks scheme
//! (<https://www.standardwebhooks.com>), so receivers can verify with an
//! existing library.
//!
//! Every signed request carries three headers:
//!
//! | header | value |
//! |---|---|
//! | `webhook-id` | the delivery's id (the same on every retry: the receiver's idempotency key) |
//! | `webhook-timestamp` | seconds since the Unix epoch when it was sent |
//! | `webhook-signature` | `v1,<base64 of HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`; during a secret rotation several, space-separated |
//!
//! The key is the secret's bytes: a secret written `whsec_<base64>` (what
//! [`WebhookSigner::generate_secret`] makes) is base64-decoded first, any
//! other string is used as it is. The signed content is the raw body bytes
//! exactly as sent.
//!
//! To verify, a receiver recomputes the HMAC over `id.timestamp.body` with
//! the shared secret, compares it in constant time with each `v1,` entry of
//! `webhook-signature`, and refuses a timestamp more than five minutes away
//! from its clock (a replayed old delivery). [`WebhookSigner::verify`] does
//! exactly that.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The delivery id header.
pub const WEBHOOK_ID: &str = "webhook-id";
/// The send time header (Unix seconds).
pub const WEBHOOK_TIMESTAMP: &str = "webhook-timestamp";
/// The signature header (`v1,<base64>`).
pub const WEBHOOK_SIGNATURE: &str = "webhook-signature";
/// How far a timestamp may be from the receiver's clock.
pub const DEFAULT_TOLERANCE_SECS: i64 = 5 * 60;

const SECRET_PREFIX: &str = "whsec_";

/// Signs (and verifies) webhook bodies with one shared secret.
#[derive(Clone)]
pub struct WebhookSigner {
    key: Vec<u8>,
}

impl fmt::Debug for WebhookSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSigner([redacted])")
    }
}

/// Why a signature did not verify.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the timestamp is not a number")]
    BadTimestamp,
    #[error("the timestamp is too far from now")]
    Expired,
    #[error("no signature matches")]
    Mismatch,
}

impl WebhookSigner {
    /// A signer for `secret` (`whsec_<base64>` is decoded; anything else is
    /// used as raw bytes).
    pub fn new(secret: &str) -> Self {
        let key = secret
            .strip_prefix(SECRET_PREFIX)
            .and_then(|b64| STANDARD.decode(b64).ok())
            .unwrap_or_else(|| secret.as_bytes().to_vec());
        Self { key }
    }

    /// A new random secret (`whsec_` + 32 random bytes in base64), to show
    /// the webhook's owner once and store encrypted.
    pub fn generate_secret() -> Result<String, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        Ok(format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes)))
    }

    fn mac(&self, id: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
        // HMAC accepts keys of any length: `new_from_slice` cannot fail.
        let mut mac = match Hmac::<Sha256>::new_from_slice(&self.key) {
            Ok(mac) => mac,
            Err(_) => unreachable_key(),
        };
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        mac
    }

    /// `v1,<base64 signature>` of `body` sent as delivery `id` at `timestamp`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let tag = self.mac(id, timestamp, body).finalize().into_bytes();
        format!("v1,{}", STANDARD.encode(tag))
    }

    /// The three headers of a signed delivery.
    pub fn headers(&self, id: &str, timestamp: i64, body: &[u8]) -> [(&'static str, String); 3] {
        [
            (WEBHOOK_ID, id.to_string()),
            (WEBHOOK_TIMESTAMP, timestamp.to_string()),
            (WEBHOOK_SIGNATURE, self.sign(id, timestamp, body)),
        ]
    }

    /// Verifies a delivery as a receiver does: the header values as received,
    /// the raw body, the receiver's clock (`now`, Unix seconds) and the
    /// tolerance ([`DEFAULT_TOLERANCE_SECS`]).
    pub fn verify(
        &self,
        id: &str,
        timestamp: &str,
        signatures: &str,
        body: &[u8],
        now: i64,
        tolerance_secs: i64,
    ) -> Result<(), SignatureError> {
        let ts: i64 = timestamp
            .trim()
            .parse()
            .map_err(|_| SignatureError::BadTimestamp)?;
        if (now - ts).abs() > tolerance_secs {
            return Err(SignatureError::Expired);
        }
        let matches = signatures
            .split_whitespace()
            .filter_map(|entry| entry.strip_prefix("v1,"))
            .filter_map(|b64| STANDARD.decode(b64).ok())
            .any(|tag| self.mac(id, ts, body).verify_slice(&tag).is_ok());
        if matches {
            Ok(())
        } else {
            Err(SignatureError::Mismatch)
        }
    }
}

#[cold]
fn unreachable_key() -> ! {
    // HMAC-SHA256 takes keys of any length (longer ones are hashed).
    panic!("HMAC-SHA256 refused a key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_like_the_standard_webhooks_reference() {
        // The test vector of the Standard Webhooks specification.
        let signer = WebhookSigner::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            signer.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn verification_checks_signature_body_and_time() {
        let signer = WebhookSigner::new(&WebhookSigner::generate_secret().unwrap());
        let [_, _, (_, sig)] = signer.headers("evt_1", 1_000, b"{}");
        let ok = signer.verify("evt_1", "1000", &sig, b"{}", 1_100, DEFAULT_TOLERANCE_SECS);
        assert_eq!(ok, Ok(()));
        // Among several (a rotation), one match is enough.
        let several = format!("v1,AAAA {sig}");
        assert_eq!(
            signer.verify("evt_1", "1000", &several, b"{}", 1_000, 300),
            Ok(())
        );
        let check = |id: &str, ts: &str, body: &[u8], now: i64| {
            signer.verify(id, ts, &sig, body, now, DEFAULT_TOLERANCE_SECS)
        };
        assert_eq!(
            check("evt_1", "1000", b"{ }", 1_000),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            check("evt_2", "1000", b"{}", 1_000),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            check("evt_1", "1001", b"{}", 1_000),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            check("evt_1", "1000", b"{}", 1_301),
            Err(SignatureError::Expired)
        );
        assert_eq!(
            check("evt_1", "soon", b"{}", 1_000),
            Err(SignatureError::BadTimestamp)
        );
        let other = WebhookSigner::new("another secret");
        assert_eq!(
            other.verify("evt_1", "1000", &sig, b"{}", 1_000, 300),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(format!("{signer:?}"), "WebhookSigner([redacted])");
    }
}
