use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header;
use actix_web::{HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use stoa_core::error::ErrorBody;
use stoa_core::{AppError, AppResult};
use utoipa::{IntoParams, ToSchema};

use super::{State, safe_redirect};

/// The locales the reference ships.
pub use stoa_core::i18n::LOCALES;

fn locale_cookie(locale: &str) -> Cookie<'static> {
    Cookie::build("locale", locale.to_string())
        .path("/")
        .same_site(SameSite::Lax)
        .max_age(actix_web::cookie::time::Duration::days(365))
        .finish()
}

fn checked(locale: Option<&str>) -> AppResult<&'static str> {
    let wanted = locale.map(str::trim).unwrap_or("");
    LOCALES
        .iter()
        .find(|l| **l == wanted)
        .copied()
        .ok_or_else(|| AppError::bad_request("Invalid locale"))
}

#[derive(Debug, Deserialize, validator::Validate, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LocaleQuery {
    /// One of `en`, `pl`, `es`, `de`, `ko`.
    pub locale: Option<String>,
    /// A local path to go to (default `/`); other targets fall back to `/`.
    pub redirect: Option<String>,
}

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

#[derive(Debug, Deserialize, ToSchema)]
pub struct LocaleBody {
    pub locale: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LocaleSet {
    pub ok: bool,
}

/// Sets the locale cookie.
#[utoipa::path(
    tag = "Authentication & Accounts",
    request_body = LocaleBody,
    responses(
        (status = 200, body = LocaleSet),
        (status = 400, body = ErrorBody, description = "Invalid locale or malformed body"),
    )
)]
#[post("/auth/locale")]
pub async fn post_locale(body: web::Bytes) -> AppResult<HttpResponse> {
    stoa_core::extract::check_json_body(&body)?;
    let parsed: LocaleBody =
        serde_json::from_slice(&body).map_err(|_| AppError::bad_request("Bad request"))?;
    let locale = checked(Some(&parsed.locale))?;
    Ok(HttpResponse::Ok()
        .cookie(locale_cookie(locale))
        .json(LocaleSet { ok: true }))
}
