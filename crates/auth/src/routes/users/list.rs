//! `GET /auth/users`.

use actix_web::{HttpRequest, HttpResponse, get};
use stoa_acl::AuthContext;
use stoa_core::http::read_cache::{ReadLog, answer_json};
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Query};

use crate::accounts::user_list;
use crate::dto::{UserList, UserListQuery};
use crate::routes::{State, read_log};

/// Lists users: a super admin sees every tenant, others their own tenant
/// without super admins (and only their organizations when restricted).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(UserListQuery, ListParams),
    responses(
        (status = 200, body = UserList),
    )
)]
#[get("/auth/users")]
pub async fn list_users(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    q: Query<UserListQuery>,
    list: Query<ListParams>,
) -> AppResult<HttpResponse> {
    ctx.require("auth.users.list")?;
    let mut conn = state.db.conn().await?;
    // Every read is access-logged in the list's own statement; the answer is
    // kept with that entry, which each later use writes again.
    let listed = user_list::list(&mut conn, &ctx, &q, &list, PATH).await?;
    let log = ReadLog {
        actor: ctx.actor(),
        resource_kind: read_log::USER,
        ids: listed
            .list
            .page
            .items
            .iter()
            .map(|u| u.id.to_string())
            .collect(),
        by_id: listed.by_id,
        fields: listed.fields,
        path: PATH,
    };
    answer_json(
        &req,
        ctx.read_owner(),
        &listed.list,
        listed.deps,
        listed.versions,
        Some(log),
    )
}

/// The path the access log records.
const PATH: &str = "/api/auth/users";
