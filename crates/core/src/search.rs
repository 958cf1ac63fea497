//! Text search helpers shared by every module's list filters.

/// Escapes `%`, `_` and `\\` for LIKE / ILIKE patterns (the default escape
/// character is the backslash).
pub fn escape_like(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_and_the_escape_are_escaped() {
        assert_eq!(escape_like("50%_a\\b"), "50\\%\\_a\\\\b");
        assert_eq!(escape_like("plain"), "plain");
    }
}
