//! The condition language: parsed once into a typed tree when a rule is
//! saved (every problem reported with its path), evaluated against a
//! record's data without re-reading the rule's JSON.
//!
//! ```text
//! group:  {"operator": "AND" | "OR" | "NOT", "rules": [expr, ...]}
//! simple: {"field": "path", "operator": "<op>", "value": any, "valueField"?: "path"}
//! ```
//!
//! Paths are dot paths (`items[0].name` == `items.0.name`); string values
//! written `"{{x}}"` are resolved at run time: `{{today}}`, `{{now}}`, or a
//! path into the evaluation context (`{{user.id}}`).

use std::borrow::Cow;
use std::cmp::Ordering;

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Deepest nesting of groups accepted at save time.
pub const MAX_DEPTH: usize = 5;
/// Most children of one group.
pub const MAX_GROUP_RULES: usize = 50;
/// Most nodes (groups and comparisons) of one condition.
pub const MAX_NODES: usize = 500;
/// Longest field path.
pub const MAX_PATH_LEN: usize = 200;
/// Longest `MATCHES` pattern.
pub const MAX_PATTERN_LEN: usize = 200;
/// Longest text a `MATCHES` runs on (longer: no match).
pub const MAX_MATCH_INPUT: usize = 10_000;
/// Compiled size bound of a `MATCHES` pattern (the regex crate matches in
/// linear time; this bounds its memory).
const REGEX_SIZE_LIMIT: usize = 256 * 1024;

/// One problem found in a condition: where (`rules.0.operator`) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub path: Vec<String>,
    pub message: String,
    /// A safety limit was passed (depth, group size, node count, path or
    /// pattern length, size) rather than the input being malformed; the
    /// save-time message says so in the reference's words.
    pub limit: bool,
}

impl Problem {
    /// A malformed input at `path`.
    pub fn new(path: Vec<String>, message: impl Into<String>) -> Self {
        Self {
            path,
            message: message.into(),
            limit: false,
        }
    }

    fn at(path: &[String], message: impl Into<String>) -> Self {
        Self::new(path.to_vec(), message)
    }

    /// A safety limit passed at `path`.
    fn limit(path: &[String], message: impl Into<String>) -> Self {
        Self {
            limit: true,
            ..Self::at(path, message)
        }
    }
}

/// A group's logic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logic {
    And,
    Or,
    /// One child: its negation; several: NOT(all).
    Not,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    In,
    NotIn,
    Contains,
    NotContains,
    StartsWith,
    EndsWith,
    Matches,
    IsEmpty,
    IsNotEmpty,
}

impl Op {
    /// Every operator and its spellings.
    pub const ALL: &[(&'static str, Op)] = &[
        ("=", Op::Eq),
        ("==", Op::Eq),
        ("!=", Op::Ne),
        (">", Op::Gt),
        (">=", Op::Ge),
        ("<", Op::Lt),
        ("<=", Op::Le),
        ("IN", Op::In),
        ("NOT_IN", Op::NotIn),
        ("CONTAINS", Op::Contains),
        ("NOT_CONTAINS", Op::NotContains),
        ("STARTS_WITH", Op::StartsWith),
        ("ENDS_WITH", Op::EndsWith),
        ("MATCHES", Op::Matches),
        ("IS_EMPTY", Op::IsEmpty),
        ("IS_NOT_EMPTY", Op::IsNotEmpty),
    ];

    pub fn parse(s: &str) -> Option<Op> {
        Self::ALL
            .iter()
            .find(|(name, _)| *name == s)
            .map(|(_, op)| *op)
    }
}

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

/// The right-hand side of a comparison.
#[derive(Clone, Debug)]
pub enum Operand {
    Literal(Value),
    /// A whole-string `{{...}}` placeholder.
    Template(String),
    /// Another field of the data (`valueField`).
    Field(FieldPath),
}

/// A parsed condition.
#[derive(Clone, Debug)]
pub enum Condition {
    Group {
        logic: Logic,
        rules: Vec<Condition>,
    },
    Compare {
        field: FieldPath,
        op: Op,
        value: Operand,
        /// A `MATCHES` pattern given as a literal, compiled at save time.
        pattern: Option<Regex>,
    },
}

/// What a condition is checked against at save time.
pub struct Schema<'a> {
    /// The entity's field names (`None`: any field, for entity types no
    /// module declares).
    pub fields: Option<&'a [&'a str]>,
}

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn any() -> Schema<'static> {
        Schema { fields: None }
    }

    fn eval(cond: Value, data: Value) -> bool {
        let c = parse(&cond, &any()).unwrap();
        let ctx = json!({"user": {"id": "u1"}, "entityType": "customers.deal"});
        c.eval(&Scope {
            data: &data,
            context: &ctx,
            now: time::macros::datetime!(2026-11-29 10:00 UTC),
        })
    }

    /// One row per operator and case: (operator, left, right, expected).
    #[test]
    fn operator_table() {
        let rows: &[(&str, Value, Value, bool)] = &[
            ("=", json!(5), json!("5"), true),
            ("==", json!("a"), json!("a"), true),
            ("=", json!("a"), json!("b"), false),
            ("=", json!(null), json!(null), true),
            ("=", json!(null), json!(0), false),
            ("=", json!(true), json!(1), true),
            ("=", json!({"a": 1}), json!({"a": 1}), false),
            ("!=", json!(1), json!(2), true),
            ("!=", json!("x"), json!("x"), false),
            (">", json!(10), json!(9), true),
            (">", json!("10"), json!("9"), true),
            (">", json!("b"), json!("a"), true),
            (">", json!(null), json!(0), false),
            (">", json!(0), json!(null), true),
            (
                ">",
                json!("2026-02-01"),
                json!("2026-01-31T23:00:00Z"),
                true,
            ),
            (">=", json!(3), json!(3), true),
            (">=", json!(null), json!(null), true),
            ("<", json!(2), json!(3), true),
            ("<", json!("2025-12-31"), json!("2026-01-01"), true),
            ("<=", json!(3), json!(2), false),
            ("<=", json!(2.5), json!("2.5"), true),
            ("IN", json!("won"), json!(["won", "lost"]), true),
            ("IN", json!(2), json!(["1", "2"]), true),
            ("IN", json!("x"), json!("x"), false),
            ("NOT_IN", json!("open"), json!(["won", "lost"]), true),
            ("NOT_IN", json!("x"), json!("not an array"), true),
            ("NOT_IN", json!("won"), json!(["won"]), false),
            ("CONTAINS", json!(["a", "b"]), json!("b"), true),
            ("CONTAINS", json!("hello world"), json!("lo w"), true),
            ("CONTAINS", json!(12345), json!("23"), false),
            ("CONTAINS", json!(null), json!("a"), false),
            ("NOT_CONTAINS", json!(["a"]), json!("b"), true),
            ("NOT_CONTAINS", json!("abc"), json!("b"), false),
            ("STARTS_WITH", json!("ACME Corp"), json!("ACME"), true),
            ("STARTS_WITH", json!(12345), json!("12"), true),
            ("STARTS_WITH", json!(null), json!(""), false),
            ("ENDS_WITH", json!("file.pdf"), json!(".pdf"), true),
            ("ENDS_WITH", json!("file.pdf"), json!(".doc"), false),
            ("MATCHES", json!("INV-0042"), json!("^INV-\\d{4}$"), true),
            ("MATCHES", json!("inv-42"), json!("^INV-\\d{4}$"), false),
            ("MATCHES", json!(null), json!(".*"), false),
            ("IS_EMPTY", json!(""), json!(null), true),
            ("IS_EMPTY", json!("  "), json!(null), true),
            ("IS_EMPTY", json!([]), json!(null), true),
            ("IS_EMPTY", json!({}), json!(null), true),
            ("IS_EMPTY", json!(0), json!(null), false),
            ("IS_NOT_EMPTY", json!("x"), json!(null), true),
            ("IS_NOT_EMPTY", json!(null), json!(null), false),
        ];
        for (op, left, right, expected) in rows {
            let cond = json!({"field": "x", "operator": op, "value": right});
            let got = eval(cond, json!({ "x": left }));
            assert_eq!(got, *expected, "{left} {op} {right}");
        }
        // An absent field is null/undefined.
        assert!(eval(
            json!({"field": "missing", "operator": "IS_EMPTY", "value": null}),
            json!({})
        ));
        assert!(eval(
            json!({"field": "missing", "operator": "=", "value": null}),
            json!({})
        ));
    }

    #[test]
    fn groups_paths_fields_and_templates() {
        let data = json!({"deal": {"items": [{"qty": 3}], "owner": "u1", "min": 2}});
        let and = json!({"operator": "AND", "rules": [
            {"field": "deal.items[0].qty", "operator": ">", "value": 2},
            {"field": "deal.items.0.qty", "operator": ">", "valueField": "deal.min"},
            {"field": "deal.owner", "operator": "=", "value": "{{user.id}}"},
        ]});
        assert!(eval(and, data.clone()));
        let or = json!({"operator": "OR", "rules": [
            {"field": "deal.owner", "operator": "=", "value": "nobody"},
            {"field": "deal.owner", "operator": "=", "value": "u1"},
        ]});
        assert!(eval(or, data.clone()));
        let not = json!({"operator": "NOT", "rules": [
            {"field": "deal.owner", "operator": "=", "value": "u1"},
        ]});
        assert!(!eval(not, data.clone()));
        let not_all = json!({"operator": "NOT", "rules": [
            {"field": "deal.owner", "operator": "=", "value": "u1"},
            {"field": "deal.min", "operator": "=", "value": 3},
        ]});
        assert!(eval(not_all, data.clone()));
        let proto = json!({"field": "deal.__proto__", "operator": "IS_EMPTY", "value": null});
        assert!(eval(proto, data));
        let today = json!({"field": "d", "operator": "=", "value": "{{today}}"});
        assert!(eval(today, json!({"d": "2026-11-29"})));
    }

    #[test]
    fn save_time_problems_name_their_paths() {
        let bad = json!({"operator": "AND", "rules": [
            {"field": "a", "operator": "LIKE", "value": 1},
            {"field": "1bad", "operator": "=", "value": 1},
            {"field": "a", "operator": "="},
            {"operator": "OR", "rules": []},
            {"field": "a", "operator": "MATCHES", "value": "(unclosed"},
            {"field": "a", "operator": "=", "valueField": 3},
        ]});
        let problems = parse(&bad, &any()).unwrap_err();
        let paths: Vec<String> = problems.iter().map(|p| p.path.join(".")).collect();
        assert_eq!(
            paths,
            [
                "rules.0.operator",
                "rules.1.field",
                "rules.2.value",
                "rules.3.rules",
                "rules.4.value",
                "rules.5.valueField",
            ]
        );
        let schema = Schema {
            fields: Some(&["title"]),
        };
        let unknown = parse(
            &json!({"field": "secret", "operator": "=", "value": 1}),
            &schema,
        )
        .unwrap_err();
        assert_eq!(unknown[0].message, "unknown field 'secret'");
        // Depth: six nested groups are refused.
        let mut deep = json!({"field": "a", "operator": "=", "value": 1});
        for _ in 0..6 {
            deep = json!({"operator": "AND", "rules": [deep]});
        }
        assert!(parse(&deep, &any()).is_err());
        // Too many children.
        let wide: Vec<Value> = (0..51)
            .map(|_| json!({"field": "a", "operator": "=", "value": 1}))
            .collect();
        assert!(parse(&json!({"operator": "OR", "rules": wide}), &any()).is_err());
        // A long pattern is refused at save time.
        let long = "a".repeat(201);
        assert!(
            parse(
                &json!({"field": "a", "operator": "MATCHES", "value": long}),
                &any()
            )
            .is_err()
        );
    }

    #[test]
    fn catastrophic_patterns_run_in_linear_time() {
        let cond = json!({"field": "s", "operator": "MATCHES", "value": "^(a+)+$"});
        let input = format!("{}!", "a".repeat(9_000));
        let started = std::time::Instant::now();
        assert!(!eval(cond, json!({ "s": input })));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn text_paths_resolve_as_parsed_paths_do() {
        let data = json!({"a": {"b": [10, {"c": "x"}], "0": "zero", "__proto__": 1},
                          "list": [[1, 2], {"1": "one"}], "_u": true});
        for path in [
            "a",
            "a.b",
            "a.b[0]",
            "a.b[1].c",
            "a.b[1]c",
            "a.b.1.c",
            "a[0]",
            "a.0",
            "list[0][1]",
            "list[1][1]",
            "list.1.1",
            "_u",
            " a.b[0] ",
            "a..b",
            "a.",
            ".a",
            "1a",
            "a[",
            "a[]",
            "a[x]",
            "a]b",
            "a.b[1][",
            "a.__proto__",
            "a.b[0].c",
            "[0]",
            "a.[0]",
            "a-b",
            "",
        ] {
            let parsed = FieldPath::parse(path.trim()).and_then(|p| p.resolve(&data).cloned());
            assert_eq!(resolve_text(path, &data).cloned(), parsed, "{path}");
        }
    }

    #[test]
    fn interpolation_leaves_unknown_placeholders() {
        let data = json!({"ruleId": "r1", "data": {"title": "Big"}});
        let now = time::macros::datetime!(2026-11-29 10:00 UTC);
        assert_eq!(
            interpolate("Deal {{data.title}} by {{ruleId}}: {{nope}}", &data, now),
            "Deal Big by r1: {{nope}}"
        );
    }
}
