//! `PUT /auth/users`.

use actix_web::{HttpResponse, put};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::with_operation;
use crate::accounts::users;
use crate::dto::{Ok, UpdateUser};
use crate::routes::State;

/// Updates a user; `roles` replaces the memberships, a password change ends
/// the user's sessions.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = UpdateUser,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/auth/users")]
pub async fn update_user(
    ctx: AuthContext,
    state: State,
    body: Json<UpdateUser>,
) -> AppResult<HttpResponse> {
    ctx.require("auth.users.edit")?;
    let op = users::update(&state, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok { ok: true }))
}
