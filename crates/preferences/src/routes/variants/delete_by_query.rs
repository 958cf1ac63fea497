//! `DELETE /auth/sidebar/variants?id=` (or body `{id}`): the collection form
//! of `DELETE /auth/sidebar/variants/{id}`, as Open Mercato clients send it.

use actix_web::{HttpRequest, delete, web};
use stoa_acl::AuthContext;
use stoa_core::AppResult;
use stoa_core::collection::CollectionId;
use stoa_core::error::ErrorBody;
use stoa_core::i18n::request_locale;

use crate::routes::State;
use crate::service::variants;
use crate::sidebar::MANAGE;
use crate::sidebar::dto::VariantDeleted;

/// Deletes (soft) the variant `?id=` (or a JSON body `{id}`).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(("id" = Option<uuid::Uuid>, Query, description = "Variant id; may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    responses(
        (status = 200, body = VariantDeleted),
        (status = 400, body = ErrorBody, description = "Missing or malformed `id`"),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/auth/sidebar/variants")]
pub async fn delete_variant_by_query(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    id: CollectionId,
) -> AppResult<web::Json<VariantDeleted>> {
    let id = id.uuid()?;
    ctx.require(MANAGE)?;
    let scope = variants::scope(&ctx, request_locale(&req))?;
    Ok(web::Json(variants::delete(&state, &ctx, scope, id).await?))
}
