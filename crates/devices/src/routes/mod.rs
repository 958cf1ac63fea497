//! Thin handlers: extract, authorize, run the service (writes through the
//! command bus, in one transaction), respond. The shared steps live here; each
//! file holds one verb (the admin variants share `admin.rs`).

pub mod admin;
pub mod delete;
pub mod list;
pub mod register;
pub mod update;

use actix_web::http::header::ACCEPT_LANGUAGE;
use actix_web::{HttpRequest, HttpResponse, web};
use stoa_acl::{AuthContext, CredentialKind, UserDirectory};
use stoa_core::command::{self, Actor};
use stoa_core::db::Db;
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::{AppError, AppResult, Page, PageQuery};
use uuid::Uuid;

use crate::commands::{DeactivateDeviceCommand, RegisterDeviceCommand, UpdateDeviceCommand};
use crate::dto::{
    DeviceDeactivated, DeviceList, DeviceListQuery, DeviceRegistered, RegisterDevice, SortField,
    UpdateDevice,
};
use crate::error::{DevicesError, MAX_IDS};
use crate::model::DeviceRow;
use crate::secrets;
use crate::service::{self, DeviceKey, ListFilter, Registration, Scope};
use stoa_core::crypto::KeyRing;

/// The caller as a device owner: a signed-in user. API keys (and any other
/// principal without a user) never own devices: 401.
pub(crate) fn device_actor(ctx: &AuthContext) -> Result<Uuid, AppError> {
    match (ctx.kind, ctx.user_id) {
        (CredentialKind::Session, Some(user)) => Ok(user),
        _ => Err(DevicesError::NotADeviceActor.into()),
    }
}

/// A device id from the path; 400 `Invalid device id` when it is not a uuid.
pub(crate) fn parse_id(raw: &str) -> Result<Uuid, AppError> {
    raw.trim()
        .parse()
        .map_err(|_| DevicesError::InvalidId.into())
}

/// Paging of device lists: `pageSize` 1–100, default 50.
pub(crate) fn page_of(q: &DeviceListQuery) -> AppResult<Page> {
    PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(50, 100)
}

/// The filters of a list query (`userId` is decided by each handler).
pub(crate) fn list_filter(q: &DeviceListQuery) -> Result<ListFilter, AppError> {
    let ids = match q.ids.as_deref() {
        None => None,
        Some(raw) => {
            let parts: Vec<&str> = raw
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            if parts.len() > MAX_IDS {
                return Err(DevicesError::TooManyIds { max: MAX_IDS }.into());
            }
            let ids = parts
                .iter()
                .map(|p| {
                    p.parse::<Uuid>()
                        .map_err(|_| DevicesError::MalformedListId(p.chars().take(64).collect()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            (!ids.is_empty()).then_some(ids)
        }
    };
    Ok(ListFilter {
        user_id: None,
        platform: q.platform,
        ids,
        sort: q.sort_field.unwrap_or_default(),
        dir: q.sort_dir.unwrap_or_default(),
    })
}

/// The list request of a device list: paging, cursor (tagged with the
/// list's sort) and total mode.
pub(crate) fn list_request(
    q: &DeviceListQuery,
    params: &ListParams,
) -> AppResult<ListRequest<DeviceKey>> {
    let page = page_of(q)?;
    let tag = service::cursor_tag(
        q.sort_field.unwrap_or_default(),
        q.sort_dir.unwrap_or_default(),
    );
    ListRequest::new(page, params, tag)
}

/// Runs a list query and shapes the page: one statement for the rows and
/// their (capped) total.
pub(crate) async fn run_list(
    db: &Db,
    scope: &Scope,
    filter: &ListFilter,
    req: &ListRequest<DeviceKey>,
) -> AppResult<DeviceList> {
    let mut conn = db.conn().await?;
    let (rows, counted) = service::list(&mut conn, scope, filter, req).await?;
    Ok(list_page(req, rows, counted, filter.sort))
}

pub(crate) fn list_page(
    req: &ListRequest<DeviceKey>,
    rows: Vec<DeviceRow>,
    counted: Option<i64>,
    sort: SortField,
) -> DeviceList {
    let page = req.finish(rows, counted, |row| service::key_of(row, sort));
    DeviceList {
        items: page.items.into_iter().map(Into::into).collect(),
        total: page.total,
        page: page.page,
        page_size: page.page_size,
        total_pages: page.total_pages,
        total_capped: page.total_capped,
        next_cursor: page.next_cursor,
    }
}

/// A registration for `user` in `organization`. `request` (the device's own
/// request) supplies the default locale from `Accept-Language`.
pub(crate) fn registration(
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
    let push_token = body
        .push_token
        .as_ref()
        .map(|t| secrets::seal(keys, t))
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

/// Runs the register command; 201 `{id, deviceId, revived}` + `x-om-operation`.
/// `check` runs first in the same transaction (admin: the target user).
pub(crate) async fn execute_register(
    db: &Db,
    actor: Actor,
    registration: Registration,
    check: Option<(Scope, Uuid, web::Data<dyn UserDirectory>)>,
) -> AppResult<HttpResponse> {
    let (done, op) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let mut registration = registration;
                if let Some((scope, user, users)) = check {
                    let org = service::target_user_organization(
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
    Ok(
        with_operation(HttpResponse::Created(), &op).json(DeviceRegistered {
            id: done.after.id,
            device_id: done.after.device_id,
            revived: done.revived,
        }),
    )
}

/// Who may touch a device: its owner (self-service) or a device admin.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Access {
    Owner(Uuid),
    Admin,
}

/// Self-service: a device outside the caller's organizations is not found,
/// another user's is 403. Admin: outside the caller's organizations is 403.
pub(crate) fn authorize(
    scope: &Scope,
    access: Access,
    row: &DeviceRow,
) -> Result<(), DevicesError> {
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
pub(crate) fn write_target(
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

/// Locks the live device `id` and checks access, inside the transaction.
async fn load_for_write(
    conn: &mut diesel_async::AsyncPgConnection,
    scope: &Scope,
    access: Access,
    id: Uuid,
) -> Result<DeviceRow, DevicesError> {
    let row = service::lock_live(conn, scope.tenant_id, id)
        .await?
        .ok_or(DevicesError::NotFound)?;
    authorize(scope, access, &row)?;
    Ok(row)
}

/// Runs the update command; 200 `{ok, id}` + `x-om-operation`.
pub(crate) async fn execute_update(
    db: &Db,
    keys: &KeyRing,
    actor: Actor,
    scope: Scope,
    access: Access,
    id: Uuid,
    body: UpdateDevice,
) -> AppResult<HttpResponse> {
    // Sealed before the transaction: the plaintext goes no further.
    let push = match &body.push_token {
        None => None,
        Some(None) => Some(None),
        Some(Some(token)) => Some(Some(secrets::seal(keys, token)?)),
    };
    let (after, op) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let device = load_for_write(conn, &scope, access, id).await?;
                command::execute(conn, &actor, UpdateDeviceCommand { device, body, push }).await
            })
        })
        .await?;
    Ok(
        with_operation(HttpResponse::Ok(), &op).json(crate::dto::DeviceUpdated {
            ok: true,
            id: after.id,
        }),
    )
}

/// Runs the deactivate command; 200 `{ok}` + `x-om-operation`.
pub(crate) async fn execute_deactivate(
    db: &Db,
    actor: Actor,
    scope: Scope,
    access: Access,
    id: Uuid,
) -> AppResult<HttpResponse> {
    let ((), op) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let device = load_for_write(conn, &scope, access, id).await?;
                command::execute(conn, &actor, DeactivateDeviceCommand(device)).await
            })
        })
        .await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(DeviceDeactivated { ok: true }))
}

pub(crate) use stoa_core::command::with_operation;
