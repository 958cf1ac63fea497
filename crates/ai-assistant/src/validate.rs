//! A small JSON-schema check for tool inputs: the subset the registered
//! tools use (`type`, one or a list, `properties`, `required`, `additionalProperties:
//! false`, `minLength`/`maxLength`, `minimum`/`maximum`, `format: uuid`).
//! Problems read `path: message`, joined with `; ` as the reference words them.

use serde_json::Value;

/// The roles a client may give its messages. `system` is not one of them:
/// the system prompt is the agent's (and the runtime's blocks), never the
/// client's, so a client cannot add instructions beside it.
pub const CLIENT_ROLES: &[&str] = &["user", "assistant"];

/// 400 `validation_error` naming the first role that is not
/// [`CLIENT_ROLES`] (with the message's position).
pub fn client_roles<'a>(roles: impl IntoIterator<Item = &'a str>) -> Result<(), crate::AiError> {
    match roles
        .into_iter()
        .enumerate()
        .find(|(_, role)| !CLIENT_ROLES.contains(role))
    {
        None => Ok(()),
        Some((index, role)) => Err(crate::AiError::Validation(format!(
            "Invalid role {role:?} in messages[{index}]: messages may only have the role \"user\" or \"assistant\""
        ))),
    }
}

/// Every problem of `value` against `schema` (empty: valid).
pub fn check(schema: &Value, value: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    walk(schema, value, "", &mut problems);
    problems
}

fn type_matches(kind: &str, value: &Value) -> bool {
    match kind {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn walk(schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    let at = if path.is_empty() { "(root)" } else { path };
    // `type` is one name or a list of them (`["string", "null"]`).
    let kinds: Vec<&str> = match &schema["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !kinds.is_empty() && !kinds.iter().any(|kind| type_matches(kind, value)) {
        out.push(format!("{at}: expected {}", kinds.join(" or ")));
        return;
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as u64;
        if schema["minLength"].as_u64().is_some_and(|m| len < m) {
            out.push(format!("{at}: too short"));
        }
        if schema["maxLength"].as_u64().is_some_and(|m| len > m) {
            out.push(format!("{at}: too long"));
        }
        if schema["format"] == "uuid" && s.parse::<uuid::Uuid>().is_err() {
            out.push(format!("{at}: invalid uuid"));
        }
    }
    if let Some(n) = value.as_f64() {
        if schema["minimum"].as_f64().is_some_and(|m| n < m) {
            out.push(format!("{at}: too small"));
        }
        if schema["maximum"].as_f64().is_some_and(|m| n > m) {
            out.push(format!("{at}: too big"));
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema["properties"].as_object();
        if let Some(required) = schema["required"].as_array() {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    out.push(format!("{}: Required", join(path, name)));
                }
            }
        }
        for (name, item) in object {
            match properties.and_then(|p| p.get(name)) {
                Some(sub) => walk(sub, item, &join(path, name), out),
                None if schema["additionalProperties"] == false => {
                    out.push(format!("{}: unrecognized key", join(path, name)));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(list)) = (schema.get("items"), value.as_array()) {
        for (i, item) in list.iter().enumerate() {
            walk(items, item, &join(path, &i.to_string()), out);
        }
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inputs_are_checked_against_the_subset() {
        let schema = json!({
            "type": "object",
            "properties": {
                "dealId": {"type": "string", "format": "uuid"},
                "probability": {"type": "integer", "minimum": 0, "maximum": 100},
                "title": {"type": "string", "minLength": 1}
            },
            "required": ["dealId"],
            "additionalProperties": false
        });
        let id = uuid::Uuid::nil().to_string();
        assert!(check(&schema, &json!({"dealId": id, "probability": 5})).is_empty());
        assert_eq!(check(&schema, &json!({})), vec!["dealId: Required"]);
        assert_eq!(
            check(
                &schema,
                &json!({"dealId": "x", "probability": 500, "title": "", "x": 1})
            ),
            vec![
                "dealId: invalid uuid",
                "probability: too big",
                "title: too short",
                "x: unrecognized key"
            ]
        );
        assert_eq!(check(&schema, &json!([])), vec!["(root): expected object"]);
        let nullable = json!({"type": ["string", "null"], "maxLength": 2});
        assert!(check(&nullable, &json!(null)).is_empty());
        assert!(check(&nullable, &json!("ab")).is_empty());
        assert_eq!(
            check(&nullable, &json!(1)),
            vec!["(root): expected string or null"]
        );
    }
}
