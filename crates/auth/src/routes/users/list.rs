//! `GET /auth/users`.

use actix_web::{get, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Query};

use crate::accounts::user_list;
use crate::dto::{UserList, UserListQuery};
use crate::routes::State;

/// Lists users: a super admin sees every tenant, others their own tenant
/// without super admins (and only their organizations when restricted).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(UserListQuery, ListParams),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = UserList),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/auth/users")]
pub async fn list_users(
    ctx: AuthContext,
    state: State,
    q: Query<UserListQuery>,
    list: Query<ListParams>,
) -> AppResult<web::Json<UserList>> {
    ctx.require("auth.users.list")?;
    let mut conn = state.db.conn().await?;
    // Every read is access-logged in the list's own statement.
    let list = user_list::list(&mut conn, &ctx, &q, &list, "/api/auth/users").await?;
    Ok(web::Json(list))
}
