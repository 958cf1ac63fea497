//! Locales: the ones the API serves, the best match of an `Accept-Language`
//! header among them and the locale a request is served in
//! ([`request_locale`]). Shared by every module that stores or answers in a
//! locale (sidebar preferences, devices' default locale).

use actix_web::HttpRequest;
use actix_web::http::header;

/// The locales the API serves.
pub const LOCALES: [&str; 5] = ["en", "pl", "es", "de", "ko"];

/// The locale used when nothing else matches.
pub const DEFAULT_LOCALE: &str = "en";

fn supported(tag: &str) -> Option<&'static str> {
    let primary = tag.trim().split(['-', '_']).next().unwrap_or("");
    LOCALES
        .iter()
        .find(|l| l.eq_ignore_ascii_case(primary))
        .copied()
}

/// The best supported locale of an `Accept-Language` value (`pl-PL,pl;q=0.9,en;q=0.8`).
pub fn from_accept_language(value: &str) -> Option<&'static str> {
    let mut ranges: Vec<(f32, usize, &str)> = value
        .split(',')
        .enumerate()
        .filter_map(|(index, part)| {
            let mut pieces = part.split(';');
            let tag = pieces.next()?.trim();
            let mut q = 1.0f32;
            for param in pieces {
                if let Some(v) = param.trim().strip_prefix("q=") {
                    q = v.trim().parse().unwrap_or(0.0);
                }
            }
            (!tag.is_empty() && tag != "*" && q > 0.0).then_some((q, index, tag))
        })
        .collect();
    // Highest quality first; equal qualities keep the client's order.
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranges.into_iter().find_map(|(_, _, tag)| supported(tag))
}

/// The locale `req` is served in: the `locale` cookie when it names a
/// supported locale, else the best supported match of `Accept-Language`,
/// else [`DEFAULT_LOCALE`].
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

    #[test]
    fn accept_language_best_match() {
        assert_eq!(from_accept_language("pl-PL,pl;q=0.9,en;q=0.8"), Some("pl"));
        assert_eq!(
            from_accept_language("fr-FR, de;q=0.5, es;q=0.7"),
            Some("es")
        );
        assert_eq!(from_accept_language("fr, *"), None);
        assert_eq!(from_accept_language("de;q=0, ko"), Some("ko"));
        assert_eq!(from_accept_language("EN-us"), Some("en"));
        assert_eq!(from_accept_language(""), None);
    }
}
