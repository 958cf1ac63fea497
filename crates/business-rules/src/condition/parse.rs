//! Parsing a condition's JSON into the typed tree when a rule is saved,
//! every problem reported with its path.

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};

use super::*;

fn template_of(value: &Value) -> Option<String> {
    let s = value.as_str()?.trim();
    let inner = s.strip_prefix("{{")?.strip_suffix("}}")?;
    (!inner.contains("{{") && !inner.contains("}}")).then(|| inner.trim().to_string())
}

/// Compiles a `MATCHES` pattern within the size bound.
pub fn compile_pattern(pattern: &str) -> Option<Regex> {
    if pattern.len() > MAX_PATTERN_LEN {
        return None;
    }
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .nest_limit(32)
        .build()
        .ok()
}

/// Parses and checks a condition; every problem is reported with its path.
pub fn parse(value: &Value, schema: &Schema<'_>) -> Result<Condition, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut nodes = 0usize;
    let parsed = parse_node(value, schema, &mut Vec::new(), 1, &mut nodes, &mut problems);
    if nodes > MAX_NODES {
        problems.push(Problem::limit(
            &[],
            format!("condition has more than {MAX_NODES} nodes"),
        ));
    }
    match parsed {
        Some(c) if problems.is_empty() => Ok(c),
        _ => {
            if problems.is_empty() {
                problems.push(Problem::at(&[], "invalid condition"));
            }
            Err(problems)
        }
    }
}

fn parse_node(
    value: &Value,
    schema: &Schema<'_>,
    path: &mut Vec<String>,
    depth: usize,
    nodes: &mut usize,
    problems: &mut Vec<Problem>,
) -> Option<Condition> {
    *nodes += 1;
    if *nodes > MAX_NODES {
        return None;
    }
    let Value::Object(map) = value else {
        problems.push(Problem::at(path, "must be an object"));
        return None;
    };
    if map.contains_key("rules") {
        parse_group(map, schema, path, depth, nodes, problems)
    } else {
        parse_compare(map, schema, path, problems)
    }
}

fn parse_group(
    map: &Map<String, Value>,
    schema: &Schema<'_>,
    path: &mut Vec<String>,
    depth: usize,
    nodes: &mut usize,
    problems: &mut Vec<Problem>,
) -> Option<Condition> {
    if depth > MAX_DEPTH {
        problems.push(Problem::limit(
            path,
            format!("groups may be nested at most {MAX_DEPTH} deep"),
        ));
        return None;
    }
    let logic = match map.get("operator").and_then(Value::as_str) {
        Some("AND") => Some(Logic::And),
        Some("OR") => Some(Logic::Or),
        Some("NOT") => Some(Logic::Not),
        _ => {
            path.push("operator".into());
            problems.push(Problem::at(path, "must be AND, OR or NOT"));
            path.pop();
            None
        }
    };
    path.push("rules".into());
    let rules = match map.get("rules") {
        Some(Value::Array(list)) if list.is_empty() => {
            problems.push(Problem::at(path, "a group needs at least one rule"));
            None
        }
        Some(Value::Array(list)) if list.len() > MAX_GROUP_RULES => {
            problems.push(Problem::limit(
                path,
                format!("a group holds at most {MAX_GROUP_RULES} rules"),
            ));
            None
        }
        Some(Value::Array(list)) => {
            let mut rules = Vec::with_capacity(list.len());
            for (i, child) in list.iter().enumerate() {
                path.push(i.to_string());
                let parsed = parse_node(child, schema, path, depth + 1, nodes, problems);
                path.pop();
                if *nodes > MAX_NODES {
                    break;
                }
                rules.extend(parsed);
            }
            (rules.len() == list.len()).then_some(rules)
        }
        _ => {
            problems.push(Problem::at(path, "must be an array"));
            None
        }
    };
    path.pop();
    Some(Condition::Group {
        logic: logic?,
        rules: rules?,
    })
}

fn parse_compare(
    map: &Map<String, Value>,
    schema: &Schema<'_>,
    path: &mut Vec<String>,
    problems: &mut Vec<Problem>,
) -> Option<Condition> {
    let before = problems.len();
    let mut field_path = |name: &str, value: Option<&Value>, path: &mut Vec<String>| {
        path.push(name.into());
        let parsed = match value {
            Some(Value::String(s)) => match FieldPath::parse(s) {
                Some(p) => match schema.fields {
                    Some(fields) if !fields.contains(&p.root()) => {
                        problems.push(Problem::at(path, format!("unknown field '{}'", p.root())));
                        None
                    }
                    _ => Some(p),
                },
                None if s.len() > MAX_PATH_LEN => {
                    problems.push(Problem::limit(
                        path,
                        format!("field path is longer than {MAX_PATH_LEN} characters"),
                    ));
                    None
                }
                None => {
                    problems.push(Problem::at(path, "invalid field path"));
                    None
                }
            },
            None if name == "field" => {
                problems.push(Problem::at(path, "is required"));
                None
            }
            _ => {
                problems.push(Problem::at(path, "must be a string"));
                None
            }
        };
        path.pop();
        parsed
    };
    let field = field_path("field", map.get("field"), path);
    let value_field = match map.get("valueField") {
        None | Some(Value::Null) => None,
        Some(v) => Some(field_path("valueField", Some(v), path)),
    };
    path.push("operator".into());
    let op = match map.get("operator") {
        Some(Value::String(s)) => match Op::parse(s) {
            Some(op) => Some(op),
            None => {
                problems.push(Problem::at(path, format!("unknown operator '{s}'")));
                None
            }
        },
        _ => {
            problems.push(Problem::at(path, "is required"));
            None
        }
    };
    path.pop();
    let value = match (&value_field, map.get("value")) {
        (Some(Some(p)), _) => Some(Operand::Field(p.clone())),
        (Some(None), _) => None,
        (None, Some(v)) => Some(match template_of(v) {
            Some(t) => Operand::Template(t),
            None => Operand::Literal(v.clone()),
        }),
        (None, None) if matches!(op, Some(Op::IsEmpty | Op::IsNotEmpty)) => {
            Some(Operand::Literal(Value::Null))
        }
        (None, None) => {
            path.push("value".into());
            problems.push(Problem::at(
                path,
                "is required (may be null) unless valueField is given",
            ));
            path.pop();
            None
        }
    };
    let mut pattern = None;
    if op == Some(Op::Matches)
        && let Some(Operand::Literal(lit)) = &value
    {
        path.push("value".into());
        match lit.as_str().map(|s| (s, compile_pattern(s))) {
            Some((_, Some(re))) => pattern = Some(re),
            Some((s, None)) if s.len() > MAX_PATTERN_LEN => problems.push(Problem::limit(
                path,
                format!("pattern is longer than {MAX_PATTERN_LEN} characters"),
            )),
            Some(_) => problems.push(Problem::at(path, "invalid regular expression")),
            None => problems.push(Problem::at(path, "must be a string pattern")),
        }
        path.pop();
    }
    if problems.len() != before {
        return None;
    }
    Some(Condition::Compare {
        field: field?,
        op: op?,
        value: value?,
        pattern,
    })
}
