//! `GET /auth/users/acl`.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::{AppResult, Query};

use super::MANAGE;
use crate::accounts::acl_edit;
use crate::dto::{UserAclQuery, UserAclView};
use crate::routes::State;

/// A user's ACL override (`hasCustomAcl: false` when the roles apply).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(UserAclQuery),
    responses(
        (status = 200, body = UserAclView),
    )
)]
#[get("/auth/users/acl")]
pub async fn get_user_acl(
    ctx: AuthContext,
    state: State,
    q: Query<UserAclQuery>,
) -> AppResult<web::Json<UserAclView>> {
    ctx.require(MANAGE)?;
    let mut conn = state.db.conn().await?;
    Ok(web::Json(acl_edit::user_acl(&mut conn, &ctx, &q).await?))
}
