//! `/auth/locale`: the locale cookie, one handler per file.

pub mod get;
pub mod post;

use actix_web::cookie::{Cookie, SameSite};
use stoa_core::AppResult;

use crate::error::AuthError;

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
        .ok_or_else(|| AuthError::InvalidLocale.into())
}
