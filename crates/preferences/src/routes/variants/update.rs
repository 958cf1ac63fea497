//! `PUT /auth/sidebar/variants/{id}`.

use actix_web::{HttpRequest, put, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::i18n::request_locale;
use stoa_core::{AppResult, Json, Path};
use uuid::Uuid;

use crate::routes::State;
use crate::service::variants;
use crate::sidebar::MANAGE;
use crate::sidebar::dto::{VariantInput, VariantResponse};

/// Changes the sent fields of one of the caller's variants.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(("id" = Uuid, Path, description = "Variant id")),
    request_body = VariantInput,
    responses(
        (status = 200, body = VariantResponse),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "`duplicate_name`"),
    )
)]
#[put("/auth/sidebar/variants/{id}")]
pub async fn update_variant(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    id: Path<Uuid>,
    body: Json<VariantInput>,
) -> AppResult<web::Json<VariantResponse>> {
    ctx.require(MANAGE)?;
    let scope = variants::scope(&ctx, request_locale(&req))?;
    let updated = variants::update(&state, &ctx, scope, id.into_inner(), body.into_inner()).await?;
    Ok(web::Json(updated))
}
