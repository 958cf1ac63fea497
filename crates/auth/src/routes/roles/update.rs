//! `PUT /auth/roles`.

use actix_web::{HttpResponse, put};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::MANAGE;
use crate::accounts::roles;
use crate::dto::{Ok, UpdateRole};
use crate::routes::State;
use crate::routes::users::with_operation;

/// Renames a role, or moves it to another tenant (super admins, no users).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = UpdateRole,
    responses(
        (status = 200, body = Ok),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
    )
)]
#[put("/auth/roles")]
pub async fn update_role(
    ctx: AuthContext,
    state: State,
    body: Json<UpdateRole>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let op = roles::update(&state, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok { ok: true }))
}
