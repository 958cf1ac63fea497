//! `GET|PUT|DELETE /auth/sidebar/preferences`: the caller's or a role's
//! sidebar preference in the request's locale.

use actix_web::{HttpRequest, delete, get, put, web};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::json;
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult, Json, Query};
use uuid::Uuid;

use super::State;
use crate::sidebar::commands::{DeleteRolePreference, SaveRolePreference, SaveUserPreference};
use crate::sidebar::dto::*;
use crate::sidebar::queries::{self, StoredPreference};
use crate::sidebar::schema::auth_mirror::roles;
use crate::sidebar::{MANAGE, SidebarSettings, UserScope, expected_updated_at, no_user};
use stoa_core::i18n::request_locale;

fn role_not_found() -> AppError {
    AppError::not_found("Role not found")
}

/// The live role `id` of the caller's tenant, or 404.
async fn tenant_role(conn: &mut AsyncPgConnection, ctx: &AuthContext, id: Uuid) -> AppResult<Uuid> {
    let tenant = ctx.tenant_id.ok_or_else(role_not_found)?;
    roles::table
        .filter(roles::id.eq(id))
        .filter(roles::tenant_id.eq(tenant))
        .filter(roles::deleted_at.is_null())
        .select(roles::id)
        .first(conn)
        .await
        .optional()?
        .ok_or_else(role_not_found)
}

/// The roles list of a response: the tenant's roles for managers, else empty.
async fn roles_for(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    locale: &str,
) -> AppResult<Vec<RoleEntry>> {
    match ctx.tenant_id.filter(|_| ctx.has(MANAGE)) {
        Some(tenant) => Ok(queries::tenant_roles(conn, tenant, locale).await?),
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

/// The caller's sidebar preference in the request's locale, or (with
/// `roleId`, for `auth.sidebar.manage`) a role's.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(PreferenceQuery),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = PreferenceResponse),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "`roleId` without `auth.sidebar.manage`"),
        (status = 404, body = ErrorBody, description = "Role not in the caller's tenant"),
    )
)]
#[get("/auth/sidebar/preferences")]
pub async fn get_preferences(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    q: Query<PreferenceQuery>,
) -> AppResult<web::Json<PreferenceResponse>> {
    let locale = request_locale(&req);
    let mut conn = state.db.conn().await?;
    if let Some(role_id) = q.role_id {
        ctx.require(MANAGE)?;
        let role = tenant_role(&mut conn, &ctx, role_id).await?;
        let tenant = ctx.tenant()?;
        let stored = queries::role_preference(&mut conn, role, tenant, locale, false).await?;
        let roles = roles_for(&mut conn, &ctx, locale).await?;
        return Ok(web::Json(response(
            &ctx,
            locale,
            stored,
            roles,
            PreferenceScope::Role { role_id: role },
        )));
    }
    let stored = match UserScope::of(&ctx, locale) {
        Some(scope) => queries::user_preference(&mut conn, &scope, false).await?,
        None => None,
    };
    let roles = roles_for(&mut conn, &ctx, locale).await?;
    Ok(web::Json(response(
        &ctx,
        locale,
        stored,
        roles,
        PreferenceScope::User,
    )))
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
    tenant: Option<Uuid>,
    wanted: &[Uuid],
) -> AppResult<()> {
    if wanted.is_empty() {
        return Ok(());
    }
    let known = match tenant {
        Some(tenant) => queries::roles_in_tenant(conn, wanted, tenant).await?,
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
        Err(AppError::bad_request("Invalid roles").with_field("missing", json!(missing)))
    }
}

/// The settings of a `PUT` body: nested in `settings`, or at the top level.
fn settings_of(body: &mut PreferenceUpdate) -> AppResult<SidebarSettings> {
    let top_level = std::mem::take(&mut body.top_level);
    match body.settings.take() {
        Some(nested) if top_level.is_empty() => nested.normalize(&["settings"]),
        Some(_) => Err(AppError::bad_request(
            "Invalid payload: send the settings either in `settings` or at the top level, not both",
        )),
        None => top_level.normalize(&[]),
    }
}

/// Saves the caller's preference (and copies it to / clears it from roles).
async fn save_for_user(
    state: &State,
    ctx: &AuthContext,
    command: SaveUserPreference,
) -> AppResult<PreferenceUpdated> {
    let actor = ctx.actor();
    let locale = command.scope.locale;
    let caller = ctx.clone();
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
                check_known_roles(conn, command.scope.tenant_id, &wanted).await?;
                let (saved, _) = stoa_core::command::execute(conn, &actor, command).await?;
                let roles = roles_for(conn, &caller, locale).await?;
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
    state: &State,
    ctx: &AuthContext,
    role_id: Uuid,
    locale: &'static str,
    settings: SidebarSettings,
    expected: Option<time::OffsetDateTime>,
) -> AppResult<PreferenceUpdated> {
    let actor = ctx.actor();
    let caller = ctx.clone();
    let (stored, roles) = state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let command = SaveRolePreference {
                    role: tenant_role(conn, &caller, role_id).await?,
                    tenant: caller.tenant()?,
                    locale,
                    settings,
                    expected,
                };
                let (stored, _) = stoa_core::command::execute(conn, &actor, command).await?;
                let roles = roles_for(conn, &caller, locale).await?;
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

/// Saves the caller's preference (and copies it to `applyToRoles`, clears
/// `clearRoleIds`), or with `scope:{type:"role", roleId}` a role's. Needs
/// `auth.sidebar.manage`. Honours `x-om-ext-optimistic-lock-expected-updated-at`.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = PreferenceUpdate,
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = PreferenceUpdated),
        (status = 400, body = ErrorBody, description = "Invalid payload, or `{error:\"Invalid roles\", missing}`"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "Role not in the caller's tenant"),
        (status = 409, body = ErrorBody, description = "`record_modified`: the preference changed since it was read"),
    )
)]
#[put("/auth/sidebar/preferences")]
pub async fn update_preferences(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    body: Json<PreferenceUpdate>,
) -> AppResult<web::Json<PreferenceUpdated>> {
    ctx.require(MANAGE)?;
    let mut body = body.into_inner();
    let locale = request_locale(&req);
    let expected = expected_updated_at(&req)?;
    let settings = settings_of(&mut body)?;
    let apply = dedup(body.apply_to_roles);
    let clear = dedup(body.clear_role_ids);
    if let Some(PreferenceScope::Role { role_id }) = body.scope {
        for (field, list) in [("applyToRoles", &apply), ("clearRoleIds", &clear)] {
            if !list.is_empty() {
                return Err(AppError::bad_request(format!(
                    "Invalid payload: {field}: only valid when scope.type is \"user\""
                )));
            }
        }
        let saved = save_for_role(&state, &ctx, role_id, locale, settings, expected).await?;
        return Ok(web::Json(saved));
    }
    let scope = UserScope::of(&ctx, locale)
        .ok_or_else(|| no_user("Cannot save preferences: no user associated with this API key"))?;
    let command = SaveUserPreference {
        scope,
        settings,
        expected,
        apply_to_roles: apply,
        clear_roles: clear,
    };
    Ok(web::Json(save_for_user(&state, &ctx, command).await?))
}

/// Removes a role's preference for the current tenant and locale
/// (`auth.sidebar.manage`). Idempotent.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(RolePreferenceQuery),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, body = RolePreferenceDeleted),
        (status = 400, body = ErrorBody, description = "Missing or malformed `roleId`"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "Role not in the caller's tenant"),
    )
)]
#[delete("/auth/sidebar/preferences")]
pub async fn delete_role_preference(
    req: HttpRequest,
    ctx: AuthContext,
    state: State,
    q: Query<RolePreferenceQuery>,
) -> AppResult<web::Json<RolePreferenceDeleted>> {
    ctx.require(MANAGE)?;
    let role_id = q
        .role_id
        .ok_or_else(|| AppError::bad_request("roleId query parameter is required"))?;
    let locale = request_locale(&req);
    let actor = ctx.actor();
    state
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                let role = tenant_role(conn, &ctx, role_id).await?;
                let tenant = ctx.tenant()?;
                // Only an existing preference is deleted (and logged).
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
    Ok(web::Json(RolePreferenceDeleted {
        ok: true,
        scope: PreferenceScope::Role { role_id },
    }))
}
