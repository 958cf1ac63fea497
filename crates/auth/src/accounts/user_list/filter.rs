//! What a user-list request filters by: visibility, the query's filters and
//! the lookups behind `search`, resolved once and turned into a query as
//! often as the list needs it.

use diesel::dsl::exists;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Nullable};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::search::escape_like;
use stoa_directory::PgDirectory;
use uuid::Uuid;

use crate::dto::UserListQuery;
use crate::error::AuthError;
use crate::schema::{roles, user_roles, users};

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
pub(super) struct ListFilter {
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
    pub(super) async fn resolve(
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

    /// The tenant the list is limited to (`None`: every tenant).
    pub(super) fn tenant(&self) -> Option<Uuid> {
        self.tenant
    }

    pub(super) fn query(&self) -> users::BoxedQuery<'static, Pg> {
        let mut q = users::table
            .filter(users::deleted_at.is_null())
            .into_boxed();
        if let Some(t) = self.tenant {
            q = q.filter(users::tenant_id.eq(t));
        }
        if self.hide_super_admins {
            q = q.filter(not_a_super_admin());
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

/// Excludes super admins (an override, or a super-admin role). Their ids are
/// collected once per statement into an array (`ARRAY(...)`, an init plan;
/// super admins are few) and each row is compared with `<> ALL`. Written as
/// `NOT IN (SELECT ...)`, Postgres hashed the subquery and sized the hash
/// table by its row estimate: with `role_id = ANY(<init plan>)` unknown at
/// plan time it guessed every membership (100,000), and allocating that table
/// cost 2 ms per subquery per request, two thirds of the whole statement.
fn not_a_super_admin() -> diesel::expression::SqlLiteral<Bool> {
    diesel::dsl::sql(
        "users.id <> ALL(ARRAY(SELECT stoa_ua.user_id FROM user_acls stoa_ua \
         WHERE stoa_ua.is_super_admin UNION ALL SELECT stoa_ur.user_id FROM user_roles stoa_ur \
         WHERE stoa_ur.role_id = ANY(ARRAY(SELECT stoa_ra.role_id FROM role_acls stoa_ra \
         WHERE stoa_ra.is_super_admin))))",
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
