use actix_web::{HttpResponse, delete, get, post, put, web};
use stoa_acl::{AuthContext, Registry};
use stoa_core::collection::CollectionId;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::pagination::total_pages;
use stoa_core::{AppResult, Json, PageQuery, Query};

use super::require_super_admin;
use crate::commands::TenantCommand;
use crate::model::*;
use crate::service::PgDirectory;

const VIEW: &str = "directory.tenants.view";
const MANAGE: &str = "directory.tenants.manage";

/// Lists tenants (super admins with `directory.tenants.view`).
#[utoipa::path(
    tag = "Directory",
    params(TenantListQuery),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = TenantList),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/directory/tenants")]
pub async fn list_tenants(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<TenantListQuery>,
) -> AppResult<web::Json<TenantList>> {
    require_super_admin(&ctx, VIEW)?;
    let page = PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(50, 100)?;
    let mut conn = db.conn().await?;
    let (rows, total) = PgDirectory
        .list_tenants_as_superadmin(&mut conn, &q, page)
        .await?;
    let total = u64::try_from(total).unwrap_or(0);
    let ids: Vec<String> = rows.iter().map(|r| r.id.to_string()).collect();
    stoa_core::command::access::record(
        &mut conn,
        &ctx.actor(),
        "directory.tenant",
        &ids,
        q.id.is_some(),
        &["id", "name", "isActive", "createdAt", "updatedAt"],
        Some(serde_json::json!({"resultCount": ids.len(), "path": "/api/directory/tenants"})),
    )
    .await?;
    Ok(web::Json(TenantList {
        items: rows.into_iter().map(TenantItem::from).collect(),
        total,
        page: page.page,
        page_size: page.page_size,
        total_pages: total_pages(total, page.page_size),
    }))
}

/// Creates a tenant, provisioned like `stoa init`: a root organization of the
/// same name, the default roles with every module's default grants, and every
/// module's seed data.
#[utoipa::path(
    tag = "Directory",
    request_body = CreateTenant,
    security(("bearerAuth" = [])),
    responses(
        (status = 201, body = Created),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[post("/directory/tenants")]
pub async fn create_tenant(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: Option<web::Data<Registry>>,
    body: Json<CreateTenant>,
) -> AppResult<HttpResponse> {
    require_super_admin(&ctx, MANAGE)?;
    // The registry (registered by stoa-auth) names every module's seeders;
    // without it the tenant gets its root organization only.
    let registry = registry.map(|r| r.into_inner()).unwrap_or_default();
    let command = TenantCommand::Create(body.into_inner(), registry);
    let id = run(&ctx, &db, command).await?;
    Ok(HttpResponse::Created().json(Created { id }))
}

/// Updates a tenant's name or active flag; omitted fields keep their values.
#[utoipa::path(
    tag = "Directory",
    request_body = UpdateTenant,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[put("/directory/tenants")]
pub async fn update_tenant(
    ctx: AuthContext,
    db: web::Data<Db>,
    body: Json<UpdateTenant>,
) -> AppResult<web::Json<Ok>> {
    require_super_admin(&ctx, MANAGE)?;
    run(&ctx, &db, TenantCommand::Update(body.into_inner())).await?;
    Ok(web::Json(Ok::yes()))
}

/// Soft-deletes a tenant.
#[utoipa::path(
    tag = "Directory",
    params(IdQuery),
    request_body(content = Option<stoa_core::collection::IdBody>, description = "The id may come in a JSON body `{id}` instead of the query (as Open Mercato clients send it)"),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/directory/tenants")]
pub async fn delete_tenant(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: CollectionId,
) -> AppResult<web::Json<Ok>> {
    require_super_admin(&ctx, MANAGE)?;
    run(&ctx, &db, TenantCommand::Delete(id.uuid()?)).await?;
    Ok(web::Json(Ok::yes()))
}

/// Runs a tenant command in its own transaction (logged, not undoable).
async fn run(ctx: &AuthContext, db: &Db, command: TenantCommand) -> AppResult<uuid::Uuid> {
    let actor = ctx.actor();
    let (id, _) = db
        .transaction::<_, stoa_core::AppError, _>(|conn| {
            Box::pin(async move { stoa_core::command::execute(conn, &actor, command).await })
        })
        .await?;
    Ok(id)
}
