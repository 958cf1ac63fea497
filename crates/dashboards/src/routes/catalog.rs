//! `GET /dashboards/widgets/catalog`.

use actix_web::{HttpResponse, get, web};
use stoa_acl::{AuthContext, Registry};
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;

use crate::dto::Catalog;
use crate::widgets::CatalogEntry;

/// Every registered widget whose features the caller holds, in registry order.
#[utoipa::path(
    tag = super::TAG,
    responses(
        (status = 200, body = Catalog),
        (status = 403, body = ErrorBody, description = "Missing `dashboards.admin.assign-widgets`"),
    )
)]
#[get("/dashboards/widgets/catalog")]
pub async fn widget_catalog(
    ctx: AuthContext,
    registry: web::Data<Registry>,
) -> AppResult<HttpResponse> {
    ctx.require(crate::ASSIGN)?;
    let items = registry
        .widgets()
        .iter()
        .filter(|w| w.features.iter().all(|f| ctx.has(f)))
        .map(CatalogEntry::from)
        .collect();
    Ok(HttpResponse::Ok().json(Catalog { items }))
}
