//! `/auth/roles`: list, create, update, delete.

use actix_web::{HttpResponse, delete, get, post, put};
use serde::Serialize;
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppResult, Json, Query};
use utoipa::ToSchema;
use uuid::Uuid;

use super::State;
use super::users::{IdBody, IdQuery, Ok, id_of, with_operation};
use crate::accounts::roles::{self, CreateRole, RoleList, RoleListQuery, UpdateRole};

#[derive(Debug, Serialize, ToSchema)]
pub struct RoleCreated {
    pub id: Uuid,
}

/// Lists roles with their user counts. Super admins see every tenant's roles.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(RoleListQuery, ListParams),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = RoleList),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/auth/roles")]
pub async fn list_roles(
    ctx: AuthContext,
    state: State,
    q: Query<RoleListQuery>,
    list: Query<ListParams>,
) -> AppResult<actix_web::web::Json<RoleList>> {
    ctx.require("auth.roles.list")?;
    let mut conn = state.db.conn().await?;
    Ok(actix_web::web::Json(
        roles::list(&mut conn, &ctx, &q, &list).await?,
    ))
}

/// Creates a role in the caller's tenant (or, for super admins, in `tenantId`).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = CreateRole,
    security(("bearerAuth" = [])),
    responses(
        (status = 201, body = RoleCreated),
        (status = 400, body = ErrorBody, description = "Invalid or reserved name"),
        (status = 401, body = ErrorBody),
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
    ctx.require("auth.roles.manage")?;
    let (id, op) = roles::create(&state, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Created(), &op).json(RoleCreated { id }))
}

/// Renames a role, or moves it to another tenant (super admins, no users).
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = UpdateRole,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody),
    )
)]
#[put("/auth/roles")]
pub async fn update_role(
    ctx: AuthContext,
    state: State,
    body: Json<UpdateRole>,
) -> AppResult<HttpResponse> {
    ctx.require("auth.roles.manage")?;
    let op = roles::update(&state, &ctx, body.into_inner()).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok { ok: true }))
}

/// Deletes a role nobody holds (400 while users are assigned).
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(IdQuery),
    request_body(content = Option<IdBody>, description = "The id may come in a JSON body instead of the query"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody, description = "Missing id, or users hold the role"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/auth/roles")]
pub async fn delete_role(
    ctx: AuthContext,
    state: State,
    q: Query<IdQuery>,
    body: actix_web::web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require("auth.roles.manage")?;
    let id = id_of(&q, &body)?;
    let op = roles::delete(&state, &ctx, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok { ok: true }))
}
