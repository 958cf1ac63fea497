//! `GET /auth/locale`: sets the cookie and redirects.

use actix_web::http::header;
use actix_web::{HttpResponse, get};
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;

use super::{checked, locale_cookie};
use crate::dto::LocaleQuery;
use crate::routes::{State, safe_redirect};

/// Sets the locale cookie and redirects to a safe local path.
#[utoipa::path(
    tag = "Authentication & Accounts",
    params(LocaleQuery),
    responses(
        (status = 302, description = "Locale cookie set; redirect to a local path"),
        (status = 400, body = ErrorBody, description = "Invalid locale"),
    )
)]
#[get("/auth/locale")]
pub async fn get_locale(state: State, q: stoa_core::Query<LocaleQuery>) -> AppResult<HttpResponse> {
    let locale = checked(q.locale.as_deref())?;
    let target = safe_redirect(q.redirect.as_deref(), state.config.app_url.as_deref(), "/");
    Ok(HttpResponse::Found()
        .insert_header((header::LOCATION, target))
        .cookie(locale_cookie(locale))
        .finish())
}
