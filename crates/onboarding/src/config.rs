//! Settings of the onboarding module, read from the environment
//! (documented in docs/operations.md).

use std::collections::HashMap;
use std::time::Duration;

use stoa_core::config::FromEnv;
use stoa_core::config::{ConfigError, Env};
use stoa_core::rate_limit::Rule;

/// How long a verification link stays valid.
pub const TOKEN_TTL: Duration = Duration::from_secs(24 * 3600);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnboardingConfig {
    /// `SELF_SERVICE_ONBOARDING_ENABLED=true`; otherwise every route answers 404.
    pub enabled: bool,
    /// `STOA_PUBLIC_URL`: the API's public base URL (`https://api.example.com`);
    /// verification links are `<it>/api/onboarding/onboarding/verify?token=..`.
    /// Without it they are built from `APP_URL` (as the reference builds
    /// them); onboarding enabled needs one of the two.
    pub public_url: Option<String>,
    /// `APP_URL`: the web app, where the verification page sends the new
    /// admin to sign in (`<it>/login?tenant=<id>`); the API's own URL without it.
    pub app_url: Option<String>,
    /// `RATE_LIMIT_ONBOARDING` (`N` or `N/SECONDS`, default 10 per 60 s):
    /// submissions per client address.
    pub submit_per_client: Rule,
    /// `RATE_LIMIT_ONBOARDING_EMAIL` (default 3 per 600 s): submissions per
    /// e-mail address, whether or not it has an account (so a refusal tells
    /// nothing), which also bounds how often a pending request is re-sent.
    pub submit_per_email: Rule,
    /// `RATE_LIMIT_ENABLED` (default true); `false` turns the limits off.
    pub rate_limit_enabled: bool,
    /// `RATE_LIMIT_TRUST_PROXY_DEPTH`: reverse proxies setting `X-Forwarded-For`.
    pub trust_proxy_depth: usize,
    /// `ONBOARDING_DEMO_DEALS` (default 25): demo deals a new workspace gets.
    pub demo_deals: i64,
    /// `ONBOARDING_DEMO_PRODUCTS` (default 20): demo products a new workspace gets.
    pub demo_products: i64,
    /// How long a verification link stays valid (24 h).
    pub token_ttl: Duration,
}

impl Default for OnboardingConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            public_url: None,
            app_url: None,
            submit_per_client: Rule::per_minute(10),
            submit_per_email: Rule {
                limit: 3,
                window: Duration::from_secs(600),
                block: Duration::from_secs(600),
            },
            rate_limit_enabled: true,
            trust_proxy_depth: 0,
            demo_deals: 25,
            demo_products: 20,
            token_ttl: TOKEN_TTL,
        }
    }
}

fn url_var(env: &Env<'_>, var: &'static str) -> Result<Option<String>, ConfigError> {
    match env.get(var).map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            Ok(Some(url.trim_end_matches('/').to_string()))
        }
        Some(url) => Err(ConfigError {
            var,
            message: format!("`{url}` must be an http:// or https:// URL"),
        }),
    }
}

impl OnboardingConfig {
    /// Enabled, with links to `public_url` (tests, benchmarks).
    pub fn enabled(public_url: &str) -> Self {
        Self {
            enabled: true,
            public_url: Some(public_url.trim_end_matches('/').to_string()),
            ..Self::default()
        }
    }

    /// The verification link of `token`: under `STOA_PUBLIC_URL`, else
    /// under `APP_URL` (the reference's base).
    pub fn verify_link(&self, token: &str) -> String {
        format!(
            "{}/api/onboarding/onboarding/verify?token={token}",
            self.public_url
                .as_deref()
                .or(self.app_url.as_deref())
                .unwrap_or("")
        )
    }

    /// The sign-in page, for any tenant.
    pub fn login_base(&self) -> String {
        let base = self
            .app_url
            .as_deref()
            .or(self.public_url.as_deref())
            .unwrap_or("");
        format!("{base}/login")
    }

    /// Where the new admin signs in.
    pub fn login_url(&self, tenant: uuid::Uuid) -> String {
        let base = self
            .app_url
            .as_deref()
            .or(self.public_url.as_deref())
            .unwrap_or("");
        format!("{base}/login?tenant={tenant}")
    }
}

impl FromEnv for OnboardingConfig {
    fn from_vars(vars: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let env = Env(vars);
        let defaults = Self::default();
        let enabled = env.flag("SELF_SERVICE_ONBOARDING_ENABLED", false)?;
        let public_url = url_var(&env, "STOA_PUBLIC_URL")?;
        let app_url = url_var(&env, "APP_URL")?;
        if enabled && public_url.is_none() && app_url.is_none() {
            return Err(ConfigError {
                var: "STOA_PUBLIC_URL",
                message: "required (or APP_URL) when SELF_SERVICE_ONBOARDING_ENABLED=true \
                          (verification links point to it)"
                    .into(),
            });
        }
        let count = |var: &'static str, default: i64| -> Result<i64, ConfigError> {
            let n: i64 = env.parse_or(var, default)?;
            if !(0..=10_000).contains(&n) {
                return Err(ConfigError {
                    var,
                    message: "must be between 0 and 10000".into(),
                });
            }
            Ok(n)
        };
        Ok(Self {
            enabled,
            public_url,
            app_url,
            submit_per_client: env.parse_or("RATE_LIMIT_ONBOARDING", defaults.submit_per_client)?,
            submit_per_email: env
                .parse_or("RATE_LIMIT_ONBOARDING_EMAIL", defaults.submit_per_email)?,
            rate_limit_enabled: env.flag("RATE_LIMIT_ENABLED", true)?,
            trust_proxy_depth: env.parse_or("RATE_LIMIT_TRUST_PROXY_DEPTH", 0usize)?,
            demo_deals: count("ONBOARDING_DEMO_DEALS", defaults.demo_deals)?,
            demo_products: count("ONBOARDING_DEMO_PRODUCTS", defaults.demo_products)?,
            token_ttl: defaults.token_ttl,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stoa_core::config::vars;

    #[test]
    fn disabled_by_default_and_needs_a_public_url_or_app_url_when_enabled() {
        let config = OnboardingConfig::from_vars(&vars(&[])).unwrap();
        assert!(!config.enabled);
        let err =
            OnboardingConfig::from_vars(&vars(&[("SELF_SERVICE_ONBOARDING_ENABLED", "true")]))
                .unwrap_err();
        assert_eq!(err.var, "STOA_PUBLIC_URL");
        let config = OnboardingConfig::from_vars(&vars(&[
            ("SELF_SERVICE_ONBOARDING_ENABLED", "true"),
            ("STOA_PUBLIC_URL", "https://api.example.com/"),
            ("RATE_LIMIT_ONBOARDING", "5/30"),
            ("ONBOARDING_DEMO_DEALS", "3"),
        ]))
        .unwrap();
        assert!(config.enabled);
        assert_eq!(
            config.verify_link("ab"),
            "https://api.example.com/api/onboarding/onboarding/verify?token=ab"
        );
        assert_eq!(config.submit_per_client.limit, 5);
        assert_eq!(config.demo_deals, 3);
        assert!(
            OnboardingConfig::from_vars(&vars(&[("STOA_PUBLIC_URL", "api.example.com")])).is_err()
        );
        // Without STOA_PUBLIC_URL the links are built from APP_URL.
        let config = OnboardingConfig::from_vars(&vars(&[
            ("SELF_SERVICE_ONBOARDING_ENABLED", "true"),
            ("APP_URL", "https://app.example.com/"),
        ]))
        .unwrap();
        assert_eq!(
            config.verify_link("cd"),
            "https://app.example.com/api/onboarding/onboarding/verify?token=cd"
        );
        let both = OnboardingConfig::from_vars(&vars(&[
            ("SELF_SERVICE_ONBOARDING_ENABLED", "true"),
            ("APP_URL", "https://app.example.com"),
            ("STOA_PUBLIC_URL", "https://api.example.com"),
        ]))
        .unwrap();
        assert_eq!(
            both.verify_link("ef"),
            "https://api.example.com/api/onboarding/onboarding/verify?token=ef"
        );
        assert!(OnboardingConfig::from_vars(&vars(&[("ONBOARDING_DEMO_DEALS", "-1")])).is_err());
    }
}
