//! Rendering action-log entries as CSV rows (the export).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::queries::ExportRow;

pub const CSV_HEADER: &str = "When,User,Action,Field,Old Value,New Value,Source\n";

pub fn csv_rows(r: &ExportRow, user: Option<&String>) -> String {
    let when = stoa_core::serde_util::timestamp::format(r.created_at);
    let who = user
        .cloned()
        .or_else(|| r.actor_user_id.map(|u| u.to_string()))
        .unwrap_or_else(|| "System".into());
    let action = match r.action_type.as_str() {
        "create" => "Create".to_string(),
        "edit" => "Edit".to_string(),
        "delete" => "Delete".to_string(),
        "assign" => "Assign".to_string(),
        _ => r.action_label.clone().unwrap_or_else(|| "System".into()),
    };
    let source = r.source_key.to_uppercase();
    let changes: BTreeMap<&String, &Value> = match &r.changes_json {
        Some(Value::Object(map)) => map.iter().collect(),
        _ => BTreeMap::new(),
    };
    let line = |field: &str, from: String, to: String| {
        [
            when.as_str(),
            who.as_str(),
            action.as_str(),
            field,
            &from,
            &to,
            source.as_str(),
        ]
        .iter()
        .map(|c| csv_cell(c))
        .collect::<Vec<_>>()
        .join(",")
            + "\n"
    };
    if changes.is_empty() {
        return line("", String::new(), String::new());
    }
    changes
        .iter()
        .map(|(field, change)| {
            let from = change.get("from").or_else(|| change.get("old"));
            let to = change.get("to").or_else(|| change.get("new"));
            line(field, cell_text(from), cell_text(to))
        })
        .collect()
}

/// What a spreadsheet may read as the start of a formula or command: the
/// ASCII starters, their full-width forms (spreadsheets with East Asian input
/// fold `＝SUM(..)` to `=SUM(..)`), `|` (DDE commands in older Excel), tab
/// and line breaks.
const FORMULA_STARTS: [char; 12] = [
    '=', '+', '-', '@', '|', '\t', '\r', '\n', '\u{FF1D}', '\u{FF0B}', '\u{FF0D}', '\u{FF20}',
];

/// Whether a spreadsheet could take `value` for a formula: it starts with a
/// [`FORMULA_STARTS`] character, also after leading spaces (plain, no-break
/// or ideographic), which some importers strip before they look.
fn looks_like_formula(value: &str) -> bool {
    value
        .trim_start_matches([' ', '\u{00A0}', '\u{3000}'])
        .starts_with(FORMULA_STARTS)
}

/// One CSV cell: quoted when needed, and defused (a leading `'`) when a
/// spreadsheet could read it as a formula.
pub fn csv_cell(value: &str) -> String {
    let mut v = value.to_string();
    if looks_like_formula(&v) {
        v.insert(0, '\'');
    }
    if v.contains(['"', ',', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v
    }
}

/// A JSON value as a CSV cell's text (arrays joined with `, `).
pub fn cell_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| cell_text(Some(i)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_quoted_and_defused() {
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell("=SUM(A1)"), "'=SUM(A1)");
        assert_eq!(csv_cell("@cmd"), "'@cmd");
        assert_eq!(csv_cell("-1,2"), "\"'-1,2\"");
        assert_eq!(cell_text(Some(&serde_json::json!(["a", 1]))), "a, 1");
    }

    #[test]
    fn full_width_starters_pipes_and_padded_formulas_are_defused() {
        for (raw, cell) in [
            (
                "\u{FF1D}HYPERLINK(\"x\")",
                "\"'\u{FF1D}HYPERLINK(\"\"x\"\")\"",
            ),
            ("\u{FF0B}1", "'\u{FF0B}1"),
            ("\u{FF0D}1", "'\u{FF0D}1"),
            ("\u{FF20}SUM(A1)", "'\u{FF20}SUM(A1)"),
            ("|calc", "'|calc"),
            ("cmd|' /C calc'!A0", "cmd|' /C calc'!A0"),
            ("  =1+1", "'  =1+1"),
            ("\u{3000}\u{FF1D}1", "'\u{3000}\u{FF1D}1"),
            ("a = b", "a = b"),
        ] {
            assert_eq!(csv_cell(raw), cell, "{raw:?}");
        }
    }
}
