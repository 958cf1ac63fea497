//! The module's state, registered as app data by [`crate::configure`].

use std::sync::Arc;

use stoa_acl::{Onboarding, Registry};
use stoa_core::db::Db;
use stoa_core::rate_limit::{MemoryRateLimiter, RateLimiter};
use stoa_preferences::consents::ConsentKey;

use crate::config::OnboardingConfig;

/// Everything the onboarding handlers share.
pub struct OnboardingState {
    pub db: Db,
    pub config: OnboardingConfig,
    /// Every module's seeders, run by provisioning.
    pub registry: Arc<Registry>,
    /// The password policy and hashing, first users (stoa-auth's, handed over
    /// by the server through `stoa_acl::Onboarding`).
    pub accounts: Arc<dyn Onboarding>,
    /// The submission limits (per client address, per e-mail).
    pub limiter: Arc<dyn RateLimiter>,
    /// The key of consent records' integrity hashes (the marketing consent).
    pub consent_key: ConsentKey,
}

impl OnboardingState {
    /// The state with an in-process rate limiter; `secret` is the JWT secret
    /// the consent key is derived from (as stoa-preferences derives it).
    pub fn new(
        db: Db,
        config: OnboardingConfig,
        registry: Arc<Registry>,
        accounts: Arc<dyn Onboarding>,
        secret: &str,
    ) -> Self {
        Self {
            db,
            limiter: Arc::new(MemoryRateLimiter::new(config.rate_limit_enabled)),
            config,
            registry,
            accounts,
            consent_key: ConsentKey::derive(secret),
        }
    }
}

impl std::fmt::Debug for OnboardingState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnboardingState")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}
