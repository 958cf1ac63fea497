//! Device writes as undoable commands.
//!
//! - `devices.user_devices.register`: undo soft-deletes a device the
//!   registration created, and puts back the previous metadata (and
//!   deactivation) of one it updated or revived.
//! - `devices.user_devices.update`: undo puts back the previous metadata.
//! - `devices.user_devices.deactivate`: undo revives the device.
//!
//! Undo and redo go through the shared `stoa_core::command::StateHandler`:
//! [`DeviceState`] implements `Tracked`. Push credentials (token, provider,
//! token time) are never restored: the action log never holds the token.
//! Snapshots show only its fingerprint (`pushTokenFingerprint`).

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::tracked::{StateHandler, Tracked, entry};
use stoa_core::command::{Actor, Command, CommandHandler, Event, LogEntry};
use time::OffsetDateTime;

use crate::dto::UpdateDevice;
use crate::error::DevicesError;
use crate::model::{DeviceRow, DeviceState};
use crate::queries::{self, Registered, Registration};
use crate::secrets::StoredToken;
use uuid::Uuid;

/// The action log's resource kind of a device.
pub const DEVICE_KIND: &str = "devices.user_device";
pub const REGISTER: &str = "devices.user_devices.register";
pub const UPDATE: &str = "devices.user_devices.update";
pub const DEACTIVATE: &str = "devices.user_devices.deactivate";

pub const REGISTERED_EVENT: &str = "devices.user_device.registered";
pub const UPDATED_EVENT: &str = "devices.user_device.updated";
pub const DEACTIVATED_EVENT: &str = "devices.user_device.deactivated";

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

fn event(name: &str, row: &DeviceRow, extra: Option<(&str, Value)>) -> Event {
    let mut payload = json!({
        "id": row.id,
        "tenantId": row.tenant_id,
        "organizationId": row.organization_id,
        "userId": row.user_id,
        "deviceId": row.device_id,
        "platform": row.platform,
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
fn device_entry(label: &str, before: Option<&DeviceRow>, after: &DeviceRow) -> LogEntry {
    let after = DeviceState::from(after);
    match before {
        Some(row) => entry(label, after.id, Some(&DeviceState::from(row)), Some(&after)),
        None => {
            let absent = DeviceState {
                deleted_at: Some(after.last_seen_at),
                ..after.clone()
            };
            let mut log = entry(label, after.id, Some(&absent), Some(&after));
            log.snapshot_before = None;
            log
        }
    }
}

/// Registers (or refreshes, or revives) a device.
pub struct RegisterDeviceCommand(pub Registration);

impl Command for RegisterDeviceCommand {
    type Output = Registered;
    fn id(&self) -> &'static str {
        REGISTER
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(Registered, LogEntry), AppError>> {
        Box::pin(async move {
            let done = queries::register(conn, &self.0).await?;
            let mut log = device_entry("Register device", done.before.as_ref(), &done.after);
            log.events.push(event(
                REGISTERED_EVENT,
                &done.after,
                Some(("revived", Value::Bool(done.revived))),
            ));
            Ok((done, log))
        })
    }
}

/// Changes a device's metadata; `device` is the live row, locked by the caller.
pub struct UpdateDeviceCommand {
    pub device: DeviceRow,
    pub body: UpdateDevice,
    /// The body's `pushToken`, sealed by the handler (absent keeps, `Some(None)` clears).
    pub push: Option<Option<StoredToken>>,
}

impl Command for UpdateDeviceCommand {
    type Output = DeviceRow;
    fn id(&self) -> &'static str {
        UPDATE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(DeviceRow, LogEntry), AppError>> {
        Box::pin(async move {
            let push = self.push.as_ref().map(Option::as_ref);
            let after = queries::update(conn, &self.device, &self.body, push).await?;
            let mut log = device_entry("Update device", Some(&self.device), &after);
            log.events.push(event(UPDATED_EVENT, &after, None));
            Ok((after, log))
        })
    }
}

/// Deactivates a device; `device` is the live row, locked by the caller.
pub struct DeactivateDeviceCommand(pub DeviceRow);

impl Command for DeactivateDeviceCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        DEACTIVATE
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            let after = queries::deactivate(conn, &self.0).await?;
            let mut log = device_entry("Deactivate device", Some(&self.0), &after);
            log.events.push(event(DEACTIVATED_EVENT, &self.0, None));
            Ok(((), log))
        })
    }
}

/// Undo and redo write a device as the routes do, for the caller of the undo
/// now: a device of the caller's tenant, its own (`devices.manage`) or any
/// device inside its organizations (`devices.admin`).
fn may_write(actor: &Actor, state: &DeviceState) -> Result<(), AppError> {
    let ctx = AuthContext::of(actor)?;
    if ctx.tenant_id != Some(state.tenant_id) {
        return Err(DevicesError::NotFound.into());
    }
    let owner = ctx.user_id == Some(state.user_id) && ctx.has("devices.manage");
    if ctx.has("devices.admin") {
        ctx.require_organizations([state.organization_id])?;
    } else if !owner {
        return Err(DevicesError::AccessDenied.into());
    }
    match state.organization_id {
        Some(org) if !ctx.can_see_organization(org) => Err(DevicesError::AccessDenied.into()),
        _ => Ok(()),
    }
}

impl Tracked for DeviceState {
    const KIND: &'static str = DEVICE_KIND;

    /// The device row (`load` locks it again, harmlessly).
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        queries::lock_any(conn, id).await?;
        Ok(())
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
            queries::deactivate(conn, &row).await?;
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
        _: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let current = current.ok_or(DevicesError::NotFound)?;
        may_write(actor, current)?;
        match target {
            Some(target) => may_write(actor, target),
            None => Ok(()),
        }
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
