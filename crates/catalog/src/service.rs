//! The rules of products, between the handlers and the SQL
//! ([`crate::queries`]): who acts where, list requests, and every write in
//! one transaction with its command (the change, its action-log entry and
//! its event commit together). Nothing here builds an HTTP response.

use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde_json::json;
use stoa_acl::resource::{self as kit, Write};
use stoa_acl::{AuthContext, OrganizationDirectory, Scope};
use stoa_core::command::Operation;
use stoa_core::db::Db;
use stoa_core::error::Issue;
use stoa_core::http::read_cache::ReadDeps;
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::{AppError, AppResult, PageQuery};
use stoa_jobs::{Enqueued, JobRecords, JobSpec, enqueue_job};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::commands::{CREATE, DELETE, UPDATE};
use crate::dto::{
    BulkDelete, CreateProduct, ProductCreated, ProductDetail, ProductList, ProductListQuery,
    SortDir, SortField, UpdateProduct,
};
use crate::error::{CatalogError, parse_id};
use crate::model::ProductState;
use crate::queries::{self, ListFilter, ProductKey};
use crate::{MANAGE, VIEW, bulk};

/// The organization a caller's writes go to by default: the selected one,
/// else the home organization (when the caller acts in its own tenant).
pub fn write_organization(ctx: &AuthContext) -> Option<Uuid> {
    ctx.organization_id().or_else(|| {
        ctx.home_organization_id
            .filter(|_| ctx.tenant_id.is_some() && ctx.tenant_id == ctx.actor_tenant_id)
    })
}

// ---------------------------------------------------------------- reads

/// The list's filter and request from the query: paging 1–100 (default 50),
/// the cursor tagged with the sort.
pub fn list_request(
    q: &ProductListQuery,
    params: &ListParams,
) -> AppResult<(ListFilter, ListRequest<ProductKey>)> {
    let page = PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(50, 100)?;
    let sort = q.sort_field.unwrap_or_default();
    let dir = q.sort_dir.unwrap_or(match sort {
        SortField::Title | SortField::Sku => SortDir::Asc,
        SortField::CreatedAt | SortField::UpdatedAt => SortDir::Desc,
    });
    let filter = ListFilter {
        id: q.id,
        search: q
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| format!("%{}%", stoa_core::search::escape_like(s))),
        is_active: q.is_active,
        product_type: q.product_type,
        price_currency: q.price_currency.as_ref().map(|c| c.to_ascii_uppercase()),
        organization_id: q.organization_id,
        sort,
        dir,
    };
    let req = ListRequest::new(page, params, queries::cursor_tag(sort, dir))?;
    Ok((filter, req))
}

/// One page of the caller's products: one statement for the rows, their
/// (capped) total and the versions of what they were read from (the
/// caller's tenant's [`queries::READ_DEPS`]; `None` when no row came back),
/// so the answer can be kept until a product of the tenant changes.
pub async fn list_products(
    db: &Db,
    ctx: &AuthContext,
    q: &ProductListQuery,
    params: &ListParams,
) -> AppResult<(ProductList, ReadDeps, Option<Vec<i64>>)> {
    ctx.require(VIEW)?;
    let scope = Scope::of(ctx)?;
    let (filter, req) = list_request(q, params)?;
    let deps = ReadDeps::new(queries::READ_DEPS, Some(scope.tenant_id));
    let mut conn = db.conn().await?;
    let (rows, counted, versions) = queries::list(&mut conn, &scope, &filter, &req, deps).await?;
    let page = req.finish(rows, counted, |row| queries::key_of(row, filter.sort));
    let list = ProductList {
        page: page.map(Into::into),
    };
    Ok((list, deps, versions))
}

/// One product of the caller's tenant and organizations (404 otherwise, as
/// an unknown one: `AuthContext::require_readable`).
pub async fn product_detail(db: &Db, ctx: &AuthContext, raw_id: &str) -> AppResult<ProductDetail> {
    let mut conn = db.conn().await?;
    product_detail_in(&mut conn, ctx, raw_id).await
}

/// [`product_detail`] on the caller's connection (an AI tool's, inside the
/// confirm's transaction).
pub async fn product_detail_in(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    raw_id: &str,
) -> AppResult<ProductDetail> {
    ctx.require(VIEW)?;
    let id = parse_id(raw_id)?;
    let scope = Scope::of(ctx)?;
    let row = queries::find(conn, scope.tenant_id, id)
        .await?
        .ok_or(CatalogError::NotFound)?;
    ctx.require_readable(Some(row.tenant_id), Some(row.organization_id), || {
        CatalogError::NotFound.into()
    })?;
    Ok(ProductDetail { item: row.into() })
}

// ---------------------------------------------------------------- writes

fn trimmed(value: Option<String>) -> Option<String> {
    value
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// 400 naming `priceCurrency`: an amount without a currency.
fn currency_required() -> AppError {
    AppError::bad_request("Invalid input: priceCurrency: Required with priceAmount").with_issues(
        vec![Issue {
            path: vec!["priceCurrency".into()],
            message: "Required with priceAmount".into(),
            code: "invalid_type".into(),
        }],
    )
}

/// Checks that `organization` may hold the caller's products: inside its
/// organizations (403) and a live organization of the tenant (400).
async fn check_organization(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    organizations: &dyn OrganizationDirectory,
    tenant: Uuid,
    organization: Uuid,
) -> Result<(), AppError> {
    ctx.require_organizations([Some(organization)])?;
    if !organizations
        .organization_exists(conn, tenant, organization)
        .await?
    {
        return Err(CatalogError::OrganizationNotFound.into());
    }
    Ok(())
}

/// Creates a product: `{id}` and the operation.
pub async fn create_product(
    db: &Db,
    ctx: &AuthContext,
    organizations: &dyn OrganizationDirectory,
    body: CreateProduct,
) -> AppResult<(ProductCreated, Operation)> {
    ctx.require(MANAGE)?;
    let tenant = ctx.tenant()?;
    let organization = body
        .organization_id
        .or_else(|| write_organization(ctx))
        .ok_or(CatalogError::OrganizationRequired)?;
    let now = OffsetDateTime::now_utc();
    let product = ProductState {
        id: Uuid::new_v4(),
        tenant_id: tenant,
        organization_id: organization,
        title: body.title.trim().to_string(),
        subtitle: trimmed(body.subtitle),
        description: body.description.filter(|d| !d.trim().is_empty()),
        sku: trimmed(body.sku),
        handle: trimmed(body.handle).map(|h| h.to_ascii_lowercase()),
        product_type: body.product_type.unwrap_or_default().as_str().to_string(),
        is_active: body.is_active.unwrap_or(true),
        price_amount: body.price_amount,
        price_currency: body.price_currency.map(|c| c.to_ascii_uppercase()),
        created_at: now,
        updated_at: now,
    };
    let id = product.id;
    let mut conn = db.conn().await?;
    let (_, op) = conn
        .transaction(async |conn| {
            check_organization(conn, ctx, organizations, tenant, organization).await?;
            let how = Write::new(CREATE, "Create product");
            kit::create_in(conn, ctx, None, how, product).await
        })
        .await?;
    Ok((ProductCreated { id }, op))
}

/// `before` changed as `body` says; 400 when the result would have an
/// amount without a currency.
fn changed(before: &ProductState, body: UpdateProduct) -> Result<ProductState, AppError> {
    let mut after = before.clone();
    if let Some(v) = body.price_amount {
        after.price_amount = v;
    }
    if let Some(v) = &body.price_currency {
        after.price_currency = v.clone();
    }
    if after.price_amount.is_some() && after.price_currency.is_none() {
        return Err(currency_required());
    }
    after.price_currency = after.price_currency.map(|c| c.to_ascii_uppercase());
    if let Some(v) = body.organization_id {
        after.organization_id = v;
    }
    if let Some(v) = body.title {
        after.title = v.trim().to_string();
    }
    if let Some(v) = body.subtitle {
        after.subtitle = trimmed(v);
    }
    if let Some(v) = body.description {
        after.description = v.filter(|d| !d.trim().is_empty());
    }
    if let Some(v) = body.sku {
        after.sku = trimmed(v);
    }
    if let Some(v) = body.handle {
        after.handle = trimmed(v).map(|h| h.to_ascii_lowercase());
    }
    if let Some(v) = body.product_type {
        after.product_type = v.as_str().to_string();
    }
    if let Some(v) = body.is_active {
        after.is_active = v;
    }
    Ok(after)
}

/// Updates product `raw_id` (path or collection form); `expected` is the
/// optimistic-lock header's `updatedAt`.
pub async fn update_product(
    db: &Db,
    ctx: &AuthContext,
    organizations: &dyn OrganizationDirectory,
    raw_id: &str,
    body: UpdateProduct,
    expected: Option<OffsetDateTime>,
) -> AppResult<Operation> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        update_product_in(conn, ctx, organizations, raw_id, body, expected).await
    })
    .await
}

/// [`update_product`] as a step of the caller's transaction on `conn` (the
/// AI confirm): locks the product, checks it and writes it through the
/// update command; the caller commits or rolls back.
pub async fn update_product_in(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    organizations: &dyn OrganizationDirectory,
    raw_id: &str,
    body: UpdateProduct,
    expected: Option<OffsetDateTime>,
) -> AppResult<Operation> {
    ctx.require(MANAGE)?;
    let id = parse_id(raw_id)?;
    let tenant = ctx.tenant()?;
    let before = kit::locked_in::<ProductState>(conn, ctx, id, expected).await?;
    let after = changed(&before, body)?;
    if after.organization_id != before.organization_id {
        check_organization(conn, ctx, organizations, tenant, after.organization_id).await?;
    }
    let how = Write::new(UPDATE, "Update product");
    let (_, op) = kit::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
    Ok(op)
}

/// Deletes product `raw_id` for good (undoable).
pub async fn delete_product(
    db: &Db,
    ctx: &AuthContext,
    raw_id: &str,
    expected: Option<OffsetDateTime>,
) -> AppResult<Operation> {
    ctx.require(MANAGE)?;
    let id = parse_id(raw_id)?;
    ctx.tenant()?;
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let how = Write::new(DELETE, "Delete product");
        kit::delete_in::<ProductState>(conn, ctx, how, id, expected).await
    })
    .await
}

/// Starts a bulk delete: the job and, where the program keeps job records
/// (`records`: stoa's server registers progress's), its record, created in
/// one transaction in the caller's scope. Duplicate ids are dropped (first
/// occurrence kept). Which products exist and may be deleted is the job's
/// to find out, as the creator, unit by unit ([`bulk`]).
pub async fn start_bulk_delete(
    db: &Db,
    records: Option<&dyn JobRecords>,
    ctx: &AuthContext,
    body: BulkDelete,
) -> AppResult<Enqueued> {
    ctx.require(MANAGE)?;
    ctx.tenant()?;
    let mut seen = std::collections::HashSet::with_capacity(body.ids.len());
    let ids: Vec<Uuid> = body.ids.into_iter().filter(|id| seen.insert(*id)).collect();
    let name = match body.scope {
        crate::dto::BulkScope::Selected => "Delete selected products",
        crate::dto::BulkScope::Filtered => "Delete filtered products",
    };
    let spec = JobSpec::new(bulk::KIND, json!({ "ids": ids }), ids.len())
        .name(name)
        .description(format!(
            "{} catalog products queued for deletion",
            ids.len()
        ))
        .meta(json!({"source": "catalog.bulk-delete", "scope": body.scope.as_str()}));
    let mut conn = db.conn().await?;
    let queued = conn
        .transaction(async |conn| enqueue_job(conn, records, ctx, spec).await)
        .await?;
    stoa_jobs::wake_workers();
    Ok(queued)
}
