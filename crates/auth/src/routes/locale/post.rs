//! `POST /auth/locale`: sets the cookie.

use actix_web::{HttpResponse, post, web};
use stoa_core::AppResult;
use stoa_core::error::ErrorBody;

use super::{checked, locale_cookie};
use crate::dto::{LocaleBody, LocaleSet};
use crate::error::AuthError;

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
    let parsed: LocaleBody = serde_json::from_slice(&body).map_err(|_| AuthError::MalformedBody)?;
    let locale = checked(Some(&parsed.locale))?;
    Ok(HttpResponse::Ok()
        .cookie(locale_cookie(locale))
        .json(LocaleSet { ok: true }))
}
