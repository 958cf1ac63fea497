//! Evaluating a parsed condition against a record, and resolving
//! `{{...}}` placeholders (`{{today}}`, `{{now}}`, context paths).

use std::borrow::Cow;

use serde_json::Value;
use time::OffsetDateTime;

use super::*;

/// What a condition is evaluated with: the record's data, the evaluation
/// context for `{{...}}` placeholders, and the time.
pub struct Scope<'a> {
    pub data: &'a Value,
    pub context: &'a Value,
    pub now: OffsetDateTime,
}

impl Condition {
    pub fn eval(&self, scope: &Scope<'_>) -> bool {
        match self {
            Condition::Group { logic, rules } => match logic {
                Logic::And => rules.iter().all(|r| r.eval(scope)),
                Logic::Or => rules.iter().any(|r| r.eval(scope)),
                Logic::Not => !rules.iter().all(|r| r.eval(scope)),
            },
            Condition::Compare {
                field,
                op,
                value,
                pattern,
            } => {
                let left = field.resolve(scope.data);
                let owned;
                let right: Option<&Value> = match value {
                    Operand::Literal(v) => Some(v),
                    Operand::Field(p) => p.resolve(scope.data),
                    Operand::Template(t) => {
                        owned = template_value(t, scope);
                        owned.as_ref()
                    }
                };
                compare(*op, left, right, pattern.as_ref())
            }
        }
    }
}

fn template_value(name: &str, scope: &Scope<'_>) -> Option<Value> {
    match name {
        "today" => {
            let d = scope.now.date();
            Some(Value::String(format!(
                "{:04}-{:02}-{:02}",
                d.year(),
                u8::from(d.month()),
                d.day()
            )))
        }
        "now" => Some(stoa_core::serde_util::timestamp::value(scope.now)),
        path => resolve_text(path, scope.context).cloned(),
    }
}

/// The value of one placeholder's `name` (`today`, `now`, or a path in
/// `data`), with its type; borrowed from `data` when it is there.
fn placeholder<'a, L: Lookup + ?Sized>(
    name: &str,
    data: &'a L,
    now: OffsetDateTime,
) -> Option<Cow<'a, Value>> {
    match name {
        "today" | "now" => {
            let scope = Scope {
                data: &Value::Null,
                context: &Value::Null,
                now,
            };
            template_value(name, &scope).map(Cow::Owned)
        }
        path => data.lookup(path).map(Cow::Borrowed),
    }
}

/// The value of one placeholder's `name` (`today`, `now`, or a path in
/// `data`), with its type.
pub fn template<L: Lookup + ?Sized>(name: &str, data: &L, now: OffsetDateTime) -> Option<Value> {
    placeholder(name, data, now).map(Cow::into_owned)
}

/// Replaces every `{{path}}` in `text` with the value at `path` in `data`
/// (unresolved placeholders stay as written).
pub fn interpolate<L: Lookup + ?Sized>(text: &str, data: &L, now: OffsetDateTime) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = after[..end].trim();
        match placeholder(name, data, now).as_deref() {
            Some(Value::String(s)) => out.push_str(s),
            Some(Value::Null) | None => out.push_str(&rest[start..start + 2 + end + 2]),
            Some(other) => {
                use std::fmt::Write as _;
                let _ = write!(out, "{other}");
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}
