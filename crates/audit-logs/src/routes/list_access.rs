//! `GET /audit_logs/audit-logs/access`.

use actix_web::{get, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::command::access::REPEAT_SPAN;
use stoa_core::command::schema::access_logs;
use stoa_core::db::Db;
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::pagination::Page;
use stoa_core::prepared::Cached;
use stoa_core::{AppResult, Query};
use stoa_directory::names::{organization_name, tenant_name};
use time::OffsetDateTime;
use uuid::Uuid;

use super::VIEW;
use crate::dto::{AccessItem, AccessList, AccessQuery};
use crate::error::AuditLogError;
use crate::queries::{
    AccessRow, access_after, access_filtered, actor_names, instant, name, visibility,
};

/// How long a read of the access log waits for queued entries.
const SETTLE_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// The sort tag of access-list cursors: newest first, then id.
const CURSOR_TAG: &str = "audit_logs.access:createdAt:desc";

/// Lists access-log entries (the caller's own, or another user's with `audit_logs.view_tenant`).
#[utoipa::path(
    tag = "Audit Logs",
    params(AccessQuery, ListParams),
    responses(
        (status = 200, body = AccessList),
    )
)]
#[get("/audit_logs/audit-logs/access")]
pub async fn list_access(
    ctx: AuthContext,
    db: web::Data<Db>,
    users: web::Data<dyn UserDirectory>,
    q: Query<AccessQuery>,
    params: Query<ListParams>,
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
    let req = ListRequest::<(OffsetDateTime, Uuid)>::new(
        Page {
            page,
            page_size: size,
        },
        &params,
        CURSOR_TAG,
    )?;
    // The keyset condition (after a cursor) belongs to both the page and its
    // count: the count starts where the page does.
    let filtered = || {
        let query = access_filtered(&q, &vis, actor, before, after);
        match req.after {
            Some(key) => access_after(query, key),
            None => query,
        }
    };
    // Entries of kept answers are written behind them: write this process's
    // queued ones first, so a client sees its own reads (waiting a bounded
    // time: a writer retrying against a failing database must not hang this).
    match tokio::time::timeout(SETTLE_WITHIN, stoa_core::command::access::settle(&db)).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => tracing::warn!(error = %err, "access log: queued entries not written"),
        Err(_) => tracing::warn!("access log: queued entries not written in time"),
    }
    let mut conn = db.conn().await?;
    // The page reaches no older than the newest `offset + limit` entries
    // in row order (the rows' time, which the index gives without sorting),
    // so the statement sorts a bounded set whatever the planner believes.
    // Why the floor holds: the first `reach + 1` entries in row order are no
    // older than it (a row's reads are no older than the row), so neither is
    // any entry of the page. Two conditions use it: the reads' own time
    // (`created_at`, pushed into the view's expansion, so only reads that
    // may be on the page are expanded) and their rows' time less
    // `REPEAT_SPAN` (an index condition, so the scan stops there).
    //
    // The floor is its own statement (one ordered index probe) and reaches
    // the page as a value: as a subquery it was a parameter the planner
    // could not see, which it priced at a third of the reader's rows, so it
    // read them all (a sequential scan, or under the policy's `OR` a bitmap
    // of every row: 90-500 ms for 40,000 reads; 0.7 ms with the value;
    // issue 52, docs/benchmarks.md).
    let reach = req.offset().saturating_add(req.limit()).saturating_sub(1);
    let floor: Option<OffsetDateTime> = filtered()
        .select(access_logs::stored_at)
        .order(access_logs::stored_at.desc())
        .offset(reach)
        .limit(1)
        .first(&mut *conn)
        .await
        .optional()?;
    let count = || req.count(filtered().select(access_logs::id));
    let page = match floor {
        Some(floor) => {
            let page = filtered().filter(access_logs::created_at.ge(floor));
            match floor.checked_sub(REPEAT_SPAN) {
                Some(row_floor) => page.filter(access_logs::stored_at.ge(row_floor)),
                None => page,
            }
        }
        None => filtered(),
    };
    // The page, its (capped) total and the place names in one statement.
    type Row = (AccessRow, Option<String>, Option<String>, i64);
    // A prepared statement kept per connection: its text varies only with
    // which filters are present, and planning it (four scans of the
    // `access_logs` view) cost more than running it.
    let rows: Vec<Row> = Cached(
        page.order((access_logs::created_at.desc(), access_logs::id.desc()))
            .select((
                AccessRow::as_select(),
                tenant_name("access_logs.tenant_id"),
                organization_name("access_logs.organization_id"),
                count(),
            ))
            .offset(req.offset())
            .limit(req.limit()),
    )
    .load(&mut *conn)
    .await?;
    let mut counted = <[Row]>::first(&rows).map(|r| r.3);
    if req.needs_separate_count(rows.len()) {
        counted = Some(diesel::select(count()).get_result(&mut *conn).await?);
    }
    // Actors' display names are one batched lookup (stoa-auth owns them).
    let actors = actor_names(
        &mut conn,
        users.get_ref(),
        rows.iter().map(|r| r.0.actor_user_id),
    )
    .await?;
    let items = rows
        .into_iter()
        .map(|(r, tenant_name, organization_name, _)| AccessItem {
            actor_user_name: name(&actors, r.actor_user_id),
            tenant_name,
            organization_name,
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
    let page = req.finish(items, counted, |i: &AccessItem| (i.created_at, i.id));
    Ok(web::Json(AccessList {
        page,
        can_view_tenant: vis.can_view_tenant,
    }))
}
