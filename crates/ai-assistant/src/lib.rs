//! stoa-ai-assistant: agents, tools fed by the modules through the
//! registry's AI tool slot, one approval gate (pending actions) for every
//! mutation, providers from the environment and tenant settings, streamed
//! chat, and keys for tooling. See README.md for the endpoints.
#![doc = include_str!("../README.md")]

pub mod actions;
pub mod agents;
pub mod chat;
pub mod config;
pub mod conversations;
pub mod dto;
pub mod error;
pub mod extract;
pub mod jobs;
pub mod keys;
pub mod llm;
pub mod looping;
pub mod moderation;
pub mod operations;
pub mod overrides;
pub mod participants;
pub mod policy;
pub mod prompt;
pub mod providers;
pub mod routes;
pub mod schema;
pub mod settings;
pub mod state;
pub mod task_plan;
pub mod tools;
pub mod transcript;
pub mod usage;
pub mod validate;

use std::sync::Arc;

use actix_web::web;
use stoa_acl::{Feature, ModuleInfo, Registry, RegistryError};
use stoa_core::config::FromEnv;
use stoa_core::http::ServiceConfig;

pub use config::AiConfig;
pub use error::AiError;
pub use state::AiState;

pub const MODULE: ModuleInfo = ModuleInfo {
    id: "ai_assistant",
    title: "AI Assistant",
};

pub const VIEW: &str = "ai_assistant.view";
pub const SETTINGS_MANAGE: &str = "ai_assistant.settings.manage";
pub const CONVERSATIONS_MANAGE: &str = "ai_assistant.conversations.manage";
pub const CONVERSATIONS_SHARE: &str = "ai_assistant.conversations.share";

pub const FEATURES: &[Feature] = &[
    Feature {
        id: VIEW,
        title: "Use the AI assistant",
        module: "ai_assistant",
    },
    Feature {
        id: SETTINGS_MANAGE,
        title: "Manage AI assistant settings, overrides and usage",
        module: "ai_assistant",
    },
    Feature {
        id: CONVERSATIONS_MANAGE,
        title: "Manage every AI conversation of the organization",
        module: "ai_assistant",
    },
    Feature {
        id: CONVERSATIONS_SHARE,
        title: "Share AI conversations",
        module: "ai_assistant",
    },
];

/// Registers the features and the reference's default grants (admin and
/// superadmin: everything; employee: view and share).
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry.register(MODULE, FEATURES)?;
    registry.add_role_defaults("superadmin", &["ai_assistant.*"]);
    registry.add_role_defaults("admin", &["ai_assistant.*"]);
    registry.add_role_defaults("employee", &[VIEW, CONVERSATIONS_SHARE]);
    Ok(())
}

/// Mounts the routes (under `/api`) with the assistant's state.
pub fn configure(state: Arc<AiState>) -> impl Fn(&mut ServiceConfig) + Send + Sync + 'static {
    move |cfg: &mut ServiceConfig| {
        cfg.app_data(web::Data::from(state.clone()))
            .service(routes::agents::list_agents)
            .service(routes::agents::agent_models)
            .service(routes::overrides::get_loop_override)
            .service(routes::overrides::put_loop_override)
            .service(routes::overrides::delete_loop_override)
            .service(routes::overrides::get_mutation_policy)
            .service(routes::overrides::set_mutation_policy)
            .service(routes::overrides::delete_mutation_policy)
            .service(routes::overrides::get_prompt_override)
            .service(routes::overrides::add_prompt_override)
            .service(routes::chat::post_chat)
            .service(routes::run_object::run_object)
            .service(routes::conversations::list_conversations)
            .service(routes::conversations::create_conversation)
            .service(routes::conversations::import_conversation)
            .service(routes::conversations::get_conversation)
            .service(routes::conversations::patch_conversation)
            .service(routes::conversations::delete_conversation)
            .service(routes::participants::list_participants)
            .service(routes::participants::add_participant)
            .service(routes::participants::remove_participant)
            .service(routes::actions::get_action)
            .service(routes::actions::confirm_action)
            .service(routes::actions::cancel_action)
            .service(routes::tools::list_tools)
            .service(routes::tools::execute_tool)
            .service(routes::health::ai_health)
            .service(routes::settings::get_settings)
            .service(routes::settings::put_settings)
            .service(routes::settings::delete_settings)
            .service(routes::settings::put_allowlist)
            .service(routes::settings::delete_allowlist)
            .service(routes::usage::usage_daily)
            .service(routes::usage::usage_sessions)
            .service(routes::usage::usage_session)
            .service(routes::usage::moderation_flags)
            .service(routes::keys::create_mcp_key)
            .service(routes::keys::create_session_key)
            .service(routes::legacy::legacy_chat)
            .service(routes::legacy::route_intent);
    }
}

/// The recurring jobs' handlers (pending-action expiry, usage prune).
pub fn job_handlers() -> Vec<Arc<dyn stoa_jobs::JobHandler>> {
    jobs::handlers()
}

/// The recurring jobs; the usage prune reads
/// `AI_TOKEN_USAGE_EVENTS_RETENTION_DAYS` (a malformed value stops start-up).
pub fn schedules() -> Result<Vec<stoa_jobs::Schedule>, stoa_core::config::ConfigError> {
    jobs::schedules_from(&std::env::vars().collect())
}

/// The module descriptor the server mounts: its settings (`AI_*`) come
/// from the environment when mounted.
pub fn module() -> stoa_module::Module {
    stoa_module::Module::new(MODULE.id, operations::OPERATIONS)
        .registers(register)
        .routes(|services, _| {
            let config = AiConfig::from_env().map_err(|e| e.to_string())?;
            Ok(Arc::new(configure(Arc::new(AiState::new(
                services, config,
            )))))
        })
        .jobs(|_| job_handlers())
        .schedules(schedules)
}
