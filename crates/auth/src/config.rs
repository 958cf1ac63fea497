//! Settings of the auth module, from the environment (names as the reference
//! uses them where it has one).

use std::collections::HashMap;
use std::time::Duration;

use stoa_core::config::{ConfigError, Env, Secret};
use stoa_core::rate_limit::Rule;

use crate::password::PasswordPolicy;
use stoa_core::config::FromEnv;

/// Credentials `GET /auth/autologin` signs in with (demo instances only).
#[derive(Clone, Debug)]
pub struct Autologin {
    pub email: String,
    pub password: Secret,
    pub tenant: Option<uuid::Uuid>,
}

/// Thresholds of the rate limits (`RATE_LIMIT_*`).
#[derive(Clone, Debug)]
pub struct RateLimits {
    /// `RATE_LIMIT_ENABLED` (default true); `false` turns every limit off.
    pub enabled: bool,
    /// `RATE_LIMIT_TRUST_PROXY_DEPTH` (default 0: the TCP peer is the client).
    pub trust_proxy_depth: usize,
    /// Failed logins per account and client address
    /// (`RATE_LIMIT_LOGIN_ACCOUNT_IP`, default 5/60): the lock-out one address
    /// can cause, which never reaches the owner at another address.
    pub login_account_ip: Rule,
    /// Failed logins per account from all addresses together
    /// (`RATE_LIMIT_LOGIN_ACCOUNT`, default 50/300): the backstop against
    /// guessing from many addresses. Above what one address can reach
    /// (5/60 → 25 per 300 s), so no single address can trigger it.
    pub login_account: Rule,
    /// Failed logins per client address (`RATE_LIMIT_LOGIN_IP`, default 20/60).
    pub login_ip: Rule,
    /// Reset requests per e-mail (`RATE_LIMIT_RESET_ACCOUNT`, default 3/60).
    pub reset_account: Rule,
    /// Reset requests per address (`RATE_LIMIT_RESET_IP`, default 10/60).
    pub reset_ip: Rule,
    /// Reset confirmations per token (`RATE_LIMIT_RESET_CONFIRM_TOKEN`, default 5/300).
    pub confirm_token: Rule,
    /// Reset confirmations per address (`RATE_LIMIT_RESET_CONFIRM_IP`, default 20/300).
    pub confirm_ip: Rule,
    /// Refreshes per refresh token (`RATE_LIMIT_REFRESH_TOKEN`, default 15/60).
    pub refresh_token: Rule,
    /// Refreshes per address (`RATE_LIMIT_REFRESH_IP`, default 60/60).
    pub refresh_ip: Rule,
    /// Wrong current passwords in `PUT /auth/profile` per user
    /// (`RATE_LIMIT_PROFILE_PASSWORD`, default 5/300).
    pub profile_password: Rule,
    /// Invitation resends per invited user (`RATE_LIMIT_RESEND_INVITE_USER`, default 3/300).
    pub resend_invite_user: Rule,
}

impl Default for RateLimits {
    fn default() -> Self {
        let every = |limit, secs| Rule {
            limit,
            window: Duration::from_secs(secs),
            block: Duration::from_secs(secs),
        };
        Self {
            enabled: true,
            trust_proxy_depth: 0,
            login_account_ip: every(5, 60),
            login_account: every(50, 300),
            login_ip: every(20, 60),
            reset_account: every(3, 60),
            reset_ip: every(10, 60),
            confirm_token: every(5, 300),
            confirm_ip: every(20, 300),
            refresh_token: every(15, 60),
            refresh_ip: every(60, 60),
            profile_password: every(5, 300),
            resend_invite_user: every(3, 300),
        }
    }
}

#[derive(Clone, Debug)]
pub struct AuthConfig {
    /// `STOA_JWT_SECRET`: signs access tokens (required unless `STOA_ENV=development`).
    pub jwt_secret: Secret,
    /// Whether the secret was generated for this process (development only).
    pub jwt_secret_generated: bool,
    /// Access token (JWT) lifetime: 8 hours.
    pub access_ttl: Duration,
    /// Session lifetime without "remember me": 8 hours.
    pub session_ttl: Duration,
    /// Session lifetime with "remember me": `REMEMBER_ME_DAYS` (default 30).
    pub remember_ttl: Duration,
    /// `APP_URL`: the web app's origin, used in e-mailed links and logout redirects.
    pub app_url: Option<String>,
    /// Origins allowed to request password resets (`APP_URL` plus `STOA_CORS_ORIGINS`).
    pub allowed_origins: Vec<String>,
    pub autologin: Option<Autologin>,
    pub password_policy: PasswordPolicy,
    pub rate_limits: RateLimits,
    /// `SMTP_URL`: send mail through SMTP; without it mail goes to `mail_outbox`.
    pub smtp_url: Option<Secret>,
    /// `MAIL_FROM` (default `stoa <no-reply@localhost>`).
    pub mail_from: String,
    /// Cookies get `Secure` when `APP_URL` is https.
    pub secure_cookies: bool,
}

impl AuthConfig {
    /// Settings for tests and documentation builds: a fixed secret, defaults elsewhere.
    pub fn for_tests() -> Self {
        Self {
            jwt_secret: Secret::new("stoa-test-secret-change-me"),
            jwt_secret_generated: false,
            access_ttl: Duration::from_secs(8 * 3600),
            session_ttl: Duration::from_secs(8 * 3600),
            remember_ttl: Duration::from_secs(30 * 86400),
            app_url: Some("http://localhost:3000".into()),
            allowed_origins: vec!["http://localhost:3000".into()],
            autologin: None,
            password_policy: PasswordPolicy::default(),
            rate_limits: RateLimits::default(),
            smtp_url: None,
            mail_from: "stoa <no-reply@localhost>".into(),
            secure_cookies: false,
        }
    }
}

impl FromEnv for AuthConfig {
    fn from_vars(vars: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let env = Env(vars);
        let development = env.get("STOA_ENV").is_some_and(|v| {
            v.eq_ignore_ascii_case("development") || v.eq_ignore_ascii_case("dev")
        });
        let (jwt_secret, generated) = match env.get("STOA_JWT_SECRET") {
            Some(secret) if secret.len() >= 16 => (Secret::new(secret), false),
            Some(_) => {
                return Err(ConfigError {
                    var: "STOA_JWT_SECRET",
                    message: "must be at least 16 characters".into(),
                });
            }
            None if development => (Secret::new(crate::tokens::random_token()), true),
            None => {
                return Err(ConfigError {
                    var: "STOA_JWT_SECRET",
                    message: "is required (set STOA_ENV=development to generate one for local use)"
                        .into(),
                });
            }
        };
        let app_url = env
            .get("APP_URL")
            .map(|u| u.trim().trim_end_matches('/').to_string());
        let mut allowed_origins: Vec<String> = app_url.iter().cloned().collect();
        if let Some(cors) = env.get("STOA_CORS_ORIGINS") {
            allowed_origins.extend(
                cors.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty()),
            );
        }
        let autologin = match (
            env.get("OM_AUTOLOGIN_EMAIL"),
            env.get("OM_AUTOLOGIN_PASSWORD"),
        ) {
            (Some(email), Some(password)) => Some(Autologin {
                email: email.trim().to_lowercase(),
                password: Secret::new(password),
                tenant: env.parse_opt("OM_AUTOLOGIN_TENANT")?,
            }),
            _ => None,
        };
        let defaults = RateLimits::default();
        let rate_limits = RateLimits {
            enabled: env.flag("RATE_LIMIT_ENABLED", true)?,
            trust_proxy_depth: env.parse_or("RATE_LIMIT_TRUST_PROXY_DEPTH", 0usize)?,
            login_account_ip: env
                .parse_or("RATE_LIMIT_LOGIN_ACCOUNT_IP", defaults.login_account_ip)?,
            login_account: env.parse_or("RATE_LIMIT_LOGIN_ACCOUNT", defaults.login_account)?,
            login_ip: env.parse_or("RATE_LIMIT_LOGIN_IP", defaults.login_ip)?,
            reset_account: env.parse_or("RATE_LIMIT_RESET_ACCOUNT", defaults.reset_account)?,
            reset_ip: env.parse_or("RATE_LIMIT_RESET_IP", defaults.reset_ip)?,
            confirm_token: env
                .parse_or("RATE_LIMIT_RESET_CONFIRM_TOKEN", defaults.confirm_token)?,
            confirm_ip: env.parse_or("RATE_LIMIT_RESET_CONFIRM_IP", defaults.confirm_ip)?,
            refresh_token: env.parse_or("RATE_LIMIT_REFRESH_TOKEN", defaults.refresh_token)?,
            refresh_ip: env.parse_or("RATE_LIMIT_REFRESH_IP", defaults.refresh_ip)?,
            profile_password: env
                .parse_or("RATE_LIMIT_PROFILE_PASSWORD", defaults.profile_password)?,
            resend_invite_user: env
                .parse_or("RATE_LIMIT_RESEND_INVITE_USER", defaults.resend_invite_user)?,
        };
        let remember_days: u64 = env.parse_or("REMEMBER_ME_DAYS", 30u64)?;
        Ok(Self {
            jwt_secret,
            jwt_secret_generated: generated,
            access_ttl: Duration::from_secs(8 * 3600),
            session_ttl: Duration::from_secs(8 * 3600),
            remember_ttl: Duration::from_secs(remember_days.clamp(1, 365) * 86400),
            secure_cookies: app_url
                .as_deref()
                .is_some_and(|u| u.starts_with("https://")),
            app_url,
            allowed_origins,
            autologin,
            password_policy: PasswordPolicy::from_env(&env)?,
            rate_limits,
            smtp_url: env.get("SMTP_URL").map(Secret::new),
            mail_from: env
                .get("MAIL_FROM")
                .unwrap_or("stoa <no-reply@localhost>")
                .to_string(),
        })
    }
}
