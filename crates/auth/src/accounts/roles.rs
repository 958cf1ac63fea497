//! Roles: list, create, rename/move, delete.
//!
//! Super admins see and manage every tenant's roles. Anyone else works in
//! their own tenant and never sees or touches super-admin roles (the
//! `superadmin` role or any role whose ACL carries the flag).

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use stoa_acl::AuthContext;
use stoa_acl::resource::{self, Write};
use stoa_core::command::Operation;
use stoa_core::http::read_cache::{ReadDeps, versions};
use stoa_core::list::{ListParams, ListRequest};
use stoa_core::search::escape_like;
use stoa_core::{AppError, PageQuery};
use stoa_directory::names::tenant_name;
use stoa_directory::{DirectoryService, PgDirectory};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{foreign_tenant, target_tenant};
use crate::commands::{AclState, RoleState, roles as commands};
use crate::dto::{CreateRole, RoleItem, RoleList, RoleListQuery, UpdateRole};
use crate::error::AuthError;
use crate::schema::{role_acls, roles};
use crate::state::AuthState;

pub const DEFAULT_PAGE_SIZE: u64 = 50;
pub const MAX_PAGE_SIZE: u64 = 100;
/// Names nobody may give a new role (case-insensitive), as in the reference.
const RESERVED: [&str; 2] = ["superadmin", "admin"];
/// The default super-admin role's name.
pub(crate) const SUPERADMIN: &str = "superadmin";

/// Roles whose ACL carries the super-admin flag.
fn super_admin_role_ids() -> role_acls::BoxedQuery<'static, Pg, diesel::sql_types::Uuid> {
    role_acls::table
        .filter(role_acls::is_super_admin.eq(true))
        .select(role_acls::role_id)
        .into_boxed()
}

/// The tenant a role list is limited to: the requested one for a super admin
/// (`None`: every tenant), else the caller's own or a tenant it may target.
/// The page's filter and its read versions both follow it.
fn listed_tenant(ctx: &AuthContext, q: &RoleListQuery) -> Result<Option<Uuid>, AppError> {
    if ctx.is_super_admin() {
        Ok(q.tenant_id)
    } else {
        target_tenant(ctx, q.tenant_id).map(Some)
    }
}

/// The roles of a list request, in `tenant` ([`listed_tenant`]).
fn listed(
    ctx: &AuthContext,
    q: &RoleListQuery,
    tenant: Option<Uuid>,
) -> roles::BoxedQuery<'static, Pg> {
    let mut query = roles::table
        .filter(roles::deleted_at.is_null())
        .into_boxed();
    if let Some(t) = tenant {
        query = query.filter(roles::tenant_id.eq(t));
    }
    if !ctx.is_super_admin() {
        query = query
            .filter(roles::name.ne(SUPERADMIN))
            .filter(roles::id.ne_all(super_admin_role_ids()));
    }
    if let Some(id) = q.id {
        query = query.filter(roles::id.eq(id));
    }
    if let Some(term) = q.search.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        query = query.filter(roles::name.ilike(format!("%{}%", escape_like(term))));
    }
    query
}

/// The sort tag of role-list cursors: ordered by name, then id.
const CURSOR_TAG: &str = "auth.roles:name";

/// Live users holding the listed role: the trigger-maintained counter
/// (migration `auth_role_user_counts`), so a page costs O(page), not a count
/// of every membership.
fn users_count() -> diesel::expression::SqlLiteral<diesel::sql_types::BigInt> {
    diesel::dsl::sql(
        "COALESCE((SELECT stoa_c.users_count FROM role_user_counts stoa_c \
         WHERE stoa_c.role_id = roles.id), 0)",
    )
}

/// The read models a role-list page is computed from, besides the ACL tables
/// (roles, role ACLs and memberships bump `acl_version`): users (a deleted
/// user leaves the counts) and tenants (their names).
pub const READ_DEPS: &[&str] = &["auth.users", "directory.tenants"];

/// `GET /auth/roles`: the page, its (capped) total, user counts and tenant
/// names in one statement, with what it was read from ([`READ_DEPS`] of the
/// listed tenant, or of all) and their versions (`None` when it returned no
/// row).
pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    q: &RoleListQuery,
    params: &ListParams,
) -> Result<(RoleList, ReadDeps, Option<Vec<i64>>), AppError> {
    let page = PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)?;
    let req = ListRequest::<(String, Uuid)>::new(page, params, CURSOR_TAG)?;
    let tenant = listed_tenant(ctx, q)?;
    let deps = ReadDeps::new(READ_DEPS, tenant);
    let filtered = || {
        let mut query = listed(ctx, q, tenant);
        if let Some((name, id)) = &req.after {
            query = query.filter(
                diesel::dsl::sql::<diesel::sql_types::Bool>("(roles.name, roles.id) > (")
                    .bind::<diesel::sql_types::Text, _>(name.clone())
                    .sql(", ")
                    .bind::<diesel::sql_types::Uuid, _>(*id)
                    .sql(")"),
            );
        }
        query
    };
    type Row = (
        Uuid,
        String,
        Uuid,
        OffsetDateTime,
        i64,
        Option<String>,
        i64,
        Vec<i64>,
    );
    // The window is chosen by id in a subquery, so the per-row subqueries
    // run for the page's rows only, not for every row an OFFSET skips.
    let window = filtered()
        .select(roles::id)
        .order((roles::name.asc(), roles::id.asc()))
        .limit(req.limit())
        .offset(req.offset());
    let rows: Vec<Row> = stoa_core::prepared::Cached(
        roles::table
            .filter(stoa_core::list::in_page(roles::id, window))
            .select((
                roles::id,
                roles::name,
                roles::tenant_id,
                roles::updated_at,
                users_count(),
                tenant_name("roles.tenant_id"),
                req.count(filtered().select(roles::id)),
                versions(deps),
            ))
            .order((roles::name.asc(), roles::id.asc())),
    )
    .load(conn)
    .await?;
    let mut counted = <[Row]>::first(&rows).map(|r| r.6);
    let versions = <[Row]>::first(&rows).map(|r| r.7.clone());
    if req.needs_separate_count(rows.len()) {
        counted = Some(
            diesel::select(req.count(filtered().select(roles::id)))
                .get_result(conn)
                .await?,
        );
    }
    let items = rows
        .into_iter()
        .map(
            |(id, name, tenant, updated, users_count, tenant_name, _, _)| RoleItem {
                users_count,
                id,
                name,
                tenant_name,
                tenant_id: Some(tenant),
                updated_at: Some(updated),
            },
        )
        .collect();
    let page = req.finish(items, counted, |r: &RoleItem| (r.name.clone(), r.id));
    let list = RoleList {
        page,
        is_super_admin: ctx.is_super_admin(),
    };
    Ok((list, deps, versions))
}

/// The name to store: NFKC form, trimmed, single spaces (hidden characters
/// were refused with the body), so a full-width `ｓｕｐｅｒａｄｍｉｎ` is the
/// reserved `superadmin` and no two roles merely look alike.
fn clean_name(raw: &str) -> Result<String, AppError> {
    let name = stoa_core::text::normalize_name(raw);
    if name.chars().count() < 2 {
        return Err(AuthError::RoleNameLength.into());
    }
    if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(&name)) {
        return Err(AuthError::RoleNameReserved.into());
    }
    Ok(name)
}

async fn name_taken(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    name: &str,
    except: Uuid,
) -> Result<bool, AppError> {
    let n: i64 = roles::table
        .filter(roles::tenant_id.eq(tenant))
        .filter(roles::deleted_at.is_null())
        .filter(roles::id.ne(except))
        .filter(roles::name.ilike(escape_like(name)))
        .count()
        .get_result(conn)
        .await?;
    Ok(n > 0)
}

fn duplicate() -> AppError {
    AuthError::RoleNameTaken.into()
}

/// A role the caller may see and change: 404 when invisible (unknown, deleted
/// or another tenant's), 403 for super-admin roles unless the caller is one.
pub async fn manageable_role(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<RoleState, AppError> {
    let role = RoleState::load(conn, id)
        .await?
        .filter(|r| !r.deleted)
        .filter(|r| ctx.is_super_admin() || ctx.tenant_id == Some(r.tenant_id))
        .ok_or(AuthError::RoleNotFound)?;
    let super_role = role.name == SUPERADMIN || role.acl.as_ref().is_some_and(|a| a.is_super_admin);
    if super_role && !ctx.is_super_admin() {
        return Err(AuthError::SuperAdminRole.into());
    }
    Ok(role)
}

/// Role `id` locked for a write by `ctx` (the kit's `locked_in`): 404 when
/// absent, deleted or not reached, 403 for a super-admin role or without
/// `auth.roles.manage`.
async fn live_role(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<RoleState, AppError> {
    let role = resource::locked_in::<RoleState>(conn, ctx, id, None).await?;
    if role.deleted {
        return Err(AuthError::RoleNotFound.into());
    }
    Ok(role)
}

/// `POST /auth/roles`.
pub async fn create(
    state: &AuthState,
    ctx: &AuthContext,
    input: CreateRole,
) -> Result<(Uuid, Operation), AppError> {
    let tenant = match input.tenant_id {
        Some(None) => {
            return Err(AuthError::GlobalRole.into());
        }
        Some(Some(t)) => target_tenant(ctx, Some(t))?,
        None => ctx.tenant()?,
    };
    let name = clean_name(&input.name)?;
    // A restricted caller's new role reaches only the caller's organizations.
    let organizations = ctx.grantable_organizations(None)?;
    let mut conn = state.db.conn().await?;
    conn.transaction(async |conn| {
        if PgDirectory.tenant(conn, tenant).await?.is_none() {
            return Err(AuthError::TenantNotFound.into());
        }
        if name_taken(conn, tenant, &name, Uuid::nil()).await? {
            return Err(duplicate());
        }
        // With an empty ACL row, so the ACL editor has one to show.
        let role = RoleState {
            id: Uuid::new_v4(),
            tenant_id: tenant,
            name,
            acl: Some(AclState {
                tenant_id: tenant,
                organizations,
                ..Default::default()
            }),
            deleted: false,
        };
        let id = role.id;
        let how = Write::new(commands::CREATE, "Create role");
        let (_, op) = resource::create_in(conn, ctx, None, how, role).await?;
        Ok((id, op))
    })
    .await
}

/// `PUT /auth/roles`: renames a role and/or moves it to another tenant
/// (its ACL does not move: it starts empty there). Checked inside the
/// transaction after the role row is locked, so a concurrent change of the
/// role cannot slip between.
pub async fn update(
    state: &AuthState,
    ctx: &AuthContext,
    input: UpdateRole,
) -> Result<Operation, AppError> {
    let mut conn = state.db.conn().await?;
    conn.transaction(async |conn| {
        let role = live_role(conn, ctx, input.id).await?;
        let name = match input.name.as_deref() {
            Some(n) if n.trim() != role.name => Some(clean_name(n)?),
            _ => None,
        };
        let tenant = match input.tenant_id {
            Some(t) if t != role.tenant_id => {
                if !ctx.is_super_admin() {
                    return Err(foreign_tenant());
                }
                if PgDirectory.tenant(conn, t).await?.is_none() {
                    return Err(AuthError::TenantNotFound.into());
                }
                if crate::commands::state::role_user_count(conn, role.id).await? > 0 {
                    return Err(AuthError::RoleHasUsers.into());
                }
                Some(t)
            }
            _ => None,
        };
        let mut after = role.clone();
        if let Some(name) = name {
            after.name = name;
        }
        if let Some(t) = tenant {
            after.tenant_id = t;
            after.acl = Some(AclState {
                tenant_id: t,
                ..Default::default()
            });
        }
        if after != role && name_taken(conn, after.tenant_id, &after.name, role.id).await? {
            return Err(duplicate());
        }
        let how = Write::new(commands::UPDATE, "Update role");
        let (_, op) = resource::save_in(conn, ctx, None, how, Some(role), Some(after)).await?;
        Ok(op)
    })
    .await
}

/// `DELETE /auth/roles`: a role nobody holds is marked deleted, its ACL
/// kept for undo (400 while users hold it).
pub async fn delete(state: &AuthState, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    let mut conn = state.db.conn().await?;
    conn.transaction(async |conn| {
        let role = live_role(conn, ctx, id).await?;
        let after = RoleState {
            deleted: true,
            ..role.clone()
        };
        let how = Write::new(commands::DELETE, "Delete role");
        let (_, op) = resource::save_in(conn, ctx, None, how, Some(role), Some(after)).await?;
        Ok(op)
    })
    .await
}
