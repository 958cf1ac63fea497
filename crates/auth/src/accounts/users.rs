//! Users: create, update and delete, and who may change whom (the list is
//! `user_list/`).

use diesel_async::{AsyncConnection, AsyncPgConnection};
use stoa_acl::AuthContext;
use stoa_acl::resource::{self, Write};
use stoa_core::AppError;
use stoa_core::command::Operation;
use stoa_core::db::Db;
use stoa_directory::PgDirectory;
use uuid::Uuid;

use crate::commands::{UserState, users};
use crate::dto::{CreateUser, Created, UpdateUser};
use crate::error::AuthError;
use crate::grants::{self, RoleGrant, RoleLookupError};
use crate::password::{MAX_PASSWORD_LEN, hash_password};
use crate::queries::{self, normalize_email, valid_email};
use crate::state::AuthState;

mod self_service;

fn invalid(
    message: impl Into<std::borrow::Cow<'static, str>>,
    path: &'static str,
    detail: &str,
) -> AppError {
    AuthError::invalid(message, path, detail).into()
}

fn clean_name(name: Option<String>) -> Option<String> {
    name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty())
}

fn email_in_use() -> AppError {
    AuthError::EmailInUse.into()
}

async fn checked_password(state: &AuthState, password: String) -> Result<String, AppError> {
    if password.len() > MAX_PASSWORD_LEN {
        return Err(invalid(
            "Password does not meet the requirements.",
            "password",
            "Password is too long.",
        ));
    }
    state
        .config
        .password_policy
        .check(&password)
        .map_err(|m| invalid("Password does not meet the requirements.", "password", &m))?;
    hash_password(password).await
}

/// The tenant of `organization` if the caller may place users there.
///
/// The lookup runs in the caller's row-level-security scope, where another
/// tenant's organization does not exist. When it finds nothing, a second
/// lookup on a bypass connection (`db`) tells an organization of another
/// tenant (404 `Organization not found`, the reference's answer and the
/// README's rule) from one that does not exist at all (400, the
/// reference's too); it reads the organization's tenant only.
async fn organization_for(
    conn: &mut AsyncPgConnection,
    db: &Db,
    ctx: &AuthContext,
    organization: Uuid,
) -> Result<Uuid, AppError> {
    let not_found = || {
        invalid(
            "Organization not found",
            "organizationId",
            "Unknown organization",
        )
    };
    let tenant = match PgDirectory.organization_tenant(conn, organization).await? {
        Some(tenant) => tenant,
        // A super admin's scope already spans every tenant.
        None if ctx.is_super_admin() => return Err(not_found()),
        None => {
            let elsewhere = stoa_core::rls::bypass("foreign organization check", async {
                let mut conn = db.conn().await?;
                PgDirectory
                    .organization_tenant(&mut conn, organization)
                    .await
                    .map_err(AppError::from)
            })
            .await?;
            return Err(match elsewhere {
                Some(_) => AuthError::ForeignOrganization.into(),
                None => not_found(),
            });
        }
    };
    // Another tenant's organization is out of scope: 404 with the unknown
    // organization's message (the reference's answer), so nothing about it leaks.
    if !ctx.is_super_admin() && ctx.tenant_id != Some(tenant) {
        return Err(AuthError::ForeignOrganization.into());
    }
    if !ctx.may_write_organization(Some(organization)) {
        return Err(AuthError::OrganizationOutOfScope.into());
    }
    Ok(tenant)
}

/// Resolves role references in `tenant` and checks the caller may grant them
/// (only roles the user does not hold yet, `held`, are checked).
async fn grantable_roles(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    tenant: Uuid,
    tokens: &[String],
    held: &[Uuid],
) -> Result<Vec<Uuid>, AppError> {
    let roles = match grants::resolve_roles(conn, tenant, tokens).await? {
        Ok(roles) => roles,
        Err(RoleLookupError::NotFound(missing)) => {
            let list: Vec<String> = missing.iter().map(|m| format!("\"{m}\"")).collect();
            return Err(invalid(
                format!("Role(s) not found: {}", list.join(", ")),
                "roles",
                "Unknown role",
            ));
        }
        Err(RoleLookupError::ForeignTenant(name)) => {
            return Err(invalid(
                format!("Role {name} belongs to another tenant"),
                "roles",
                "Role of another tenant",
            ));
        }
    };
    let added: Vec<RoleGrant> = roles
        .iter()
        .filter(|r| !held.contains(&r.id))
        .cloned()
        .collect();
    grants::check_roles(ctx, &added)?;
    Ok(roles.into_iter().map(|r| r.id).collect())
}

/// User `id` locked for a write by `ctx` (the kit's `locked_in`): 404 when
/// absent, deleted or in a tenant the caller does not reach.
async fn live_user(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<UserState, AppError> {
    let user = resource::locked_in::<UserState>(conn, ctx, id, None).await?;
    if user.deleted {
        return Err(AuthError::UserNotFound.into());
    }
    Ok(user)
}

/// A user the caller may see and change (a read: `GET /auth/users/acl`):
/// 404 when invisible, 403 for super admins (unless the caller is one) and
/// for users outside a restricted caller's organizations.
pub async fn manageable_user(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    id: Uuid,
) -> Result<UserState, AppError> {
    let user = UserState::load(conn, id)
        .await?
        .filter(|u| !u.deleted)
        .ok_or(AuthError::UserNotFound)?;
    crate::commands::user_in_reach(conn, ctx, &user).await?;
    Ok(user)
}

/// `POST /auth/users`: the new id, the logged operation and, with
/// `sendInviteEmail`, whether the invitation went out.
pub async fn create(
    state: &AuthState,
    ctx: &AuthContext,
    input: CreateUser,
) -> Result<(Created, Operation), AppError> {
    let email = normalize_email(&input.email);
    let invite = input.send_invite_email == Some(true);
    let password = input.password.filter(|p| !p.is_empty());
    // Every problem of the body at once, each under its field.
    let mut issues = Vec::new();
    if !valid_email(&email) {
        issues.push(issue("email", "Invalid e-mail address"));
    }
    if password.is_none() && !invite {
        issues.push(issue(
            "password",
            "A password is required unless an invitation is sent",
        ));
    }
    if !issues.is_empty() {
        return Err(AppError::bad_request("Invalid input").with_issues(issues));
    }
    let hash = match password {
        Some(p) => Some(checked_password(state, p).await?),
        None => None,
    };
    let mut conn = state.db.conn().await?;
    // The checks run inside the transaction that writes, like the update's.
    let (id, op, token) = conn
        .transaction(async |conn| {
            let tenant = organization_for(conn, &state.db, ctx, input.organization_id).await?;
            if queries::email_taken(conn, Some(tenant), &email, Uuid::nil()).await? {
                return Err(email_in_use());
            }
            let tokens = input.roles.as_deref().unwrap_or(&[]);
            let role_ids = grantable_roles(conn, ctx, tenant, tokens, &[]).await?;
            let user = UserState {
                id: Uuid::new_v4(),
                tenant_id: Some(tenant),
                organization_id: Some(input.organization_id),
                email: email.clone(),
                name: clean_name(input.name.clone()),
                password_hash: hash,
                is_confirmed: true,
                is_active: true,
                role_ids,
                acl: None,
                deleted: false,
            };
            let id = user.id;
            let how = Write::new(users::CREATE, "Create user");
            let (_, op) = resource::create_in(conn, ctx, None, how, user).await?;
            let token = if invite {
                Some(
                    queries::create_reset_token(conn, id, "invite", crate::invite::INVITE_TTL)
                        .await?,
                )
            } else {
                None
            };
            Ok::<_, AppError>((id, op, token))
        })
        .await?;
    drop(conn);
    let warning = match (token, state.config.app_url.as_deref()) {
        (Some(token), Some(app_url)) => {
            crate::invite::send_invitation(state, app_url, &email, &token).await
        }
        (Some(_), None) => Some("invite_email_failed"),
        (None, _) => None,
    };
    Ok((Created { id, warning }, op))
}

/// `PUT /auth/users`. Everything the answer depends on is checked inside the
/// transaction, after the user row is locked: a concurrent change of the
/// same user (a demotion, an undo) either commits before these checks see it
/// or waits for this write (docs/security.md, "Checks hold until the write").
pub async fn update(
    state: &AuthState,
    ctx: &AuthContext,
    input: UpdateUser,
) -> Result<(Operation, Option<EmailChange>), AppError> {
    let email = match input.email.as_deref().map(normalize_email) {
        Some(e) if !valid_email(&e) => {
            return Err(invalid("Invalid input", "email", "Invalid e-mail address"));
        }
        other => other,
    };
    let password = input.password.clone().filter(|p| !p.is_empty());
    // One's own e-mail and password need the current password on every route.
    if ctx.user_id == Some(input.id) {
        self_service::confirm(
            state,
            ctx,
            email.as_deref(),
            password.is_some(),
            input.current_password.clone(),
        )
        .await?;
    }
    let hash = match password {
        Some(p) => Some(checked_password(state, p).await?),
        None => None,
    };
    let mut conn = state.db.conn().await?;
    conn.transaction(async |conn| {
        let user = live_user(conn, ctx, input.id).await?;
        let organization = match input.organization_id {
            Some(org) if Some(org) != user.organization_id => {
                Some((org, organization_for(conn, &state.db, ctx, org).await?))
            }
            _ => None,
        };
        let tenant = organization.map(|o| o.1).or(user.tenant_id);
        let moved = tenant != user.tenant_id;
        let check_email = email.clone().or(moved.then(|| user.email.clone()));
        if let Some(email) = &check_email
            && (moved || *email != user.email)
            && queries::email_taken(conn, tenant, email, user.id).await?
        {
            return Err(email_in_use());
        }
        let role_ids = match (&input.roles, tenant) {
            (Some(tokens), Some(tenant)) => {
                let held = if moved { &[][..] } else { &user.role_ids[..] };
                Some(grantable_roles(conn, ctx, tenant, tokens, held).await?)
            }
            (Some(_), None) => {
                return Err(invalid("Invalid input", "roles", "The user has no tenant"));
            }
            (None, _) => None,
        };
        if ctx.user_id == Some(user.id)
            && (organization.is_some() || changes_roles(&user.role_ids, role_ids.as_deref()))
        {
            return Err(AuthError::CannotChangeOwnAccess.into());
        }
        let change = email
            .clone()
            .filter(|e| *e != user.email)
            .map(|new| EmailChange {
                old: user.email.clone(),
                new,
            });
        let mut after = user.clone();
        if let Some(email) = email {
            after.email = email;
        }
        if let Some(name) = input.name.clone() {
            after.name = clean_name(name);
        }
        if hash.is_some() {
            after.password_hash = hash;
        }
        if let Some((org, tenant)) = organization {
            after.organization_id = Some(org);
            after.tenant_id = Some(tenant);
        }
        // A move to another tenant drops the memberships and the override
        // of the old one, unless new roles are given.
        match role_ids {
            Some(roles) => after.role_ids = roles,
            None if moved => after.role_ids = Vec::new(),
            None => {}
        }
        if moved {
            after.acl = None;
        }
        let how = Write::new(users::UPDATE, "Update user");
        let before = user.clone();
        let (_, op) =
            resource::save_in(conn, ctx, None, how, Some(user), Some(after.clone())).await?;
        // An administrator changing their own password keeps this session.
        let keep = (ctx.user_id == Some(before.id))
            .then_some(ctx.session_id)
            .flatten();
        users::after_write(conn, &before, &after, keep).await?;
        Ok((op, change))
    })
    .await
}

/// Whether `new` (when given) is another set of roles than `held`.
fn changes_roles(held: &[Uuid], new: Option<&[Uuid]>) -> bool {
    new.is_some_and(|new| {
        let held: std::collections::HashSet<&Uuid> = held.iter().collect();
        let new: std::collections::HashSet<&Uuid> = new.iter().collect();
        held != new
    })
}

/// An e-mail address that an update replaced: the old address is told
/// (`service::profile::notify_email_change`) once the change committed.
pub struct EmailChange {
    pub old: String,
    pub new: String,
}

/// `DELETE /auth/users`.
pub async fn delete(state: &AuthState, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    if ctx.user_id == Some(id) {
        return Err(AuthError::CannotDeleteSelf.into());
    }
    let mut conn = state.db.conn().await?;
    conn.transaction(async |conn| {
        let user = live_user(conn, ctx, id).await?;
        let after = UserState {
            role_ids: Vec::new(),
            acl: None,
            deleted: true,
            ..user.clone()
        };
        let how = Write::new(users::DELETE, "Delete user");
        let (_, op) = resource::save_in(conn, ctx, None, how, Some(user), Some(after)).await?;
        Ok(op)
    })
    .await
}

fn issue(field: &str, message: &str) -> stoa_core::error::Issue {
    stoa_core::error::Issue {
        path: vec![field.into()],
        message: message.into(),
        code: "custom".into(),
    }
}
