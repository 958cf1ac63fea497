//! User consents (terms, privacy, marketing, …): one record per (user,
//! tenant, consent type), granted or withdrawn.
//!
//! Each record carries an integrity hash: HMAC-SHA256 over
//! `userId|type|isGranted|grantedISO|withdrawnISO|ip|source` with a key
//! derived from the JWT secret under its own label (so it is not the token
//! key). Reads verify it, so a change made behind the API's back shows as
//! `integrityValid:false`. Other modules record consents with [`record`].

pub mod dto;

use diesel::PgExpressionMethods;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use time::OffsetDateTime;
use time::macros::format_description;
use uuid::Uuid;

pub mod schema {
    //! The consents table (owned by stoa-preferences).
    diesel::table! {
        user_consents (id) {
            id -> Uuid,
            user_id -> Uuid,
            tenant_id -> Nullable<Uuid>,
            organization_id -> Nullable<Uuid>,
            consent_type -> Text,
            is_granted -> Bool,
            granted_at -> Nullable<Timestamptz>,
            withdrawn_at -> Nullable<Timestamptz>,
            source -> Nullable<Text>,
            ip_address -> Nullable<Text>,
            integrity_hash -> Text,
            created_at -> Timestamptz,
            updated_at -> Timestamptz,
            deleted_at -> Nullable<Timestamptz>,
        }
    }
}

use schema::user_consents;

/// The label the consent key is derived under (the token key uses another).
const KEY_LABEL: &[u8] = b"stoa:consent-integrity:v1";

/// The HMAC key of consent records.
#[derive(Clone)]
pub struct ConsentKey([u8; 32]);

impl std::fmt::Debug for ConsentKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConsentKey([redacted])")
    }
}

impl ConsentKey {
    /// Derives the key from a secret: HMAC-SHA256(secret, label).
    pub fn derive(secret: &str) -> Self {
        let mut key = [0u8; 32];
        if let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
            mac.update(KEY_LABEL);
            key.copy_from_slice(&mac.finalize().into_bytes());
        }
        Self(key)
    }

    fn mac(&self) -> Option<Hmac<Sha256>> {
        Hmac::<Sha256>::new_from_slice(&self.0).ok()
    }
}

/// A timestamp as it enters the hash: UTC, microseconds (what Postgres keeps).
pub fn hash_timestamp(t: Option<OffsetDateTime>) -> String {
    let fmt =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");
    t.and_then(|t| t.to_offset(time::UtcOffset::UTC).format(&fmt).ok())
        .unwrap_or_default()
}

/// The fields the integrity hash covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsentFields<'a> {
    pub user_id: Uuid,
    pub consent_type: &'a str,
    pub is_granted: bool,
    pub granted_at: Option<OffsetDateTime>,
    pub withdrawn_at: Option<OffsetDateTime>,
    pub ip_address: Option<&'a str>,
    pub source: Option<&'a str>,
}

impl ConsentFields<'_> {
    fn payload(&self) -> String {
        [
            self.user_id.to_string(),
            self.consent_type.to_string(),
            self.is_granted.to_string(),
            hash_timestamp(self.granted_at),
            hash_timestamp(self.withdrawn_at),
            self.ip_address.unwrap_or("").to_string(),
            self.source.unwrap_or("").to_string(),
        ]
        .join("|")
    }

    /// The hex HMAC of the fields.
    pub fn hash(&self, key: &ConsentKey) -> String {
        match key.mac() {
            Some(mut mac) => {
                mac.update(self.payload().as_bytes());
                hex::encode(mac.finalize().into_bytes())
            }
            None => String::new(),
        }
    }

    /// Whether `hash` is the fields' HMAC (compared in constant time).
    pub fn verify(&self, key: &ConsentKey, hash: &str) -> bool {
        let expected = self.hash(key);
        !expected.is_empty()
            && expected.len() == hash.len()
            && bool::from(expected.as_bytes().ct_eq(hash.as_bytes()))
    }
}

/// A stored consent.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = user_consents)]
pub struct ConsentRow {
    pub id: Uuid,
    pub user_id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    pub consent_type: String,
    pub is_granted: bool,
    pub granted_at: Option<OffsetDateTime>,
    pub withdrawn_at: Option<OffsetDateTime>,
    pub source: Option<String>,
    pub ip_address: Option<String>,
    pub integrity_hash: String,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl ConsentRow {
    /// The fields the hash covers, as stored.
    pub fn fields(&self) -> ConsentFields<'_> {
        ConsentFields {
            user_id: self.user_id,
            consent_type: &self.consent_type,
            is_granted: self.is_granted,
            granted_at: self.granted_at,
            withdrawn_at: self.withdrawn_at,
            ip_address: self.ip_address.as_deref(),
            source: self.source.as_deref(),
        }
    }

    /// Whether the stored hash still matches the stored fields.
    pub fn integrity_valid(&self, key: &ConsentKey) -> bool {
        self.fields().verify(key, &self.integrity_hash)
    }
}

/// A consent being given or withdrawn.
#[derive(Clone, Debug)]
pub struct ConsentChange {
    pub user_id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub organization_id: Option<Uuid>,
    /// e.g. `terms`, `privacy`, `marketing_email`.
    pub consent_type: String,
    /// `true` grants, `false` withdraws.
    pub granted: bool,
    /// Where it was given (`onboarding`, `profile`, …).
    pub source: Option<String>,
    pub ip_address: Option<String>,
}

/// Now, at the precision Postgres stores (so the hash covers what is stored).
fn now_micros() -> OffsetDateTime {
    let now = OffsetDateTime::now_utc();
    now.replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
        .unwrap_or(now)
}

/// Records a consent being granted or withdrawn (one record per user, tenant
/// and type; the latest change wins) and returns the stored record with its
/// fresh integrity hash. Granting sets `grantedAt` and clears `withdrawnAt`;
/// withdrawing sets `withdrawnAt` and keeps when it had been granted.
pub async fn record(
    conn: &mut AsyncPgConnection,
    key: &ConsentKey,
    change: ConsentChange,
) -> QueryResult<ConsentRow> {
    let consent_type = change.consent_type.trim().to_string();
    let existing: Option<ConsentRow> = user_consents::table
        .filter(user_consents::user_id.eq(change.user_id))
        .filter(user_consents::tenant_id.is_not_distinct_from(change.tenant_id))
        .filter(user_consents::consent_type.eq(&consent_type))
        .filter(user_consents::deleted_at.is_null())
        .select(ConsentRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?;
    let now = now_micros();
    let (granted_at, withdrawn_at) = if change.granted {
        (Some(now), None)
    } else {
        (existing.as_ref().and_then(|e| e.granted_at), Some(now))
    };
    let fields = ConsentFields {
        user_id: change.user_id,
        consent_type: &consent_type,
        is_granted: change.granted,
        granted_at,
        withdrawn_at,
        ip_address: change.ip_address.as_deref(),
        source: change.source.as_deref(),
    };
    let hash = fields.hash(key);
    match existing {
        Some(row) => {
            diesel::update(user_consents::table.find(row.id))
                .set((
                    user_consents::organization_id.eq(change.organization_id),
                    user_consents::is_granted.eq(change.granted),
                    user_consents::granted_at.eq(granted_at),
                    user_consents::withdrawn_at.eq(withdrawn_at),
                    user_consents::source.eq(&change.source),
                    user_consents::ip_address.eq(&change.ip_address),
                    user_consents::integrity_hash.eq(&hash),
                ))
                .returning(ConsentRow::as_returning())
                .get_result(conn)
                .await
        }
        None => {
            diesel::insert_into(user_consents::table)
                .values((
                    user_consents::user_id.eq(change.user_id),
                    user_consents::tenant_id.eq(change.tenant_id),
                    user_consents::organization_id.eq(change.organization_id),
                    user_consents::consent_type.eq(&consent_type),
                    user_consents::is_granted.eq(change.granted),
                    user_consents::granted_at.eq(granted_at),
                    user_consents::withdrawn_at.eq(withdrawn_at),
                    user_consents::source.eq(&change.source),
                    user_consents::ip_address.eq(&change.ip_address),
                    user_consents::integrity_hash.eq(&hash),
                ))
                .returning(ConsentRow::as_returning())
                .get_result(conn)
                .await
        }
    }
}

/// The live consents of `user` in `tenant`, newest first; with `organizations`
/// only those recorded in one of them (or in none).
pub async fn list(
    conn: &mut AsyncPgConnection,
    user: Uuid,
    tenant: Uuid,
    organizations: Option<&[Uuid]>,
) -> QueryResult<Vec<ConsentRow>> {
    let mut query = user_consents::table
        .filter(user_consents::user_id.eq(user))
        .filter(user_consents::tenant_id.eq(tenant))
        .filter(user_consents::deleted_at.is_null())
        .select(ConsentRow::as_select())
        .order((user_consents::created_at.desc(), user_consents::id.desc()))
        .into_boxed();
    if let Some(orgs) = organizations {
        query = query.filter(
            user_consents::organization_id
                .is_null()
                .or(user_consents::organization_id.eq_any(orgs.to_vec())),
        );
    }
    query.load(conn).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_covers_every_field_and_key() {
        let key = ConsentKey::derive("secret-secret-secret");
        let t = OffsetDateTime::from_unix_timestamp_nanos(1_700_000_000_123_456_000).unwrap();
        let fields = ConsentFields {
            user_id: Uuid::from_u128(7),
            consent_type: "terms",
            is_granted: true,
            granted_at: Some(t),
            withdrawn_at: None,
            ip_address: Some("10.0.0.1"),
            source: Some("onboarding"),
        };
        let hash = fields.hash(&key);
        assert_eq!(hash.len(), 64);
        assert!(fields.verify(&key, &hash));
        assert!(!fields.verify(&ConsentKey::derive("another-secret-value"), &hash));
        let tampered = ConsentFields {
            source: Some("admin"),
            ..fields.clone()
        };
        assert!(!tampered.verify(&key, &hash));
        assert!(!fields.verify(&key, "short"));
        assert_eq!(hash_timestamp(Some(t)), "2023-11-14T22:13:20.123456Z");
        assert_eq!(hash_timestamp(None), "");
        // The consent key is not the token key.
        assert_ne!(
            hex::encode(ConsentKey::derive("s").0),
            hex::encode(ConsentKey::derive("t").0)
        );
    }
}
