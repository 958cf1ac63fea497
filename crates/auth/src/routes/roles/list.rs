//! `GET /auth/roles`.

use actix_web::{HttpRequest, HttpResponse, get};
use stoa_acl::AuthContext;
use stoa_core::http::read_cache::answer_json;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Query};

use super::LIST;
use crate::accounts::roles;
use crate::dto::{RoleList, RoleListQuery};
use crate::routes::State;

/// Lists roles with their user counts. Super admins see every tenant's roles.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(RoleListQuery, ListParams),
    responses(
        (status = 200, body = RoleList),
    )
)]
#[get("/auth/roles")]
pub async fn list_roles(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    q: Query<RoleListQuery>,
    list: Query<ListParams>,
) -> AppResult<HttpResponse> {
    ctx.require(LIST)?;
    let mut conn = state.db.conn().await?;
    let (list, deps, versions) = roles::list(&mut conn, &ctx, &q, &list).await?;
    // Role lists are not access-logged: they carry no personal data.
    answer_json(&req, ctx.read_owner(), &list, deps, versions, None)
}
