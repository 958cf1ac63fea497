//! `/attachments/library`: every attachment of the caller's tenant and
//! organizations, searchable; detail, metadata changes, deletion.

use actix_web::{HttpRequest, HttpResponse, delete, get, patch, web};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::read_cache::answer_json;
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::pagination::Page;
use stoa_core::{AppResult, Path, Query};

use crate::dto::{
    LibraryDetail, LibraryDetailAnswer, LibraryItem, LibraryList, LibraryPatch, LibraryQuery, Ok,
    PartitionSummary, Patched, PatchedItem,
};
use crate::error::AttachmentsError;
use crate::library_list::{self, LibraryFilter, LibraryScope, SortField};
use crate::model::{Attachment, iso};
use crate::sniff::RESIZABLE_TYPES;
use crate::{MANAGE, VIEW, service, upload};

use super::parse_id;

struct Parsed {
    page: Page,
    filter: LibraryFilter,
}

fn parse(q: LibraryQuery) -> Result<Parsed, AttachmentsError> {
    let bad = || AttachmentsError::InvalidQuery;
    let number = |v: Option<String>, default: u64, max: u64| -> Result<u64, AttachmentsError> {
        match v.as_deref().map(str::trim) {
            None | Some("") => Ok(default),
            Some(s) => s
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=max).contains(n))
                .ok_or_else(bad),
        }
    };
    let sort = match q.sort_field.as_deref() {
        None | Some("createdAt") => SortField::CreatedAt,
        Some("fileName") => SortField::FileName,
        Some("fileSize") => SortField::FileSize,
        Some(_) => return Err(bad()),
    };
    let ascending = match q.sort_dir.as_deref() {
        None | Some("desc") => false,
        Some("asc") => true,
        Some(_) => return Err(bad()),
    };
    let search = q
        .search
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    if search.as_ref().is_some_and(|s| s.chars().count() > 200) {
        return Err(bad());
    }
    let tags = upload::parse_tags(q.tags.as_deref()).map_err(|_| bad())?;
    Ok(Parsed {
        page: Page {
            page: number(q.page, 1, 1_000_000)?,
            page_size: number(q.page_size, 25, 100)?,
        },
        filter: LibraryFilter {
            search: search.map(|s| format!("%{}%", stoa_core::search::escape_like(&s))),
            partition: q
                .partition
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
            tags,
            sort,
            ascending,
        },
    })
}

fn item(row: &Attachment, titles: &[PartitionSummary]) -> LibraryItem {
    LibraryItem {
        id: row.id,
        file_name: row.file_name.clone(),
        file_size: row.file_size,
        mime_type: row.mime_type.clone(),
        partition_code: row.partition_code.clone(),
        partition_title: titles
            .iter()
            .find(|p| p.code == row.partition_code)
            .map(|p| p.title.clone()),
        url: row.url(),
        created_at: iso(row.created_at),
        tags: row.tags.clone(),
        assignments: row.assignment_list(),
        thumbnail_url: RESIZABLE_TYPES
            .contains(&row.mime_type.as_str())
            .then(|| row.thumbnail_url(200)),
        content: row.content.clone().filter(|c| !c.trim().is_empty()),
    }
}

// All of it in one statement.
/// One page of the library with the tags in use and every partition: a
/// capped total, and a `nextCursor` to send back as `cursor` for the next page.
#[utoipa::path(
    tag = "Attachments",
    params(LibraryQuery, ListParams),
    responses(
        (status = 200, body = LibraryList),
        (status = 400, body = ErrorBody, description = "Invalid query or cursor"),
    )
)]
#[get("/attachments/library")]
pub async fn list_library(
    http: HttpRequest,
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<LibraryQuery>,
    params: Query<ListParams>,
) -> AppResult<HttpResponse> {
    ctx.require(VIEW)?;
    let scope = LibraryScope {
        tenant_id: ctx.tenant()?,
        organizations: ctx.acl.visible_organization_ids.clone(),
        partition_organizations: ctx.organization_restriction().map(<[_]>::to_vec),
    };
    let q = parse(q.into_inner())?;
    let req = ListRequest::new(
        q.page,
        &params,
        library_list::cursor_tag(q.filter.sort, q.filter.ascending),
    )?;
    // May lag a moment behind (stoa_core::db::Db::reader): a page kept from
    // a replica carries the replica's versions, which the next request's
    // check against the primary finds moved, never the other way round.
    let mut conn = db.reader().conn().await?;
    let listed = library_list::list(&mut conn, &scope, &q.filter, &req).await?;
    drop(conn);
    let sort = q.filter.sort;
    let page = req.finish(listed.rows, listed.counted, |row| {
        library_list::key_of(row, sort)
    });
    let list = LibraryList {
        page: page.map(|r| item(&r, &listed.partitions)),
        available_tags: listed.tags,
        partitions: listed.partitions,
    };
    // Kept (stoa_core::http::read_cache): the same page again is the
    // session check alone while no attachment or partition of the tenant
    // (and no ACL) changed.
    answer_json(
        &http,
        ctx.read_owner(),
        &list,
        listed.deps,
        Some(listed.versions),
        None,
    )
}

/// One attachment with its custom fields.
#[utoipa::path(
    tag = "Attachments",
    params(("id" = String, Path, description = "Attachment id")),
    responses(
        (status = 200, body = LibraryDetailAnswer),
        (status = 400, body = ErrorBody, description = "Malformed id"),
        (status = 404, body = ErrorBody),
    )
)]
#[get("/attachments/library/{id}")]
pub async fn get_library_item(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<web::Json<LibraryDetailAnswer>> {
    ctx.require(VIEW)?;
    let id = parse_id(Some(id.as_str()), AttachmentsError::IdRequired)?;
    let (row, title) = service::detail(&db, &ctx, id).await?;
    Ok(web::Json(LibraryDetailAnswer {
        item: LibraryDetail {
            id: row.id,
            file_name: row.file_name.clone(),
            file_size: row.file_size,
            mime_type: row.mime_type.clone(),
            partition_code: row.partition_code.clone(),
            partition_title: title,
            tags: row.tags.clone(),
            assignments: row.assignment_list(),
            content: row.content.clone().filter(|c| !c.trim().is_empty()),
            custom_fields: row.custom_fields.clone(),
        },
    }))
}

/// Replaces the tags, assignments and custom fields the body names.
#[utoipa::path(
    tag = "Attachments",
    params(("id" = String, Path, description = "Attachment id")),
    request_body = LibraryPatch,
    responses(
        (status = 200, body = Patched),
        (status = 400, body = ErrorBody, description = "Invalid payload or id"),
        (status = 404, body = ErrorBody),
    )
)]
#[patch("/attachments/library/{id}")]
pub async fn patch_library_item(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
    bytes: web::Bytes,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let id = parse_id(Some(id.as_str()), AttachmentsError::IdRequired)?;
    stoa_core::extract::check_json_body(&bytes)?;
    serde_json::from_slice::<Value>(&bytes).map_err(|_| AttachmentsError::InvalidPayload)?;
    let body: LibraryPatch = stoa_core::extract::parse_json(&bytes)?;
    let tags = body.tags.map(upload::normalize_tags).transpose()?;
    let assignments = body
        .assignments
        .map(upload::normalize_assignments)
        .transpose()?
        .map(|list| serde_json::to_value(list).unwrap_or(Value::Array(Vec::new())));
    let custom_fields = match body.custom_fields {
        None => None,
        Some(None) => Some(None),
        Some(Some(value)) => Some(upload::check_custom_fields(value)?),
    };
    let change = service::MetadataChange {
        tags,
        assignments,
        custom_fields,
    };
    let (row, op) = service::update(&db, &ctx, id, change).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Patched {
        ok: true,
        item: PatchedItem {
            id: row.id,
            tags: row.tags.clone(),
            assignments: row.assignment_list(),
            custom_fields: row.custom_fields.clone(),
        },
    }))
}

/// Deletes the attachment; its file and variants leave storage after commit.
#[utoipa::path(
    tag = "Attachments",
    params(("id" = String, Path, description = "Attachment id")),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody, description = "Malformed id"),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/attachments/library/{id}")]
pub async fn delete_library_item(
    ctx: AuthContext,
    db: web::Data<Db>,
    id: Path<String>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let id = parse_id(Some(id.as_str()), AttachmentsError::IdRequired)?;
    let op = service::delete(&db, &ctx, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok::yes()))
}
