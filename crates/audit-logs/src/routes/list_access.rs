//! `GET /audit_logs/audit-logs/access`.

use actix_web::{get, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::command::schema::access_logs;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::pagination::total_pages;
use stoa_core::{AppResult, Query};

use super::VIEW;
use crate::dto::{AccessItem, AccessList, AccessQuery};
use crate::error::AuditLogError;
use crate::queries::{AccessRow, access_filtered, instant, name, names, visibility};

/// Lists access-log entries (the caller's own, or another user's with `audit_logs.view_tenant`).
#[utoipa::path(
    tag = "Audit Logs",
    params(AccessQuery),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = AccessList),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/audit_logs/audit-logs/access")]
pub async fn list_access(
    ctx: AuthContext,
    db: web::Data<Db>,
    users: web::Data<dyn UserDirectory>,
    q: Query<AccessQuery>,
) -> AppResult<web::Json<AccessList>> {
    ctx.require(VIEW)?;
    let vis = visibility(&ctx, q.organization_id, &None)?;
    let size = q.page_size.or(q.limit).unwrap_or(50);
    let page = q.page.unwrap_or(1);
    if !(1..=200).contains(&size) || !(1..=1_000_000).contains(&page) {
        return Err(AuditLogError::InvalidQuery(
            "page must be ≥ 1 and pageSize between 1 and 200".into(),
        )
        .into());
    }
    let actor = match q.actor_user_id {
        Some(other) if vis.can_view_tenant => Some(other),
        _ => ctx.actor_id(),
    };
    let before = instant("before", &q.before)?;
    let after = instant("after", &q.after)?;
    let filtered = || access_filtered(&q, &vis, actor, before, after);
    let mut conn = db.conn().await?;
    let rows: Vec<AccessRow> = filtered()
        .order((access_logs::created_at.desc(), access_logs::id.desc()))
        .select(AccessRow::as_select())
        .offset(i64::try_from((page - 1) * size).unwrap_or(0))
        .limit(i64::try_from(size).unwrap_or(50))
        .load(&mut *conn)
        .await?;
    let total: i64 = filtered().count().get_result(&mut *conn).await?;
    let total = u64::try_from(total).unwrap_or(0);
    let names = names(
        &mut conn,
        users.get_ref(),
        rows.iter()
            .map(|r| (r.actor_user_id, r.tenant_id, r.organization_id)),
    )
    .await?;
    let items = rows
        .into_iter()
        .map(|r| AccessItem {
            actor_user_name: name(&names.users, r.actor_user_id),
            tenant_name: name(&names.tenants, r.tenant_id),
            organization_name: name(&names.organizations, r.organization_id),
            id: r.id,
            resource_kind: r.resource_kind,
            resource_id: r.resource_id,
            access_type: r.access_type,
            actor_user_id: r.actor_user_id,
            tenant_id: r.tenant_id,
            organization_id: r.organization_id,
            fields: r.fields,
            context: r.context_json,
            created_at: r.created_at,
        })
        .collect();
    Ok(web::Json(AccessList {
        items,
        can_view_tenant: vis.can_view_tenant,
        page,
        page_size: size,
        total,
        total_pages: total_pages(total, size),
    }))
}
