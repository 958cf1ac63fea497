//! The documented operations against the declared ones.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use stoa_core::http::{Access, ErrorShape, Operation};

/// A documented operation and its declaration.
pub struct Row {
    pub method: String,
    pub path: String,
    pub access: Access,
    pub errors: ErrorShape,
    pub bad_json: Option<&'static str>,
}

impl Row {
    pub fn name(&self) -> String {
        format!("{} {}", self.method.to_uppercase(), self.path)
    }
}

/// Every documented operation with its declaration; fails on any operation
/// without one, any declaration without an operation, and any document
/// extension that disagrees with the declaration.
pub fn rows(doc: &Value, declared: &[Operation]) -> Vec<Row> {
    let mut problems = Vec::new();
    let mut rows = Vec::new();
    let mut seen = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let relative = path.strip_prefix("/api").unwrap_or(path);
            let found = declared
                .iter()
                .find(|d| d.method.as_openapi() == method && d.path == relative);
            let Some(decl) = found else {
                problems.push(format!(
                    "{} {path} has no access declaration: add it to its module's OPERATIONS \
                     (docs/adding-a-module.md)",
                    method.to_uppercase()
                ));
                continue;
            };
            seen.insert((method.clone(), relative.to_string()));
            let features = json!(decl.access.features());
            if op["x-required-features"] != features {
                problems.push(format!(
                    "{method} {path}: x-required-features is {}, declared {features}",
                    op["x-required-features"]
                ));
            }
            if (op["x-public"] == json!(true)) != (decl.access == Access::Public) {
                problems.push(format!(
                    "{method} {path}: x-public disagrees with the declaration"
                ));
            }
            if op["x-error-shape"] != json!(decl.errors.letter()) {
                problems.push(format!(
                    "{method} {path}: x-error-shape is {}, declared {}",
                    op["x-error-shape"],
                    decl.errors.letter()
                ));
            }
            rows.push(Row {
                method: method.clone(),
                path: path.clone(),
                access: decl.access,
                errors: decl.errors,
                bad_json: decl.bad_json,
            });
        }
    }
    for decl in declared {
        let key = (decl.method.as_openapi().to_string(), decl.path.to_string());
        if !seen.contains(&key) {
            problems.push(format!(
                "declared {} {} matches no documented operation",
                key.0.to_uppercase(),
                key.1
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    rows
}
