//! What the assistant's handlers share: its settings, the registry (agents'
//! tools), the key ring for stored provider keys, the outbound client and
//! the account interfaces.

use std::sync::Arc;

use stoa_acl::{OrganizationDirectory, Registry, RoleDirectory, Services, UserDirectory};
use stoa_core::crypto::KeyRing;
use stoa_core::outbound::Outbound;

use crate::config::AiConfig;

pub struct AiState {
    pub config: AiConfig,
    pub registry: Arc<Registry>,
    pub keys: Arc<KeyRing>,
    pub outbound: Outbound,
    pub users: Arc<dyn UserDirectory>,
    pub roles: Arc<dyn RoleDirectory>,
    pub organizations: Arc<dyn OrganizationDirectory>,
}

impl AiState {
    /// The state from the module context and the assistant's settings.
    pub fn new(services: &Services, config: AiConfig) -> Self {
        Self {
            config,
            registry: services.registry.clone(),
            keys: services.keys.clone(),
            outbound: services.outbound.clone(),
            users: services.accounts.clone(),
            roles: services.accounts.clone(),
            organizations: services.organizations.clone(),
        }
    }
}
