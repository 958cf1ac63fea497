//! Device writes as undoable commands.
//!
//! - `devices.user_devices.register`: undo soft-deletes a device the
//!   registration created, and puts back the previous metadata (and
//!   deactivation) of one it updated or revived.
//! - `devices.user_devices.update`: undo puts back the previous metadata.
//! - `devices.user_devices.deactivate`: undo revives the device.
//!
//! Push credentials (token, provider, token time) are never restored: the
//! action log never holds the token. Snapshots show only its fingerprint
//! (`pushTokenFingerprint`).

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::tracked::changed_since;
use stoa_core::command::{ActionLog, Actor, Command, CommandHandler, Event, LogEntry, UndoReport};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::dto::UpdateDevice;
use crate::error::DevicesError;
use crate::model::{DeviceRow, DeviceState};
use crate::secrets::StoredToken;
use crate::service::{self, Registered, Registration};

/// The action log's resource kind of a device.
pub const DEVICE_KIND: &str = "devices.user_device";
pub const REGISTER: &str = "devices.user_devices.register";
pub const UPDATE: &str = "devices.user_devices.update";
pub const DEACTIVATE: &str = "devices.user_devices.deactivate";

pub const REGISTERED_EVENT: &str = "devices.user_device.registered";
pub const UPDATED_EVENT: &str = "devices.user_device.updated";
pub const DEACTIVATED_EVENT: &str = "devices.user_device.deactivated";

fn rfc3339(ts: OffsetDateTime) -> Value {
    ts.format(&Rfc3339)
        .map(Value::String)
        .unwrap_or(Value::Null)
}

/// The snapshot shown in the action log: everything but the push token, of
/// which only the fingerprint appears.
pub fn view(row: &DeviceRow) -> Value {
    json!({
        "id": row.id,
        "tenantId": row.tenant_id,
        "organizationId": row.organization_id,
        "userId": row.user_id,
        "deviceId": row.device_id,
        "platform": row.platform,
        "clientAppVersion": row.client_app_version,
        "osVersion": row.os_version,
        "locale": row.locale,
        "pushProvider": row.push_provider,
        "pushTokenFingerprint": row.push_token_fingerprint,
        "pushTokenUpdatedAt": row.push_token_updated_at.map(rfc3339),
        "lastSeenAt": rfc3339(row.last_seen_at),
        "active": row.deleted_at.is_none(),
        "deletedAt": row.deleted_at.map(rfc3339),
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

fn entry(label: &str, before: Option<&DeviceRow>, after: &DeviceRow) -> LogEntry {
    LogEntry {
        action_label: Some(label.into()),
        resource_kind: Some(DEVICE_KIND.into()),
        resource_id: Some(after.id.to_string()),
        parent_resource_kind: Some(stoa_auth::commands::USER_KIND.into()),
        parent_resource_id: Some(after.user_id.to_string()),
        snapshot_before: before.map(view),
        snapshot_after: Some(view(after)),
        undo: Some(json!({
            "before": before.map(DeviceState::from),
            "after": DeviceState::from(after),
        })),
        tenant_id: Some(after.tenant_id),
        ..Default::default()
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
            let done = service::register(conn, &self.0).await?;
            let mut log = entry("Register device", done.before.as_ref(), &done.after);
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
            let after = service::update(conn, &self.device, &self.body, push).await?;
            let mut log = entry("Update device", Some(&self.device), &after);
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
            let after = service::deactivate(conn, &self.0).await?;
            let mut log = entry("Deactivate device", Some(&self.0), &after);
            log.events.push(event(DEACTIVATED_EVENT, &self.0, None));
            Ok(((), log))
        })
    }
}

#[derive(Deserialize)]
struct UndoPayload {
    before: Option<DeviceState>,
    after: DeviceState,
}

fn payload(log: &ActionLog) -> Result<UndoPayload, AppError> {
    log.undo_payload()
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| AppError::bad_request("Undo failed"))
}

/// Undo and redo write a device as the routes do, for the caller of the undo
/// now: a device of the caller's tenant, its own (`devices.manage`) or any
/// device inside its organizations (`devices.admin`).
fn may_write(actor: &Actor, row: &DeviceRow) -> Result<(), AppError> {
    let ctx = AuthContext::of(actor)?;
    if ctx.tenant_id != Some(row.tenant_id) {
        return Err(DevicesError::NotFound.into());
    }
    let owner = ctx.user_id == Some(row.user_id) && ctx.has("devices.manage");
    if ctx.has("devices.admin") {
        ctx.require_organizations([row.organization_id])?;
    } else if !owner {
        return Err(DevicesError::AccessDenied.into());
    }
    match row.organization_id {
        Some(org) if !ctx.can_see_organization(org) => Err(DevicesError::AccessDenied.into()),
        _ => Ok(()),
    }
}

/// Whether the device is still as `expected` left it; a deactivation's time
/// stands for "deactivated" (undo of a registration stamps its own).
fn still(current: &DeviceRow, expected: &DeviceState) -> bool {
    let current = DeviceState::from(current);
    let live = |s: &DeviceState| DeviceState {
        deleted_at: None,
        ..s.clone()
    };
    current.deleted_at.is_some() == expected.deleted_at.is_some()
        && live(&current) == live(expected)
}

/// Undo and redo of the three device commands.
pub struct DeviceHandler(&'static str);

impl CommandHandler for DeviceHandler {
    fn command_id(&self) -> &'static str {
        self.0
    }

    fn undo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<UndoReport, AppError>> {
        Box::pin(async move {
            let p = payload(log)?;
            let current = service::lock_any(conn, p.after.tenant_id, p.after.id).await?;
            if !still(&current, &p.after) {
                return Err(changed_since());
            }
            may_write(actor, &current)?;
            let target = match p.before {
                Some(before) => before,
                // The registration created the device: it goes (soft, like a
                // deactivation).
                None => DeviceState {
                    deleted_at: current
                        .deleted_at
                        .or_else(|| Some(OffsetDateTime::now_utc())),
                    ..DeviceState::from(&current)
                },
            };
            service::restore(conn, &target).await?;
            Ok(UndoReport::default())
        })
    }

    fn redo<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        log: &'a ActionLog,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<LogEntry, AppError>> {
        Box::pin(async move {
            let p = payload(log)?;
            let current = service::lock_any(conn, p.after.tenant_id, p.after.id).await?;
            // After the undo: the previous state, or (a registration that
            // created the device) the device deactivated.
            let expected = p.before.clone().unwrap_or_else(|| DeviceState {
                deleted_at: Some(OffsetDateTime::now_utc()),
                ..p.after.clone()
            });
            if !still(&current, &expected) {
                return Err(changed_since());
            }
            may_write(actor, &current)?;
            let (before, after) = service::restore(conn, &p.after).await?;
            let label = log.action_label.clone().unwrap_or_default();
            Ok(entry(&label, Some(&before), &after))
        })
    }
}

/// The undo/redo handlers of the devices module.
pub fn handlers() -> Vec<Arc<dyn CommandHandler>> {
    [REGISTER, UPDATE, DEACTIVATE]
        .into_iter()
        .map(|id| Arc::new(DeviceHandler(id)) as Arc<dyn CommandHandler>)
        .collect()
}
