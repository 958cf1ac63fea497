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

use regex::Regex;
use serde_json::Value;

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

mod compare;
mod eval;
mod parse;
mod path;
#[cfg(test)]
mod tests;

pub use compare::compare;
pub use eval::{Scope, interpolate, template};
pub use parse::{compile_pattern, parse};
pub use path::{FieldPath, Lookup, Step, resolve_text};
