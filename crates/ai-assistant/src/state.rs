//! What the assistant's handlers share: its settings, the registry (agents'
//! tools), the key ring for stored provider keys, the outbound client and
//! the account interfaces.

use std::sync::Arc;

use stoa_acl::{OrganizationDirectory, Registry, RoleDirectory, Services, UserDirectory};
use stoa_core::crypto::KeyRing;
use stoa_core::outbound::Outbound;
use stoa_core::rate_limit::{MemoryRateLimiter, RateLimiter};

use crate::agents::{AGENTS, AgentDef};
use crate::config::AiConfig;

pub struct AiState {
    pub config: AiConfig,
    pub registry: Arc<Registry>,
    pub keys: Arc<KeyRing>,
    pub outbound: Outbound,
    pub users: Arc<dyn UserDirectory>,
    pub roles: Arc<dyn RoleDirectory>,
    pub organizations: Arc<dyn OrganizationDirectory>,
    /// The agents, sorted by id: the built-in ones and any added with
    /// [`AiState::with_agents`].
    pub agents: Vec<&'static AgentDef>,
    /// The per-user chat limit's counters (in process).
    pub limiter: Arc<dyn RateLimiter>,
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
            limiter: Arc::new(MemoryRateLimiter::new(true)),
            agents: AGENTS.iter().collect(),
        }
    }

    /// Adds agents declared outside the built-in list (a module's own, an
    /// object-mode agent); an id already taken replaces nothing (the first
    /// declaration wins).
    pub fn with_agents(mut self, extra: &[&'static AgentDef]) -> Self {
        for agent in extra {
            if self.agent(agent.id).is_none() {
                self.agents.push(agent);
            }
        }
        self.agents.sort_by_key(|a| a.id);
        self
    }

    /// The agent `id`.
    pub fn agent(&self, id: &str) -> Option<&'static AgentDef> {
        self.agents.iter().copied().find(|a| a.id == id)
    }
}
