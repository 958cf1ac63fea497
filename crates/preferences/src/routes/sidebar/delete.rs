//! `DELETE /auth/sidebar/preferences?roleId=`.

use actix_web::{HttpRequest, delete, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::i18n::request_locale;
use stoa_core::{AppResult, Query};

use crate::error::PreferencesError;
use crate::routes::State;
use crate::service::preferences;
use crate::sidebar::MANAGE;
use crate::sidebar::dto::{RolePreferenceDeleted, RolePreferenceQuery};

/// Removes a role's preference for the current tenant and locale
/// (`auth.sidebar.manage`). Idempotent.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(RolePreferenceQuery),
    responses(
        (status = 200, body = RolePreferenceDeleted),
        (status = 400, body = ErrorBody, description = "Missing or malformed `roleId`"),
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
    let role_id = q.role_id.ok_or(PreferencesError::RoleIdRequired)?;
    let locale = request_locale(&req);
    Ok(web::Json(
        preferences::delete_role(&state, &ctx, locale, role_id).await?,
    ))
}
