//! `GET /auth/features`: every feature the enabled modules check.

use actix_web::{get, web};
use stoa_acl::{AuthContext, Feature};
use stoa_core::AppResult;

use crate::dto::FeatureCatalog;
use crate::routes::State;

/// Every feature the enabled modules check (needs `auth.acl.manage`).
#[utoipa::path(
    tag = "Authentication & Accounts",
    responses(
        (status = 200, body = FeatureCatalog),
    )
)]
#[get("/auth/features")]
pub async fn features(ctx: AuthContext, state: State) -> AppResult<web::Json<FeatureCatalog>> {
    ctx.require("auth.acl.manage")?;
    let mut items: Vec<Feature> = state.registry.features().cloned().collect();
    items.sort_by(|a, b| (a.module, a.id).cmp(&(b.module, b.id)));
    Ok(web::Json(FeatureCatalog {
        items,
        modules: state.registry.modules().cloned().collect(),
    }))
}
