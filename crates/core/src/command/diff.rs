//! Field-level changes between two snapshots, and the action type of a command id.

use serde_json::{Map, Value, json};

/// `{field: {from, to}}` for every leaf that differs between `before` and
/// `after` (nested keys joined with `.`, `updatedAt` ignored).
pub fn changes(before: Option<&Value>, after: Option<&Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let empty = Value::Object(Map::new());
    let (b, a) = (before.unwrap_or(&empty), after.unwrap_or(&empty));
    if !b.is_object() || !a.is_object() {
        return out;
    }
    walk("", b, a, &mut out);
    out
}

fn walk(prefix: &str, before: &Value, after: &Value, out: &mut Map<String, Value>) {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            // Each key once, without collecting and sorting them: `out` is
            // ordered anyway, and a bulk job diffs hundreds of snapshots.
            for (key, bv) in b {
                visit(prefix, key, bv, a.get(key).unwrap_or(&Value::Null), out);
            }
            for (key, av) in a {
                if !b.contains_key(key) {
                    visit(prefix, key, &Value::Null, av, out);
                }
            }
        }
        (b, a) if b != a && SECRET_FIELDS.contains(&prefix) => {
            let redact = |v: &Value| {
                if v.is_null() {
                    Value::Null
                } else {
                    json!(REDACTED)
                }
            };
            out.insert(
                prefix.to_string(),
                json!({"from": redact(b), "to": redact(a)}),
            );
        }
        (b, a) if b != a => {
            out.insert(prefix.to_string(), json!({"from": b, "to": a}));
        }
        _ => {}
    }
}

/// Walks field `key` under `prefix`; equal values (and `updatedAt`) have no
/// changes, so their path is never built.
fn visit(prefix: &str, key: &str, before: &Value, after: &Value, out: &mut Map<String, Value>) {
    if key == "updatedAt" || key == "updated_at" || before == after {
        return;
    }
    let path = if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    };
    walk(&path, before, after, out);
}

/// Top-level snapshot fields that hold a secret (or a marker derived from
/// one). A change to them shows in `changes` with both values redacted, and
/// they are removed from the stored snapshots.
pub const SECRET_FIELDS: &[&str] = &["password"];

/// The redacted value of a changed secret field.
pub const REDACTED: &str = "[redacted]";

/// `snapshot` without its [`SECRET_FIELDS`].
pub fn without_secrets(snapshot: Option<Value>) -> Option<Value> {
    match snapshot {
        Some(Value::Object(mut map)) => {
            for field in SECRET_FIELDS {
                map.remove(*field);
            }
            Some(Value::Object(map))
        }
        other => other,
    }
}

/// The reference's projection of a command id onto an action type.
pub fn action_type(command_id: &str) -> &'static str {
    let last = command_id
        .rsplit('.')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    match last.as_str() {
        "create" | "add" => "create",
        "delete" | "remove" => "delete",
        "assign" | "unassign" => "assign",
        "update" | "edit" | "upsert" => "edit",
        _ => "system",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_nested_fields_and_ignores_updated_at() {
        let before = json!({"name": "A", "updatedAt": "x", "meta": {"a": 1, "b": 2}});
        let after = json!({"name": "B", "updatedAt": "y", "meta": {"a": 1, "b": 3}, "new": true});
        let c = changes(Some(&before), Some(&after));
        assert_eq!(
            Value::Object(c),
            json!({
                "meta.b": {"from": 2, "to": 3},
                "name": {"from": "A", "to": "B"},
                "new": {"from": null, "to": true}
            })
        );
        assert!(changes(None, Some(&json!(5))).is_empty());
    }

    #[test]
    fn projects_action_types() {
        assert_eq!(action_type("directory.organizations.create"), "create");
        assert_eq!(action_type("auth.users.update"), "edit");
        assert_eq!(action_type("devices.x.remove"), "delete");
        assert_eq!(action_type("auth.roles.assign"), "assign");
        assert_eq!(action_type("jobs.run"), "system");
    }
}
