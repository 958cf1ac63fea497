//! `/auth/users`: list, create, update, delete.

use actix_web::{HttpResponse, delete, get, post, put};
use serde::{Deserialize, Serialize};
use stoa_acl::AuthContext;
pub use stoa_core::command::with_operation;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppError, AppResult, Json, Query};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::Validate;

use super::State;
use crate::accounts::user_list::{self, UserList, UserListQuery};
use crate::accounts::users::{self, CreateUser, Created, UpdateUser};

/// `{ok: true}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Ok {
    pub ok: bool,
}

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
) -> AppResult<actix_web::web::Json<UserList>> {
    ctx.require("auth.users.list")?;
    let mut conn = state.db.conn().await?;
    // Every read is access-logged in the list's own statement.
    let list = user_list::list(&mut conn, &ctx, &q, &list, "/api/auth/users").await?;
    Ok(actix_web::web::Json(list))
}

/// Creates a confirmed user with a password, or with an e-mailed invitation
/// to choose one (`sendInviteEmail`).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = CreateUser,
    security(("bearerAuth" = [])),
    responses(
        (status = 201, body = Created, description = "Created; `x-om-operation` carries the undo token"),
        (status = 400, body = ErrorBody, description = "Invalid input, unknown organization or role, e-mail in use, weak password"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Missing feature, organization out of scope, or a role the caller may not grant"),
    )
)]
#[post("/auth/users")]
pub async fn create_user(
    ctx: AuthContext,
    state: State,
    body: Json<CreateUser>,
) -> AppResult<HttpResponse> {
    ctx.require("auth.users.create")?;
    let (created, op) = users::create(&state, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(created))
}

/// Updates a user; `roles` replaces the memberships, a password change ends
/// the user's sessions.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = UpdateUser,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/auth/users")]
pub async fn update_user(
    ctx: AuthContext,
    state: State,
    body: Json<UpdateUser>,
) -> AppResult<HttpResponse> {
    ctx.require("auth.users.edit")?;
    let op = users::update(&state, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok { ok: true }))
}

#[derive(Debug, Deserialize, Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IdQuery {
    pub id: Option<String>,
}

/// The alternative delete body `{id}`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct IdBody {
    pub id: Uuid,
}

/// The `id` of a delete: the query's, else the JSON body's.
pub fn id_of(query: &IdQuery, body: &[u8]) -> Result<Uuid, AppError> {
    #[derive(Deserialize)]
    struct Body {
        id: Option<String>,
    }
    stoa_core::extract::check_json_body(body)?;
    let raw = query
        .id
        .clone()
        .or_else(|| serde_json::from_slice::<Body>(body).ok().and_then(|b| b.id));
    raw.as_deref()
        .map(str::trim)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| AppError::bad_request("Invalid query parameters: id: a uuid is required"))
}

/// Deletes a user: memberships, ACL override, sessions and reset tokens go;
/// undo brings everything but the sessions back.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(IdQuery),
    request_body(content = Option<IdBody>, description = "The id may come in a JSON body instead of the query"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/auth/users")]
pub async fn delete_user(
    ctx: AuthContext,
    state: State,
    q: Query<IdQuery>,
    body: actix_web::web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require("auth.users.delete")?;
    let id = id_of(&q, &body)?;
    let op = users::delete(&state, &ctx, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok { ok: true }))
}
