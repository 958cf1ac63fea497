//! The default locale of a new device: the best match of `Accept-Language`
//! among the locales the platform ships (stoa-auth's list).

use stoa_auth::routes::locale::LOCALES;

/// The supported locale the client prefers most, by `q` weight then order:
/// an exact tag first (`de`), else its primary language (`de-AT` → `de`).
/// `None` when the header names nothing supported.
pub fn best_match(accept_language: &str) -> Option<&'static str> {
    let mut wanted: Vec<(u16, usize, String)> = accept_language
        .split(',')
        .enumerate()
        .filter_map(|(position, part)| {
            let mut pieces = part.split(';');
            let tag = pieces.next()?.trim().to_ascii_lowercase();
            if tag.is_empty() || tag == "*" {
                return None;
            }
            let mut weight = 1000u16;
            for param in pieces {
                if let Some(q) = param.trim().strip_prefix("q=") {
                    // q has at most three decimals; compare it in thousandths.
                    let q: f32 = q.trim().parse().ok()?;
                    if !(0.0..=1.0).contains(&q) {
                        return None;
                    }
                    weight = (q * 1000.0).round() as u16;
                }
            }
            (weight > 0).then_some((weight, position, tag))
        })
        .collect();
    wanted.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    wanted.iter().find_map(|(_, _, tag)| {
        let primary = tag.split(['-', '_']).next().unwrap_or(tag);
        LOCALES
            .iter()
            .find(|l| **l == tag.as_str())
            .or_else(|| LOCALES.iter().find(|l| **l == primary))
            .copied()
    })
}

#[cfg(test)]
mod tests {
    use super::best_match;

    #[test]
    fn picks_the_preferred_supported_locale() {
        assert_eq!(best_match("de-AT,de;q=0.9,en;q=0.8"), Some("de"));
        assert_eq!(best_match("fr-FR, pl;q=0.5, en;q=0.7"), Some("en"));
        assert_eq!(best_match("en;q=0.2, es"), Some("es"));
        assert_eq!(best_match("PL"), Some("pl"));
        assert_eq!(best_match("fr, *;q=0.1"), None);
        assert_eq!(best_match("en;q=0, ko;q=0.001"), Some("ko"));
        assert_eq!(best_match("en;q=abc"), None);
        assert_eq!(best_match(""), None);
    }
}
