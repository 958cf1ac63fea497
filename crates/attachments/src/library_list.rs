//! The library list in the shape of every large list (docs/adding-a-module.md
//! "Lists"): the page, its capped total, the tags in use and every partition
//! the caller sees in one statement; keyset cursors per sort.

use diesel::dsl::sql;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Array, Json, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use stoa_core::AppError;
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::ListRequest;
use stoa_core::prepared::Cached;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::dto::PartitionSummary;
use crate::model::Attachment;
use crate::schema::attachments::{self, dsl as a};

/// Who sees what: the caller's tenant and, when limited, its organizations.
#[derive(Clone, Debug)]
pub struct LibraryScope {
    pub tenant_id: Uuid,
    pub organizations: Option<Vec<Uuid>>,
    /// The organizations whose partitions the caller reaches
    /// (`AuthContext::organization_restriction`; `None`: all of them).
    pub partition_organizations: Option<Vec<Uuid>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortField {
    CreatedAt,
    FileName,
    FileSize,
}

/// The filters of one library read.
#[derive(Clone, Debug)]
pub struct LibraryFilter {
    /// A `LIKE` pattern (escaped, `%` around it).
    pub search: Option<String>,
    pub partition: Option<String>,
    /// An attachment must carry all of them.
    pub tags: Vec<String>,
    pub sort: SortField,
    pub ascending: bool,
}

/// The sort key of a cursor: the sorted value and the id. Times travel as
/// unix microseconds (Postgres' precision).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LibraryKey {
    Name(String, Uuid),
    Size(i64, Uuid),
    Time(i64, Uuid),
}

/// The cursor tag of one order: a cursor of another order is 400.
pub fn cursor_tag(sort: SortField, ascending: bool) -> &'static str {
    match (sort, ascending) {
        (SortField::CreatedAt, true) => "attachments.library:createdAt:asc",
        (SortField::CreatedAt, false) => "attachments.library:createdAt:desc",
        (SortField::FileName, true) => "attachments.library:fileName:asc",
        (SortField::FileName, false) => "attachments.library:fileName:desc",
        (SortField::FileSize, true) => "attachments.library:fileSize:asc",
        (SortField::FileSize, false) => "attachments.library:fileSize:desc",
    }
}

fn micros(at: OffsetDateTime) -> i64 {
    i64::try_from(at.unix_timestamp_nanos() / 1_000).unwrap_or(i64::MAX)
}

/// The sort key of `row` in `sort` order.
pub fn key_of(row: &Attachment, sort: SortField) -> LibraryKey {
    match sort {
        SortField::FileName => LibraryKey::Name(row.file_name.clone(), row.id),
        SortField::FileSize => LibraryKey::Size(row.file_size, row.id),
        SortField::CreatedAt => LibraryKey::Time(micros(row.created_at), row.id),
    }
}

type Boxed = attachments::BoxedQuery<'static, Pg>;

fn filtered(scope: &LibraryScope, filter: &LibraryFilter) -> Boxed {
    let mut q = a::attachments
        .filter(a::tenant_id.eq(scope.tenant_id))
        .into_boxed();
    // One organization as an equality, so the page is read in order from
    // `attachments_library` (tenant, organization, created_at, id); `= ANY`
    // of an array reads every listed organization and sorts.
    match scope.organizations.as_deref() {
        Some([only]) => q = q.filter(a::organization_id.eq(*only)),
        Some(orgs) => q = q.filter(a::organization_id.eq_any(orgs.to_vec())),
        None => {}
    }
    if let Some(pattern) = &filter.search {
        q = q.filter(a::file_name.ilike(pattern.clone()));
    }
    if let Some(code) = &filter.partition {
        q = q.filter(a::partition_code.eq(code.clone()));
    }
    if !filter.tags.is_empty() {
        q = q.filter(a::tags.contains(filter.tags.clone()));
    }
    q
}

fn bad_cursor() -> AppError {
    AppError::bad_request("Invalid query parameters: cursor: not a cursor of this list")
}

/// The filter plus, in keyset mode, "after the cursor's row" in the list's
/// order; each condition starts with a range on the sorted column so the
/// scan starts there.
fn windowed(
    scope: &LibraryScope,
    filter: &LibraryFilter,
    after: Option<&LibraryKey>,
) -> Result<Boxed, AppError> {
    let q = filtered(scope, filter);
    let Some(after) = after else {
        return Ok(q);
    };
    let asc = filter.ascending;
    Ok(match (filter.sort, after) {
        (SortField::FileName, LibraryKey::Name(name, id)) => {
            let (name, id) = (name.clone(), *id);
            if asc {
                q.filter(a::file_name.ge(name.clone()))
                    .filter(a::file_name.gt(name).or(a::id.gt(id)))
            } else {
                q.filter(a::file_name.le(name.clone()))
                    .filter(a::file_name.lt(name).or(a::id.lt(id)))
            }
        }
        (SortField::FileSize, LibraryKey::Size(size, id)) => {
            let (size, id) = (*size, *id);
            if asc {
                q.filter(a::file_size.ge(size))
                    .filter(a::file_size.gt(size).or(a::id.gt(id)))
            } else {
                q.filter(a::file_size.le(size))
                    .filter(a::file_size.lt(size).or(a::id.lt(id)))
            }
        }
        (SortField::CreatedAt, LibraryKey::Time(at, id)) => {
            let at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(*at) * 1_000)
                .map_err(|_| bad_cursor())?;
            let id = *id;
            if asc {
                q.filter(a::created_at.ge(at))
                    .filter(a::created_at.gt(at).or(a::id.gt(id)))
            } else {
                q.filter(a::created_at.le(at))
                    .filter(a::created_at.lt(at).or(a::id.lt(id)))
            }
        }
        _ => return Err(bad_cursor()),
    })
}

fn ordered(q: Boxed, sort: SortField, ascending: bool) -> Boxed {
    // Ties go to the id in the same direction, so pages never overlap.
    match (sort, ascending) {
        (SortField::FileName, true) => q.order((a::file_name.asc(), a::id.asc())),
        (SortField::FileName, false) => q.order((a::file_name.desc(), a::id.desc())),
        (SortField::FileSize, true) => q.order((a::file_size.asc(), a::id.asc())),
        (SortField::FileSize, false) => q.order((a::file_size.desc(), a::id.desc())),
        (SortField::CreatedAt, true) => q.order((a::created_at.asc(), a::id.asc())),
        (SortField::CreatedAt, false) => q.order((a::created_at.desc(), a::id.desc())),
    }
}

/// `ARRAY(every distinct tag of the caller's attachments, sorted)`, read from
/// the trigger-kept counts (migration `attachments_library_tags`): a
/// `DISTINCT` over every attachment's tags was most of the page's time. A
/// macro, not a function: the expression's type carries its binds.
macro_rules! tags_in_use {
    ($scope:expr) => {
        sql::<Array<Text>>(
            "ARRAY(SELECT DISTINCT s.tag FROM attachment_tag_counts AS s \
             WHERE s.tenant_id = ",
        )
        .bind::<diesel::sql_types::Uuid, _>($scope.tenant_id)
        .sql(" AND (")
        .bind::<Nullable<Array<diesel::sql_types::Uuid>>, _>($scope.organizations.clone())
        .sql("::uuid[] IS NULL OR s.organization_id = ANY(")
        .bind::<Nullable<Array<diesel::sql_types::Uuid>>, _>($scope.organizations.clone())
        .sql(")) ORDER BY 1)")
    };
}

/// Every partition the caller sees (global ones, and its tenant's that its
/// organization scope does not hide, as `AuthContext::reach` says), by
/// title, as a JSON array of [`PartitionSummary`].
macro_rules! partitions_seen {
    ($scope:expr) => {
        sql::<Json>(
            "(SELECT coalesce(json_agg(json_build_object('code', p.code, 'title', p.title, \
             'description', p.description, 'isPublic', p.is_public) ORDER BY p.title, p.code), \
             '[]'::json) FROM attachment_partitions AS p WHERE p.tenant_id IS NULL OR (p.tenant_id = ",
        )
        .bind::<diesel::sql_types::Uuid, _>($scope.tenant_id)
        .sql(" AND (p.organization_id IS NULL OR coalesce(p.organization_id = ANY(")
        .bind::<Nullable<Array<diesel::sql_types::Uuid>>, _>($scope.partition_organizations.clone())
        .sql("), true))))")
    };
}

/// The read models a library page is computed from (migration
/// `attachments_library_read_version`: attachments and partitions).
pub const READ_DEPS: &[&str] = &["attachments.library"];

/// One page of the library and what keeps it.
pub struct LibraryPage {
    pub rows: Vec<Attachment>,
    pub counted: Option<i64>,
    pub tags: Vec<String>,
    pub partitions: Vec<PartitionSummary>,
    /// What the page was read from, and the versions its statement saw.
    pub deps: ReadDeps,
    pub versions: Vec<i64>,
}

/// One page of the library: the page, the count, the tags, the partitions
/// and the read versions come in one statement; only an empty page (past
/// the end, or nothing matches) needs a second.
pub async fn list(
    conn: &mut AsyncPgConnection,
    scope: &LibraryScope,
    filter: &LibraryFilter,
    req: &ListRequest<LibraryKey>,
) -> Result<LibraryPage, AppError> {
    let deps = ReadDeps::new(READ_DEPS, Some(scope.tenant_id));
    let after = req.after.as_ref();
    let q = ordered(
        windowed(scope, filter, after)?,
        filter.sort,
        filter.ascending,
    );
    let counted_query = windowed(scope, filter, after)?.select(a::id);
    type Row = (Attachment, i64, Vec<String>, serde_json::Value, Vec<i64>);
    // The text depends only on which filters are set (lists are bound as one
    // array), so the statement stays prepared on the connection.
    let rows: Vec<Row> = Cached(
        q.select((
            Attachment::as_select(),
            req.count(counted_query),
            tags_in_use!(scope),
            partitions_seen!(scope),
            versions(deps),
        ))
        .offset(req.offset())
        .limit(req.limit()),
    )
    .load(conn)
    .await?;
    let Some(first) = <[Row]>::first(&rows) else {
        type Empty = (i64, Vec<String>, serde_json::Value, Vec<i64>);
        let again = windowed(scope, filter, after)?.select(a::id);
        let (counted, tags, partitions, versions): Empty = Cached(diesel::select((
            req.count(again),
            tags_in_use!(scope),
            partitions_seen!(scope),
            versions(deps),
        )))
        .get_result(conn)
        .await?;
        return Ok(LibraryPage {
            rows: Vec::new(),
            counted: Some(counted),
            tags,
            partitions: parse_partitions(partitions)?,
            deps,
            versions,
        });
    };
    let counted = Some(first.1);
    let tags = first.2.clone();
    let partitions = parse_partitions(first.3.clone())?;
    let versions = first.4.clone();
    Ok(LibraryPage {
        rows: rows.into_iter().map(|r| r.0).collect(),
        counted,
        tags,
        partitions,
        deps,
        versions,
    })
}

fn parse_partitions(value: serde_json::Value) -> Result<Vec<PartitionSummary>, AppError> {
    serde_json::from_value(value)
        .map_err(|e| AppError::internal(format!("partition summaries: {e}")))
}
