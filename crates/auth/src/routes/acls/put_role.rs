//! `PUT /auth/roles/acl`.

use actix_web::{HttpRequest, HttpResponse, put};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json};

use super::MANAGE;
use crate::accounts::acl_edit;
use crate::dto::{AclSaved, RoleAclUpdate};
use crate::routes::State;
use crate::routes::users::with_operation;

/// Replaces a role's features, super-admin flag and organization list
/// (omitted fields keep their values). Unknown features are dropped
/// (`sanitized: true`); granting what the caller does not hold is 403.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = RoleAclUpdate,
    params(("x-om-ext-optimistic-lock-expected-updated-at" = Option<String>, Header, description = "409 unless the ACL's updatedAt is this")),
    responses(
        (status = 200, body = AclSaved),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
    )
)]
#[put("/auth/roles/acl")]
pub async fn put_role_acl(
    ctx: AuthContext,
    state: State,
    req: HttpRequest,
    body: Json<RoleAclUpdate>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let (sanitized, op) = acl_edit::update_role_acl(&state, &ctx, &req, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(AclSaved {
        ok: true,
        sanitized,
    }))
}
