//! `GET /auth/sidebar/preferences`.

use actix_web::{HttpRequest, get, web};
use stoa_acl::AuthContext;
use stoa_core::error::ErrorBody;
use stoa_core::i18n::request_locale;
use stoa_core::{AppResult, Query};

use crate::routes::State;
use crate::service::preferences;
use crate::sidebar::MANAGE;
use crate::sidebar::dto::{PreferenceQuery, PreferenceResponse};

/// The caller's sidebar preference in the request's locale, or (with
/// `roleId`, for `auth.sidebar.manage`) a role's.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(PreferenceQuery),
    responses(
        (status = 200, body = PreferenceResponse),
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
    if q.role_id.is_some() {
        ctx.require(MANAGE)?;
    }
    Ok(web::Json(
        preferences::get(&state, &ctx, locale, q.role_id).await?,
    ))
}
