//! Thin handlers: extract, authorize, call the service, respond.

use actix_web::{HttpResponse, delete, get, post, web};
use stoa_acl::{AuthContext, RoleDirectory};
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::list::ListParams;
use stoa_core::{AppError, AppResult, Json, PageQuery, Query};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::commands::{CreateKeyCommand, DeleteKeyCommand};
use crate::error::ApiKeysError;
use crate::model::*;
use crate::service::{self, ListScope};

pub const VIEW: &str = "api_keys.view";
pub const CREATE: &str = "api_keys.create";
pub const DELETE: &str = "api_keys.delete";

/// Lists the live keys of the caller's tenant and organization scope, newest
/// first. Never returns a secret or hash.
#[utoipa::path(
    tag = "API Keys",
    params(ApiKeyListQuery, ListParams),
    security(("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 200, body = ApiKeyList),
        (status = 400, body = ErrorBody, description = "Bad paging or cursor, or no tenant context"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/api_keys/keys")]
pub async fn list_keys(
    ctx: AuthContext,
    db: web::Data<Db>,
    roles: web::Data<dyn RoleDirectory>,
    q: Query<ApiKeyListQuery>,
    params: Query<ListParams>,
) -> AppResult<web::Json<ApiKeyList>> {
    ctx.require(VIEW)?;
    let tenant_id = ctx.tenant_id.ok_or(ApiKeysError::TenantRequired)?;
    let page = PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(20, 200)?;
    let req = service::list_request(page, &params)?;
    let scope = ListScope {
        tenant_id,
        organizations: ctx.acl.visible_organization_ids.as_deref(),
    };
    let mut conn = db.conn().await?;
    let list = service::list(
        &mut conn,
        roles.get_ref(),
        &scope,
        q.search.as_deref(),
        &req,
    )
    .await?;
    Ok(web::Json(list))
}

/// Creates a key; the response carries its secret, shown this once. The key
/// can never carry more than its creator holds.
#[utoipa::path(
    tag = "API Keys",
    request_body = CreateApiKey,
    security(("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 201, body = CreatedApiKey),
        (status = 400, body = ErrorBody, description = "Invalid input, unknown role, past expiry, no tenant context"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Missing feature, foreign tenant, organization out of scope, or a role granting more than the caller holds"),
    )
)]
#[post("/api_keys/keys")]
pub async fn create_key(
    ctx: AuthContext,
    db: web::Data<Db>,
    roles: web::Data<dyn RoleDirectory>,
    body: Json<CreateApiKey>,
) -> AppResult<HttpResponse> {
    ctx.require(CREATE)?;
    let actor = ctx.actor();
    let input = body.into_inner();
    let (created, _) = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let now = OffsetDateTime::now_utc();
                let key = service::prepare(conn, roles.get_ref(), &ctx, input, now).await?;
                stoa_core::command::execute(conn, &actor, CreateKeyCommand(key)).await
            })
        })
        .await?;
    // The secret is in the body: no browser or proxy may keep a copy.
    Ok(HttpResponse::Created()
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
        .json(created))
}

/// Soft-deletes a key of the caller's tenant and scope (and the keys created
/// through it). Unknown, foreign and out-of-scope keys all answer 404.
#[utoipa::path(
    tag = "API Keys",
    params(ApiKeyIdQuery),
    security(("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 200, body = ApiKeyDeleted),
        (status = 400, body = ErrorBody, description = "Missing or malformed id, no tenant context"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/api_keys/keys")]
pub async fn delete_key(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<ApiKeyIdQuery>,
) -> AppResult<web::Json<ApiKeyDeleted>> {
    ctx.require(DELETE)?;
    let id: Uuid =
        q.id.as_deref()
            .map(str::trim)
            .and_then(|s| s.parse().ok())
            .ok_or(ApiKeysError::IdRequired)?;
    let tenant_id = ctx.tenant_id.ok_or(ApiKeysError::TenantRequired)?;
    let command = DeleteKeyCommand {
        tenant_id,
        id,
        organizations: if ctx.is_super_admin() {
            None
        } else {
            ctx.acl.visible_organization_ids.clone()
        },
    };
    let actor = ctx.actor();
    db.transaction::<_, AppError, _>(|conn| {
        Box::pin(async move { stoa_core::command::execute(conn, &actor, command).await })
    })
    .await?;
    Ok(web::Json(ApiKeyDeleted { success: true }))
}
