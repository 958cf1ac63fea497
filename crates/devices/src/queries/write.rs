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

/// The change a forward write of a device applies (`DeviceState::change`).
#[derive(Debug)]
pub enum Change {
    /// A registration over `existing` (see [`registered`]), or a new device.
    Register {
        registration: Box<Registration>,
        existing: Option<Box<DeviceRow>>,
    },
    /// A tri-state metadata update; `push` is the body's token, sealed.
    Update {
        body: UpdateDevice,
        push: Option<Option<StoredToken>>,
    },
    Deactivate,
}

/// Applies `change` to device `id` (a new one for a registration of a new
/// device); the row as stored.
pub async fn apply_change(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    change: &Change,
) -> Result<DeviceRow, DevicesError> {
    match change {
        Change::Register {
            registration,
            existing,
        } => register(conn, registration, existing.as_deref(), id).await,
        Change::Update { body, push } => {
            update(conn, id, body, push.as_ref().map(Option::as_ref)).await
        }
        Change::Deactivate => deactivate(conn, id).await,
    }
}

/// The row a registration writes over, locked: the live row with the same
/// key, else the most recently deactivated one (`None`: a new device).
pub async fn registered(
    conn: &mut AsyncPgConnection,
    r: &Registration,
) -> Result<Option<DeviceRow>, DevicesError> {
    Ok(d::user_devices
        .filter(d::tenant_id.eq(r.tenant_id))
        .filter(d::user_id.eq(r.user_id))
        .filter(d::device_id.eq(&r.device_id))
        .filter(d::organization_id.is_not_distinct_from(r.organization_id))
        .order(d::deleted_at.desc().nulls_first())
        .select(DeviceRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?)
}

/// A registration's lookup and write in one step (the kit's path is
/// [`registered`], then [`apply_change`] through `Resource::save`): what two
/// racing registrations do underneath.
pub async fn register_now(
    conn: &mut AsyncPgConnection,
    r: &Registration,
) -> Result<DeviceRow, DevicesError> {
    let existing = registered(conn, r).await?;
    register(conn, r, existing.as_ref(), Uuid::new_v4()).await
}

/// Registers a device over `existing` (from [`registered`]): refreshes or
/// revives it, else inserts device `id`. A concurrent insert of the same key
/// answers [`DevicesError::AlreadyRegistered`].
async fn register(
    conn: &mut AsyncPgConnection,
    r: &Registration,
    existing: Option<&DeviceRow>,
    id: Uuid,
) -> Result<DeviceRow, DevicesError> {
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
            apply(conn, before.id, &changes).await
        }
        None => {
            let locale = match &r.locale {
                Some(explicit) => explicit.clone(),
                None => r.default_locale.clone(),
            };
            Ok(diesel::insert_into(d::user_devices)
                .values((
                    d::id.eq(id),
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
                .await?)
        }
    }
}

/// Applies a tri-state update to `device`. `pushToken` (even `null`) stamps
/// `push_token_updated_at`; `lastSeenAt` defaults to now.
/// `push` is the body's `pushToken`, already sealed: absent keeps the
/// stored token, `Some(None)` clears it.
async fn update(
    conn: &mut AsyncPgConnection,
    id: Uuid,
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
    apply(conn, id, &changes).await
}

/// Deactivates (soft-deletes) a device.
pub async fn deactivate(conn: &mut AsyncPgConnection, id: Uuid) -> Result<DeviceRow, DevicesError> {
    let changes = DeviceChanges {
        deleted_at: Some(Some(OffsetDateTime::now_utc())),
        ..Default::default()
    };
    apply(conn, id, &changes).await
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
