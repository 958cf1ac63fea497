//! Locales: the ones the API serves and the best match of an
//! `Accept-Language` header among them. Shared by every module that stores or
//! answers in a locale (auth's preferences, devices' default locale).

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

#[cfg(test)]
mod tests {
    use super::*;

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
