//! `DELETE /auth/roles`.

use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Query};

use super::MANAGE;
use crate::accounts::roles;
use crate::dto::{IdBody, IdQuery, Ok};
use crate::routes::State;
use crate::routes::users::{id_of, with_operation};

/// Deletes a role nobody holds (400 while users are assigned).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(IdQuery),
    request_body(content = Option<IdBody>, description = "The id may come in a JSON body instead of the query"),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody, description = "Missing id, or users hold the role"),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/auth/roles")]
pub async fn delete_role(
    ctx: AuthContext,
    state: State,
    q: Query<IdQuery>,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let id = id_of(&q, &body)?;
    let op = roles::delete(&state, &ctx, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok { ok: true }))
}
