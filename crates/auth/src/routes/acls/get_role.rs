//! `GET /auth/roles/acl`.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Query};

use super::MANAGE;
use crate::accounts::acl_edit;
use crate::dto::{RoleAclQuery, RoleAclView};
use crate::routes::State;

/// A role's grants in its tenant (`{false, [], null, null}` when it has none).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(RoleAclQuery),
    responses(
        (status = 200, body = RoleAclView),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/auth/roles/acl")]
pub async fn get_role_acl(
    ctx: AuthContext,
    state: State,
    q: Query<RoleAclQuery>,
) -> AppResult<web::Json<RoleAclView>> {
    ctx.require(MANAGE)?;
    let mut conn = state.db.conn().await?;
    Ok(web::Json(acl_edit::role_acl(&mut conn, &ctx, &q).await?))
}
