//! The sidebar settings document: its shape, its limits and how input is
//! cleaned before it is stored.

use std::collections::BTreeMap;

use crate::error::PreferencesError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_core::AppError;
use utoipa::ToSchema;

/// The settings version written when the client sends none.
pub const SETTINGS_VERSION: i32 = 2;
/// At most this many group ids in `groupOrder`.
pub const MAX_GROUP_ORDER: usize = 200;
/// At most this many entries in `hiddenItems` and in each `itemOrder` list.
pub const MAX_ITEMS: usize = 500;
/// Labels are 1–120 characters.
pub const MAX_LABEL_CHARS: usize = 120;

/// How a user or a role wants the sidebar: group order and labels, item
/// labels, hidden items and the item order inside groups. Groups are named by
/// id; items by href (or by their navigation id).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SidebarSettings {
    pub version: i32,
    pub group_order: Vec<String>,
    pub group_labels: BTreeMap<String, String>,
    pub item_labels: BTreeMap<String, String>,
    pub hidden_items: Vec<String>,
    pub item_order: BTreeMap<String, Vec<String>>,
}

impl Default for SidebarSettings {
    fn default() -> Self {
        Self {
            version: SETTINGS_VERSION,
            group_order: Vec::new(),
            group_labels: BTreeMap::new(),
            item_labels: BTreeMap::new(),
            hidden_items: Vec::new(),
            item_order: BTreeMap::new(),
        }
    }
}

impl SidebarSettings {
    /// Reads a stored document; missing parts default to empty, and a document
    /// that cannot be read at all gives the defaults.
    pub fn from_stored(value: Value) -> Self {
        serde_json::from_value(value).unwrap_or_default()
    }

    /// The document to store.
    pub fn to_stored(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Sidebar settings as a client sends them: every part optional.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsInput {
    /// A positive integer (default 2).
    #[schema(minimum = 1)]
    pub version: Option<i64>,
    /// Group ids, first shown first (at most 200).
    #[schema(max_items = 200)]
    pub group_order: Option<Vec<String>>,
    /// Group id → label (1–120 characters).
    pub group_labels: Option<BTreeMap<String, String>>,
    /// Item href (or id) → label (1–120 characters).
    pub item_labels: Option<BTreeMap<String, String>>,
    /// Item hrefs (or ids) left out of the sidebar (at most 500).
    #[schema(max_items = 500)]
    pub hidden_items: Option<Vec<String>>,
    /// Group id → item hrefs (or ids) in the wanted order (at most 500 each).
    pub item_order: Option<BTreeMap<String, Vec<String>>>,
}

fn invalid(path: Vec<Value>, message: String, code: &'static str) -> AppError {
    PreferencesError::InvalidSettings {
        path,
        message,
        code,
    }
    .into()
}

/// Builds issue paths under a prefix (`settings.groupOrder.3`).
struct PathOf<'a>(&'a [&'a str]);

impl PathOf<'_> {
    fn at(&self, field: &str) -> Vec<Value> {
        self.0
            .iter()
            .map(|s| Value::from(*s))
            .chain(std::iter::once(Value::from(field)))
            .collect()
    }
    fn at_index(&self, field: &str, index: usize) -> Vec<Value> {
        let mut path = self.at(field);
        path.push(Value::from(index));
        path
    }
    fn at_key(&self, field: &str, key: &str) -> Vec<Value> {
        let mut path = self.at(field);
        path.push(Value::from(key));
        path
    }
}

/// A list of ids: at most `max` entries, none empty; trimmed, blanks and
/// duplicates dropped.
fn id_list(
    values: Vec<String>,
    max: usize,
    path: impl Fn(Option<usize>) -> Vec<Value>,
) -> Result<Vec<String>, AppError> {
    if values.len() > max {
        return Err(invalid(
            path(None),
            format!("at most {max} entries"),
            "too_big",
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(values.len());
    for (index, value) in values.into_iter().enumerate() {
        if value.is_empty() {
            return Err(invalid(
                path(Some(index)),
                "must not be empty".into(),
                "too_small",
            ));
        }
        let trimmed = value.trim();
        if !trimmed.is_empty() && !out.iter().any(|v| v == trimmed) {
            out.push(trimmed.to_string());
        }
    }
    Ok(out)
}

/// A label map: keys not empty, labels 1–120 characters; trimmed, blank
/// entries dropped.
fn labels(
    map: BTreeMap<String, String>,
    field: &str,
    at: &PathOf<'_>,
) -> Result<BTreeMap<String, String>, AppError> {
    let mut out = BTreeMap::new();
    for (key, label) in map {
        if key.is_empty() {
            return Err(invalid(
                at.at(field),
                "keys must not be empty".into(),
                "too_small",
            ));
        }
        let chars = label.chars().count();
        if chars == 0 || chars > MAX_LABEL_CHARS {
            return Err(invalid(
                at.at_key(field, &key),
                format!("must be 1 to {MAX_LABEL_CHARS} characters"),
                if chars == 0 { "too_small" } else { "too_big" },
            ));
        }
        let (key, label) = (key.trim(), label.trim());
        if !key.is_empty() && !label.is_empty() {
            out.insert(key.to_string(), label.to_string());
        }
    }
    Ok(out)
}

impl SettingsInput {
    /// Whether no part was sent at all.
    pub fn is_empty(&self) -> bool {
        self.version.is_none()
            && self.group_order.is_none()
            && self.group_labels.is_none()
            && self.item_labels.is_none()
            && self.hidden_items.is_none()
            && self.item_order.is_none()
    }

    /// Checks the limits (400 naming the field under `prefix`) and cleans the
    /// input: values trimmed, blanks and duplicates dropped, missing parts empty.
    pub fn normalize(self, prefix: &[&str]) -> Result<SidebarSettings, AppError> {
        let at = PathOf(prefix);
        let version = match self.version {
            None => SETTINGS_VERSION,
            Some(v) => i32::try_from(v).ok().filter(|v| *v >= 1).ok_or_else(|| {
                invalid(
                    at.at("version"),
                    "must be a positive integer".into(),
                    "too_small",
                )
            })?,
        };
        let group_order = id_list(
            self.group_order.unwrap_or_default(),
            MAX_GROUP_ORDER,
            |i| match i {
                Some(i) => at.at_index("groupOrder", i),
                None => at.at("groupOrder"),
            },
        )?;
        let hidden_items = id_list(
            self.hidden_items.unwrap_or_default(),
            MAX_ITEMS,
            |i| match i {
                Some(i) => at.at_index("hiddenItems", i),
                None => at.at("hiddenItems"),
            },
        )?;
        let group_labels = labels(self.group_labels.unwrap_or_default(), "groupLabels", &at)?;
        let item_labels = labels(self.item_labels.unwrap_or_default(), "itemLabels", &at)?;
        let mut item_order = BTreeMap::new();
        for (group, items) in self.item_order.unwrap_or_default() {
            if group.is_empty() {
                return Err(invalid(
                    at.at("itemOrder"),
                    "keys must not be empty".into(),
                    "too_small",
                ));
            }
            let list = id_list(items, MAX_ITEMS, |i| {
                let mut path = at.at_key("itemOrder", &group);
                path.extend(i.map(Value::from));
                path
            })?;
            let group = group.trim();
            if !group.is_empty() && !list.is_empty() {
                item_order.insert(group.to_string(), list);
            }
        }
        Ok(SidebarSettings {
            version,
            group_order,
            group_labels,
            item_labels,
            hidden_items,
            item_order,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(v: Value) -> SettingsInput {
        serde_json::from_value(v).unwrap_or_default()
    }

    #[test]
    fn cleans_and_defaults() {
        let s = input(json!({
            "groupOrder": [" b ", "a", "b", "  "],
            "groupLabels": {" g ": " Sales ", "x": "  "},
            "hiddenItems": ["/a", "/a"],
            "itemOrder": {"g": [" /x", "/y", "/x"], "empty": ["  "]}
        }))
        .normalize(&["settings"])
        .unwrap_or_default();
        assert_eq!(s.version, 2);
        assert_eq!(s.group_order, vec!["b", "a"]);
        assert_eq!(s.group_labels.get("g").map(String::as_str), Some("Sales"));
        assert!(!s.group_labels.contains_key("x"));
        assert_eq!(s.hidden_items, vec!["/a"]);
        assert_eq!(
            s.item_order.get("g").cloned().unwrap_or_default(),
            vec!["/x", "/y"]
        );
        assert!(!s.item_order.contains_key("empty"));
        assert!(s.item_labels.is_empty());
        assert_eq!(
            SidebarSettings::from_stored(json!({"hiddenItems": ["/z"]})).version,
            2
        );
        assert_eq!(
            SidebarSettings::from_stored(json!("garbage")),
            SidebarSettings::default()
        );
    }

    #[test]
    fn refuses_over_limit_and_empty_values() {
        let err = |v: Value| {
            input(v)
                .normalize(&["settings"])
                .err()
                .map(|e| e.message().to_string())
                .unwrap_or_default()
        };
        let many: Vec<String> = (0..201).map(|i| format!("g{i}")).collect();
        assert_eq!(
            err(json!({"groupOrder": many})),
            "Invalid payload: settings.groupOrder: at most 200 entries"
        );
        let items: Vec<String> = (0..501).map(|i| format!("/i{i}")).collect();
        assert!(err(json!({"hiddenItems": items.clone()})).contains("settings.hiddenItems"));
        assert!(err(json!({"itemOrder": {"g": items}})).contains("settings.itemOrder.g"));
        assert!(err(json!({"groupLabels": {"g": "x".repeat(121)}})).contains("groupLabels.g"));
        assert!(err(json!({"itemLabels": {"/a": ""}})).contains("itemLabels./a"));
        assert!(err(json!({"groupOrder": [""]})).contains("groupOrder.0"));
        assert!(err(json!({"version": 0})).contains("settings.version"));
        assert!(
            input(json!({"groupLabels": {"g": "é".repeat(120)}}))
                .normalize(&[])
                .is_ok()
        );
    }
}
