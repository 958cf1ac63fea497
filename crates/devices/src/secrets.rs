//! Push tokens at rest.
//!
//! A token is stored encrypted with the server's [`KeyRing`] (AES-256-GCM,
//! `stoa_core::crypto`), next to a keyed hash that finds a device by its
//! token and a fingerprint that the action log shows. Rows written before
//! encryption hold the plaintext: [`reencrypt_push_tokens`] (run by
//! `stoa serve` at start) and every write of a token rewrite them, and a
//! read through [`push_token`] upgrades the row it reads. The same happens
//! to rows under a key that has since been rotated out of
//! `STOA_ENCRYPTION_KEY` (but is still listed in `STOA_ENCRYPTION_KEYS`).
//!
//! A token is bound to its row ([`binding`]: the tenant, the user and the
//! client's device id, which never change for a row): copied into another
//! device's row it does not decrypt. Once the re-encryption pass has
//! rewritten every legacy row (plaintext, or unbound `enc:v1:`), it tells the
//! key ring to refuse legacy values from then on.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::crypto::{Binding, KeyRing};
use uuid::Uuid;

use crate::dto::PushToken;
use crate::error::DevicesError;
use crate::model::DeviceRow;
use crate::schema::user_devices::dsl as d;

/// What a device row stores for a push token.
#[derive(Clone)]
pub struct StoredToken {
    /// `enc:v1:<key id>:<base64>`.
    pub ciphertext: String,
    /// `<key id>:<hex HMAC-SHA256>`.
    pub hash: String,
    /// The last 8 characters (at most half of a short token).
    pub fingerprint: String,
}

impl std::fmt::Debug for StoredToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredToken")
            .field("fingerprint", &self.fingerprint)
            .finish_non_exhaustive()
    }
}

/// The fingerprint of a token: its last 8 characters, or at most half of a
/// short one, so a short token is never revealed whole.
pub fn fingerprint(token: &str) -> String {
    let chars: Vec<char> = token.chars().collect();
    let take = 8.min(chars.len() / 2);
    chars[chars.len() - take..].iter().collect()
}

/// What a push token is bound to.
pub const PURPOSE: &str = "devices.push_token";

/// The record key a device's token is bound to: its user and the client's
/// device id (known before the row exists, and fixed for the row).
pub fn record_key(user: Uuid, device_id: &str) -> String {
    format!("{user}/{device_id}")
}

/// The binding of the token of the device `(tenant, record)`.
pub fn binding(tenant: Uuid, record: &str) -> Binding<'_> {
    Binding {
        purpose: PURPOSE,
        tenant,
        record,
    }
}

/// Encrypts and hashes `token` with the current key, bound to the device of
/// `tenant` named by `record` ([`record_key`]).
pub fn seal(
    keys: &KeyRing,
    token: &PushToken,
    tenant: Uuid,
    record: &str,
) -> Result<StoredToken, DevicesError> {
    let plain = token.expose();
    let sealed = keys.seal(plain, &binding(tenant, record))?;
    Ok(StoredToken {
        ciphertext: sealed.ciphertext,
        hash: sealed.hash,
        fingerprint: fingerprint(plain),
    })
}

/// The live device of `tenant` holding `token` (matched by its keyed hash
/// under any configured key, so rows hashed before a rotation are found).
pub async fn find_by_push_token(
    conn: &mut AsyncPgConnection,
    keys: &KeyRing,
    tenant: Uuid,
    token: &PushToken,
) -> Result<Option<DeviceRow>, DevicesError> {
    Ok(d::user_devices
        .filter(d::tenant_id.eq(tenant))
        .filter(d::push_token_hash.eq_any(keys.lookup_hashes(token.expose())))
        .filter(d::deleted_at.is_null())
        .order(d::updated_at.desc())
        .select(DeviceRow::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// The decrypted push token of device `id` of `tenant` (for senders), if it
/// has one. A row still in plaintext or under an older key is rewritten
/// with the current key on the way.
pub async fn push_token(
    conn: &mut AsyncPgConnection,
    keys: &KeyRing,
    tenant: Uuid,
    id: Uuid,
) -> Result<Option<PushToken>, DevicesError> {
    let stored: Option<(Option<String>, Uuid, String)> = d::user_devices
        .filter(d::id.eq(id))
        .filter(d::tenant_id.eq(tenant))
        .select((d::push_token, d::user_id, d::device_id))
        .first(conn)
        .await
        .optional()?;
    let Some((Some(stored), user, device_id)) = stored else {
        return Ok(None);
    };
    let record = record_key(user, &device_id);
    let plain = PushToken::new(keys.decrypt(&stored, &binding(tenant, &record))?);
    if !keys.is_current(&stored) {
        rewrite(conn, keys, (id, tenant, &record), &stored, &plain).await?;
    }
    Ok(Some(plain))
}

/// Replaces `old` (as read) with the token sealed under the current key;
/// a concurrent change of the row wins (nothing is written then).
async fn rewrite(
    conn: &mut AsyncPgConnection,
    keys: &KeyRing,
    (id, tenant, record): (Uuid, Uuid, &str),
    old: &str,
    plain: &PushToken,
) -> Result<bool, DevicesError> {
    let sealed = seal(keys, plain, tenant, record)?;
    let n = diesel::update(
        d::user_devices
            .filter(d::id.eq(id))
            .filter(d::push_token.eq(old)),
    )
    .set((
        d::push_token.eq(&sealed.ciphertext),
        d::push_token_hash.eq(&sealed.hash),
        d::push_token_fingerprint.eq(&sealed.fingerprint),
    ))
    .execute(conn)
    .await?;
    Ok(n == 1)
}

/// Encrypts every push token not yet bound under the current key (plaintext
/// rows from before encryption, unbound `enc:v1:` rows, rows under a rotated
/// key), `batch` rows per statement round; returns how many rows were
/// rewritten. Once none is left, the key ring refuses legacy values
/// ([`KeyRing::refuse_legacy`]). Safe to run from several processes at once
/// (each row is compared before it is replaced).
pub async fn reencrypt_push_tokens(
    conn: &mut AsyncPgConnection,
    keys: &KeyRing,
    batch: i64,
) -> Result<usize, DevicesError> {
    let current = format!("{}{}:%", stoa_core::crypto::PREFIX, keys.current_id());
    let mut done = 0;
    let mut after = Uuid::nil();
    loop {
        let rows: Vec<(Uuid, Uuid, Uuid, String, Option<String>)> = d::user_devices
            .filter(d::id.gt(after))
            .filter(d::push_token.is_not_null())
            .filter(d::push_token.not_like(&current))
            .order(d::id.asc())
            .limit(batch.max(1))
            .select((d::id, d::tenant_id, d::user_id, d::device_id, d::push_token))
            .load(conn)
            .await?;
        let Some((last, ..)) = rows.last() else {
            // Nothing legacy is left: from now on a legacy value (say, a
            // plaintext written behind the module's back) is refused.
            keys.refuse_legacy();
            return Ok(done);
        };
        after = *last;
        for (id, tenant, user, device_id, stored) in rows {
            let Some(stored) = stored else { continue };
            let record = record_key(user, &device_id);
            let plain = PushToken::new(keys.decrypt(&stored, &binding(tenant, &record))?);
            if rewrite(conn, keys, (id, tenant, &record), &stored, &plain).await? {
                done += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_show_at_most_half_of_a_short_token() {
        assert_eq!(fingerprint("abcdefghijklmnop12345678"), "12345678");
        assert_eq!(fingerprint("abcdef"), "def");
        assert_eq!(fingerprint("a"), "");
        assert_eq!(fingerprint("żółw-żółw"), "żółw");
    }

    #[test]
    fn sealed_tokens_never_hold_the_plaintext() {
        let keys = KeyRing::new(&[5; 32], &[]);
        let token = PushToken::new("fcm-token-0123456789");
        let sealed = seal(&keys, &token, Uuid::nil(), "user/phone").ok();
        let sealed = sealed.as_ref();
        assert!(sealed.is_some_and(|s| !s.ciphertext.contains("0123456789")));
        assert!(sealed.is_some_and(|s| s.hash.starts_with(keys.current_id())));
        assert!(!format!("{sealed:?}").contains("enc:v2"));
    }
}
