//! The assistant's settings from the environment: providers (keys, base
//! URLs), the provider and model allowlists, the runtime base-URL allowlist,
//! the pending-action lifetime and input moderation. Read once at start-up
//! (`AiConfig::from_env`); tests build it with [`AiConfig::from_vars`].

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use stoa_core::config::FromEnv;
use stoa_core::config::{ConfigError, Env};
use stoa_core::rate_limit::Rule;

/// `AI_PENDING_ACTION_TTL_SECONDS` when unset.
pub const DEFAULT_PENDING_TTL: Duration = Duration::from_secs(900);

/// `AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS` when unset.
pub const DEFAULT_USAGE_RETENTION_DAYS: u32 = 90;

/// The longest retention the setting accepts (ten years).
pub const MAX_USAGE_RETENTION_DAYS: u32 = 3_650;

/// `RATE_LIMIT_AI_CHAT_POINTS` / `_DURATION` when unset: 30 turns per 60
/// seconds per user and tenant.
pub const DEFAULT_CHAT_POINTS: u32 = 30;
pub const DEFAULT_CHAT_DURATION_SECS: u64 = 60;

/// A provider the assistant knows (configured or not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    /// `/v1/chat/completions` (OpenAI, Ollama, vLLM, any compatible server).
    OpenAiCompatible,
    /// `/v1/messages`.
    Anthropic,
    /// Known (so `provider_unknown` and `provider_not_configured` stay
    /// distinct) but not callable here.
    Unsupported,
}

/// A registered provider: its id, display name, key variables, base URL and
/// curated models.
#[derive(Clone, Copy, Debug)]
pub struct ProviderDef {
    pub id: &'static str,
    pub name: &'static str,
    pub kind: ProviderKind,
    pub key_vars: &'static [&'static str],
    pub base_url_var: Option<&'static str>,
    pub default_base_url: &'static str,
    pub default_model: &'static str,
    pub models: &'static [&'static str],
}

/// The reference's registry order: the first configured one is the default.
pub const PROVIDERS: &[ProviderDef] = &[
    ProviderDef {
        id: "anthropic",
        name: "Anthropic",
        kind: ProviderKind::Anthropic,
        key_vars: &["ANTHROPIC_API_KEY", "OPENCODE_ANTHROPIC_API_KEY"],
        base_url_var: Some("ANTHROPIC_BASE_URL"),
        default_base_url: "https://api.anthropic.com/v1",
        default_model: "claude-haiku-4-5-20251001",
        models: &["claude-haiku-4-5-20251001", "claude-sonnet-4-5"],
    },
    ProviderDef {
        id: "google",
        name: "Google",
        kind: ProviderKind::Unsupported,
        key_vars: &["GOOGLE_GENERATIVE_AI_API_KEY", "OPENCODE_GOOGLE_API_KEY"],
        base_url_var: None,
        default_base_url: "",
        default_model: "gemini-3-flash",
        models: &["gemini-3-flash"],
    },
    ProviderDef {
        id: "openai",
        name: "OpenAI",
        kind: ProviderKind::OpenAiCompatible,
        key_vars: &["OPENAI_API_KEY", "OPENCODE_OPENAI_API_KEY"],
        base_url_var: Some("OPENAI_BASE_URL"),
        default_base_url: "https://api.openai.com/v1",
        default_model: "gpt-5-mini",
        models: &["gpt-5-mini", "gpt-5", "gpt-4o-mini", "gpt-4o"],
    },
    ProviderDef {
        id: "ollama",
        name: "Ollama",
        kind: ProviderKind::OpenAiCompatible,
        key_vars: &["OLLAMA_API_KEY"],
        base_url_var: Some("OLLAMA_BASE_URL"),
        default_base_url: "http://localhost:11434/v1",
        default_model: "llama3.3",
        models: &["llama3.3"],
    },
];

/// The provider registered under `id` (normalized: lower-case, `_` → `-`).
pub fn provider(id: &str) -> Option<&'static ProviderDef> {
    let id = normalize(id);
    PROVIDERS.iter().find(|p| p.id == id)
}

pub fn normalize(id: &str) -> String {
    id.trim().to_ascii_lowercase().replace('_', "-")
}

/// A provider with a key in the environment.
#[derive(Clone, Debug)]
pub struct EnvProvider {
    pub def: &'static ProviderDef,
    pub api_key: String,
    pub base_url: String,
}

/// Everything the assistant reads from the environment.
#[derive(Clone, Default)]
pub struct AiConfig {
    /// Configured providers, in registry order.
    pub providers: Vec<EnvProvider>,
    /// `OM_AI_PROVIDER`, `OM_AI_MODEL`.
    pub default_provider: Option<String>,
    pub default_model: Option<String>,
    /// `OM_AI_AVAILABLE_PROVIDERS` (`None` = every provider).
    pub env_providers: Option<Vec<String>>,
    /// `OM_AI_AVAILABLE_MODELS_<PROVIDER>`.
    pub env_models: BTreeMap<String, Vec<String>>,
    /// `AI_RUNTIME_BASEURL_ALLOWLIST` host patterns (empty: every base URL refused).
    pub base_url_allowlist: Vec<String>,
    /// `AI_PENDING_ACTION_TTL_SECONDS`.
    pub pending_ttl: Duration,
    /// `OM_AI_INPUT_MODERATION`.
    pub input_moderation: bool,
    /// `OM_AI_MODERATION_MODEL`.
    pub moderation_model: String,
    /// `AI_PROVIDER_TIMEOUT_MS`: the longest wait for a provider's first byte
    /// and between two chunks (a hanging provider ends the turn with an
    /// error frame after this).
    pub provider_timeout: Duration,
    /// `RATE_LIMIT_AI_CHAT_POINTS` turns per `RATE_LIMIT_AI_CHAT_DURATION`
    /// seconds per user and tenant; `None` (`RATE_LIMIT_ENABLED=false`, or
    /// a configuration built by hand): no limit.
    pub chat_rate_limit: Option<Rule>,
    /// `AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS`: how long per-step usage rows
    /// are kept (the daily rollup is kept).
    pub usage_retention_days: u32,
}

impl std::fmt::Debug for AiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AiConfig")
            .field(
                "providers",
                &self.providers.iter().map(|p| p.def.id).collect::<Vec<_>>(),
            )
            .field("pending_ttl", &self.pending_ttl)
            .finish_non_exhaustive()
    }
}

/// `AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS` (1 to ten years, default 90).
pub fn usage_retention_days(env: &Env<'_>) -> Result<u32, ConfigError> {
    let days: u32 = env.parse_or(
        "AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS",
        DEFAULT_USAGE_RETENTION_DAYS,
    )?;
    if !(1..=MAX_USAGE_RETENTION_DAYS).contains(&days) {
        return Err(ConfigError {
            var: "AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS",
            message: format!("must be between 1 and {MAX_USAGE_RETENTION_DAYS}"),
        });
    }
    Ok(days)
}

fn csv(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

impl AiConfig {
    /// The configured provider `id`.
    pub fn configured(&self, id: &str) -> Option<&EnvProvider> {
        self.providers.iter().find(|p| p.def.id == id)
    }

    /// Whether the environment allows provider `id`.
    pub fn env_allows_provider(&self, id: &str) -> bool {
        self.env_providers
            .as_ref()
            .is_none_or(|list| list.iter().any(|p| p == id))
    }

    /// Whether the environment allows `model` of provider `id`.
    pub fn env_allows_model(&self, id: &str, model: &str) -> bool {
        self.env_models
            .get(id)
            .is_none_or(|list| list.iter().any(|m| m == model))
    }

    /// Whether `url`'s host matches `AI_RUNTIME_BASEURL_ALLOWLIST` (unset:
    /// nothing matches; `*.x.com` matches subdomains only).
    pub fn base_url_allowed(&self, url: &str) -> bool {
        let Ok(parsed) = url::Url::parse(url) else {
            return false;
        };
        if !matches!(parsed.scheme(), "http" | "https") {
            return false;
        }
        let Some(host) = parsed.host_str().map(str::to_ascii_lowercase) else {
            return false;
        };
        self.base_url_allowlist
            .iter()
            .any(|pattern| match pattern.strip_prefix("*.") {
                Some(suffix) => host.ends_with(&format!(".{suffix}")),
                None => &host == pattern,
            })
    }
}

impl FromEnv for AiConfig {
    fn from_vars(vars: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let env = Env(vars);
        let non_empty = |var: &str| env.get(var).map(str::trim).filter(|v| !v.is_empty());
        let providers = PROVIDERS
            .iter()
            .filter_map(|def| {
                let key = def.key_vars.iter().find_map(|v| non_empty(v))?;
                let base = def
                    .base_url_var
                    .and_then(non_empty)
                    .unwrap_or(def.default_base_url);
                Some(EnvProvider {
                    def,
                    api_key: key.to_string(),
                    base_url: base.trim_end_matches('/').to_string(),
                })
            })
            .collect();
        let env_models = PROVIDERS
            .iter()
            .filter_map(|def| {
                let var = format!(
                    "OM_AI_AVAILABLE_MODELS_{}",
                    def.id
                        .to_ascii_uppercase()
                        .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
                );
                non_empty(&var).map(|raw| (def.id.to_string(), csv(raw)))
            })
            .collect();
        let ttl: u64 = env.parse_or("AI_PENDING_ACTION_TTL_SECONDS", 900)?;
        if ttl == 0 {
            return Err(ConfigError {
                var: "AI_PENDING_ACTION_TTL_SECONDS",
                message: "must be at least 1".into(),
            });
        }
        let timeout: u64 = env.parse_or("AI_PROVIDER_TIMEOUT_MS", 60_000)?;
        if timeout == 0 {
            return Err(ConfigError {
                var: "AI_PROVIDER_TIMEOUT_MS",
                message: "must be at least 1".into(),
            });
        }
        let points: u32 = env.parse_or("RATE_LIMIT_AI_CHAT_POINTS", DEFAULT_CHAT_POINTS)?;
        if points == 0 {
            return Err(ConfigError {
                var: "RATE_LIMIT_AI_CHAT_POINTS",
                message: "must be at least 1".into(),
            });
        }
        let duration: u64 =
            env.parse_or("RATE_LIMIT_AI_CHAT_DURATION", DEFAULT_CHAT_DURATION_SECS)?;
        if duration == 0 {
            return Err(ConfigError {
                var: "RATE_LIMIT_AI_CHAT_DURATION",
                message: "must be at least 1".into(),
            });
        }
        let chat_rate_limit = env.flag("RATE_LIMIT_ENABLED", true)?.then_some(Rule {
            limit: points,
            window: Duration::from_secs(duration),
            block: Duration::from_secs(duration),
        });
        let retention = usage_retention_days(&env)?;
        let moderation = match non_empty("OM_AI_INPUT_MODERATION") {
            None => false,
            Some(v) => matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"),
        };
        Ok(Self {
            providers,
            default_provider: non_empty("OM_AI_PROVIDER")
                .or_else(|| non_empty("OPENCODE_PROVIDER"))
                .map(normalize),
            default_model: non_empty("OM_AI_MODEL")
                .or_else(|| non_empty("OPENCODE_MODEL"))
                .map(String::from),
            env_providers: non_empty("OM_AI_AVAILABLE_PROVIDERS")
                .map(|raw| csv(raw).iter().map(|p| normalize(p)).collect()),
            env_models,
            base_url_allowlist: non_empty("AI_RUNTIME_BASEURL_ALLOWLIST")
                .map(|raw| csv(raw).iter().map(|h| h.to_ascii_lowercase()).collect())
                .unwrap_or_default(),
            pending_ttl: Duration::from_secs(ttl),
            input_moderation: moderation,
            moderation_model: non_empty("OM_AI_MODERATION_MODEL")
                .unwrap_or("omni-moderation-latest")
                .to_string(),
            provider_timeout: Duration::from_millis(timeout),
            chat_rate_limit,
            usage_retention_days: retention,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> AiConfig {
        let vars = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        AiConfig::from_vars(&vars).unwrap_or_default()
    }

    #[test]
    fn providers_and_allowlists_come_from_the_environment() {
        let c = config(&[
            ("OPENAI_API_KEY", "k"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
            ("OM_AI_AVAILABLE_PROVIDERS", "openai, Anthropic"),
            ("OM_AI_AVAILABLE_MODELS_OPENAI", "gpt-4o"),
            ("AI_RUNTIME_BASEURL_ALLOWLIST", "127.0.0.1,*.example.com"),
        ]);
        assert_eq!(c.providers.len(), 1);
        assert_eq!(c.providers[0].base_url, "http://127.0.0.1:9/v1");
        assert!(c.env_allows_provider("anthropic"));
        assert!(!c.env_allows_provider("ollama"));
        assert!(c.env_allows_model("openai", "gpt-4o"));
        assert!(!c.env_allows_model("openai", "gpt-5"));
        assert!(c.env_allows_model("anthropic", "anything"));
        assert!(c.base_url_allowed("http://127.0.0.1:8/v1"));
        assert!(c.base_url_allowed("https://a.example.com/v1"));
        assert!(!c.base_url_allowed("https://example.com/v1"));
        assert!(!c.base_url_allowed("not a url"));
        assert_eq!(c.pending_ttl, DEFAULT_PENDING_TTL);
        assert!(!config(&[]).base_url_allowed("http://127.0.0.1/v1"));
    }

    #[test]
    fn chat_limit_and_usage_retention_have_the_reference_defaults() {
        let c = config(&[]);
        assert_eq!(
            c.chat_rate_limit.map(|r| (r.limit, r.window.as_secs())),
            Some((30, 60))
        );
        assert_eq!(c.usage_retention_days, 90);
        let c = config(&[
            ("RATE_LIMIT_AI_CHAT_POINTS", "2"),
            ("RATE_LIMIT_AI_CHAT_DURATION", "10"),
            ("AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS", "7"),
        ]);
        assert_eq!(
            c.chat_rate_limit.map(|r| (r.limit, r.window.as_secs())),
            Some((2, 10))
        );
        assert_eq!(c.usage_retention_days, 7);
        assert!(
            config(&[("RATE_LIMIT_ENABLED", "false")])
                .chat_rate_limit
                .is_none()
        );
        for (var, bad) in [
            ("RATE_LIMIT_AI_CHAT_POINTS", "0"),
            ("RATE_LIMIT_AI_CHAT_DURATION", "x"),
            ("AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS", "0"),
            ("AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS", "3651"),
        ] {
            let vars = HashMap::from([(var.to_string(), bad.to_string())]);
            assert_eq!(AiConfig::from_vars(&vars).err().map(|e| e.var), Some(var));
        }
    }

    #[test]
    fn a_zero_ttl_is_refused() {
        let vars = HashMap::from([("AI_PENDING_ACTION_TTL_SECONDS".to_string(), "0".to_string())]);
        assert!(AiConfig::from_vars(&vars).is_err());
    }
}
