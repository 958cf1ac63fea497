//! Field paths: parsed once (`items[0].name` == `items.0.name`), walked
//! over a record's data, and looked up by `{{...}}` placeholders.

use serde_json::Value;

use super::*;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A parsed field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    pub text: String,
    pub steps: Vec<Step>,
}

const FORBIDDEN_KEYS: &[&str] = &["__proto__", "constructor", "prototype"];

impl FieldPath {
    /// Parses `a.b[0].c`; `None` when it breaks the path rules
    /// (`^[A-Za-z_][A-Za-z0-9_.\[\]]*$`, at most 200 characters, balanced
    /// brackets holding digits, no empty segment).
    pub fn parse(text: &str) -> Option<FieldPath> {
        if text.is_empty() || text.len() > MAX_PATH_LEN {
            return None;
        }
        let mut chars = text.chars();
        let first = chars.next()?;
        if !(first.is_ascii_alphabetic() || first == '_') {
            return None;
        }
        if !text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']'))
        {
            return None;
        }
        let mut steps = Vec::new();
        for segment in text.split('.') {
            if segment.is_empty() {
                return None;
            }
            let (name, mut rest) = match segment.find('[') {
                Some(i) => (&segment[..i], &segment[i..]),
                None => (segment, ""),
            };
            if name.contains(']') {
                return None;
            }
            if !name.is_empty() {
                steps.push(Step::Key(name.to_string()));
            } else if steps.is_empty() {
                return None;
            }
            while !rest.is_empty() {
                let close = rest.find(']')?;
                let inner = rest.get(1..close)?;
                if !rest.starts_with('[') || inner.is_empty() {
                    return None;
                }
                steps.push(Step::Index(inner.parse().ok()?));
                rest = &rest[close + 1..];
            }
        }
        Some(FieldPath {
            text: text.to_string(),
            steps,
        })
    }

    /// The first key (what an entity's field list names).
    pub fn root(&self) -> &str {
        match self.steps.first() {
            Some(Step::Key(k)) => k,
            _ => "",
        }
    }

    /// The value at this path in `data` (`None`: undefined). Own keys only:
    /// `__proto__`, `constructor`, `prototype` are never found.
    pub fn resolve<'v>(&self, data: &'v Value) -> Option<&'v Value> {
        let mut at = data;
        for step in &self.steps {
            at = match step {
                Step::Key(k) => key_step(at, k)?,
                Step::Index(i) => index_step(at, *i)?,
            };
        }
        Some(at)
    }
}

fn key_step<'v>(at: &'v Value, key: &str) -> Option<&'v Value> {
    if FORBIDDEN_KEYS.contains(&key) {
        return None;
    }
    match at {
        Value::Object(map) => map.get(key),
        Value::Array(list) => list.get(key.parse::<usize>().ok()?),
        _ => None,
    }
}

fn index_step(at: &Value, index: usize) -> Option<&Value> {
    match at {
        Value::Array(list) => list.get(index),
        Value::Object(map) => map.get(&index.to_string()),
        _ => None,
    }
}

/// Resolves a free-form dot path (`user.id`) in `data` (templates): the
/// same as [`FieldPath::parse`] then [`FieldPath::resolve`], walking the
/// text without building the path (placeholders are resolved on every run).
pub fn resolve_text<'v>(path: &str, data: &'v Value) -> Option<&'v Value> {
    let text = path.trim();
    if text.is_empty() || text.len() > MAX_PATH_LEN {
        return None;
    }
    let first = text.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_')
        || !text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']'))
    {
        return None;
    }
    let mut at = data;
    let mut stepped = false;
    for segment in text.split('.') {
        if segment.is_empty() {
            return None;
        }
        let (name, mut rest) = match segment.find('[') {
            Some(i) => (&segment[..i], &segment[i..]),
            None => (segment, ""),
        };
        if name.contains(']') {
            return None;
        }
        if !name.is_empty() {
            at = key_step(at, name)?;
            stepped = true;
        } else if !stepped {
            return None;
        }
        while !rest.is_empty() {
            let close = rest.find(']')?;
            let inner = rest.get(1..close)?;
            if !rest.starts_with('[') || inner.is_empty() {
                return None;
            }
            at = index_step(at, inner.parse().ok()?)?;
            stepped = true;
            rest = &rest[close + 1..];
        }
    }
    Some(at)
}

/// Where `{{path}}` placeholders are looked up.
pub trait Lookup {
    /// The value at `path` (`None`: undefined).
    fn lookup(&self, path: &str) -> Option<&Value>;
}

impl Lookup for Value {
    fn lookup(&self, path: &str) -> Option<&Value> {
        resolve_text(path, self)
    }
}
