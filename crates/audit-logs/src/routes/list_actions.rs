//! `GET /audit_logs/audit-logs/actions`.

use actix_web::{get, web};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::AppError;
use stoa_core::command::schema::action_logs;
use stoa_core::db::{Db, generic_plans};
use stoa_core::list::ListPage;
use stoa_core::list::{COUNT_AHEAD, CountUpTo, TotalMode};
use stoa_core::pagination::total_pages;
use stoa_core::prepared::Cached;
use stoa_core::{AppResult, Query};
use stoa_directory::names::{organization_name, tenant_name};

use super::VIEW;
use crate::dto::{ActionItem, ActionList, ActionQuery, SortDir};
use crate::queries::{ActionRow, actor_names, filtered, name, ordered, visibility};

/// Lists action-log entries (own entries, or the tenant's with `audit_logs.view_tenant`).
#[utoipa::path(
    tag = "Audit Logs",
    params(ActionQuery),
    responses(
        (status = 200, body = ActionList),
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
    // May lag a moment behind (stoa_core::db::Db::reader).
    let mut conn = db.reader().conn().await?;
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
    // One read transaction on generic plans (stoa_core::db::generic_plans)
    // with the page kept prepared ([`Cached`]: the place names are SQL
    // literals, which diesel never caches): planning the page over every
    // monthly partition cost more than running it. One prepared statement
    // per combination of filters present, per connection.
    let (rows, place_names, counted, actors) = conn
        .transaction(async |conn| {
            generic_plans(conn).await?;
            let count = CountUpTo::new(filtered(&q, &vis)?.select(action_logs::id), count_limit);
            let counted_rows: Vec<(ActionRow, Option<String>, Option<String>, i64)> = Cached(
                ordered(
                    filtered(&q, &vis)?,
                    q.sort_field.unwrap_or_default(),
                    q.sort_dir.unwrap_or(SortDir::Desc),
                )
                .select((
                    ActionRow::as_select(),
                    tenant_name("action_logs.tenant_id"),
                    organization_name("action_logs.organization_id"),
                    count,
                ))
                .offset(offset)
                .limit(i64::try_from(window.size).unwrap_or(50)),
            )
            .load(conn)
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
                    .get_result(conn)
                    .await?,
                );
            }
            // Tenant and organization names came with the rows; actors' display
            // names are one batched lookup (stoa-auth owns them).
            let actors =
                actor_names(conn, users.get_ref(), rows.iter().map(|r| r.actor_user_id)).await?;
            Ok::<_, AppError>((rows, place_names, counted, actors))
        })
        .await?;
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
    let items = rows
        .into_iter()
        .zip(place_names)
        .map(|(r, (tenant_name, organization_name))| ActionItem {
            actor_user_name: name(&actors, r.actor_user_id),
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
        page: ListPage {
            items,
            total,
            page: window.page,
            page_size: window.size,
            total_pages: total_pages(total, window.size),
            total_capped,
            next_cursor: None,
        },
        can_view_tenant: vis.can_view_tenant,
    }))
}
