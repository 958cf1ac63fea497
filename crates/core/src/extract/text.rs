//! Control characters in text input.
//!
//! Postgres refuses NUL in `text` (the query fails, which used to surface as a
//! 500), and no field of the API is meant to carry the other C0 controls or DEL:
//! they only serve to forge log lines or confuse other systems. The extractors
//! therefore refuse them with a 400 that names the field, before any handler
//! sees the value. Body text (JSON and form bodies) may hold tab, line feed and
//! carriage return (multi-line descriptions); query strings and path segments
//! may hold none.
//!
//! Handlers that parse a raw body themselves call [`check_json_body`] or
//! [`check_form_body`] first. Both scan the bytes once and allocate nothing
//! unless they find a control character; only then do they parse the input again
//! to name the field.

use std::borrow::Cow;

use serde_json::Value;

use super::issues::{Source, dotted};
use crate::error::{AppError, Issue};

/// Which control characters an input may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextRule {
    /// Body text: tab, line feed and carriage return are allowed.
    Body,
    /// Query strings and path segments: no control character at all.
    Line,
}

/// The message of every control-character issue.
pub const CONTROL_CHARACTERS: &str = "must not contain control characters";

/// Whether `c` is refused under `rule`: U+0000–U+001F and DEL (U+007F), except
/// tab, LF and CR in body text.
pub fn is_forbidden(c: char, rule: TextRule) -> bool {
    let control = c < ' ' || c == '\u{7f}';
    control && !(rule == TextRule::Body && matches!(c, '\t' | '\n' | '\r'))
}

fn has_forbidden(text: &str, rule: TextRule) -> bool {
    text.chars().any(|c| is_forbidden(c, rule))
}

/// The 400 for a control character in `path` (field names, array indices).
pub(crate) fn control_error(source: Source, path: Vec<Value>) -> AppError {
    let issue = Issue {
        path,
        message: CONTROL_CHARACTERS.into(),
        code: Cow::Borrowed("invalid_string"),
    };
    let message = source.message(&dotted(&issue.path), CONTROL_CHARACTERS);
    AppError::bad_request(message).with_issues(vec![issue])
}

/// Refuses a JSON body whose strings (keys or values) hold a control character
/// other than tab, LF and CR. Malformed JSON passes: the parser reports it.
pub fn check_json_body(bytes: &[u8]) -> Result<(), AppError> {
    if !json_may_hold_controls(bytes) {
        return Ok(());
    }
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return Ok(());
    };
    let mut path = Vec::new();
    if find_in_json(&value, &mut path) {
        return Err(control_error(Source::Body, path));
    }
    Ok(())
}

/// Refuses an `application/x-www-form-urlencoded` body whose names or values
/// hold a control character other than tab, LF and CR.
pub fn check_form_body(bytes: &[u8]) -> Result<(), AppError> {
    check_urlencoded(bytes, TextRule::Body, Source::Body)
}

/// Refuses a query string holding any control character.
pub(crate) fn check_query(query: &[u8]) -> Result<(), AppError> {
    check_urlencoded(query, TextRule::Line, Source::Query)
}

/// Refuses path parameters holding any control character (after decoding).
pub(crate) fn check_path<'a>(
    params: impl Iterator<Item = (&'a str, &'a str)>,
) -> Result<(), AppError> {
    for (name, value) in params {
        if has_forbidden(&percent_decode(value.as_bytes(), false), TextRule::Line) {
            return Err(control_error(Source::Path, vec![Value::from(name)]));
        }
    }
    Ok(())
}

fn check_urlencoded(bytes: &[u8], rule: TextRule, source: Source) -> Result<(), AppError> {
    if !urlencoded_may_hold_controls(bytes, rule) {
        return Ok(());
    }
    for pair in bytes.split(|&b| b == b'&') {
        let (name, value) = match pair.iter().position(|&b| b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &[][..]),
        };
        let name = percent_decode(name, true);
        let value = percent_decode(value, true);
        if has_forbidden(&name, rule) {
            // The name itself is the problem: show it without its controls.
            let shown: String = name.chars().filter(|c| !is_forbidden(*c, rule)).collect();
            return Err(control_error(source, vec![Value::from(shown)]));
        }
        if has_forbidden(&value, rule) {
            return Err(control_error(source, vec![Value::from(name.into_owned())]));
        }
    }
    Ok(())
}

/// The decoded names of an urlencoded string, in order.
pub(crate) fn urlencoded_names(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let name = pair.split(|&b| b == b'=').next().unwrap_or(pair);
            percent_decode(name, true).into_owned()
        })
        .collect()
}

/// Fast pre-check: a raw forbidden byte, or a `%XX` escape of one.
fn urlencoded_may_hold_controls(bytes: &[u8], rule: TextRule) -> bool {
    let forbidden = |b: u8| is_forbidden(char::from(b), rule);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if forbidden(b) {
            return true;
        }
        if b == b'%'
            && let Some(decoded) = hex_pair(bytes.get(i + 1..i + 3))
            && forbidden(decoded)
        {
            return true;
        }
        i += 1;
    }
    false
}

/// Fast pre-check of a JSON document: DEL, or an escape (`\b`, `\f`, `\u00XX`)
/// that decodes to a control character other than tab, LF and CR. Backslashes
/// occur only inside strings, so no string tracking is needed.
fn json_may_hold_controls(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            0x7f => return true,
            b'\\' => {
                match bytes.get(i + 1) {
                    Some(b'b' | b'f') => return true,
                    Some(b'u') if escaped_control(bytes.get(i + 2..i + 6)) => return true,
                    _ => {}
                }
                // Skip the escaped character (`\\`, `\"`, `u`, ...); hex digits that
                // follow are plain bytes.
                i += 2;
            }
            _ => i += 1,
        }
    }
    false
}

/// Whether the four hex digits of a `\u` escape name a forbidden character.
fn escaped_control(hex: Option<&[u8]>) -> bool {
    hex.and_then(|hex| std::str::from_utf8(hex).ok())
        .and_then(|hex| u32::from_str_radix(hex, 16).ok())
        .and_then(char::from_u32)
        .is_some_and(|c| is_forbidden(c, TextRule::Body))
}

/// Depth-first search for a string holding a control character; `path` ends at it.
fn find_in_json(value: &Value, path: &mut Vec<Value>) -> bool {
    match value {
        Value::String(s) => has_forbidden(s, TextRule::Body),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                path.push(Value::from(index));
                if find_in_json(item, path) {
                    return true;
                }
                path.pop();
            }
            false
        }
        Value::Object(map) => {
            for (key, item) in map {
                if has_forbidden(key, TextRule::Body) {
                    let shown: String = key
                        .chars()
                        .filter(|c| !is_forbidden(*c, TextRule::Body))
                        .collect();
                    path.push(Value::from(shown));
                    return true;
                }
                path.push(Value::from(key.as_str()));
                if find_in_json(item, path) {
                    return true;
                }
                path.pop();
            }
            false
        }
        _ => false,
    }
}

fn hex_pair(pair: Option<&[u8]>) -> Option<u8> {
    let pair = pair?;
    let hi = char::from(*pair.first()?).to_digit(16)?;
    let lo = char::from(*pair.get(1)?).to_digit(16)?;
    u8::try_from(hi * 16 + lo).ok()
}

/// Decodes `%XX` escapes (and `+` as a space in urlencoded data); invalid
/// escapes stay as they are, invalid UTF-8 becomes U+FFFD (as serde_html_form does).
fn percent_decode(bytes: &[u8], plus_is_space: bool) -> Cow<'_, str> {
    if !bytes
        .iter()
        .any(|&b| b == b'%' || (plus_is_space && b == b'+'))
    {
        return String::from_utf8_lossy(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                if let Some(b) = hex_pair(bytes.get(i + 1..i + 3)) {
                    out.push(b);
                    i += 3;
                    continue;
                }
                out.push(b'%');
            }
            b'+' if plus_is_space => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_of_controls_are_found_and_named() {
        let err = check_json_body(br#"{"a":"ok","b":{"c":["x","y\u0000"]}}"#)
            .err()
            .map(|e| e.body());
        let body = err.unwrap_or_default();
        assert_eq!(body["issues"][0]["path"], serde_json::json!(["b", "c", 1]));
        assert_eq!(body["details"]["fieldErrors"]["b"][0], CONTROL_CHARACTERS);
        for bad in [
            r#"{"a":"\u001f"}"#,
            r#"{"a":"\u007F"}"#,
            r#"{"a":"\b"}"#,
            r#"{"a":"\f"}"#,
            "{\"a\":\"\u{7f}\"}",
            r#"{"a\u0000":1}"#,
        ] {
            assert!(check_json_body(bad.as_bytes()).is_err(), "{bad}");
        }
        for good in [
            r#"{"a":"line\nbreak\ttab\r"}"#,
            r#"{"a":"\\u0000 is text"}"#,
            r#"{"a":"\u00e9\ud83d\ude00","b":"\\\\"}"#,
            r#"{"a":1"#,
            "",
        ] {
            assert!(check_json_body(good.as_bytes()).is_ok(), "{good}");
        }
    }

    #[test]
    fn urlencoded_controls_are_found_and_named() {
        let err = check_query(b"page=1&slug=a%00b").err().map(|e| e.body());
        assert_eq!(
            err.unwrap_or_default()["issues"][0]["path"],
            serde_json::json!(["slug"])
        );
        assert!(check_query(b"search=a%0Ab").is_err());
        assert!(check_query(b"search=a%7f").is_err());
        assert!(check_query(b"search=a%2500b&x=%E2%82%AC+y").is_ok());
        assert!(check_form_body(b"note=a%0D%0Ab%09").is_ok());
        assert!(check_form_body(b"email=a%00%40b.c").is_err());
        assert!(check_form_body(b"a%01b=1").is_err());
        assert!(check_form_body(b"email=a\x01b").is_err());
    }

    #[test]
    fn path_segments_are_decoded_once() {
        assert!(check_path([("slug", "a\0b")].into_iter()).is_err());
        assert!(check_path([("slug", "a%00b")].into_iter()).is_err());
        assert!(check_path([("slug", "a%2500b")].into_iter()).is_ok());
        assert!(check_path([("slug", "a%09b")].into_iter()).is_err());
    }
}
