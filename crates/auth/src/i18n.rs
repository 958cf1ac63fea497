//! The locale a request is served in: the `locale` cookie when it names a
//! supported locale, else the best supported match of `Accept-Language`,
//! else `en`. Sidebar preferences and variants are kept per locale.

use actix_web::HttpRequest;
use actix_web::http::header;

use stoa_core::i18n::LOCALES;

pub use stoa_core::i18n::{DEFAULT_LOCALE, from_accept_language};

/// The locale of `req` (see the module docs).
pub fn request_locale(req: &HttpRequest) -> &'static str {
    if let Some(locale) = req
        .cookie("locale")
        .and_then(|c| LOCALES.iter().find(|l| **l == c.value().trim()).copied())
    {
        return locale;
    }
    req.headers()
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .and_then(from_accept_language)
        .unwrap_or(DEFAULT_LOCALE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_wins_over_header() {
        let req = actix_web::test::TestRequest::default()
            .cookie(actix_web::cookie::Cookie::new("locale", "de"))
            .insert_header(("accept-language", "pl"))
            .to_http_request();
        assert_eq!(request_locale(&req), "de");
        let req = actix_web::test::TestRequest::default()
            .cookie(actix_web::cookie::Cookie::new("locale", "xx"))
            .insert_header(("accept-language", "pl"))
            .to_http_request();
        assert_eq!(request_locale(&req), "pl");
        let req = actix_web::test::TestRequest::default().to_http_request();
        assert_eq!(request_locale(&req), "en");
    }
}
