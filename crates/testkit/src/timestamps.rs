//! Checking that a JSON body writes every timestamp one way: UTC, three
//! fraction digits and `Z` (`stoa_core::serde_util::timestamp`).

use serde_json::Value;

/// Whether `s` looks like a date-time: `YYYY-MM-DD` followed by `T` or a
/// space and `HH:MM` (whatever follows).
fn looks_like_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() >= 16
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (b[10] == b'T' || b[10] == b't' || b[10] == b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
}

/// Whether `s` is `YYYY-MM-DDTHH:MM:SS.mmmZ` exactly.
pub fn is_canonical_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() == 24
        && looks_like_date_time(s)
        && b[10] == b'T'
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..23)
        && b[23] == b'Z'
}

/// Every string of `body` that looks like a date-time but is not written
/// as `YYYY-MM-DDTHH:MM:SS.mmmZ`, as `(JSON path, value)`.
pub fn misformatted_timestamps(body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(body, "$".to_string(), &mut out);
    out
}

fn walk(value: &Value, path: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) if looks_like_date_time(s) && !is_canonical_timestamp(s) => {
            out.push((path, s.clone()));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, format!("{path}[{i}]"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                walk(item, format!("{path}.{key}"), out);
            }
        }
        _ => {}
    }
}

/// Panics naming `what` and every misformatted timestamp of `body`.
pub fn assert_timestamps(what: &str, body: &Value) {
    let bad = misformatted_timestamps(body);
    assert!(
        bad.is_empty(),
        "{what}: timestamps not written as YYYY-MM-DDTHH:MM:SS.mmmZ: {bad:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_every_other_way_of_writing_a_timestamp() {
        let body = json!({
            "ok": "2026-01-01T00:00:00.000Z",
            "day": "2026-01-01",
            "text": "2026-01-01 is a date",
            "items": [
                {"a": "2026-01-01T00:00:00Z"},
                {"b": "2026-01-01T00:00:00.123456Z"},
                {"c": "2026-01-01T00:00:00.123+00:00"},
                {"d": "2026-01-01 00:00:00+00"},
            ],
        });
        let bad: Vec<String> = misformatted_timestamps(&body)
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        assert_eq!(
            bad,
            [
                "$.items[0].a",
                "$.items[1].b",
                "$.items[2].c",
                "$.items[3].d"
            ]
        );
    }
}
