//! Device writes: registration (upsert and revive), updates, deactivation
//! and putting back a logged state (undo/redo).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use super::lock_any;
use crate::dto::UpdateDevice;
use crate::error::DevicesError;
use crate::model::{DeviceRow, DeviceState, Platform};
use crate::schema::user_devices::{self, dsl as d};
use crate::secrets::StoredToken;

/// Column changes; `None` leaves a column alone, `Some(None)` clears it.
#[derive(AsChangeset, Default)]
#[diesel(table_name = user_devices)]
struct DeviceChanges {
    platform: Option<String>,
    client_app_version: Option<Option<String>>,
    os_version: Option<Option<String>>,
    locale: Option<Option<String>>,
    push_token: Option<Option<String>>,
    push_token_hash: Option<Option<String>>,
    push_token_fingerprint: Option<Option<String>>,
    push_provider: Option<Option<String>>,
    push_token_updated_at: Option<Option<OffsetDateTime>>,
    last_seen_at: Option<OffsetDateTime>,
    deleted_at: Option<Option<OffsetDateTime>>,
}

async fn apply(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    changes: &DeviceChanges,
) -> Result<DeviceRow, DevicesError> {
    Ok(diesel::update(d::user_devices.filter(d::id.eq(id)))
        .set(changes)
        .returning(DeviceRow::as_returning())
        .get_result(conn)
        .await?)
}

/// A registration: who, where, and what the client sent.
#[derive(Debug)]
pub struct Registration {
    pub tenant_id: Uuid,
    pub organization_id: Option<Uuid>,
    pub user_id: Uuid,
    /// Trimmed.
    pub device_id: String,
    pub platform: Platform,
    /// Tri-state: absent keeps, `null` clears.
    pub client_app_version: Option<Option<String>>,
    pub os_version: Option<Option<String>>,
    pub locale: Option<Option<String>>,
    /// Used when the body has no `locale` and the device has none yet
    /// (the best match of `Accept-Language`).
    pub default_locale: Option<String>,
    /// Already sealed ([`crate::secrets::seal`]): the plaintext never
    /// reaches the service.
    pub push_token: Option<StoredToken>,
    pub push_provider: Option<String>,
}

impl DeviceChanges {
    /// Stores `token` (sealed), or clears it with `None`.
    fn push(mut self, token: Option<&StoredToken>) -> Self {
        self.push_token = Some(token.map(|t| t.ciphertext.clone()));
        self.push_token_hash = Some(token.map(|t| t.hash.clone()));
        self.push_token_fingerprint = Some(token.map(|t| t.fingerprint.clone()));
        self
    }
}

/// What a registration did.
#[derive(Clone, Debug)]
pub struct Registered {
    /// The row before (`None` when the registration created it).
    pub before: Option<DeviceRow>,
    pub after: DeviceRow,
    /// Whether a deactivated device came back.
    pub revived: bool,
}

/// Registers a device: updates the live row with the same key, else revives
/// the most recently deactivated one, else inserts. A concurrent insert of the
/// same key answers [`DevicesError::AlreadyRegistered`].
pub async fn register(
    conn: &mut AsyncPgConnection,
    r: &Registration,
) -> Result<Registered, DevicesError> {
    let existing: Option<DeviceRow> = d::user_devices
        .filter(d::tenant_id.eq(r.tenant_id))
        .filter(d::user_id.eq(r.user_id))
        .filter(d::device_id.eq(&r.device_id))
        .filter(d::organization_id.is_not_distinct_from(r.organization_id))
        .order(d::deleted_at.desc().nulls_first())
        .select(DeviceRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?;
    let now = OffsetDateTime::now_utc();
    let token = r.push_token.as_ref();
    match existing {
        Some(before) => {
            let locale = r.locale.clone().or_else(|| {
                before
                    .locale
                    .is_none()
                    .then(|| r.default_locale.clone())
                    .flatten()
                    .map(Some)
            });
            let changes = DeviceChanges {
                platform: Some(r.platform.as_str().to_string()),
                client_app_version: r.client_app_version.clone(),
                os_version: r.os_version.clone(),
                locale,
                push_provider: token
                    .as_ref()
                    .map(|_| r.push_provider.clone().or(before.push_provider.clone())),
                push_token_updated_at: token.map(|_| Some(now)),
                last_seen_at: Some(now),
                deleted_at: Some(None),
                ..Default::default()
            };
            // A token replaces the stored one only when sent.
            let changes = match token {
                Some(t) => changes.push(Some(t)),
                None => changes,
            };
            let after = apply(conn, before.id, &changes).await?;
            let revived = before.deleted_at.is_some();
            Ok(Registered {
                before: Some(before),
                after,
                revived,
            })
        }
        None => {
            let locale = match &r.locale {
                Some(explicit) => explicit.clone(),
                None => r.default_locale.clone(),
            };
            let after = diesel::insert_into(d::user_devices)
                .values((
                    d::tenant_id.eq(r.tenant_id),
                    d::organization_id.eq(r.organization_id),
                    d::user_id.eq(r.user_id),
                    d::device_id.eq(&r.device_id),
                    d::platform.eq(r.platform.as_str()),
                    d::client_app_version.eq(r.client_app_version.clone().flatten()),
                    d::os_version.eq(r.os_version.clone().flatten()),
                    d::locale.eq(locale),
                    d::push_provider.eq(token.and(r.push_provider.clone())),
                    d::push_token_updated_at.eq(token.map(|_| now)),
                    d::push_token.eq(token.map(|t| &t.ciphertext)),
                    d::push_token_hash.eq(token.map(|t| &t.hash)),
                    d::push_token_fingerprint.eq(token.map(|t| &t.fingerprint)),
                    d::last_seen_at.eq(now),
                ))
                .returning(DeviceRow::as_returning())
                .get_result(conn)
                .await?;
            Ok(Registered {
                before: None,
                after,
                revived: false,
            })
        }
    }
}

/// Applies a tri-state update to `device`. `pushToken` (even `null`) stamps
/// `push_token_updated_at`; `lastSeenAt` defaults to now.
/// `push` is the body's `pushToken`, already sealed: absent keeps the
/// stored token, `Some(None)` clears it.
pub async fn update(
    conn: &mut AsyncPgConnection,
    device: &DeviceRow,
    body: &UpdateDevice,
    push: Option<Option<&StoredToken>>,
) -> Result<DeviceRow, DevicesError> {
    let now = OffsetDateTime::now_utc();
    let changes = DeviceChanges {
        client_app_version: body.client_app_version.clone(),
        os_version: body.os_version.clone(),
        locale: body.locale.clone(),
        push_provider: body.push_provider.clone(),
        push_token_updated_at: push.map(|_| Some(now)),
        last_seen_at: Some(body.last_seen_at().unwrap_or(now)),
        ..Default::default()
    };
    let changes = match push {
        Some(token) => changes.push(token),
        None => changes,
    };
    apply(conn, device.id, &changes).await
}

/// Deactivates (soft-deletes) a device.
pub async fn deactivate(
    conn: &mut AsyncPgConnection,
    device: &DeviceRow,
) -> Result<DeviceRow, DevicesError> {
    let changes = DeviceChanges {
        deleted_at: Some(Some(OffsetDateTime::now_utc())),
        ..Default::default()
    };
    apply(conn, device.id, &changes).await
}

/// Puts a device's metadata and liveness back to `state` (undo and redo);
/// push credentials stay as they are. A device that is deactivated and stays
/// so keeps its own deactivation time. Reviving it fails with
/// [`DevicesError::AlreadyRegistered`] when the same device has been
/// registered again meanwhile.
pub async fn restore(
    conn: &mut AsyncPgConnection,
    state: &DeviceState,
) -> Result<(DeviceRow, DeviceRow), DevicesError> {
    let current = lock_any(conn, state.id)
        .await?
        .filter(|row| row.tenant_id == state.tenant_id)
        .ok_or(DevicesError::NotFound)?;
    if state.deleted_at.is_none() && current.deleted_at.is_some() {
        let twins: i64 = d::user_devices
            .filter(d::tenant_id.eq(current.tenant_id))
            .filter(d::user_id.eq(current.user_id))
            .filter(d::device_id.eq(&current.device_id))
            .filter(d::organization_id.is_not_distinct_from(current.organization_id))
            .filter(d::deleted_at.is_null())
            .filter(d::id.ne(current.id))
            .count()
            .get_result(conn)
            .await?;
        if twins > 0 {
            return Err(DevicesError::AlreadyRegistered);
        }
    }
    let deleted_at = match (state.deleted_at, current.deleted_at) {
        (Some(_), Some(since)) => Some(since),
        (wanted, _) => wanted,
    };
    let changes = DeviceChanges {
        platform: Some(state.platform.clone()),
        client_app_version: Some(state.client_app_version.clone()),
        os_version: Some(state.os_version.clone()),
        locale: Some(state.locale.clone()),
        last_seen_at: Some(state.last_seen_at),
        deleted_at: Some(deleted_at),
        ..Default::default()
    };
    let after = apply(conn, current.id, &changes).await?;
    Ok((current, after))
}
