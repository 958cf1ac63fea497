//! The collection forms of the sidebar-variant writes, as Open Mercato
//! clients send them: `PUT /auth/sidebar/variants {id, ...}` and
//! `DELETE /auth/sidebar/variants?id=`. Same code as the `/{id}` forms.

use actix_web::{HttpRequest, delete, put, web};
use stoa_acl::AuthContext;
use stoa_core::collection::{CollectionId, WithId};
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::State;
use super::variants::{apply_delete, apply_update};
use crate::sidebar::dto::*;

/// Changes the sent fields of the variant `id` (body, or `?id=`).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(("id" = Option<uuid::Uuid>, Query, description = "Variant id, when not in the body")),
    request_body(content = VariantInput, description = "The fields of `PUT /auth/sidebar/variants/{id}` plus `id`"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = VariantResponse),
        (status = 400, body = ErrorBody, description = "Missing or malformed `id`, or an invalid field"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
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
    apply_update(&req, &ctx, &state, id, body.body.into_inner()).await
}

/// Deletes (soft) the variant `?id=` (or a JSON body `{id}`).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(("id" = Option<uuid::Uuid>, Query, description = "Variant id; may come in a JSON body `{id}` instead")),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = VariantDeleted),
        (status = 400, body = ErrorBody, description = "Missing or malformed `id`"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
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
    apply_delete(&req, &ctx, &state, id).await
}
