//! The user list: filters, search and paging.
//!
//! Visibility: a super admin sees every tenant's users; anyone else sees the
//! live users of their tenant minus super admins, and an organization-restricted
//! caller only those of its allowed organizations (the reference lists the
//! whole tenant, but such a caller could not edit the others anyway).

use diesel::dsl::{exists, not};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_core::command::access::logged;
use stoa_core::list::{ListPage, ListParams, ListRequest};
use stoa_core::search::escape_like;
use stoa_core::{AppError, PageQuery};
use stoa_directory::PgDirectory;
use stoa_directory::names::{organization_name, tenant_name};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::dto::{UserList, UserListItem, UserListQuery};
use crate::error::AuthError;
use crate::routes::read_log;
use crate::schema::{roles, user_acls, user_roles, users};

/// Default and largest page of the user list.
pub const DEFAULT_PAGE_SIZE: u64 = 50;
pub const MAX_PAGE_SIZE: u64 = 100;
/// Most role references a single request may name.
const MAX_ROLES: usize = 50;

type Filter = Box<dyn BoxableExpression<users::table, Pg, SqlType = Nullable<Bool>>>;

fn parse_role_ids(raw: &[String]) -> Result<Vec<Uuid>, AppError> {
    let mut ids = Vec::new();
    for part in raw.iter().flat_map(|r| r.split(',')) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        ids.push(
            part.parse::<Uuid>()
                .map_err(|_| AuthError::InvalidRoleIds)?,
        );
    }
    if ids.len() > MAX_ROLES {
        return Err(AuthError::TooManyRoleIds { max: MAX_ROLES }.into());
    }
    Ok(ids)
}

/// Everything a list request filters by, resolved once (the lookups behind
/// `search` included) so the query can be built more than once for free.
struct ListFilter {
    /// `None` = every tenant (super admins).
    tenant: Option<Uuid>,
    /// Hide super admins: those with an override, and holders of super-admin roles.
    hide_super_admins: bool,
    allowed: Option<Vec<Uuid>>,
    id: Option<Uuid>,
    organization: Option<Uuid>,
    active_organization: Option<Uuid>,
    name: Option<String>,
    role_ids: Vec<Uuid>,
    /// The e-mail pattern, and the organizations and roles whose names match.
    search: Option<(String, Vec<Uuid>, Vec<Uuid>)>,
}

impl ListFilter {
    /// `Ok(None)` when nothing can match (no active organization to scope to).
    async fn resolve(
        conn: &mut AsyncPgConnection,
        ctx: &AuthContext,
        q: &UserListQuery,
    ) -> Result<Option<Self>, AppError> {
        let super_admin = ctx.is_super_admin();
        let tenant = if super_admin {
            None
        } else {
            Some(ctx.tenant()?)
        };
        let active_organization = match q.scope_to_active_organization {
            Some(true) => match ctx.organization_id() {
                Some(org) => Some(org),
                None => return Ok(None),
            },
            _ => None,
        };
        let search = match q.search.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(term) => Some(search_sets(conn, tenant, term).await?),
            None => None,
        };
        let hide_super_admins = !super_admin;
        Ok(Some(Self {
            tenant,
            hide_super_admins,
            allowed: if super_admin {
                None
            } else {
                ctx.acl.allowed_organization_ids.clone()
            },
            id: q.id,
            organization: q.organization_id,
            active_organization,
            name: q
                .name
                .as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|n| format!("%{}%", escape_like(n))),
            role_ids: parse_role_ids(&q.role_ids)?,
            search,
        }))
    }

    fn query(&self) -> users::BoxedQuery<'static, Pg> {
        let mut q = users::table
            .filter(users::deleted_at.is_null())
            .into_boxed();
        if let Some(t) = self.tenant {
            q = q.filter(users::tenant_id.eq(t));
        }
        if self.hide_super_admins {
            // Both sets are small (a few super-admin roles and overrides):
            // Postgres hashes each once per statement.
            q = q.filter(not(users::id.eq_any(
                user_acls::table
                    .filter(user_acls::is_super_admin.eq(true))
                    .select(user_acls::user_id),
            )));
            q = q.filter(not(users::id.eq_any(
                user_roles::table
                    .filter(super_admin_role_holders())
                    .select(user_roles::user_id),
            )));
        }
        if let Some(allowed) = &self.allowed {
            q = q.filter(users::organization_id.eq_any(allowed.clone()));
        }
        if let Some(id) = self.id {
            q = q.filter(users::id.eq(id));
        }
        for org in [self.organization, self.active_organization]
            .into_iter()
            .flatten()
        {
            q = q.filter(users::organization_id.eq(org));
        }
        if let Some(name) = &self.name {
            q = q.filter(users::name.ilike(name.clone()));
        }
        if !self.role_ids.is_empty() {
            q = q.filter(exists(
                user_roles::table
                    .filter(user_roles::user_id.eq(users::id))
                    .filter(user_roles::role_id.eq_any(self.role_ids.clone())),
            ));
        }
        if let Some((pattern, organizations, roles)) = &self.search {
            let mut filter: Filter = Box::new(users::email.ilike(pattern.clone()).nullable());
            if !organizations.is_empty() {
                filter = Box::new(filter.or(users::organization_id.eq_any(organizations.clone())));
            }
            if !roles.is_empty() {
                filter = Box::new(
                    filter.or(exists(
                        user_roles::table
                            .filter(user_roles::user_id.eq(users::id))
                            .filter(user_roles::role_id.eq_any(roles.clone())),
                    )
                    .nullable()),
                );
            }
            q = q.filter(filter);
        }
        q
    }
}

/// Memberships of super-admin roles. The role ids are an array built once
/// (`ARRAY(...)`, an init plan), so the planner always probes `user_roles` by
/// `role_id`: written as `IN (SELECT ...)` it has to guess the size of
/// `role_acls`, and a small, never-analyzed `role_acls` made it hash every
/// membership (100,000 rows, 20+ ms) on each request.
fn super_admin_role_holders() -> diesel::expression::SqlLiteral<Bool> {
    diesel::dsl::sql(
        "user_roles.role_id = ANY(ARRAY(SELECT stoa_ra.role_id FROM role_acls stoa_ra \
         WHERE stoa_ra.is_super_admin))",
    )
}

/// `search`: e-mail, or the user's organization's name, or one of its roles'
/// names. Matching organizations and roles are looked up first (they are few),
/// so the user table is filtered with plain indexable conditions.
async fn search_sets(
    conn: &mut AsyncPgConnection,
    tenant: Option<Uuid>,
    term: &str,
) -> Result<(String, Vec<Uuid>, Vec<Uuid>), AppError> {
    let pattern = format!("%{}%", escape_like(term));
    let organizations = PgDirectory
        .organization_ids_named(conn, tenant, term, 1000)
        .await?;
    let mut role_query = roles::table
        .filter(roles::deleted_at.is_null())
        .filter(roles::name.ilike(&pattern))
        .select(roles::id)
        .limit(1000)
        .into_boxed();
    if let Some(t) = tenant {
        role_query = role_query.filter(roles::tenant_id.eq(t));
    }
    let role_ids: Vec<Uuid> = role_query.load(conn).await?;
    Ok((pattern, organizations, role_ids))
}

type ListRow = (
    Uuid,
    String,
    Option<String>,
    Option<Uuid>,
    Option<Uuid>,
    bool,
    bool,
    OffsetDateTime,
    Vec<String>,
    Vec<Uuid>,
    Option<String>,
    Option<String>,
    i64,
);

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

/// The live roles of the listed user, by name (names and ids in the same order).
fn role_names() -> diesel::expression::SqlLiteral<Array<Text>> {
    diesel::dsl::sql(
        "ARRAY(SELECT stoa_r.name FROM user_roles stoa_ur JOIN roles stoa_r \
         ON stoa_r.id = stoa_ur.role_id WHERE stoa_ur.user_id = users.id \
         AND stoa_r.deleted_at IS NULL ORDER BY stoa_r.name, stoa_r.id)",
    )
}

fn role_ids() -> diesel::expression::SqlLiteral<Array<diesel::sql_types::Uuid>> {
    diesel::dsl::sql(
        "ARRAY(SELECT stoa_r.id FROM user_roles stoa_ur JOIN roles stoa_r \
         ON stoa_r.id = stoa_ur.role_id WHERE stoa_ur.user_id = users.id \
         AND stoa_r.deleted_at IS NULL ORDER BY stoa_r.name, stoa_r.id)",
    )
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
) -> Result<UserList, AppError> {
    let page = PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)?;
    let req = ListRequest::<(String, Uuid)>::new(page, params, CURSOR_TAG)?;
    let Some(filter) = ListFilter::resolve(conn, ctx, q).await? else {
        return Ok(UserList::from_page(
            req.finish(Vec::new(), None, key_of),
            ctx,
        ));
    };
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
    let single = q.id.is_some();
    // The window is chosen by id in a subquery, so the per-row subqueries
    // (roles, names) run for the page's rows only, not for every row an
    // OFFSET skips (Postgres projects before it skips).
    let window = filtered()
        .select(users::id)
        .order((users::email.asc(), users::id.asc()))
        .limit(req.limit())
        .offset(req.offset());
    let page_query = users::table
        .filter(users::id.eq_any(window))
        .select((
            users::id,
            users::email,
            users::name,
            users::organization_id,
            users::tenant_id,
            users::is_confirmed,
            users::password_hash.is_not_null(),
            users::updated_at,
            role_names(),
            role_ids(),
            organization_name("users.organization_id"),
            tenant_name("users.tenant_id"),
            req.count(filtered().select(users::id)),
        ))
        .order((users::email.asc(), users::id.asc()));
    // E-mail addresses and names are personal data: every read is logged, in
    // the same statement (a data-modifying CTE).
    let actor = ctx.actor();
    let rows: Vec<ListRow> = logged(
        page_query,
        &actor,
        read_log::USER,
        single,
        if single { FIELDS_BY_ID } else { FIELDS },
        path,
    )
    .load(conn)
    .await?;
    let mut counted = <[ListRow]>::first(&rows).map(|r| r.12);
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
                roles,
                role_ids,
                organization_name,
                tenant_name,
                _,
            )| UserListItem {
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
            },
        )
        .collect();
    Ok(UserList::from_page(req.finish(items, counted, key_of), ctx))
}

fn key_of(item: &UserListItem) -> (String, Uuid) {
    (item.email.clone(), item.id)
}

impl UserList {
    fn from_page(page: ListPage<UserListItem>, ctx: &AuthContext) -> Self {
        Self {
            items: page.items,
            total: page.total,
            page: page.page,
            page_size: page.page_size,
            total_pages: page.total_pages,
            total_capped: page.total_capped,
            next_cursor: page.next_cursor,
            is_super_admin: ctx.is_super_admin(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
