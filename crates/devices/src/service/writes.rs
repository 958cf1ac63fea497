//! Device writes as the handlers ask for them: which device, and each write
//! in one transaction through the resource kit (which locks and checks who
//! may write). Each returns the body
//! and the logged operation (the handler adds `x-om-operation`).

use std::sync::Arc;

use actix_web::HttpRequest;
use actix_web::http::header::ACCEPT_LANGUAGE;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use stoa_acl::resource::{self as kit, Write};
use stoa_acl::{AuthContext, CredentialKind, UserDirectory};
use stoa_core::command::Operation;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::{AppError, AppResult};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::commands::{
    DEACTIVATE, DEACTIVATE_LABEL, REGISTER, REGISTER_LABEL, UPDATE, UPDATE_LABEL,
};
use crate::dto::{DeviceDetail, DeviceRegistered, DeviceUpdated, RegisterDevice, UpdateDevice};
use crate::error::DevicesError;
use crate::model::{DeviceRow, DeviceState};
use crate::queries::{self, Change, Registration, Scope};
use crate::secrets;

/// The caller as a device owner: a signed-in user. API keys (and any other
/// principal without a user) never own devices: 401.
pub fn device_actor(ctx: &AuthContext) -> Result<Uuid, AppError> {
    match (ctx.kind, ctx.user_id) {
        (CredentialKind::Session, Some(user)) => Ok(user),
        _ => Err(DevicesError::NotADeviceActor.into()),
    }
}

/// A device id from the path; 400 `Invalid device id` when it is not a uuid.
pub fn parse_id(raw: &str) -> Result<Uuid, AppError> {
    raw.trim()
        .parse()
        .map_err(|_| DevicesError::InvalidId.into())
}

/// A registration for `user` in `organization`. `request` (the device's own
/// request) supplies the default locale from `Accept-Language`.
pub fn registration(
    keys: &KeyRing,
    tenant: Uuid,
    organization: Option<Uuid>,
    user: Uuid,
    body: RegisterDevice,
    request: Option<&HttpRequest>,
) -> Result<Registration, DevicesError> {
    let default_locale = request
        .filter(|_| body.locale.is_none())
        .and_then(|req| req.headers().get(ACCEPT_LANGUAGE))
        .and_then(|v| v.to_str().ok())
        .and_then(stoa_core::i18n::from_accept_language)
        .map(String::from);
    let record = secrets::record_key(user, body.device_id.trim());
    let push_token = body
        .push_token
        .as_ref()
        .map(|t| secrets::seal(keys, t, tenant, &record))
        .transpose()?;
    Ok(Registration {
        tenant_id: tenant,
        organization_id: organization,
        user_id: user,
        device_id: body.device_id.trim().to_string(),
        platform: body.platform,
        client_app_version: body.client_app_version,
        os_version: body.os_version,
        locale: body.locale,
        default_locale,
        push_token,
        push_provider: body.push_provider,
    })
}

/// The target user of an admin registration, checked in the registration's
/// transaction: the device goes to the user's home organization, which the
/// caller must see.
pub type TargetUser = (Scope, Uuid, actix_web::web::Data<dyn UserDirectory>);

/// Registers (or refreshes, or revives) a device through the kit:
/// `{id, deviceId, revived}` and its operation. `check` runs first in the
/// same transaction (admin: the target user).
pub async fn register_device(
    db: &Db,
    ctx: &AuthContext,
    registration: Registration,
    check: Option<TargetUser>,
) -> AppResult<(DeviceRegistered, Operation)> {
    let mut conn = db.conn().await?;
    let (after, revived, op) = conn
        .transaction(async |conn| {
            let mut registration = registration;
            if let Some((scope, user, users)) = check {
                let org =
                    queries::target_user_organization(conn, users.get_ref(), scope.tenant_id, user)
                        .await?;
                if !scope.can_see(org) {
                    return Err(DevicesError::AccessDenied.into());
                }
                registration.organization_id = org;
            }
            let existing = queries::registered(conn, &registration).await?;
            let before = existing.as_ref().map(DeviceState::from);
            let revived = existing.as_ref().is_some_and(|e| e.deleted_at.is_some());
            let now = OffsetDateTime::now_utc();
            // What the kit checks: the device as it will be (its owner,
            // tenant and organization); the change writes the rest.
            let mut after = before.clone().unwrap_or_else(|| DeviceState {
                id: Uuid::new_v4(),
                tenant_id: registration.tenant_id,
                organization_id: registration.organization_id,
                user_id: registration.user_id,
                device_id: registration.device_id.clone(),
                platform: registration.platform.as_str().to_string(),
                client_app_version: None,
                os_version: None,
                locale: None,
                last_seen_at: now,
                deleted_at: None,
                push_provider: None,
                push_token_fingerprint: None,
                push_token_updated_at: None,
                change: None,
            });
            after.change = Some(Arc::new(Change::Register {
                registration: Box::new(registration),
                existing: existing.map(Box::new),
            }));
            let how = Write::new(REGISTER, REGISTER_LABEL);
            let (after, op) = kit::save_in(conn, ctx, None, how, before, Some(after)).await?;
            Ok::<_, AppError>((after, revived, op))
        })
        .await?;
    let after = after.ok_or(DevicesError::NotFound)?;
    let body = DeviceRegistered {
        id: after.id,
        device_id: after.device_id,
        revived,
    };
    Ok((body, op))
}

/// Who may touch a device: its owner (self-service) or a device admin.
#[derive(Clone, Copy, Debug)]
pub enum Access {
    Owner(Uuid),
    Admin,
}

/// Reads. Self-service: a device outside the caller's organizations is not
/// found, another user's is 403. Admin: outside the caller's organizations
/// is 403. (Writes are checked by the kit: [`crate::commands`].)
pub fn authorize(scope: &Scope, access: Access, row: &DeviceRow) -> Result<(), DevicesError> {
    match access {
        Access::Owner(_) if !scope.can_see(row.organization_id) => Err(DevicesError::NotFound),
        Access::Owner(user) if row.user_id != user => Err(DevicesError::AccessDenied),
        Access::Admin if !scope.can_see(row.organization_id) => Err(DevicesError::AccessDenied),
        _ => Ok(()),
    }
}

/// The scope, access and device id of a write to device `id`: the caller's
/// own device (`devices.manage`) or, for `admin`, any device of its scope
/// (`devices.admin`). Both path and collection forms start here.
pub fn write_target(
    ctx: &AuthContext,
    id: &str,
    admin: bool,
) -> Result<(Scope, Access, Uuid), AppError> {
    let user = device_actor(ctx)?;
    let access = if admin {
        ctx.require(crate::ADMIN)?;
        Access::Admin
    } else {
        ctx.require(crate::MANAGE)?;
        Access::Owner(user)
    };
    Ok((Scope::of(ctx)?, access, parse_id(id)?))
}

/// One live device of the scope, as a device admin sees it.
pub async fn device_detail(db: &Db, scope: &Scope, id: Uuid) -> AppResult<DeviceDetail> {
    let mut conn = db.conn().await?;
    let row = queries::find_live(&mut conn, scope.tenant_id, id)
        .await?
        .ok_or(DevicesError::NotFound)?;
    authorize(scope, Access::Admin, &row)?;
    Ok(DeviceDetail { item: row.into() })
}

/// The live device `id` locked and checked by the kit for a write by
/// `ctx`; the self-service routes act on the caller's own devices only
/// (another user's is 403, even for a device admin: those go through the
/// admin routes).
async fn locked_device(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    access: Access,
    id: Uuid,
) -> Result<DeviceState, AppError> {
    let device = kit::locked_in::<DeviceState>(conn, ctx, id, None).await?;
    if device.deleted_at.is_some() {
        return Err(DevicesError::NotFound.into());
    }
    match access {
        Access::Owner(user) if device.user_id != user => Err(DevicesError::AccessDenied.into()),
        _ => Ok(device),
    }
}

/// Updates a device through the kit: `{ok, id}` and its operation.
pub async fn update_device(
    db: &Db,
    keys: &KeyRing,
    ctx: &AuthContext,
    (_, access, id): (Scope, Access, Uuid),
    body: UpdateDevice,
) -> AppResult<(DeviceUpdated, Operation)> {
    let mut conn = db.conn().await?;
    let op = conn
        .transaction(async |conn| {
            let before = locked_device(conn, ctx, access, id).await?;
            // Sealed for this device's row (the binding needs it); the
            // plaintext goes no further than the handler.
            let record = secrets::record_key(before.user_id, &before.device_id);
            let push = match &body.push_token {
                None => None,
                Some(None) => Some(None),
                Some(Some(token)) => {
                    Some(Some(secrets::seal(keys, token, before.tenant_id, &record)?))
                }
            };
            let mut after = before.clone();
            after.change = Some(Arc::new(Change::Update { body, push }));
            let how = Write::new(UPDATE, UPDATE_LABEL);
            let (_, op) = kit::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
            Ok::<_, AppError>(op)
        })
        .await?;
    Ok((DeviceUpdated { ok: true, id }, op))
}

/// Deactivates a device through the kit; returns its operation.
pub async fn deactivate_device(
    db: &Db,
    ctx: &AuthContext,
    (_, access, id): (Scope, Access, Uuid),
) -> AppResult<Operation> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let before = locked_device(conn, ctx, access, id).await?;
        let mut after = before.clone();
        after.change = Some(Arc::new(Change::Deactivate));
        let how = Write::new(DEACTIVATE, DEACTIVATE_LABEL);
        let (_, op) = kit::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
        Ok(op)
    })
    .await
}
