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

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::crypto::KeyRing;
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

/// Encrypts and hashes `token` with the current key.
pub fn seal(keys: &KeyRing, token: &PushToken) -> Result<StoredToken, DevicesError> {
    let plain = token.expose();
    let sealed = keys.seal(plain)?;
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
    let stored: Option<Option<String>> = d::user_devices
        .filter(d::id.eq(id))
        .filter(d::tenant_id.eq(tenant))
        .select(d::push_token)
        .first(conn)
        .await
        .optional()?;
    let Some(Some(stored)) = stored else {
        return Ok(None);
    };
    let plain = PushToken::new(keys.decrypt(&stored)?);
    if !keys.is_current(&stored) {
        rewrite(conn, keys, id, &stored, &plain).await?;
    }
    Ok(Some(plain))
}

/// Replaces `old` (as read) with the token sealed under the current key;
/// a concurrent change of the row wins (nothing is written then).
async fn rewrite(
    conn: &mut AsyncPgConnection,
    keys: &KeyRing,
    id: Uuid,
    old: &str,
    plain: &PushToken,
) -> Result<bool, DevicesError> {
    let sealed = seal(keys, plain)?;
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

/// Encrypts every push token not yet under the current key (plaintext rows
/// from before encryption, rows under a rotated key), `batch` rows per
/// statement round; returns how many rows were rewritten. Safe to run from
/// several processes at once (each row is compared before it is replaced).
pub async fn reencrypt_push_tokens(
    conn: &mut AsyncPgConnection,
    keys: &KeyRing,
    batch: i64,
) -> Result<usize, DevicesError> {
    let current = format!("{}:%", keys.current_id());
    let mut done = 0;
    let mut after = Uuid::nil();
    loop {
        let rows: Vec<(Uuid, Option<String>)> = d::user_devices
            .filter(d::id.gt(after))
            .filter(d::push_token.is_not_null())
            .filter(
                d::push_token_hash
                    .is_null()
                    .or(d::push_token_hash.not_like(&current)),
            )
            .order(d::id.asc())
            .limit(batch.max(1))
            .select((d::id, d::push_token))
            .load(conn)
            .await?;
        let Some((last, _)) = rows.last() else {
            return Ok(done);
        };
        after = *last;
        for (id, stored) in rows {
            let Some(stored) = stored else { continue };
            let plain = PushToken::new(keys.decrypt(&stored)?);
            if rewrite(conn, keys, id, &stored, &plain).await? {
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
        let sealed = seal(&keys, &token).ok();
        let sealed = sealed.as_ref();
        assert!(sealed.is_some_and(|s| !s.ciphertext.contains("0123456789")));
        assert!(sealed.is_some_and(|s| s.hash.starts_with(keys.current_id())));
        assert!(!format!("{sealed:?}").contains("enc:v1"));
    }
}
