//! Sidebar preferences: the caller's or a role's, read, saved (with copies to
//! and removals from roles) and deleted.

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use stoa_acl::{AuthContext, RoleDirectory};
use stoa_core::{AppError, AppResult};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::PreferencesError;
use crate::sidebar::commands::{DeleteRolePreference, SaveRolePreference, SaveUserPreference};
use crate::sidebar::dto::{
    PreferenceResponse, PreferenceScope, PreferenceUpdate, PreferenceUpdated, RoleEntry,
    RolePreferenceDeleted,
};
use crate::sidebar::queries::{self, StoredPreference};
use crate::sidebar::{MANAGE, SidebarSettings, UserScope, no_user};
use crate::state::PreferencesState;

/// The live role `id` of the caller's tenant, or 404.
async fn tenant_role(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    ctx: &AuthContext,
    id: Uuid,
) -> AppResult<Uuid> {
    let tenant = ctx.tenant_id.ok_or(PreferencesError::RoleNotFound)?;
    let found = queries::roles_in_tenant(conn, roles, &[id], tenant).await?;
    Ok(found
        .into_iter()
        .next()
        .ok_or(PreferencesError::RoleNotFound)?)
}

/// The grant boundary of a role-scoped write: a role's preference (its
/// navigation labels, order and hidden pages) is part of how its holders see
/// the product, so only a caller who could grant the role may set it — one
/// holding every feature it grants, inside the caller's organizations, and a
/// super admin for a super-admin role (`stoa_acl::grants::check_roles`, 403).
/// For a restricted caller the role must also be of its organizations
/// (`stoa_acl::grants::check_role_records`: a role reaching every
/// organization is a tenant-wide record, read-only to it, 403).
async fn may_write_for_roles(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    ctx: &AuthContext,
    ids: &[Uuid],
) -> AppResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let grants = roles.role_grants(conn, ids).await?;
    stoa_acl::grants::check_role_records(ctx, &grants)
}

/// The roles list of a response: the tenant's roles for managers, else empty.
async fn roles_for(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    ctx: &AuthContext,
    locale: &str,
) -> AppResult<Vec<RoleEntry>> {
    match ctx.tenant_id.filter(|_| ctx.has(MANAGE)) {
        Some(tenant) => queries::tenant_roles(conn, roles, tenant, locale).await,
        None => Ok(Vec::new()),
    }
}

fn response(
    ctx: &AuthContext,
    locale: &str,
    stored: Option<StoredPreference>,
    roles: Vec<RoleEntry>,
    scope: PreferenceScope,
) -> PreferenceResponse {
    let (settings, updated_at) = match stored {
        Some(s) => (s.settings, Some(s.updated_at)),
        None => (Default::default(), None),
    };
    PreferenceResponse {
        locale: locale.to_string(),
        settings,
        can_apply_to_roles: ctx.has(MANAGE),
        roles,
        scope,
        updated_at,
    }
}

/// The caller's preference in `locale`, or `role_id`'s (the caller already
/// holds `auth.sidebar.manage` for that).
pub async fn get(
    state: &PreferencesState,
    ctx: &AuthContext,
    locale: &'static str,
    role_id: Option<Uuid>,
) -> AppResult<PreferenceResponse> {
    let mut conn = state.db.conn().await?;
    if let Some(role_id) = role_id {
        let role = tenant_role(&mut conn, &*state.roles, ctx, role_id).await?;
        let tenant = ctx.tenant()?;
        let stored = queries::role_preference(&mut conn, role, tenant, locale, false).await?;
        let roles = roles_for(&mut conn, &*state.roles, ctx, locale).await?;
        return Ok(response(
            ctx,
            locale,
            stored,
            roles,
            PreferenceScope::Role { role_id: role },
        ));
    }
    let stored = match UserScope::of(ctx, locale) {
        Some(scope) => queries::user_preference(&mut conn, &scope, false).await?,
        None => None,
    };
    let roles = roles_for(&mut conn, &*state.roles, ctx, locale).await?;
    Ok(response(ctx, locale, stored, roles, PreferenceScope::User))
}

fn dedup(ids: Option<Vec<Uuid>>) -> Vec<Uuid> {
    let mut out: Vec<Uuid> = Vec::new();
    for id in ids.unwrap_or_default() {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// 400 `{error:"Invalid roles", missing}` unless every id is a live role of `tenant`.
async fn check_known_roles(
    conn: &mut AsyncPgConnection,
    roles: &dyn RoleDirectory,
    tenant: Option<Uuid>,
    wanted: &[Uuid],
) -> AppResult<()> {
    if wanted.is_empty() {
        return Ok(());
    }
    let known = match tenant {
        Some(tenant) => queries::roles_in_tenant(conn, roles, wanted, tenant).await?,
        None => Vec::new(),
    };
    let missing = dedup(Some(
        wanted
            .iter()
            .filter(|id| !known.contains(id))
            .copied()
            .collect(),
    ));
    if missing.is_empty() {
        Ok(())
    } else {
        Err(PreferencesError::InvalidRoles { missing }.into())
    }
}

/// The settings of a `PUT` body: nested in `settings`, or at the top level.
fn settings_of(body: &mut PreferenceUpdate) -> AppResult<SidebarSettings> {
    let top_level = std::mem::take(&mut body.top_level);
    match body.settings.take() {
        Some(nested) if top_level.is_empty() => nested.normalize(&["settings"]),
        Some(_) => Err(PreferencesError::SettingsTwice.into()),
        None => top_level.normalize(&[]),
    }
}

/// Saves the caller's preference (copying it to `applyToRoles`, clearing
/// `clearRoleIds`), or with a role scope that role's; `expected` is the
/// optimistic-lock version the client read.
pub async fn update(
    state: &PreferencesState,
    ctx: &AuthContext,
    locale: &'static str,
    expected: Option<OffsetDateTime>,
    mut body: PreferenceUpdate,
) -> AppResult<PreferenceUpdated> {
    let settings = settings_of(&mut body)?;
    let apply = dedup(body.apply_to_roles);
    let clear = dedup(body.clear_role_ids);
    if let Some(PreferenceScope::Role { role_id }) = body.scope {
        for (field, list) in [("applyToRoles", &apply), ("clearRoleIds", &clear)] {
            if !list.is_empty() {
                return Err(PreferencesError::RoleListWithRoleScope(field).into());
            }
        }
        return save_for_role(state, ctx, role_id, locale, settings, expected).await;
    }
    let scope = UserScope::of(ctx, locale)
        .ok_or_else(|| no_user("Cannot save preferences: no user associated with this API key"))?;
    let command = SaveUserPreference {
        scope,
        settings,
        expected,
        apply_to_roles: apply,
        clear_roles: clear,
    };
    save_for_user(state, ctx, command).await
}

/// Saves the caller's preference (and copies it to / clears it from roles).
async fn save_for_user(
    state: &PreferencesState,
    ctx: &AuthContext,
    command: SaveUserPreference,
) -> AppResult<PreferenceUpdated> {
    let actor = ctx.actor();
    let locale = command.scope.locale;
    let caller = ctx.clone();
    let directory = Arc::clone(&state.roles);
    let (saved, roles) = state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let wanted: Vec<Uuid> = command
                    .apply_to_roles
                    .iter()
                    .chain(&command.clear_roles)
                    .copied()
                    .collect();
                check_known_roles(conn, &*directory, command.scope.tenant_id, &wanted).await?;
                may_write_for_roles(conn, &*directory, &caller, &wanted).await?;
                let (saved, _) = stoa_core::command::execute(conn, &actor, command).await?;
                let roles = roles_for(conn, &*directory, &caller, locale).await?;
                Ok((saved, roles))
            })
        })
        .await?;
    Ok(PreferenceUpdated {
        preference: response(
            ctx,
            locale,
            Some(saved.preference),
            roles,
            PreferenceScope::User,
        ),
        applied_roles: saved.applied,
        cleared_roles: saved.cleared,
    })
}

/// Saves a role's preference in the caller's tenant.
async fn save_for_role(
    state: &PreferencesState,
    ctx: &AuthContext,
    role_id: Uuid,
    locale: &'static str,
    settings: SidebarSettings,
    expected: Option<OffsetDateTime>,
) -> AppResult<PreferenceUpdated> {
    let actor = ctx.actor();
    let caller = ctx.clone();
    let directory = Arc::clone(&state.roles);
    let (stored, roles) = state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let role = tenant_role(conn, &*directory, &caller, role_id).await?;
                may_write_for_roles(conn, &*directory, &caller, &[role]).await?;
                let command = SaveRolePreference {
                    role,
                    tenant: caller.tenant()?,
                    locale,
                    settings,
                    expected,
                };
                let (stored, _) = stoa_core::command::execute(conn, &actor, command).await?;
                let roles = roles_for(conn, &*directory, &caller, locale).await?;
                Ok((stored, roles))
            })
        })
        .await?;
    Ok(PreferenceUpdated {
        preference: response(
            ctx,
            locale,
            Some(stored),
            roles,
            PreferenceScope::Role { role_id },
        ),
        applied_roles: Vec::new(),
        cleared_roles: Vec::new(),
    })
}

/// Removes `role_id`'s preference for the caller's tenant and `locale`.
/// Idempotent: only an existing preference is deleted (and logged).
pub async fn delete_role(
    state: &PreferencesState,
    ctx: &AuthContext,
    locale: &'static str,
    role_id: Uuid,
) -> AppResult<RolePreferenceDeleted> {
    let actor = ctx.actor();
    let caller = ctx.clone();
    let directory = Arc::clone(&state.roles);
    state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let role = tenant_role(conn, &*directory, &caller, role_id).await?;
                may_write_for_roles(conn, &*directory, &caller, &[role]).await?;
                let tenant = caller.tenant()?;
                if let Some(before) =
                    queries::role_preference(conn, role, tenant, locale, true).await?
                {
                    let command = DeleteRolePreference {
                        role,
                        tenant,
                        locale,
                        before,
                    };
                    stoa_core::command::execute(conn, &actor, command).await?;
                }
                Ok(())
            })
        })
        .await?;
    Ok(RolePreferenceDeleted {
        ok: true,
        scope: PreferenceScope::Role { role_id },
    })
}
