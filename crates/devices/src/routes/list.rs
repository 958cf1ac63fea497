//! `GET /devices` (the caller's own devices) and `GET /devices/admin/devices`
//! (every user's, `devices.admin`): one list, [`run_list`], with two filters.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Query};

use crate::dto::{DeviceList, DeviceListQuery};
use crate::service::Scope;
use crate::service::listing::{list_filter, list_page, list_request, run_list};
use crate::service::writes::device_actor;
use crate::{ADMIN, VIEW};

/// Lists the caller's devices in its tenant and organizations. `userId`
/// names another user only for holders of `devices.admin`; for anyone else
/// it cannot widen the list (another user's id matches nothing).
#[utoipa::path(
    tag = "Devices",
    params(DeviceListQuery, ListParams),
    responses(
        (status = 200, body = DeviceList),
        (status = 400, body = ErrorBody, description = "Invalid paging, filter, cursor or `ids` (more than 200, or not uuids)"),
        (status = 401, body = ErrorBody, description = "Not signed in, or an API key (keys own no devices)"),
        (status = 403, body = ErrorBody, description = "Missing `devices.view`, or no tenant"),
    )
)]
#[get("/devices")]
pub async fn list_devices(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<DeviceListQuery>,
    params: Query<ListParams>,
) -> AppResult<web::Json<DeviceList>> {
    let user = device_actor(&ctx)?;
    ctx.require(VIEW)?;
    let scope = Scope::of(&ctx)?;
    let req = list_request(&q, &params)?;
    let mut filter = list_filter(&q)?;
    filter.user_id = match q.user_id {
        Some(other) if other != user && !ctx.has(ADMIN) => {
            return Ok(web::Json(list_page(&req, Vec::new(), None, filter.sort)));
        }
        Some(other) => Some(other),
        None => Some(user),
    };
    Ok(web::Json(run_list(&db, &scope, &filter, &req).await?))
}

/// Lists the devices of every user in the caller's tenant and organizations;
/// `userId` narrows to one user.
#[utoipa::path(
    tag = "Devices",
    params(DeviceListQuery, ListParams),
    responses(
        (status = 200, body = DeviceList),
        (status = 400, body = ErrorBody, description = "Invalid paging, filter, cursor or `ids`"),
        (status = 403, body = ErrorBody, description = "Missing `devices.admin`, or no tenant"),
    )
)]
#[get("/devices/admin/devices")]
pub async fn list_admin_devices(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<DeviceListQuery>,
    params: Query<ListParams>,
) -> AppResult<web::Json<DeviceList>> {
    ctx.require(ADMIN)?;
    let scope = Scope::of(&ctx)?;
    let req = list_request(&q, &params)?;
    let mut filter = list_filter(&q)?;
    filter.user_id = q.user_id;
    Ok(web::Json(run_list(&db, &scope, &filter, &req).await?))
}
