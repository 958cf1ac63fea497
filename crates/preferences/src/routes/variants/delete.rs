//! `DELETE /auth/sidebar/variants/{id}`.

use actix_web::{HttpRequest, delete, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::i18n::request_locale;
use stoa_core::{AppResult, Path};
use uuid::Uuid;

use crate::routes::State;
use crate::service::variants;
use crate::sidebar::MANAGE;
use crate::sidebar::dto::VariantDeleted;

/// Deletes one of the caller's variants (soft).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(("id" = Uuid, Path, description = "Variant id")),
    responses(
        (status = 200, body = VariantDeleted),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/auth/sidebar/variants/{id}")]
pub async fn delete_variant(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    id: Path<Uuid>,
) -> AppResult<web::Json<VariantDeleted>> {
    ctx.require(MANAGE)?;
    let scope = variants::scope(&ctx, request_locale(&req))?;
    Ok(web::Json(
        variants::delete(&state, &ctx, scope, id.into_inner()).await?,
    ))
}
