//! Reading and editing role and user ACLs.
//!
//! Edits keep every field the request omits, trim and de-duplicate lists,
//! drop grants nothing registered knows (answering `sanitized: true`) and then
//! hold the caller to the grant boundary (`crate::grants`) for whatever the
//! edit adds. A changed ACL is seen by the very next request: the ACL tables'
//! triggers bump `acl_version`, which every authentication reads.

use actix_web::HttpRequest;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use stoa_acl::{AuthContext, Registry};
use stoa_core::AppError;
use stoa_core::command::{self, Operation};
use stoa_directory::PgDirectory;
use time::OffsetDateTime;
use uuid::Uuid;

use super::roles::manageable_role;
use super::target_tenant;
use super::users::manageable_user;
use crate::commands::{
    AclState, RoleAclState, Tracked, UpdateRoleAclCommand, UpdateUserAclCommand, UserAclState,
};
use crate::dto::{
    RoleAclQuery, RoleAclUpdate, RoleAclView, UserAclQuery, UserAclUpdate, UserAclView,
};
use crate::error::AuthError;
use crate::reach;
use crate::schema::{role_acls, user_acls};
use crate::state::AuthState;
use crate::{grants, lock};

/// Most grants one ACL may list, and the longest grant.
const MAX_FEATURES: usize = 500;
const MAX_FEATURE_LEN: usize = 128;
const MAX_ORGANIZATIONS: usize = 500;

/// Trimmed, de-duplicated grants without the ones `drop` rejects; the flag
/// says whether anything was dropped. Over-long lists and grants are 400.
fn sanitize(
    registry: &Registry,
    raw: Vec<String>,
    strip: impl Fn(&str) -> bool,
) -> Result<(Vec<String>, bool), AppError> {
    if raw.len() > MAX_FEATURES {
        return Err(AuthError::TooManyFeatures { max: MAX_FEATURES }.into());
    }
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    let mut dropped = false;
    for grant in raw {
        let grant = grant.trim();
        if grant.is_empty() || out.iter().any(|g| g == grant) {
            continue;
        }
        if grant.len() > MAX_FEATURE_LEN {
            return Err(AuthError::FeatureTooLong {
                max: MAX_FEATURE_LEN,
            }
            .into());
        }
        // A grant of a feature no module registers (`sales.*`) is kept: the
        // grant check that follows refuses it (403 naming it) to a caller who
        // does not hold it, and a super admin's is stored, inert, for a module
        // installed later (as the reference).
        let _known = registry.is_known_grant(grant);
        if strip(grant) {
            dropped = true;
            continue;
        }
        out.push(grant.to_string());
    }
    Ok((out, dropped))
}

/// Organization ids de-duplicated and checked to be live organizations of `tenant`.
async fn clean_organizations(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    raw: Option<Vec<Uuid>>,
) -> Result<Option<Vec<Uuid>>, AppError> {
    let Some(mut list) = raw else {
        return Ok(None);
    };
    if list.len() > MAX_ORGANIZATIONS {
        return Err(AuthError::TooManyOrganizations {
            max: MAX_ORGANIZATIONS,
        }
        .into());
    }
    list.sort();
    list.dedup();
    for org in &list {
        if PgDirectory.organization_tenant(conn, *org).await? != Some(tenant) {
            return Err(AuthError::ForeignAclOrganization(*org).into());
        }
    }
    Ok(Some(list))
}

async fn role_acl_updated_at(
    conn: &mut AsyncPgConnection,
    role: Uuid,
    tenant: Uuid,
) -> Result<Option<OffsetDateTime>, AppError> {
    Ok(role_acls::table
        .filter(role_acls::role_id.eq(role))
        .filter(role_acls::tenant_id.eq(tenant))
        .select(role_acls::updated_at)
        .first(conn)
        .await
        .optional()?)
}

async fn user_acl_updated_at(
    conn: &mut AsyncPgConnection,
    user: Uuid,
    tenant: Uuid,
) -> Result<Option<OffsetDateTime>, AppError> {
    Ok(user_acls::table
        .filter(user_acls::user_id.eq(user))
        .filter(user_acls::tenant_id.eq(tenant))
        .select(user_acls::updated_at)
        .first(conn)
        .await
        .optional()?)
}

/// The role named by a role-ACL request, in the tenant it names.
async fn role_in_scope(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    role: Uuid,
    tenant: Option<Uuid>,
) -> Result<crate::commands::RoleState, AppError> {
    let tenant = match tenant {
        Some(t) => Some(target_tenant(ctx, Some(t))?),
        None => None,
    };
    let role = manageable_role(conn, ctx, role).await?;
    if tenant.is_some_and(|t| t != role.tenant_id) {
        return Err(AuthError::RoleNotFound.into());
    }
    Ok(role)
}

/// `GET /auth/roles/acl`.
pub async fn role_acl(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    q: &RoleAclQuery,
) -> Result<RoleAclView, AppError> {
    let role = role_in_scope(conn, ctx, q.role_id, q.tenant_id).await?;
    let updated_at = role_acl_updated_at(conn, role.id, role.tenant_id).await?;
    let acl = role.acl.unwrap_or_default();
    Ok(RoleAclView {
        is_super_admin: acl.is_super_admin,
        features: acl.features,
        organizations: acl.organizations,
        updated_at,
    })
}

/// Whether the caller is a member of role `role`.
async fn holds_role(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    role: Uuid,
) -> Result<bool, AppError> {
    Ok(match ctx.user_id {
        Some(user) => crate::queries::role_ids_of(conn, user)
            .await?
            .contains(&role),
        None => false,
    })
}

/// `PUT /auth/roles/acl`. The role row is locked before anything is read,
/// and the optimistic lock and grant checks run inside the same transaction:
/// no ACL write can commit between the checks and this one.
pub async fn update_role_acl(
    state: &AuthState,
    ctx: &AuthContext,
    req: &HttpRequest,
    input: RoleAclUpdate,
) -> Result<(bool, Operation), AppError> {
    let expected = lock::expected_updated_at(req)?;
    let actor = ctx.actor();
    let mut conn = state.db.conn().await?;
    conn.transaction(async |conn| {
        <RoleAclState as Tracked>::lock(conn, input.role_id).await?;
        let role = role_in_scope(conn, ctx, input.role_id, input.tenant_id).await?;
        super::roles::writable_role(conn, ctx, &role).await?;
        lock::check_lock(
            expected,
            role_acl_updated_at(conn, role.id, role.tenant_id).await?,
        )?;
        let current = role.acl.clone().unwrap_or(AclState {
            tenant_id: role.tenant_id,
            ..Default::default()
        });
        let (features, sanitized) = match input.features {
            Some(raw) => sanitize(&state.registry, raw, |_| false)?,
            None => (current.features.clone(), false),
        };
        let added: Vec<&String> = features
            .iter()
            .filter(|f| !current.features.contains(f))
            .collect();
        let is_super_admin = input.is_super_admin.unwrap_or(current.is_super_admin);
        grants::check_features(ctx, &added, is_super_admin && !current.is_super_admin)?;
        // A super admin who took the flag off their own role would have no
        // way back (nor, if it was the only one, would anyone else).
        if current.is_super_admin && !is_super_admin && holds_role(conn, ctx, role.id).await? {
            return Err(AuthError::CannotChangeOwnAccess.into());
        }
        let organizations = match input.organizations {
            Some(raw) => clean_organizations(conn, role.tenant_id, raw).await?,
            None => current.organizations.clone(),
        };
        // A restricted caller's ACLs stay inside its organizations (`None` =
        // its set), judged by who could then act where (`reach`).
        let organizations = ctx.grantable_organizations(organizations)?;
        reach::role_scope(
            conn,
            ctx,
            role.id,
            organizations.as_deref(),
            !features.is_empty(),
        )
        .await?;
        let command = UpdateRoleAclCommand {
            role: role.id,
            acl: AclState {
                tenant_id: role.tenant_id,
                features,
                is_super_admin,
                organizations,
            },
        };
        let ((), op) = command::execute(conn, &actor, command).await?;
        Ok((sanitized, op))
    })
    .await
}

/// The user named by a user-ACL request and the tenant of its override.
async fn user_in_scope(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    user: Uuid,
) -> Result<(crate::commands::UserState, Uuid), AppError> {
    let user = manageable_user(conn, ctx, user).await?;
    let tenant = user.tenant_id.ok_or(AuthError::UserNotFound)?;
    Ok((user, tenant))
}

/// `GET /auth/users/acl`. A user the caller cannot see (deleted, unknown or
/// another tenant's) has no override as far as the caller knows: 200
/// `{hasCustomAcl:false}` as the reference answers a deleted user's ACL, the
/// same answer for all three so it tells nothing about other tenants.
pub async fn user_acl(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    q: &UserAclQuery,
) -> Result<UserAclView, AppError> {
    let (user, tenant) = match user_in_scope(conn, ctx, q.user_id).await {
        Ok(found) => found,
        Err(err) if err.status() == actix_web::http::StatusCode::NOT_FOUND => {
            return Ok(UserAclView {
                has_custom_acl: false,
                is_super_admin: false,
                features: Vec::new(),
                organizations: None,
                updated_at: None,
            });
        }
        Err(err) => return Err(err),
    };
    let updated_at = user_acl_updated_at(conn, user.id, tenant).await?;
    Ok(match user.acl {
        Some(acl) => UserAclView {
            has_custom_acl: true,
            is_super_admin: acl.is_super_admin,
            features: acl.features,
            organizations: acl.organizations,
            updated_at,
        },
        None => UserAclView {
            has_custom_acl: false,
            is_super_admin: false,
            features: Vec::new(),
            organizations: None,
            updated_at: None,
        },
    })
}

/// Grants only super admins may put in a user override (the reference strips
/// them for everyone else rather than refusing).
fn tenant_level_grant(grant: &str) -> bool {
    grant == "*" || grant == "directory.*" || grant.starts_with("directory.tenants")
}

/// `PUT /auth/users/acl`. An override without features and without the
/// super-admin flag is removed (the user falls back to their roles), except
/// that an organization restriction without any feature is refused. Checked
/// inside the transaction after the user row is locked, like the role ACL.
pub async fn update_user_acl(
    state: &AuthState,
    ctx: &AuthContext,
    req: &HttpRequest,
    input: UserAclUpdate,
) -> Result<(bool, Operation), AppError> {
    let expected = lock::expected_updated_at(req)?;
    let actor = ctx.actor();
    let mut conn = state.db.conn().await?;
    conn.transaction(async |conn| {
        <UserAclState as Tracked>::lock(conn, input.user_id).await?;
        let (user, tenant) = user_in_scope(conn, ctx, input.user_id).await?;
        lock::check_lock(expected, user_acl_updated_at(conn, user.id, tenant).await?)?;
        let current = user.acl.clone().unwrap_or(AclState {
            tenant_id: tenant,
            ..Default::default()
        });
        let super_caller = ctx.is_super_admin();
        let (features, sanitized) = match input.features {
            Some(raw) => sanitize(&state.registry, raw, |g| {
                !super_caller && tenant_level_grant(g)
            })?,
            None => (current.features.clone(), false),
        };
        let added: Vec<&String> = features
            .iter()
            .filter(|f| !current.features.contains(f))
            .collect();
        let is_super_admin = input.is_super_admin.unwrap_or(current.is_super_admin);
        grants::check_features(ctx, &added, is_super_admin && !current.is_super_admin)?;
        // Past the grant boundary (an escalation stays a 403): one's own
        // override is left to another administrator.
        if ctx.user_id == Some(user.id) {
            return Err(AuthError::CannotChangeOwnAccess.into());
        }
        let organizations = match input.organizations {
            Some(raw) => clean_organizations(conn, tenant, raw).await?,
            None => current.organizations.clone(),
        };
        // A restricted caller's ACLs stay inside its organizations (`None` =
        // its set), judged by who could then act where (`reach`).
        let organizations = ctx.grantable_organizations(organizations)?;
        if features.is_empty() && !is_super_admin && organizations.is_some() {
            return Err(AuthError::AclFeaturesRequired.into());
        }
        reach::user_scope(ctx, &user, organizations.as_deref(), !features.is_empty())?;
        let acl = (!features.is_empty() || is_super_admin).then_some(AclState {
            tenant_id: tenant,
            features,
            is_super_admin,
            organizations,
        });
        let command = UpdateUserAclCommand {
            user: user.id,
            tenant,
            acl,
        };
        let ((), op) = command::execute(conn, &actor, command).await?;
        Ok((sanitized, op))
    })
    .await
}
