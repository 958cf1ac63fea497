//! `GET /api_keys/keys`: one page of the caller's live keys, with role and
//! organization names selected in the same statement.

use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::{OrganizationDirectory, RoleDirectory};
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::prepared::Cached;
use stoa_core::search::escape_like;
use stoa_core::{AppError, Page};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::model::{ApiKeyItem, ApiKeyList, ApiKeyRole};
use crate::schema::api_keys;

/// The caller's read scope for keys: its tenant and, when restricted, the
/// organizations it sees (keys without an organization are then hidden, as
/// in the reference).
pub struct ListScope<'a> {
    pub tenant_id: Uuid,
    pub organizations: Option<&'a [Uuid]>,
}

type ListRow = (
    Uuid,
    String,
    Option<String>,
    String,
    Option<Uuid>,
    OffsetDateTime,
    Option<OffsetDateTime>,
    Option<OffsetDateTime>,
    Vec<Uuid>,
    Vec<Option<String>>,
    Option<String>,
    i64,
    Vec<i64>,
);

/// The read model of the key list: every write to `api_keys` bumps its
/// tenant's version (migration `api_keys_read_version`). Role and
/// organization names move `acl_version`, which a kept answer checks too.
pub const READ_DEPS: &[&str] = &["api_keys.keys"];

/// A page of keys and the read versions it was computed from (`None` for
/// an empty page: nothing carried them, and it is not kept).
pub struct ListedKeys {
    pub list: ApiKeyList,
    pub deps: ReadDeps,
    pub versions: Option<Vec<i64>>,
}

/// The sort tag of key-list cursors: newest first, then id.
const CURSOR_TAG: &str = "api_keys.keys:createdAt:desc";

/// The sort key of a key-list cursor: `createdAt` in unix microseconds
/// (Postgres' precision) and the id.
pub type KeyListKey = (i64, Uuid);

fn key_of(item: &ApiKeyItem) -> KeyListKey {
    let micros = item.created_at.unix_timestamp_nanos() / 1_000;
    (i64::try_from(micros).unwrap_or(i64::MAX), item.id)
}

/// The list request of `GET /api_keys/keys` (paging, cursor, total mode).
pub fn list_request(page: Page, params: &ListParams) -> Result<ListRequest<KeyListKey>, AppError> {
    ListRequest::new(page, params, CURSOR_TAG)
}

/// One page of live keys in scope, newest first: the rows, their (capped)
/// total, role names, organization names and the read versions in one
/// statement.
pub async fn list(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    organizations: &dyn OrganizationDirectory,
    scope: &ListScope<'_>,
    search: Option<&str>,
    req: &ListRequest<KeyListKey>,
) -> Result<ListedKeys, AppError> {
    let deps = ReadDeps::new(READ_DEPS, Some(scope.tenant_id));
    let pattern = search
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| format!("%{}%", escape_like(s)));
    let after = match &req.after {
        Some((micros, id)) => Some((
            OffsetDateTime::from_unix_timestamp_nanos(i128::from(*micros) * 1_000).map_err(
                |_| {
                    AppError::bad_request(
                        "Invalid query parameters: cursor: not a cursor of this list",
                    )
                },
            )?,
            *id,
        )),
        None => None,
    };
    let filtered = || {
        let mut query = api_keys::table
            .filter(api_keys::tenant_id.eq(scope.tenant_id))
            .filter(api_keys::deleted_at.is_null())
            .into_boxed();
        if let Some(ids) = scope.organizations {
            query = query.filter(api_keys::organization_id.eq_any(ids.to_vec()));
        }
        if let Some(pattern) = &pattern {
            query = query.filter(
                api_keys::name
                    .ilike(pattern.clone())
                    .or(api_keys::key_prefix.ilike(pattern.clone())),
            );
        }
        if let Some((at, id)) = after {
            query = query.filter(
                diesel::dsl::sql::<Bool>("(api_keys.created_at, api_keys.id) < (")
                    .bind::<Timestamptz, _>(at)
                    .sql(", ")
                    .bind::<diesel::sql_types::Uuid, _>(id)
                    .sql(")"),
            );
        }
        query
    };
    // Kept prepared: the names' `sql(...)` fragments are fixed text with
    // bound values, but would make diesel parse and plan the statement on
    // every request (1 ms of Postgres time, 0.1 ms once prepared).
    let rows: Vec<ListRow> = Cached(
        filtered()
            .order((api_keys::created_at.desc(), api_keys::id.desc()))
            .limit(req.limit())
            .offset(req.offset())
            .select((
                api_keys::id,
                api_keys::name,
                api_keys::description,
                api_keys::key_prefix,
                api_keys::organization_id,
                api_keys::created_at,
                api_keys::last_used_at,
                api_keys::expires_at,
                api_keys::role_ids,
                diesel::dsl::sql::<Array<Nullable<Text>>>(
                    &roles.role_names_sql("api_keys.role_ids"),
                ),
                diesel::dsl::sql::<Nullable<Text>>(
                    &organizations.organization_name_sql("api_keys.organization_id"),
                ),
                req.count(filtered().select(api_keys::id)),
                versions(deps),
            )),
    )
    .load(conn)
    .await?;
    let mut counted = <[ListRow]>::first(&rows).map(|r| r.11);
    let versions = <[ListRow]>::first(&rows).map(|r| r.12.clone());
    if req.needs_separate_count(rows.len()) {
        counted = Some(
            diesel::select(req.count(filtered().select(api_keys::id)))
                .get_result(conn)
                .await?,
        );
    }
    let items = rows
        .into_iter()
        .map(|r| ApiKeyItem {
            id: r.0,
            name: r.1,
            description: r.2,
            key_prefix: r.3,
            organization_id: r.4,
            organization_name: r.10,
            created_at: r.5,
            last_used_at: r.6,
            expires_at: r.7,
            roles: r
                .8
                .iter()
                .enumerate()
                .map(|(i, id)| ApiKeyRole {
                    id: *id,
                    name: r.9.get(i).cloned().flatten(),
                })
                .collect(),
        })
        .collect();
    let mut page = req.finish(items, counted, key_of);
    // The reference reports 0 pages for an empty list.
    page.total_pages = page.total.div_ceil(page.page_size.max(1));
    let list = ApiKeyList { page };
    Ok(ListedKeys {
        list,
        deps,
        versions,
    })
}
