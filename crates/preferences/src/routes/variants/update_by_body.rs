//! `PUT /auth/sidebar/variants {id, ...}` (or `?id=`): the collection form
//! of `PUT /auth/sidebar/variants/{id}`, as Open Mercato clients send it.

use actix_web::{HttpRequest, put, web};
use stoa_acl::AuthContext;
use stoa_core::collection::WithId;
use stoa_core::error::ErrorBody;
use stoa_core::i18n::request_locale;
use stoa_core::{AppResult, Json};

use crate::routes::State;
use crate::service::variants;
use crate::sidebar::MANAGE;
use crate::sidebar::dto::{VariantInput, VariantResponse};

/// Changes the sent fields of the variant `id` (body, or `?id=`).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(("id" = Option<uuid::Uuid>, Query, description = "Variant id, when not in the body")),
    request_body(content = VariantInput, description = "The fields of `PUT /auth/sidebar/variants/{id}` plus `id`"),
    responses(
        (status = 200, body = VariantResponse),
        (status = 400, body = ErrorBody, description = "Missing or malformed `id`, or an invalid field"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "`duplicate_name`"),
    )
)]
#[put("/auth/sidebar/variants")]
pub async fn update_variant_by_body(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    body: WithId<Json<VariantInput>>,
) -> AppResult<web::Json<VariantResponse>> {
    let id = body.id.uuid()?;
    ctx.require(MANAGE)?;
    let scope = variants::scope(&ctx, request_locale(&req))?;
    let updated = variants::update(&state, &ctx, scope, id, body.body.into_inner()).await?;
    Ok(web::Json(updated))
}
