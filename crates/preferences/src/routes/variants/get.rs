//! `GET /auth/sidebar/variants/{id}`.

use actix_web::{HttpRequest, get, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::i18n::request_locale;
use stoa_core::{AppResult, Path};
use uuid::Uuid;

use crate::routes::State;
use crate::service::variants;
use crate::sidebar::dto::VariantResponse;

/// One of the caller's variants.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(("id" = Uuid, Path, description = "Variant id")),
    responses(
        (status = 200, body = VariantResponse),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/auth/sidebar/variants/{id}")]
pub async fn get_variant(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    id: Path<Uuid>,
) -> AppResult<web::Json<VariantResponse>> {
    let scope = variants::scope(&ctx, request_locale(&req))?;
    Ok(web::Json(
        variants::get(&state, scope, id.into_inner()).await?,
    ))
}
