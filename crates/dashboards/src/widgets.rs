//! The widget catalog and the reference's effective-widget rules.

use serde::Serialize;
use serde_json::Value;
use stoa_acl::slots::WidgetDef;
use utoipa::ToSchema;

use crate::model::{Mode, Size};
use crate::queries::WidgetInputs;

/// A catalog entry (`GET /dashboards/widgets/catalog`, `widgets` of the layout).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CatalogEntry {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub default_size: Size,
    pub default_enabled: bool,
    #[schema(value_type = Option<Object>)]
    pub default_settings: Option<Value>,
    /// Every feature needed to see the widget.
    pub features: Vec<String>,
    pub module_id: String,
    pub icon: Option<String>,
    /// `<module>:<widget id>:widget`, the client's loader key.
    pub loader_key: String,
    pub supports_refresh: bool,
}

impl From<&WidgetDef> for CatalogEntry {
    fn from(w: &WidgetDef) -> Self {
        Self {
            id: w.id.into(),
            title: w.title.into(),
            description: w.description.map(String::from),
            default_size: w.default_size.into(),
            default_enabled: w.default_enabled,
            default_settings: w.default_settings.map(|f| f()),
            features: w.features.iter().map(|f| f.to_string()).collect(),
            module_id: w.module.into(),
            icon: w.icon.map(String::from),
            loader_key: format!("{}:{}:widget", w.module, w.id),
            supports_refresh: w.supports_refresh,
        }
    }
}

/// The widgets a user may have, in registry order: the user's override
/// (even an empty one), else the union of the roles' rows, else every
/// widget; then only those whose features `has` grants.
pub fn effective<'w>(
    registry: &'w [WidgetDef],
    inputs: &WidgetInputs,
    has: impl Fn(&str) -> bool,
) -> Vec<&'w WidgetDef> {
    let user_override = match (&inputs.user_mode, &inputs.user_widgets) {
        (Some(mode), Some(ids)) if Mode::parse(mode) == Mode::Override => Some(ids),
        _ => None,
    };
    let base: Option<&Vec<String>> = match user_override {
        Some(ids) => Some(ids),
        None => {
            let known = inputs
                .role_widgets
                .iter()
                .any(|id| registry.iter().any(|w| w.id == id));
            known.then_some(&inputs.role_widgets)
        }
    };
    registry
        .iter()
        .filter(|w| base.is_none_or(|ids| ids.iter().any(|id| id == w.id)))
        .filter(|w| w.features.iter().all(|f| has(f)))
        .collect()
}

/// The registry's known ids among `ids`, each once, in the order given.
pub fn known_ids(registry: &[WidgetDef], ids: &[String]) -> Result<Vec<String>, Vec<String>> {
    let unknown: Vec<String> = ids
        .iter()
        .filter(|id| !registry.iter().any(|w| w.id == id.as_str()))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(unknown);
    }
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        if !out.contains(id) {
            out.push(id.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stoa_acl::slots::WidgetSize;

    fn w(id: &'static str, features: &'static [&'static str]) -> WidgetDef {
        WidgetDef {
            id,
            module: "m",
            title: id,
            description: None,
            default_size: WidgetSize::Md,
            default_enabled: true,
            default_settings: None,
            features,
            category: None,
            icon: None,
            supports_refresh: false,
        }
    }

    fn ids(list: Vec<&WidgetDef>) -> Vec<&'static str> {
        list.into_iter().map(|w| w.id).collect()
    }

    fn inputs(mode: Option<&str>, user: Option<&[&str]>, roles: &[&str]) -> WidgetInputs {
        WidgetInputs {
            layout: None,
            user_mode: mode.map(String::from),
            user_widgets: user.map(|u| u.iter().map(|s| s.to_string()).collect()),
            role_widgets: roles.iter().map(|s| s.to_string()).collect(),
            versions: Vec::new(),
        }
    }

    #[test]
    fn override_then_roles_then_everything_then_features() {
        let reg = [w("a", &[]), w("b", &["x"]), w("c", &[])];
        let all = |_: &str| true;
        // No rows: every widget, in registry order.
        assert_eq!(
            ids(effective(&reg, &inputs(None, None, &[]), all)),
            ["a", "b", "c"]
        );
        // Role rows: their union, registry order.
        assert_eq!(
            ids(effective(&reg, &inputs(None, None, &["c", "a"]), all)),
            ["a", "c"]
        );
        // Inherit ignores the user's ids.
        assert_eq!(
            ids(effective(
                &reg,
                &inputs(Some("inherit"), Some(&["b"]), &["c"]),
                all
            )),
            ["c"]
        );
        // Override wins, and an empty override shows nothing.
        assert_eq!(
            ids(effective(
                &reg,
                &inputs(Some("override"), Some(&["b"]), &["c"]),
                all
            )),
            ["b"]
        );
        assert!(effective(&reg, &inputs(Some("override"), Some(&[]), &["c"]), all).is_empty());
        // Features filter last.
        assert_eq!(
            ids(effective(&reg, &inputs(None, None, &[]), |f| f != "x")),
            ["a", "c"]
        );
        // Role rows naming only unknown widgets count as none.
        assert_eq!(
            ids(effective(&reg, &inputs(None, None, &["gone"]), all)),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn known_ids_refuses_unknown_and_drops_duplicates() {
        let reg = [w("a", &[]), w("b", &[])];
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            known_ids(&reg, &list(&["b", "a", "b"])),
            Ok(list(&["b", "a"]))
        );
        assert_eq!(known_ids(&reg, &list(&["a", "zz"])), Err(list(&["zz"])));
    }
}
