//! `GET /devices/admin/devices`.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Query};

use crate::ADMIN;
use crate::dto::{DeviceList, DeviceListQuery};
use crate::service::Scope;
use crate::service::listing::{list_filter, list_request, run_list};

/// Lists the devices of every user in the caller's tenant and organizations;
/// `userId` narrows to one user.
#[utoipa::path(
    tag = "Devices",
    params(DeviceListQuery, ListParams),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = DeviceList),
        (status = 400, body = ErrorBody, description = "Invalid paging, filter, cursor or `ids`"),
        (status = 401, body = ErrorBody),
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
