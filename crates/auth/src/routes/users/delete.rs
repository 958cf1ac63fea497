//! `DELETE /auth/users`.

use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Query};

use super::{id_of, with_operation};
use crate::accounts::users;
use crate::dto::{IdBody, IdQuery, Ok};
use crate::routes::State;

/// Deletes a user: memberships, ACL override, sessions and reset tokens go;
/// undo brings everything but the sessions back.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(IdQuery),
    request_body(content = Option<IdBody>, description = "The id may come in a JSON body instead of the query"),
    responses(
        (status = 200, body = Ok),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/auth/users")]
pub async fn delete_user(
    ctx: AuthContext,
    state: State,
    q: Query<IdQuery>,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require("auth.users.delete")?;
    let id = id_of(&q, &body)?;
    let op = users::delete(&state, &ctx, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok { ok: true }))
}
