//! Rule actions: `{type, config}` checked at save time (required config,
//! webhook addresses), run by the engine ([`crate::engine`]).

use serde_json::{Map, Value};

use crate::condition::Problem;

/// Most actions of one list.
pub const MAX_ACTIONS: usize = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionType {
    AllowTransition,
    BlockTransition,
    Log,
    ShowError,
    ShowWarning,
    ShowInfo,
    Notify,
    SetField,
    CallWebhook,
    CallPlatform,
    EmitEvent,
}

impl ActionType {
    pub const ALL: &[(&'static str, ActionType)] = &[
        ("ALLOW_TRANSITION", ActionType::AllowTransition),
        ("BLOCK_TRANSITION", ActionType::BlockTransition),
        ("LOG", ActionType::Log),
        ("SHOW_ERROR", ActionType::ShowError),
        ("SHOW_WARNING", ActionType::ShowWarning),
        ("SHOW_INFO", ActionType::ShowInfo),
        ("NOTIFY", ActionType::Notify),
        ("SET_FIELD", ActionType::SetField),
        ("CALL_WEBHOOK", ActionType::CallWebhook),
        ("CALL_OPEN_MERCATO", ActionType::CallPlatform),
        ("EMIT_EVENT", ActionType::EmitEvent),
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, t)| *t)
    }

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, t)| *t == self)
            .map(|(n, _)| *n)
            .unwrap_or("UNKNOWN")
    }

    /// Config keys that must be present and truthy.
    fn required(self) -> &'static [&'static str] {
        match self {
            Self::AllowTransition | Self::BlockTransition => &[],
            Self::Log | Self::ShowError | Self::ShowWarning | Self::ShowInfo => &["message"],
            Self::Notify => &["message", "recipients"],
            // `value` may be 0, false or null (checked below).
            Self::SetField => &["field"],
            Self::CallWebhook => &["url"],
            Self::CallPlatform => &["endpoint", "method", "apiKeyId"],
            Self::EmitEvent => &["eventName"],
        }
    }
}

/// A `CALL_OPEN_MERCATO` config's `apiKeyId`.
pub fn api_key_of(config: &Map<String, Value>) -> Option<uuid::Uuid> {
    config
        .get("apiKeyId")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
}

/// One checked action.
#[derive(Clone, Debug)]
pub struct Action {
    pub kind: ActionType,
    pub config: Map<String, Value>,
}

impl Action {
    pub fn text(&self, key: &str) -> Option<&str> {
        self.config.get(key).and_then(Value::as_str)
    }
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(_) => true,
    }
}

/// A problem with an action's config: the key at fault and the message.
pub type ConfigProblem = (&'static str, String);

/// What checks an action's config beyond its shape (the rule's context).
pub struct Checks<'a> {
    /// A webhook URL.
    pub url: &'a dyn Fn(&str) -> Result<(), String>,
    /// A `SET_FIELD`'s top-level field and value: `Err((key, message))`
    /// names the config key at fault (`field` or `value`).
    pub field: &'a dyn Fn(&str, &Value) -> Result<(), ConfigProblem>,
    /// A `CALL_OPEN_MERCATO`'s `method` and `endpoint`: one of the
    /// operations `platform-call-options` lists.
    pub platform: &'a dyn Fn(&str, &str) -> Result<(), String>,
    /// An `EMIT_EVENT`'s `eventName` (well formed already): outside every
    /// registered module's namespace.
    pub event: &'a dyn Fn(&str) -> Result<(), String>,
}

fn any_url(_: &str) -> Result<(), String> {
    Ok(())
}

fn any_field(_: &str, _: &Value) -> Result<(), ConfigProblem> {
    Ok(())
}

fn any_operation(_: &str, _: &str) -> Result<(), String> {
    Ok(())
}

fn any_event(_: &str) -> Result<(), String> {
    Ok(())
}

/// The checks of a stored rule (checked when it was saved).
pub const STORED: Checks<'static> = Checks {
    url: &any_url,
    field: &any_field,
    platform: &any_operation,
    event: &any_event,
};

/// Whether a value holds a `{{...}}` placeholder (resolved at run time, so
/// checked then).
pub fn has_placeholder(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains("{{"),
        Value::Array(list) => list.iter().any(has_placeholder),
        Value::Object(map) => map.values().any(has_placeholder),
        _ => false,
    }
}

/// Checks a list of actions (`null` or absent: none). `at` is the list's
/// path (`successActions`).
pub fn parse(
    value: Option<&Value>,
    at: &str,
    checks: &Checks<'_>,
) -> Result<Vec<Action>, Vec<Problem>> {
    let list = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => {
            return Err(vec![Problem::new(vec![at.into()], "must be an array")]);
        }
    };
    let mut problems = Vec::new();
    if list.len() > MAX_ACTIONS {
        push(
            &mut problems,
            vec![at.into()],
            format!("at most {MAX_ACTIONS} actions are allowed"),
        );
    }
    let mut actions = Vec::new();
    for (i, item) in list.iter().enumerate().take(MAX_ACTIONS) {
        let here = |key: &str| vec![at.to_string(), i.to_string(), key.to_string()];
        let Value::Object(map) = item else {
            push(
                &mut problems,
                vec![at.to_string(), i.to_string()],
                "must be an object".into(),
            );
            continue;
        };
        let Some(kind) = map
            .get("type")
            .and_then(Value::as_str)
            .map(|t| (t, ActionType::parse(t)))
        else {
            push(&mut problems, here("type"), "is required".into());
            continue;
        };
        let kind = match kind {
            (_, Some(k)) => k,
            (t, None) => {
                push(
                    &mut problems,
                    here("type"),
                    format!("unknown action type '{t}'"),
                );
                continue;
            }
        };
        let config = match map.get("config") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(c)) => c.clone(),
            Some(_) => {
                push(&mut problems, here("config"), "must be an object".into());
                continue;
            }
        };
        let mut ok = true;
        for key in kind.required() {
            if !truthy(config.get(*key)) {
                let mut path = here("config");
                path.push((*key).to_string());
                push(&mut problems, path, "is required".into());
                ok = false;
            }
        }
        if !ok {
            continue;
        }
        let config_path = |problems: &mut Vec<Problem>, key: &str, message: String| {
            let mut path = here("config");
            path.push(key.into());
            problems.push(Problem::new(path, message));
        };
        match kind {
            ActionType::CallPlatform => {
                let method = config
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !matches!(method, "GET" | "POST" | "PUT" | "PATCH" | "DELETE") {
                    config_path(
                        &mut problems,
                        "method",
                        "must be GET, POST, PUT, PATCH or DELETE".into(),
                    );
                    continue;
                }
                let endpoint = config
                    .get("endpoint")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Err(message) = (checks.platform)(method, endpoint) {
                    config_path(&mut problems, "endpoint", message);
                    continue;
                }
                if api_key_of(&config).is_none() {
                    config_path(&mut problems, "apiKeyId", "must be a UUID".into());
                    continue;
                }
            }
            ActionType::Notify => {
                let good = matches!(config.get("recipients"), Some(Value::Array(r))
                    if !r.is_empty() && r.len() <= 50 && r.iter().all(|x| x.as_str().is_some_and(|s| s.contains('@') && s.len() <= 254)));
                if !good {
                    config_path(
                        &mut problems,
                        "recipients",
                        "must be a non-empty array of at most 50 e-mail addresses".into(),
                    );
                    continue;
                }
            }
            ActionType::CallWebhook => {
                let url = config
                    .get("url")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Err(message) = (checks.url)(url) {
                    config_path(&mut problems, "url", message);
                    continue;
                }
                let method = config
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("POST");
                if !matches!(method, "GET" | "POST" | "PUT" | "PATCH" | "DELETE") {
                    config_path(
                        &mut problems,
                        "method",
                        "must be GET, POST, PUT, PATCH or DELETE".into(),
                    );
                    continue;
                }
                if let Some(h) = config.get("headers")
                    && !(h.is_null()
                        || h.as_object()
                            .is_some_and(|m| m.values().all(Value::is_string)))
                {
                    config_path(
                        &mut problems,
                        "headers",
                        "must be an object of strings".into(),
                    );
                    continue;
                }
            }
            ActionType::SetField => {
                let field = config
                    .get("field")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if crate::condition::FieldPath::parse(field).is_none_or(|p| p.steps.len() != 1) {
                    config_path(
                        &mut problems,
                        "field",
                        "must be a top-level field name".into(),
                    );
                    continue;
                }
                let Some(value) = config.get("value") else {
                    config_path(&mut problems, "value", "is required".into());
                    continue;
                };
                if let Err((key, message)) = (checks.field)(field, value) {
                    config_path(&mut problems, key, message);
                    continue;
                }
            }
            ActionType::EmitEvent => {
                let name = config
                    .get("eventName")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let valid = name.len() <= 200
                    && name.split('.').count() >= 2
                    && name.split('.').all(|s| {
                        !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    });
                if !valid {
                    config_path(
                        &mut problems,
                        "eventName",
                        "must be a dotted event name such as module.entity.happened".into(),
                    );
                    continue;
                }
                if let Err(message) = (checks.event)(name) {
                    config_path(&mut problems, "eventName", message);
                    continue;
                }
            }
            _ => {}
        }
        actions.push(Action { kind, config });
    }
    if problems.is_empty() {
        Ok(actions)
    } else {
        Err(problems)
    }
}

fn push(problems: &mut Vec<Problem>, path: Vec<String>, message: String) {
    problems.push(Problem::new(path, message));
}
