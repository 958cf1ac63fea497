//! `GET /audit_logs/audit-logs/actions/export`: the CSV download.

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{HttpResponse, get, web};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use stoa_acl::{AuthContext, UserDirectory};
use stoa_core::db::{Db, generic_plans};
use stoa_core::prepared::Cached;
use stoa_core::{AppResult, Query};

use super::VIEW;
use crate::csv::{CSV_HEADER, csv_rows};
use crate::dto::{ActionQuery, SortDir};
use crate::error::AuditLogError;
use crate::queries::{ExportRow, actor_names, filtered, ordered, visibility};

/// Most entries one export holds (`limit` above it is capped).
const EXPORT_MAX: u64 = 1000;

/// Exports loaded and rendering at once in this process; others wait their
/// turn. An export holds up to 1,000 entries until its body is sent, so 32
/// concurrent downloads grew the server past its 60 MB budget; two cores
/// render four exports as fast as thirty-two.
static EXPORTS_AT_ONCE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(4);

/// Exports matching entries as CSV, one row per changed field (at most 1000
/// entries; a larger `limit` is capped).
#[utoipa::path(
    tag = "Audit Logs",
    params(ActionQuery),
    responses(
        (status = 200, content_type = "text/csv", body = String, description = "`When,User,Action,Field,Old Value,New Value,Source`"),
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
        return Err(AuditLogError::InvalidQuery("limit: must be at least 1".into()).into());
    }
    // Held until the body is sent or dropped (it moves into the stream).
    let permit = EXPORTS_AT_ONCE
        .acquire()
        .await
        .map_err(|_| stoa_core::AppError::service_unavailable("Exports are shutting down"))?;
    // May lag a moment behind (stoa_core::db::Db::reader).
    let mut conn = db.reader().conn().await?;
    // On generic plans (stoa_core::db::generic_plans): planning over every
    // monthly partition cost more than reading the 1,000 entries.
    let (rows, actors) = conn
        .transaction(async |conn| {
            generic_plans(conn).await?;
            let rows: Vec<ExportRow> = Cached(
                ordered(
                    filtered(&q, &vis)?,
                    q.sort_field.unwrap_or_default(),
                    q.sort_dir.unwrap_or(SortDir::Desc),
                )
                .select(ExportRow::as_select())
                .limit(i64::try_from(limit).unwrap_or(1000)),
            )
            .load(conn)
            .await?;
            let actors =
                actor_names(conn, users.get_ref(), rows.iter().map(|r| r.actor_user_id)).await?;
            Ok::<_, stoa_core::AppError>((rows, actors))
        })
        .await?;
    drop(conn);
    // Rows are rendered as the body streams, 100 entries per chunk; each
    // chunk's rows are dropped once rendered.
    let mut rows = rows.into_iter();
    let chunks = std::iter::from_fn(move || {
        let _held = &permit;
        let text: String = rows
            .by_ref()
            .take(100)
            .map(|r| csv_rows(&r, r.actor_user_id.and_then(|u| actors.get(&u))))
            .collect();
        (!text.is_empty()).then(|| Ok::<_, actix_web::Error>(Bytes::from(text)))
    });
    let body = futures_util::stream::iter(
        std::iter::once(Ok(Bytes::from_static(CSV_HEADER.as_bytes()))).chain(chunks),
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
