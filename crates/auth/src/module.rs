//! The module descriptor the server mounts (`stoa_module::Module`).

use std::sync::{Arc, OnceLock};

use stoa_acl::{Authenticator, Services};
use stoa_module::Module;

use crate::{AuthConfig, AuthState};

/// Auth with its settings. Its state ([`AuthModule::state`]) is also the
/// server's access policy and read cache, so it is built once and the same
/// one serves the routes and the server.
pub struct AuthModule {
    config: AuthConfig,
    api_keys: Option<Arc<dyn Authenticator>>,
    state: OnceLock<Arc<AuthState>>,
}

impl AuthModule {
    /// The module with its settings (`STOA_JWT_SECRET`, rate limits, mail).
    pub fn new(config: AuthConfig) -> Self {
        Self {
            config,
            api_keys: None,
            state: OnceLock::new(),
        }
    }

    /// Hands API-key credentials to `keys` (stoa-api-keys' authenticator).
    pub fn with_api_keys(mut self, keys: Arc<dyn Authenticator>) -> Self {
        self.api_keys = Some(keys);
        self
    }

    /// The module's settings.
    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    /// The module's state over the context, built on first use.
    pub fn state(&self, services: &Services) -> Result<Arc<AuthState>, String> {
        if let Some(state) = self.state.get() {
            return Ok(state.clone());
        }
        let registry = services.registry.clone();
        let mut state = AuthState::new(services.db.clone(), self.config.clone(), registry)
            .map_err(|e| e.to_string())?;
        state.mailer = services.mailer.clone();
        if let Some(keys) = &self.api_keys {
            state = state.with_api_keys(keys.clone());
        }
        Ok(self.state.get_or_init(|| Arc::new(state)).clone())
    }

    /// The descriptor: features, operations, the account commands' undo
    /// handlers and the routes over [`AuthModule::state`].
    pub fn module(self: &Arc<Self>) -> Module {
        let auth = self.clone();
        Module::new(crate::MODULE.id, crate::operations::OPERATIONS)
            .registers(crate::register)
            .handlers(crate::commands::handlers())
            .routes(move |services, _| Ok(Arc::new(crate::configure(auth.state(services)?))))
    }
}
