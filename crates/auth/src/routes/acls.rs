//! `/auth/roles/acl` and `/auth/users/acl`: read and replace grants.

use actix_web::{HttpRequest, HttpResponse, get, put};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Json, Query};

use super::State;
use super::users::with_operation;
use crate::accounts::acl_edit::{
    self, AclSaved, RoleAclQuery, RoleAclUpdate, RoleAclView, UserAclQuery, UserAclUpdate,
    UserAclView,
};

const MANAGE: &str = "auth.acl.manage";

/// A role's grants in its tenant (`{false, [], null, null}` when it has none).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(RoleAclQuery),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = RoleAclView),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/auth/roles/acl")]
pub async fn get_role_acl(
    ctx: AuthContext,
    state: State,
    q: Query<RoleAclQuery>,
) -> AppResult<actix_web::web::Json<RoleAclView>> {
    ctx.require(MANAGE)?;
    let mut conn = state.db.conn().await?;
    Ok(actix_web::web::Json(
        acl_edit::role_acl(&mut conn, &ctx, &q).await?,
    ))
}

/// Replaces a role's features, super-admin flag and organization list
/// (omitted fields keep their values). Unknown features are dropped
/// (`sanitized: true`); granting what the caller does not hold is 403.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = RoleAclUpdate,
    params(("x-om-ext-optimistic-lock-expected-updated-at" = Option<String>, Header, description = "409 unless the ACL's updatedAt is this")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = AclSaved),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
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

/// A user's ACL override (`hasCustomAcl: false` when the roles apply).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(UserAclQuery),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = UserAclView),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/auth/users/acl")]
pub async fn get_user_acl(
    ctx: AuthContext,
    state: State,
    q: Query<UserAclQuery>,
) -> AppResult<actix_web::web::Json<UserAclView>> {
    ctx.require(MANAGE)?;
    let mut conn = state.db.conn().await?;
    Ok(actix_web::web::Json(
        acl_edit::user_acl(&mut conn, &ctx, &q).await?,
    ))
}

/// Sets a user's ACL override (omitted fields keep their values); without
/// features and the super-admin flag the override is removed. An
/// organization restriction needs at least one feature (400).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = UserAclUpdate,
    params(("x-om-ext-optimistic-lock-expected-updated-at" = Option<String>, Header, description = "409 unless the override's updatedAt is this")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = AclSaved),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
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
