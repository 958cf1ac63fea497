//! `POST /auth/users`.

use actix_web::{HttpResponse, post};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::with_operation;
use crate::accounts::users;
use crate::dto::{CreateUser, Created};
use crate::routes::State;

/// Creates a confirmed user with a password, or with an e-mailed invitation
/// to choose one (`sendInviteEmail`).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = CreateUser,
    responses(
        (status = 201, body = Created, description = "Created; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "Invalid input, unknown organization or role, e-mail in use, weak password"),
        (status = 403, body = ErrorBody, description = "Missing feature, organization out of scope, or a role the caller may not grant"),
    )
)]
#[post("/auth/users")]
pub async fn create_user(
    ctx: AuthContext,
    state: State,
    body: Json<CreateUser>,
) -> AppResult<HttpResponse> {
    ctx.require("auth.users.create")?;
    let (created, op) = users::create(&state, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(created))
}
