//! `PUT /auth/users/acl`.

use actix_web::{HttpRequest, HttpResponse, put};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::MANAGE;
use crate::accounts::acl_edit;
use crate::dto::{AclSaved, UserAclUpdate};
use crate::routes::State;
use crate::routes::users::with_operation;

/// Sets a user's ACL override (omitted fields keep their values); without
/// features and the super-admin flag the override is removed. An
/// organization restriction needs at least one feature (400).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = UserAclUpdate,
    params(("x-om-ext-optimistic-lock-expected-updated-at" = Option<String>, Header, description = "409 unless the override's updatedAt is this")),
    responses(
        (status = 200, body = AclSaved),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
    )
)]
#[put("/auth/users/acl")]
pub async fn put_user_acl(
    ctx: AuthContext,
    state: State,
    req: HttpRequest,
    body: Json<UserAclUpdate>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let (sanitized, op) = acl_edit::update_user_acl(&state, &ctx, &req, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(AclSaved {
        ok: true,
        sanitized,
    }))
}
