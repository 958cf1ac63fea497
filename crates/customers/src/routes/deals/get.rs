//! `GET /customers/deals/{id}`: one deal with its pipeline's stages and owner.

use actix_web::{get, web};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Path};
use uuid::Uuid;

use crate::DEALS_VIEW;
use crate::dto::DealDetail;
use crate::service::deals;

#[utoipa::path(
    tag = "Customers",
    params(("id" = Uuid, Path, description = "Deal id")),
    responses(
        (status = 200, body = DealDetail),
        (status = 400, body = ErrorBody, description = "Malformed id"),
        (status = 404, body = ErrorBody, description = "`Deal not found` (also: other tenants, organizations the caller does not see)"),
    )
)]
#[get("/customers/deals/{id}")]
pub async fn get_deal(
    ctx: AuthContext,
    db: web::Data<Db>,
    users: web::Data<dyn UserDirectory>,
    id: Path<Uuid>,
) -> AppResult<web::Json<DealDetail>> {
    ctx.require(DEALS_VIEW)?;
    let mut conn = db.conn().await?;
    Ok(web::Json(
        deals::detail(&mut conn, &ctx, users.as_ref(), id.into_inner()).await?,
    ))
}
