//! The operators' semantics over JSON values (the reference's loose
//! equality, numeric and date ordering, emptiness, containment).

use std::cmp::Ordering;

use regex::Regex;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::*;

fn is_nullish(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// JavaScript's `Number(v)` (NaN as `None`).
fn to_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Null => Some(0.0),
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty() {
                Some(0.0)
            } else {
                t.parse::<f64>().ok().filter(|f| f.is_finite())
            }
        }
        _ => None,
    }
}

/// JavaScript's `String(v)` for the values a comparison uses.
fn to_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        Value::Array(list) => list
            .iter()
            .map(|x| {
                if x.is_null() {
                    String::new()
                } else {
                    to_text(x)
                }
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
        other => other.to_string(),
    }
}

/// Loose equality of the reference: both null → true, one null → false,
/// either a number → numeric equality, else strict equality.
fn equal(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        _ if is_nullish(a) && is_nullish(b) => true,
        _ if is_nullish(a) || is_nullish(b) => false,
        (Some(a), Some(b)) => {
            if a.is_number() || b.is_number() {
                matches!((to_number(a), to_number(b)), (Some(x), Some(y)) if x == y)
            } else {
                match (a, b) {
                    (Value::String(x), Value::String(y)) => x == y,
                    (Value::Bool(x), Value::Bool(y)) => x == y,
                    _ => false,
                }
            }
        }
        _ => false,
    }
}

fn iso_time(v: &Value) -> Option<OffsetDateTime> {
    let s = v.as_str()?;
    let b = s.as_bytes();
    let looks = b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit);
    if !looks {
        return None;
    }
    if s.len() == 10 {
        let d =
            time::Date::parse(s, time::macros::format_description!("[year]-[month]-[day]")).ok()?;
        return Some(d.midnight().assume_utc());
    }
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

/// Ordering of the reference: null lowest; ISO dates as time; numbers
/// numerically; else text.
fn order(a: Option<&Value>, b: Option<&Value>) -> Option<Ordering> {
    match (is_nullish(a), is_nullish(b)) {
        (true, true) => return Some(Ordering::Equal),
        (true, false) => return Some(Ordering::Less),
        (false, true) => return Some(Ordering::Greater),
        _ => {}
    }
    let (a, b) = (a?, b?);
    if let (Some(x), Some(y)) = (iso_time(a), iso_time(b)) {
        return Some(x.cmp(&y));
    }
    let numeric = |v: &Value| match v {
        Value::String(s) if s.trim().is_empty() => None,
        Value::Array(_) | Value::Object(_) => None,
        other => to_number(other),
    };
    if let (Some(x), Some(y)) = (numeric(a), numeric(b)) {
        return x.partial_cmp(&y);
    }
    Some(to_text(a).cmp(&to_text(b)))
}

fn is_empty(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.trim().is_empty(),
        Some(Value::Array(list)) => list.is_empty(),
        Some(Value::Object(map)) => map.is_empty(),
        _ => false,
    }
}

fn contains(a: Option<&Value>, b: Option<&Value>) -> bool {
    match a {
        Some(Value::Array(list)) => list.iter().any(|x| equal(Some(x), b)),
        Some(Value::String(s)) => b.is_some_and(|b| s.contains(&to_text(b))),
        _ => false,
    }
}

/// Applies `op` to `left` and `right` (`None`: undefined).
pub fn compare(
    op: Op,
    left: Option<&Value>,
    right: Option<&Value>,
    pattern: Option<&Regex>,
) -> bool {
    match op {
        Op::Eq => equal(left, right),
        Op::Ne => !equal(left, right),
        Op::Gt => order(left, right) == Some(Ordering::Greater),
        Op::Ge => matches!(
            order(left, right),
            Some(Ordering::Greater | Ordering::Equal)
        ),
        Op::Lt => order(left, right) == Some(Ordering::Less),
        Op::Le => matches!(order(left, right), Some(Ordering::Less | Ordering::Equal)),
        Op::In => match right {
            Some(Value::Array(list)) => list.iter().any(|x| equal(left, Some(x))),
            _ => false,
        },
        Op::NotIn => match right {
            Some(Value::Array(list)) => !list.iter().any(|x| equal(left, Some(x))),
            _ => true,
        },
        Op::Contains => contains(left, right),
        Op::NotContains => !contains(left, right),
        Op::StartsWith => match (left, right) {
            _ if is_nullish(left) || is_nullish(right) => false,
            (Some(a), Some(b)) => to_text(a).starts_with(&to_text(b)),
            _ => false,
        },
        Op::EndsWith => match (left, right) {
            _ if is_nullish(left) || is_nullish(right) => false,
            (Some(a), Some(b)) => to_text(a).ends_with(&to_text(b)),
            _ => false,
        },
        Op::Matches => {
            let Some(text) = left.filter(|v| !v.is_null()).map(to_text) else {
                return false;
            };
            if text.len() > MAX_MATCH_INPUT {
                return false;
            }
            match pattern {
                Some(re) => re.is_match(&text),
                None => right
                    .and_then(Value::as_str)
                    .and_then(compile_pattern)
                    .is_some_and(|re| re.is_match(&text)),
            }
        }
        Op::IsEmpty => is_empty(left),
        Op::IsNotEmpty => !is_empty(left),
    }
}
