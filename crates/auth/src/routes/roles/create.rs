//! `POST /auth/roles`.

use actix_web::{HttpResponse, post};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::MANAGE;
use crate::accounts::roles;
use crate::dto::{CreateRole, RoleCreated};
use crate::routes::State;
use crate::routes::users::with_operation;

/// Creates a role in the caller's tenant (or, for super admins, in `tenantId`).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = CreateRole,
    responses(
        (status = 201, body = RoleCreated),
        (status = 400, body = ErrorBody, description = "Invalid or reserved name"),
        (status = 403, body = ErrorBody, description = "Missing feature or another tenant"),
        (status = 409, body = ErrorBody, description = "A role with this name exists"),
    )
)]
#[post("/auth/roles")]
pub async fn create_role(
    ctx: AuthContext,
    state: State,
    body: Json<CreateRole>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let (id, op) = roles::create(&state, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(RoleCreated { id }))
}
