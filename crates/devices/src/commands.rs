//! Device writes as undoable commands.
//!
//! - `devices.user_devices.register`: undo soft-deletes a device the
//!   registration created, and puts back the previous metadata (and
//!   deactivation) of one it updated or revived.
//! - `devices.user_devices.update`: undo puts back the previous metadata.
//! - `devices.user_devices.deactivate`: undo revives the device.
//!
//! Every write goes through the resource kit (`stoa_acl::resource`):
//! [`DeviceState`] implements `Tracked` and `Resource` (owned by its user;
//! a device admin writes others' inside its organization reach). The kit
//! locks the row, checks, and its `Save` command applies the state's
//! forward change (`DeviceState::change`) and records the entry; undo and
//! redo go through the shared `stoa_core::command::StateHandler`, whose
//! `authorize` (the kit's) repeats the checks for the caller of the undo.
//! Push credentials (token, provider, token time) are never restored: the
//! action log never holds the token. Snapshots show only its fingerprint
//! (`pushTokenFingerprint`).

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use serde_json::{Value, json};
use stoa_acl::resource::{self, Resource};
use stoa_core::AppError;
use stoa_core::command::tracked::{StateHandler, Tracked, entry};
use stoa_core::command::{Actor, CommandHandler, Event, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::DevicesError;
use crate::model::DeviceState;
use crate::queries;
use crate::{ADMIN, MANAGE};

/// The action log's resource kind of a device.
pub const DEVICE_KIND: &str = "devices.user_device";
pub const REGISTER: &str = "devices.user_devices.register";
pub const UPDATE: &str = "devices.user_devices.update";
pub const DEACTIVATE: &str = "devices.user_devices.deactivate";

pub const REGISTERED_EVENT: &str = "devices.user_device.registered";
pub const UPDATED_EVENT: &str = "devices.user_device.updated";
pub const DEACTIVATED_EVENT: &str = "devices.user_device.deactivated";

pub const REGISTER_LABEL: &str = "Register device";
pub const UPDATE_LABEL: &str = "Update device";
pub const DEACTIVATE_LABEL: &str = "Deactivate device";

fn rfc3339(ts: OffsetDateTime) -> Value {
    stoa_core::serde_util::timestamp::value(ts)
}

/// The snapshot shown in the action log: everything but the push token, of
/// which only the fingerprint appears.
pub fn view(state: &DeviceState) -> Value {
    json!({
        "id": state.id,
        "tenantId": state.tenant_id,
        "organizationId": state.organization_id,
        "userId": state.user_id,
        "deviceId": state.device_id,
        "platform": state.platform,
        "clientAppVersion": state.client_app_version,
        "osVersion": state.os_version,
        "locale": state.locale,
        "pushProvider": state.push_provider,
        "pushTokenFingerprint": state.push_token_fingerprint,
        "pushTokenUpdatedAt": state.push_token_updated_at.map(rfc3339),
        "lastSeenAt": rfc3339(state.last_seen_at),
        "active": state.deleted_at.is_none(),
        "deletedAt": state.deleted_at.map(rfc3339),
    })
}

fn event(name: &str, state: &DeviceState, extra: Option<(&str, Value)>) -> Event {
    let mut payload = json!({
        "id": state.id,
        "tenantId": state.tenant_id,
        "organizationId": state.organization_id,
        "userId": state.user_id,
        "deviceId": state.device_id,
        "platform": state.platform,
    });
    if let (Some((key, value)), Value::Object(map)) = (extra, &mut payload) {
        map.insert(key.into(), value);
    }
    Event {
        name: name.into(),
        payload,
    }
}

/// The entry of a change of a device from `before` to `after`. A registration
/// that created the device records as "before" the same device deactivated
/// (undo deactivates it, as a deletion would; redo revives the same id); the
/// log shows no previous state.
fn device_entry(label: &str, before: Option<&DeviceState>, after: &DeviceState) -> LogEntry {
    match before {
        Some(before) => entry(label, after.id, Some(before), Some(after)),
        None => {
            let absent = DeviceState {
                deleted_at: Some(after.last_seen_at),
                ..after.clone()
            };
            let mut log = entry(label, after.id, Some(&absent), Some(after));
            log.snapshot_before = None;
            log
        }
    }
}

/// The entry of a forward write (the kit's `Save`), with its event: which
/// one the command's label says (a registration and an update both go from
/// a device to a device).
fn write_entry(label: &str, before: Option<&DeviceState>, after: Option<&DeviceState>) -> LogEntry {
    // Devices are never erased forward: every write leaves a row.
    let Some(after) = after else {
        return LogEntry::default();
    };
    let event = match label {
        REGISTER_LABEL => {
            let revived = before.is_some_and(|b| b.deleted_at.is_some());
            event(
                REGISTERED_EVENT,
                after,
                Some(("revived", Value::Bool(revived))),
            )
        }
        DEACTIVATE_LABEL => event(DEACTIVATED_EVENT, before.unwrap_or(after), None),
        _ => event(UPDATED_EVENT, after, None),
    };
    let mut log = device_entry(label, before, after);
    log.events.push(event);
    log
}

impl Tracked for DeviceState {
    const KIND: &'static str = DEVICE_KIND;

    /// The device row.
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        resource::lock::<Self>(conn, id).await
    }

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        Ok(queries::lock_any(conn, id)
            .await?
            .as_ref()
            .map(DeviceState::from))
    }

    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        queries::restore(conn, self).await?;
        Ok(())
    }

    /// Never reached (every entry records a state on both sides); a device
    /// is only ever deactivated.
    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        if let Some(row) = queries::lock_any(conn, id).await?
            && row.deleted_at.is_none()
        {
            queries::deactivate(conn, row.id).await?;
        }
        Ok(())
    }

    fn view(&self) -> Value {
        view(self)
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    fn parent(&self) -> Option<(&'static str, String)> {
        Some((stoa_acl::accounts::USER_KIND, self.user_id.to_string()))
    }

    /// Push credentials are never written back. They are not reported as
    /// "not restored": the log never held the token, so there is nothing a
    /// client could expect back.
    fn keep_protected(&mut self, current: Option<&Self>) -> Vec<&'static str> {
        if let Some(current) = current {
            self.push_provider.clone_from(&current.push_provider);
            self.push_token_fingerprint
                .clone_from(&current.push_token_fingerprint);
            self.push_token_updated_at = current.push_token_updated_at;
        }
        Vec::new()
    }

    async fn authorize(
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        // Every entry records a device on both sides.
        let current = current.ok_or(DevicesError::NotFound)?;
        resource::authorize(conn, actor, Some(current), target).await
    }
}

/// A device through the resource kit: its user's (`devices.manage`), or any
/// device inside the caller's organization reach for a device admin
/// (`devices.admin`; outside it `Access denied`, the module's contract).
impl Resource for DeviceState {
    const TABLE: &'static str = "user_devices";
    const FEATURE: &'static str = MANAGE;
    const OTHERS_FEATURE: Option<&'static str> = Some(ADMIN);
    // A device outside the caller's visible organizations is not there for
    // its owner (404) and out of reach for an admin (403 `Access denied`).
    const SELECTION_HIDES: bool = true;
    type Services = ();

    fn id(&self) -> Uuid {
        self.id
    }
    fn tenant_id(&self) -> Uuid {
        self.tenant_id
    }
    fn organization(&self) -> Option<Uuid> {
        self.organization_id
    }
    fn owner(&self) -> Option<Uuid> {
        Some(self.user_id)
    }
    fn not_found() -> AppError {
        DevicesError::NotFound.into()
    }
    fn not_owner() -> AppError {
        DevicesError::AccessDenied.into()
    }
    fn hidden() -> AppError {
        DevicesError::AccessDenied.into()
    }
    fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
        write_entry(label, before, after)
    }
    /// The forward change in one statement ([`queries::apply_change`]),
    /// returning the row as stored; without one (never forward), the
    /// recorded metadata is written back as undo does.
    async fn save(&self, conn: &mut AsyncPgConnection) -> Result<Self, AppError> {
        let row = match &self.change {
            Some(change) => queries::apply_change(conn, self.id, change).await?,
            None => queries::restore(conn, self).await?.1,
        };
        Ok(DeviceState::from(&row))
    }
}

/// The undo/redo handlers of the devices module: the shared state handler.
pub fn handlers() -> Vec<Arc<dyn CommandHandler>> {
    vec![
        StateHandler::<DeviceState>::boxed(REGISTER),
        StateHandler::<DeviceState>::boxed(UPDATE),
        StateHandler::<DeviceState>::boxed(DEACTIVATE),
    ]
}
