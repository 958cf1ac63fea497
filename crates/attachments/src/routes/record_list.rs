//! `GET /attachments?entityId=&recordId=`: a record's attachments, newest first.

use actix_web::{get, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use stoa_acl::AuthContext;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Query};

use crate::dto::{RecordItem, RecordList, RecordQuery};
use crate::error::AttachmentsError;
use crate::model::{Attachment, iso};
use crate::schema::attachments as a;
use crate::{VIEW, upload};

/// Paging only when both `page` and `pageSize` are given (the page is
/// clamped to the last one); otherwise every attachment of the record.
#[utoipa::path(
    tag = "Attachments",
    params(RecordQuery),
    responses(
        (status = 200, body = RecordList),
        (status = 400, body = ErrorBody, description = "Missing or malformed identifiers"),
    )
)]
#[get("/attachments")]
pub async fn list_record_attachments(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<RecordQuery>,
) -> AppResult<web::Json<RecordList>> {
    ctx.require(VIEW)?;
    let tenant = ctx.tenant()?;
    let q = q.into_inner();
    let (Some(entity_id), Some(record_id)) = (
        q.entity_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty()),
        q.record_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty()),
    ) else {
        return Err(AttachmentsError::ListIdsRequired.into());
    };
    upload::check_identifier("entityId", entity_id)?;
    upload::check_identifier("recordId", record_id)?;
    let filtered = || {
        let mut query = a::table
            .filter(a::tenant_id.eq(tenant))
            .filter(a::entity_id.eq(entity_id.to_string()))
            .filter(a::record_id.eq(record_id.to_string()))
            .into_boxed();
        if let Some(orgs) = &ctx.acl.visible_organization_ids {
            query = query.filter(a::organization_id.eq_any(orgs.clone()));
        }
        query
    };
    let mut conn = db.conn().await?;
    let paging = q.page.zip(q.page_size);
    let (rows, paged) = match paging {
        Some((page, size)) => {
            let total: i64 = filtered().count().get_result(&mut conn).await?;
            let total_pages = ((total + size - 1) / size).max(1);
            let page = page.min(total_pages);
            let rows: Vec<Attachment> = filtered()
                .select(Attachment::as_select())
                .order((a::created_at.desc(), a::id.desc()))
                .limit(size)
                .offset((page - 1) * size)
                .load(&mut conn)
                .await?;
            (rows, Some((total, page, size, total_pages)))
        }
        None => {
            let rows: Vec<Attachment> = filtered()
                .select(Attachment::as_select())
                .order((a::created_at.desc(), a::id.desc()))
                .limit(1000)
                .load(&mut conn)
                .await?;
            (rows, None)
        }
    };
    let items = rows
        .iter()
        .map(|row| RecordItem {
            id: row.id,
            url: row.url(),
            file_name: row.file_name.clone(),
            file_size: row.file_size,
            created_at: iso(row.created_at),
            mime_type: Some(row.mime_type.clone()),
            partition_code: row.partition_code.clone(),
            content: row.content.clone(),
            thumbnail_url: row.thumbnail_url(320),
            tags: row.tags.clone(),
            assignments: row.assignment_list(),
        })
        .collect();
    Ok(web::Json(RecordList {
        items,
        total: paged.map(|p| p.0),
        page: paged.map(|p| p.1),
        page_size: paged.map(|p| p.2),
        total_pages: paged.map(|p| p.3),
    }))
}
