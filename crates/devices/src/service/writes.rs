//! Device writes as the handlers ask for them: who may write, which device,
//! and each write in one transaction with its command. Each returns the body
//! and the logged operation (the handler adds `x-om-operation`).

use actix_web::HttpRequest;
use actix_web::http::header::ACCEPT_LANGUAGE;
use diesel_async::AsyncConnection;
use stoa_acl::{AuthContext, CredentialKind, UserDirectory};
use stoa_core::command::{self, Actor, Operation};
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::{AppError, AppResult};
use uuid::Uuid;

use crate::commands::{DeactivateDeviceCommand, RegisterDeviceCommand, UpdateDeviceCommand};
use crate::dto::{DeviceDetail, DeviceRegistered, DeviceUpdated, RegisterDevice, UpdateDevice};
use crate::error::DevicesError;
use crate::model::DeviceRow;
use crate::queries::{self, Registration, Scope};
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

/// Runs the register command: `{id, deviceId, revived}` and its operation.
/// `check` runs first in the same transaction (admin: the target user).
pub async fn register_device(
    db: &Db,
    actor: Actor,
    registration: Registration,
    check: Option<TargetUser>,
) -> AppResult<(DeviceRegistered, Operation)> {
    let (done, op) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let mut registration = registration;
                if let Some((scope, user, users)) = check {
                    let org = queries::target_user_organization(
                        conn,
                        users.get_ref(),
                        scope.tenant_id,
                        user,
                    )
                    .await?;
                    if !scope.can_see(org) {
                        return Err(DevicesError::AccessDenied.into());
                    }
                    registration.organization_id = org;
                }
                command::execute(conn, &actor, RegisterDeviceCommand(registration)).await
            })
        })
        .await?;
    let body = DeviceRegistered {
        id: done.after.id,
        device_id: done.after.device_id,
        revived: done.revived,
    };
    Ok((body, op))
}

/// Who may touch a device: its owner (self-service) or a device admin.
#[derive(Clone, Copy, Debug)]
pub enum Access {
    Owner(Uuid),
    Admin,
}

/// Self-service: a device outside the caller's organizations is not found,
/// another user's is 403. Admin: outside the caller's organizations is 403.
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

/// Locks the live device `id` and checks access, inside the transaction.
async fn load_for_write(
    conn: &mut diesel_async::AsyncPgConnection,
    scope: &Scope,
    access: Access,
    id: Uuid,
) -> Result<DeviceRow, DevicesError> {
    let row = queries::lock_live(conn, scope.tenant_id, id)
        .await?
        .ok_or(DevicesError::NotFound)?;
    authorize(scope, access, &row)?;
    Ok(row)
}

/// Runs the update command: `{ok, id}` and its operation.
pub async fn update_device(
    db: &Db,
    keys: &KeyRing,
    actor: Actor,
    (scope, access, id): (Scope, Access, Uuid),
    body: UpdateDevice,
) -> AppResult<(DeviceUpdated, Operation)> {
    let mut conn = db.conn().await?;
    let (after, op) = conn
        .transaction(async |conn| {
            let device = load_for_write(conn, &scope, access, id).await?;
            // Sealed for this device's row (the binding needs it); the
            // plaintext goes no further than the handler.
            let record = secrets::record_key(device.user_id, &device.device_id);
            let push = match &body.push_token {
                None => None,
                Some(None) => Some(None),
                Some(Some(token)) => {
                    Some(Some(secrets::seal(keys, token, device.tenant_id, &record)?))
                }
            };
            command::execute(conn, &actor, UpdateDeviceCommand { device, body, push }).await
        })
        .await?;
    Ok((
        DeviceUpdated {
            ok: true,
            id: after.id,
        },
        op,
    ))
}

/// Runs the deactivate command; returns its operation.
pub async fn deactivate_device(
    db: &Db,
    actor: Actor,
    (scope, access, id): (Scope, Access, Uuid),
) -> AppResult<Operation> {
    let ((), op) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let device = load_for_write(conn, &scope, access, id).await?;
                command::execute(conn, &actor, DeactivateDeviceCommand(device)).await
            })
        })
        .await?;
    Ok(op)
}
