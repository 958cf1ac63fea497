//! Reading and editing role and user ACLs.
//!
//! Edits keep every field the request omits, trim and de-duplicate lists,
//! drop grants nothing registered knows (answering `sanitized: true`) and then
//! hold the caller to the grant boundary (`crate::grants`) for whatever the
//! edit adds. A changed ACL is seen by the very next request: the ACL tables'
//! triggers bump `acl_version`, which every authentication reads.

use actix_web::HttpRequest;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use stoa_acl::resource::{self, Write};
use stoa_acl::{AuthContext, Registry};
use stoa_core::AppError;
use stoa_core::command::Operation;
use stoa_directory::PgDirectory;
use uuid::Uuid;

use super::roles::manageable_role;
use super::target_tenant;
use super::users::manageable_user;
use crate::commands::state::{ROLE_ACLS, USER_ACLS};
use crate::commands::{AclState, RoleAcl, UserAcl, acls};
use crate::dto::{
    RoleAclQuery, RoleAclUpdate, RoleAclView, UserAclQuery, UserAclUpdate, UserAclView,
};
use crate::error::AuthError;
use crate::lock;
use crate::state::AuthState;

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
    let updated_at = ROLE_ACLS.updated_at(conn, role.id, role.tenant_id).await?;
    let acl = role.acl.unwrap_or_default();
    Ok(RoleAclView {
        is_super_admin: acl.is_super_admin,
        features: acl.features,
        organizations: acl.organizations,
        updated_at,
    })
}

/// An ACL edit's features: the request's, sanitized (`strip` drops
/// grants; the flag says whether anything was dropped), or the current ones.
fn features(
    state: &AuthState,
    requested: Option<Vec<String>>,
    current: &AclState,
    strip: impl Fn(&str) -> bool,
) -> Result<(Vec<String>, bool), AppError> {
    match requested {
        Some(raw) => sanitize(&state.registry, raw, strip),
        None => Ok((current.features.clone(), false)),
    }
}

/// An ACL edit's organizations: the request's (checked to be live
/// organizations of `tenant`) or the current ones, kept inside a
/// restricted caller's organizations (`None` = its set).
async fn organizations(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    tenant: Uuid,
    requested: Option<Option<Vec<Uuid>>>,
    current: &AclState,
) -> Result<Option<Vec<Uuid>>, AppError> {
    let organizations = match requested {
        Some(raw) => clean_organizations(conn, tenant, raw).await?,
        None => current.organizations.clone(),
    };
    ctx.grantable_organizations(organizations)
}

/// `PUT /auth/roles/acl`. The role row is locked before anything is read
/// (the kit's `locked_in`, with the ACL's optimistic lock), and the grant
/// and reach checks run in the same transaction (the ACL target's check):
/// no ACL write can commit between the checks and this one.
pub async fn update_role_acl(
    state: &AuthState,
    ctx: &AuthContext,
    req: &HttpRequest,
    input: RoleAclUpdate,
) -> Result<(bool, Operation), AppError> {
    let expected = lock::expected_updated_at(req)?;
    let requested_tenant = match input.tenant_id {
        Some(t) => Some(target_tenant(ctx, Some(t))?),
        None => None,
    };
    let mut conn = state.db.conn().await?;
    conn.transaction(async |conn| {
        let before = resource::locked_in::<RoleAcl>(conn, ctx, input.role_id, expected).await?;
        if requested_tenant.is_some_and(|t| t != before.tenant_id) {
            return Err(AuthError::RoleNotFound.into());
        }
        let tenant = before.tenant_id;
        let current = before.acl.clone().unwrap_or(AclState {
            tenant_id: tenant,
            ..Default::default()
        });
        let (features, sanitized) = features(state, input.features, &current, |_| false)?;
        let is_super_admin = input.is_super_admin.unwrap_or(current.is_super_admin);
        let organizations = organizations(conn, ctx, tenant, input.organizations, &current).await?;
        let after = RoleAcl::new(
            before.owner_id,
            tenant,
            Some(AclState {
                tenant_id: tenant,
                features,
                is_super_admin,
                organizations,
            }),
        );
        let how = Write::new(acls::ROLE_ACL_UPDATE, "Update role access");
        let (_, op) = resource::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
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
    let updated_at = USER_ACLS.updated_at(conn, user.id, tenant).await?;
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
    let mut conn = state.db.conn().await?;
    conn.transaction(async |conn| {
        let before = resource::locked_in::<UserAcl>(conn, ctx, input.user_id, expected).await?;
        let tenant = before.tenant_id;
        let current = before.acl.clone().unwrap_or(AclState {
            tenant_id: tenant,
            ..Default::default()
        });
        let super_caller = ctx.is_super_admin();
        let (features, sanitized) = features(state, input.features, &current, |g| {
            !super_caller && tenant_level_grant(g)
        })?;
        let is_super_admin = input.is_super_admin.unwrap_or(current.is_super_admin);
        let organizations = organizations(conn, ctx, tenant, input.organizations, &current).await?;
        if features.is_empty() && !is_super_admin && organizations.is_some() {
            return Err(AuthError::AclFeaturesRequired.into());
        }
        let acl = (!features.is_empty() || is_super_admin).then_some(AclState {
            tenant_id: tenant,
            features,
            is_super_admin,
            organizations,
        });
        let after = UserAcl::new(before.owner_id, tenant, acl);
        let how = Write::new(acls::USER_ACL_UPDATE, "Update user access");
        let (_, op) = resource::save_in(conn, ctx, None, how, Some(before), Some(after)).await?;
        Ok((sanitized, op))
    })
    .await
}
