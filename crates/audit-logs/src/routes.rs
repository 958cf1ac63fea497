//! Handlers of `/audit_logs/audit-logs/...`.

use std::collections::{BTreeMap, HashMap};

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{HttpResponse, get, post, web};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::command::CommandRegistry;
use stoa_core::command::schema::access_logs;
use stoa_core::command::schema::action_logs;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::list::{COUNT_AHEAD, CountUpTo, TotalMode};
use stoa_core::pagination::total_pages;
use stoa_core::{AppError, AppResult, Query};
use stoa_directory::PgDirectory;
use stoa_directory::names::{organization_name, tenant_name};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::query::*;

const VIEW: &str = "audit_logs.view_self";

/// Actor, tenant and organization names for a page of entries.
struct Names {
    users: HashMap<Uuid, String>,
    tenants: HashMap<Uuid, String>,
    organizations: HashMap<Uuid, String>,
}

async fn names(
    conn: &mut AsyncPgConnection,
    directory: &dyn UserDirectory,
    rows: impl Iterator<Item = (Option<Uuid>, Option<Uuid>, Option<Uuid>)>,
) -> AppResult<Names> {
    let (mut users, mut tenants, mut orgs) = (Vec::new(), Vec::new(), Vec::new());
    for (u, t, o) in rows {
        users.extend(u);
        tenants.extend(t);
        orgs.extend(o);
    }
    for list in [&mut users, &mut tenants, &mut orgs] {
        list.sort();
        list.dedup();
    }
    let users = directory.display_names(conn, &users).await?;
    let (tenants, organizations) = PgDirectory.names(conn, &tenants, &orgs).await?;
    Ok(Names {
        users,
        tenants,
        organizations,
    })
}

fn name(map: &HashMap<Uuid, String>, id: Option<Uuid>) -> Option<String> {
    id.and_then(|id| map.get(&id).cloned())
}

/// Lists action-log entries (own entries, or the tenant's with `audit_logs.view_tenant`).
#[utoipa::path(
    tag = "Audit Logs",
    params(ActionQuery),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = ActionList),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/audit_logs/audit-logs/actions")]
pub async fn list_actions(
    ctx: AuthContext,
    db: web::Data<Db>,
    users: web::Data<dyn UserDirectory>,
    q: Query<ActionQuery>,
) -> AppResult<web::Json<ActionList>> {
    ctx.require(VIEW)?;
    let vis = visibility(&ctx, q.organization_id, &q.actor_user_id)?;
    let window = q.window()?;
    let mut conn = db.conn().await?;
    // The page and its total in one statement (stoa_core::list): by default
    // the count looks COUNT_AHEAD entries past the window's start and stops
    // there (`totalCapped` says so); `includeTotal=true` counts exactly,
    // `includeTotal=false` not at all.
    let mode = TotalMode::parse(q.include_total.as_deref());
    let offset = i64::try_from(window.offset).unwrap_or(i64::MAX);
    let count_limit = match mode {
        TotalMode::Exact => None,
        TotalMode::Skip => Some(0),
        TotalMode::Capped => Some(offset.saturating_add(COUNT_AHEAD + 1)),
    };
    let count = CountUpTo::new(filtered(&q, &vis)?.select(action_logs::id), count_limit);
    let counted_rows: Vec<(ActionRow, Option<String>, Option<String>, i64)> = ordered(
        filtered(&q, &vis)?,
        q.sort_field.unwrap_or_default(),
        q.sort_dir.unwrap_or_default(),
    )
    .select((
        ActionRow::as_select(),
        tenant_name("action_logs.tenant_id"),
        organization_name("action_logs.organization_id"),
        count,
    ))
    .offset(offset)
    .limit(i64::try_from(window.size).unwrap_or(50))
    .load(&mut *conn)
    .await?;
    let mut counted = counted_rows.iter().map(|r| r.3).next();
    let mut place_names = Vec::with_capacity(counted_rows.len());
    let rows: Vec<ActionRow> = counted_rows
        .into_iter()
        .map(|(row, tenant, organization, _)| {
            place_names.push((tenant, organization));
            row
        })
        .collect();
    if rows.is_empty() && offset > 0 && mode != TotalMode::Skip {
        // A page past the end carries no count: ask for it alone.
        counted = Some(
            diesel::select(CountUpTo::new(
                filtered(&q, &vis)?.select(action_logs::id),
                count_limit,
            ))
            .get_result(&mut *conn)
            .await?,
        );
    }
    let seen = rows.len() as u64;
    let (total, total_capped) = match (mode, counted) {
        (TotalMode::Skip, _) | (_, None) => (window.offset + seen, false),
        (TotalMode::Exact, Some(n)) => (u64::try_from(n).unwrap_or(0), false),
        (TotalMode::Capped, Some(n)) if n > offset.saturating_add(COUNT_AHEAD) => (
            u64::try_from(offset.saturating_add(COUNT_AHEAD)).unwrap_or(0),
            true,
        ),
        (TotalMode::Capped, Some(n)) => (u64::try_from(n).unwrap_or(0), false),
    };
    // Tenant and organization names came with the rows; actors' display
    // names are one batched lookup (stoa-auth owns them).
    let names = names(
        &mut conn,
        users.get_ref(),
        rows.iter().map(|r| (r.actor_user_id, None, None)),
    )
    .await?;
    let items = rows
        .into_iter()
        .zip(place_names)
        .map(|(r, (tenant_name, organization_name))| ActionItem {
            actor_user_name: name(&names.users, r.actor_user_id),
            tenant_name,
            organization_name,
            id: r.id,
            command_id: r.command_id,
            action_label: r.action_label,
            execution_state: r.execution_state,
            actor_user_id: r.actor_user_id,
            tenant_id: r.tenant_id,
            organization_id: r.organization_id,
            resource_kind: r.resource_kind,
            resource_id: r.resource_id,
            parent_resource_kind: r.parent_resource_kind,
            parent_resource_id: r.parent_resource_id,
            undo_token: r.undo_token,
            created_at: r.created_at,
            updated_at: r.updated_at,
            snapshot_before: r.snapshot_before,
            snapshot_after: r.snapshot_after,
            changes: r.changes_json,
            context: r.context_json,
        })
        .collect();
    Ok(web::Json(ActionList {
        items,
        can_view_tenant: vis.can_view_tenant,
        page: window.page,
        page_size: window.size,
        total,
        total_pages: total_pages(total, window.size),
        total_capped,
    }))
}

const CSV_HEADER: &str = "When,User,Action,Field,Old Value,New Value,Source\n";

fn csv_rows(r: &ActionRow, user: Option<&String>) -> String {
    let when = r
        .created_at
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let who = user
        .cloned()
        .or_else(|| r.actor_user_id.map(|u| u.to_string()))
        .unwrap_or_else(|| "System".into());
    let action = match r.action_type.as_str() {
        "create" => "Create".to_string(),
        "edit" => "Edit".to_string(),
        "delete" => "Delete".to_string(),
        "assign" => "Assign".to_string(),
        _ => r.action_label.clone().unwrap_or_else(|| "System".into()),
    };
    let source = r.source_key.to_uppercase();
    let changes: BTreeMap<String, Value> = match &r.changes_json {
        Some(Value::Object(map)) => map.clone().into_iter().collect(),
        _ => BTreeMap::new(),
    };
    let line = |field: &str, from: String, to: String| {
        [
            when.as_str(),
            who.as_str(),
            action.as_str(),
            field,
            &from,
            &to,
            source.as_str(),
        ]
        .iter()
        .map(|c| csv_cell(c))
        .collect::<Vec<_>>()
        .join(",")
            + "\n"
    };
    if changes.is_empty() {
        return line("", String::new(), String::new());
    }
    changes
        .iter()
        .map(|(field, change)| {
            let from = change.get("from").or_else(|| change.get("old"));
            let to = change.get("to").or_else(|| change.get("new"));
            line(field, cell_text(from), cell_text(to))
        })
        .collect()
}

/// Most entries one export holds (`limit` above it is capped).
const EXPORT_MAX: u64 = 1000;

/// Exports matching entries as CSV, one row per changed field (at most 1000
/// entries; a larger `limit` is capped).
#[utoipa::path(
    tag = "Audit Logs",
    params(ActionQuery),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, content_type = "text/csv", body = String, description = "`When,User,Action,Field,Old Value,New Value,Source`"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
    )
)]
#[get("/audit_logs/audit-logs/actions/export")]
pub async fn export_actions(
    ctx: AuthContext,
    db: web::Data<Db>,
    users: web::Data<dyn UserDirectory>,
    q: Query<ActionQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let vis = visibility(&ctx, q.organization_id, &q.actor_user_id)?;
    // The spec's limits table: default 1000, capped at 1000 (a larger value is
    // not an error, unlike the list's `limit`).
    let limit = q.limit.unwrap_or(EXPORT_MAX).min(EXPORT_MAX);
    if limit == 0 {
        return Err(AppError::bad_request(
            "Invalid query parameters: limit: must be at least 1",
        ));
    }
    let mut conn = db.conn().await?;
    let rows: Vec<ActionRow> = ordered(
        filtered(&q, &vis)?,
        q.sort_field.unwrap_or_default(),
        q.sort_dir.unwrap_or_default(),
    )
    .select(ActionRow::as_select())
    .limit(i64::try_from(limit).unwrap_or(1000))
    .load(&mut *conn)
    .await?;
    let names = names(
        &mut conn,
        users.get_ref(),
        rows.iter().map(|r| (r.actor_user_id, None, None)),
    )
    .await?;
    drop(conn);
    // Rows are rendered as the body streams, in chunks of 100 entries.
    let chunks: Vec<Vec<ActionRow>> = rows.chunks(100).map(<[ActionRow]>::to_vec).collect();
    let users = names.users;
    let body = futures_util::stream::iter(
        std::iter::once(Ok::<_, actix_web::Error>(Bytes::from_static(
            CSV_HEADER.as_bytes(),
        )))
        .chain(chunks.into_iter().map(move |chunk| {
            let text: String = chunk
                .iter()
                .map(|r| csv_rows(r, r.actor_user_id.and_then(|u| users.get(&u))))
                .collect();
            Ok(Bytes::from(text))
        })),
    );
    let mut response = HttpResponse::Ok();
    response
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            header::CONTENT_DISPOSITION,
            "attachment; filename=\"changelog-export.csv\"",
        ));
    // A streamed download: rows go out as they are rendered, never through gzip.
    stoa_core::http::no_compression(&mut response);
    Ok(response.streaming(body))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoRequest {
    pub undo_token: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoResponse {
    pub ok: bool,
    pub log_id: Uuid,
    /// Fields the undo left as they are: credentials and security flags
    /// (`email`, `password`, `isSuperAdmin`) are never written back.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_restored: Vec<String>,
}

fn parse_body<T: serde::de::DeserializeOwned>(body: &[u8], error: &'static str) -> AppResult<T> {
    stoa_core::extract::check_json_body(body)?;
    serde_json::from_slice(body).map_err(|_| AppError::bad_request(error))
}

/// Undoes the caller's latest undoable action (`undoToken` from `x-om-operation`
/// or the action log).
#[utoipa::path(
    tag = "Audit Logs",
    request_body = UndoRequest,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = UndoResponse),
        (status = 400, body = ErrorBody, description = "Invalid or unavailable token"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "The caller may not write the restored state now (features, grant boundary, organization scope, tenant)"),
        (status = 409, body = ErrorBody, description = "The record changed since the action (`changed_since`)"),
        (status = 422, body = ErrorBody, description = "A write guard refused the undo (`guard_refused`, naming the guard), or an interceptor did (it may choose another status and body)"),
    )
)]
#[post("/audit_logs/audit-logs/actions/undo")]
pub async fn undo(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<CommandRegistry>,
    body: web::Bytes,
) -> AppResult<web::Json<UndoResponse>> {
    ctx.require("audit_logs.undo_self")?;
    let req: UndoRequest = parse_body(&body, "Invalid undo token")?;
    let token = req
        .undo_token
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| AppError::bad_request("Invalid undo token"))?;
    let tenant_wide = ctx.has("audit_logs.undo_tenant");
    let actor = ctx.actor();
    let registry = registry.into_inner();
    let outcome = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move { registry.undo(conn, &actor, &token, tenant_wide).await })
        })
        .await?;
    Ok(web::Json(UndoResponse {
        ok: true,
        log_id: outcome.log_id,
        not_restored: outcome.not_restored,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedoRequest {
    pub log_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedoResponse {
    pub ok: bool,
    pub log_id: Option<Uuid>,
    pub undo_token: Option<String>,
}

/// Redoes the caller's most recently undone action.
#[utoipa::path(
    tag = "Audit Logs",
    request_body = RedoRequest,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = RedoResponse, description = "Redone; `x-om-operation` carries the new undo token"),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The record changed since the action (`changed_since`)"),
        (status = 422, body = ErrorBody, description = "A write guard refused the redo (`guard_refused`, naming the guard)"),
    )
)]
#[post("/audit_logs/audit-logs/actions/redo")]
pub async fn redo(
    ctx: AuthContext,
    db: web::Data<Db>,
    registry: web::Data<CommandRegistry>,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require("audit_logs.redo_self")?;
    let req: RedoRequest = parse_body(&body, "Invalid log id")?;
    let log_id: Uuid = req
        .log_id
        .as_deref()
        .map(str::trim)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| AppError::bad_request("Invalid log id"))?;
    let tenant_wide = ctx.has("audit_logs.redo_tenant");
    let actor = ctx.actor();
    let registry = registry.into_inner();
    let outcome = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move { registry.redo(conn, &actor, log_id, tenant_wide).await })
        })
        .await?;
    let op = outcome.operation;
    Ok(
        stoa_core::command::with_operation(HttpResponse::Ok(), &op).json(RedoResponse {
            ok: true,
            log_id: Some(op.id),
            undo_token: op.undo_token,
        }),
    )
}

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
        return Err(AppError::bad_request(
            "Invalid query parameters: page must be ≥ 1 and pageSize between 1 and 200",
        ));
    }
    let actor = match q.actor_user_id {
        Some(other) if vis.can_view_tenant => Some(other),
        _ => ctx.actor_id(),
    };
    let before = instant("before", &q.before)?;
    let after = instant("after", &q.after)?;
    let filtered = || {
        let mut query = access_logs::table.into_boxed();
        if let Some(t) = vis.tenant_id {
            query = query.filter(access_logs::tenant_id.eq(t));
        }
        if let Some(o) = vis.organization_id {
            query = query.filter(access_logs::organization_id.eq(o));
        }
        query = match actor {
            Some(a) => query.filter(access_logs::actor_user_id.eq(a)),
            None => query.filter(access_logs::actor_user_id.is_null()),
        };
        if let Some(kind) = q.resource_kind.clone().filter(|s| !s.is_empty()) {
            query = query.filter(access_logs::resource_kind.eq(kind));
        }
        if let Some(kind) = q.access_type.clone().filter(|s| !s.is_empty()) {
            query = query.filter(access_logs::access_type.eq(kind));
        }
        if let Some(b) = before {
            query = query.filter(access_logs::created_at.lt(b));
        }
        if let Some(a) = after {
            query = query.filter(access_logs::created_at.gt(a));
        }
        query
    };
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
