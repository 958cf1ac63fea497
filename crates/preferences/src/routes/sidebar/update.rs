//! `PUT /auth/sidebar/preferences`.

use actix_web::{HttpRequest, put, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::i18n::request_locale;
use stoa_core::{AppResult, Json};

use crate::routes::State;
use crate::service::preferences;
use crate::sidebar::dto::{PreferenceUpdate, PreferenceUpdated};
use crate::sidebar::{MANAGE, expected_updated_at};

/// Saves the caller's preference (and copies it to `applyToRoles`, clears
/// `clearRoleIds`), or with `scope:{type:"role", roleId}` a role's. Needs
/// `auth.sidebar.manage`. Honours `x-om-ext-optimistic-lock-expected-updated-at`.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = PreferenceUpdate,
    responses(
        (status = 200, body = PreferenceUpdated),
        (status = 400, body = ErrorBody, description = "Invalid payload, or `{error:\"Invalid roles\", missing}`"),
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
    let locale = request_locale(&req);
    let expected = expected_updated_at(&req)?;
    let saved = preferences::update(&state, &ctx, locale, expected, body.into_inner()).await?;
    Ok(web::Json(saved))
}
