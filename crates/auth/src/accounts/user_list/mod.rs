//! The user list: paging, the page's statement and its access log (the
//! filters are `filter.rs`).
//!
//! Visibility: a super admin sees every tenant's users; anyone else sees the
//! live users of their tenant minus super admins, and an organization-restricted
//! caller only those of its allowed organizations (the reference lists the
//! whole tenant, but such a caller could not edit the others anyway).

use diesel::pg::sql_types::Record;
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_core::command::access::logged;
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::{ListPage, ListParams, ListRequest};
use stoa_core::{AppError, PageQuery};
use stoa_directory::names::{organization_name, tenant_name};
use time::OffsetDateTime;
use uuid::Uuid;

mod filter;

use filter::ListFilter;

use crate::dto::{UserList, UserListItem, UserListQuery};
use crate::routes::read_log;
use crate::schema::users;

/// Default and largest page of the user list.
pub const DEFAULT_PAGE_SIZE: u64 = 50;
pub const MAX_PAGE_SIZE: u64 = 100;

type ListRow = (
    Uuid,
    String,
    Option<String>,
    Option<Uuid>,
    Option<Uuid>,
    bool,
    bool,
    OffsetDateTime,
    Vec<(String, Uuid)>,
    Option<String>,
    Option<String>,
    i64,
    Vec<i64>,
);

/// The read models a user-list page is computed from, besides the ACL tables
/// (`acl_version` covers roles, memberships and organizations): users and
/// tenants (their names). A page is kept with their versions
/// ([`stoa_core::http::read_cache`]).
pub const READ_DEPS: &[&str] = &["auth.users", "directory.tenants"];

/// The sort tag of user-list cursors: ordered by e-mail, then id.
const CURSOR_TAG: &str = "auth.users:email";

/// The fields every listed user carries, as serialized (the access log's
/// `fields`); `hasPassword` is added for a lookup by `id`.
const FIELDS: &[&str] = &[
    "email",
    "id",
    "isConfirmed",
    "name",
    "organizationId",
    "organizationName",
    "roleIds",
    "roles",
    "tenantId",
    "tenantName",
    "updatedAt",
];
const FIELDS_BY_ID: &[&str] = &[
    "email",
    "hasPassword",
    "id",
    "isConfirmed",
    "name",
    "organizationId",
    "organizationName",
    "roleIds",
    "roles",
    "tenantId",
    "tenantName",
    "updatedAt",
];

/// The live roles of the listed user as `(name, id)` pairs, unsorted: one
/// subquery per row without a sort (the pairs are ordered in Rust). Two
/// sorted `ARRAY(...)` subqueries, one for names and one for ids, made a
/// quarter of the page statement's Postgres time at 100,000 users.
fn role_pairs() -> diesel::expression::SqlLiteral<Array<Record<(Text, SqlUuid)>>> {
    diesel::dsl::sql(
        "ARRAY(SELECT ROW(stoa_r.name, stoa_r.id) FROM user_roles stoa_ur JOIN roles stoa_r \
         ON stoa_r.id = stoa_ur.role_id WHERE stoa_ur.user_id = users.id \
         AND stoa_r.deleted_at IS NULL)",
    )
}

/// Role names and ids in the same order: by name, then id.
fn sorted_roles(mut pairs: Vec<(String, Uuid)>) -> (Vec<String>, Vec<Uuid>) {
    pairs.sort_unstable();
    pairs.into_iter().unzip()
}

/// A listed page and what keeps it: the versions of [`READ_DEPS`] its
/// statement read (`None` when it returned no row) and the access-log entry
/// it wrote.
pub struct ListedUsers {
    pub list: UserList,
    /// What the page was read from: [`READ_DEPS`] of its tenant (or all).
    pub deps: ReadDeps,
    pub versions: Option<Vec<i64>>,
    pub by_id: bool,
    pub fields: &'static [&'static str],
}

/// `GET /auth/users`: the page, its (capped) total, roles, organization and
/// tenant names, and the access-log entries of the read, in one statement.
/// `search` first resolves matching organizations and roles (two small
/// lookups), so the user query stays an OR of indexable conditions.
pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    q: &UserListQuery,
    params: &ListParams,
    path: &str,
) -> Result<ListedUsers, AppError> {
    let page = PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)?;
    let req = ListRequest::<(String, Uuid)>::new(page, params, CURSOR_TAG)?;
    let single = q.id.is_some();
    let fields = if single { FIELDS_BY_ID } else { FIELDS };
    let Some(filter) = ListFilter::resolve(conn, ctx, q).await? else {
        return Ok(ListedUsers {
            list: UserList::from_page(req.finish(Vec::new(), None, key_of), ctx),
            deps: ReadDeps::new(READ_DEPS, None),
            versions: None,
            by_id: single,
            fields,
        });
    };
    let deps = ReadDeps::new(READ_DEPS, filter.tenant());
    let filtered = || {
        let mut query = filter.query();
        if let Some((email, id)) = &req.after {
            query = query.filter(
                diesel::dsl::sql::<Bool>("(users.email, users.id) > (")
                    .bind::<Text, _>(email.clone())
                    .sql(", ")
                    .bind::<diesel::sql_types::Uuid, _>(*id)
                    .sql(")"),
            );
        }
        query
    };
    // The window is chosen by id in a subquery, so the per-row subqueries
    // (roles, names) run for the page's rows only, not for every row an
    // OFFSET skips (Postgres projects before it skips).
    let window = filtered()
        .select(users::id)
        .order((users::email.asc(), users::id.asc()))
        .limit(req.limit())
        .offset(req.offset());
    let page_query = users::table
        .filter(stoa_core::list::in_page(users::id, window))
        .select((
            users::id,
            users::email,
            users::name,
            users::organization_id,
            users::tenant_id,
            users::is_confirmed,
            users::password_hash.is_not_null(),
            users::updated_at,
            role_pairs(),
            organization_name("users.organization_id"),
            tenant_name("users.tenant_id"),
            req.count(filtered().select(users::id)),
            versions(deps),
        ))
        .order((users::email.asc(), users::id.asc()));
    // E-mail addresses and names are personal data: every read is logged, in
    // the same statement (a data-modifying CTE).
    let actor = ctx.actor();
    let rows: Vec<ListRow> = logged(page_query, &actor, read_log::USER, single, fields, path)
        .load(conn)
        .await?;
    let mut counted = <[ListRow]>::first(&rows).map(|r| r.11);
    let versions = <[ListRow]>::first(&rows).map(|r| r.12.clone());
    if req.needs_separate_count(rows.len()) {
        counted = Some(
            diesel::select(req.count(filtered().select(users::id)))
                .get_result(conn)
                .await?,
        );
    }
    let items = rows
        .into_iter()
        .map(
            |(
                id,
                email,
                name,
                org,
                tenant,
                confirmed,
                has_password,
                updated,
                role_pairs,
                organization_name,
                tenant_name,
                _,
                _,
            )| {
                let (roles, role_ids) = sorted_roles(role_pairs);
                UserListItem {
                    id,
                    email,
                    name,
                    organization_name,
                    organization_id: org,
                    tenant_name,
                    tenant_id: tenant,
                    roles,
                    role_ids,
                    is_confirmed: confirmed,
                    has_password: single.then_some(has_password),
                    updated_at: Some(updated),
                }
            },
        )
        .collect();
    Ok(ListedUsers {
        list: UserList::from_page(req.finish(items, counted, key_of), ctx),
        deps,
        versions,
        by_id: single,
        fields,
    })
}

fn key_of(item: &UserListItem) -> (String, Uuid) {
    (item.email.clone(), item.id)
}

impl UserList {
    fn from_page(page: ListPage<UserListItem>, ctx: &AuthContext) -> Self {
        Self {
            page,
            is_super_admin: ctx.is_super_admin(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered_by_name_then_id() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let pairs = vec![
            ("sales".into(), a),
            ("admin".into(), b),
            ("admin".into(), a),
        ];
        assert_eq!(
            sorted_roles(pairs),
            (
                vec!["admin".into(), "admin".into(), "sales".into()],
                vec![a, b, a]
            )
        );
    }

    #[test]
    fn logged_fields_are_the_serialized_keys() {
        let item = |has_password| UserListItem {
            id: Uuid::nil(),
            email: String::new(),
            name: None,
            organization_id: None,
            organization_name: None,
            tenant_id: None,
            tenant_name: None,
            roles: Vec::new(),
            role_ids: Vec::new(),
            is_confirmed: true,
            has_password,
            updated_at: None,
        };
        assert_eq!(read_log::fields_of(&[item(None)]), FIELDS);
        assert_eq!(read_log::fields_of(&[item(Some(true))]), FIELDS_BY_ID);
    }
}
