//! The `stoa` server: the list of mounted modules and the commands of the CLI.
//! No business logic lives here; every endpoint belongs to a module crate (or to
//! stoa-core's system endpoints).
#![doc = include_str!("../README.md")]

use std::sync::Arc;
use std::time::Duration;

use stoa_acl::{AccessMatrix, Registry, RegistryError};
use stoa_auth::{AuthConfig, AuthState};
use stoa_core::command::CommandRegistry;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::http::{AccessPolicy, ApiConfigurator, ReadCache};

pub mod bench;
pub mod commands;

/// Every module's features (the catalog behind `GET /api/auth/features`).
pub fn registry() -> Result<Registry, RegistryError> {
    // Modules register in dependency order; each new module crate adds itself here.
    let mut registry = stoa_auth::base_registry()?;
    stoa_preferences::register(&mut registry)?;
    stoa_audit_logs::register(&mut registry)?;
    stoa_progress::register(&mut registry)?;
    stoa_devices::register(&mut registry)?;
    stoa_api_keys::register(&mut registry)?;
    // Who may call each operation, declared next to each module's routes (the
    // authorization matrix, docs/security.md). A documented operation missing
    // here fails the matrix test.
    for operations in [
        stoa_core::system::OPERATIONS,
        stoa_auth::operations::OPERATIONS,
        stoa_preferences::operations::OPERATIONS,
        stoa_directory::operations::OPERATIONS,
        stoa_audit_logs::operations::OPERATIONS,
        stoa_progress::operations::OPERATIONS,
        stoa_devices::operations::OPERATIONS,
        stoa_api_keys::operations::OPERATIONS,
    ] {
        registry.register_operations(operations)?;
    }
    // Widgets, analytics sources, AI tools and rule entities may name other
    // modules' features: checked once every module has registered.
    registry.check_slots()?;
    Ok(registry)
}

/// Every module's undo/redo handlers.
pub fn commands() -> CommandRegistry {
    stoa_directory::commands::handlers()
        .into_iter()
        .chain(stoa_auth::commands::handlers())
        .chain(stoa_devices::handlers())
        .fold(CommandRegistry::new(), CommandRegistry::handler)
}

/// Every module's routes, in mount order. Each new module crate adds its
/// `configure` here (and its features to [`registry`]).
pub fn configurators(
    db: &Db,
    auth: AuthConfig,
    encryption: Arc<KeyRing>,
) -> Result<Vec<ApiConfigurator>, String> {
    modules(db, auth, encryption).map(|m| m.configurators)
}

/// The mounted modules and the per-process services the server runs beside
/// them.
pub struct Modules {
    pub configurators: Vec<ApiConfigurator>,
    /// The API-key authenticator, whose recorded uses `serve` flushes.
    pub api_keys: Arc<stoa_api_keys::ApiKeyAuthenticator>,
    /// Every operation's declared access, checked before its handler.
    pub access: Arc<dyn AccessPolicy>,
    /// Kept list answers of session callers, served before authentication.
    pub reads: Arc<dyn ReadCache>,
}

/// Builds every module (see [`configurators`]). `encryption` protects
/// secrets at rest (devices' push tokens).
pub fn modules(db: &Db, auth: AuthConfig, encryption: Arc<KeyRing>) -> Result<Modules, String> {
    let registry = Arc::new(registry().map_err(|e| e.to_string())?);
    // The account interfaces (stoa_acl::accounts) other modules use instead
    // of depending on stoa-auth.
    let accounts = Arc::new(stoa_auth::PgAccounts);
    // The tenant and organization interface (stoa_acl::organizations), so
    // modules need not depend on stoa-directory.
    let organizations = Arc::new(stoa_directory::PgDirectory);
    let api_keys = stoa_api_keys::ApiKeyAuthenticator::new(db.clone(), accounts.clone());
    let preferences = stoa_preferences::PreferencesState::new(
        db.clone(),
        auth.jwt_secret.expose(),
        accounts.clone(),
    );
    let auth = AuthState::new(db.clone(), auth, registry.clone()).map_err(|e| e.to_string())?;
    let auth = Arc::new(auth.with_api_keys(api_keys.clone()));
    let access = Arc::new(AccessMatrix::new(registry.operations(), auth.clone()));
    let reads = Arc::new(auth.reads());
    Ok(Modules {
        configurators: vec![
            Arc::new(stoa_auth::configure(auth)),
            Arc::new(stoa_preferences::configure(preferences)),
            Arc::new(stoa_directory::configure),
            Arc::new(stoa_audit_logs::configure(
                Arc::new(commands()),
                accounts.clone(),
            )),
            Arc::new(stoa_progress::configure),
            Arc::new(stoa_devices::configure(encryption, accounts.clone())),
            Arc::new(stoa_api_keys::configure(accounts, organizations)),
        ],
        api_keys,
        access,
        reads,
    })
}

/// The OpenAPI document of the whole API.
pub fn openapi() -> Result<utoipa::openapi::OpenApi, String> {
    // Documentation needs no database: the pool never connects.
    let db = Db::from_url(
        "postgres://docs@127.0.0.1:1/none",
        1,
        Duration::from_millis(1),
    )
    .map_err(|e| e.to_string())?;
    // Nor a key: the document's app serves no request, so it never encrypts.
    let encryption = Arc::new(KeyRing::new(&[0; 32], &[]));
    let modules = modules(&db, AuthConfig::for_tests(), encryption)?;
    let mut doc = stoa_core::http::openapi_doc(&modules.configurators, stoa_core::BUILD_VERSION);
    modules.access.document(&mut doc);
    Ok(doc)
}

/// In-process event subscribers (modules append theirs). Events nobody
/// subscribes to are logged at debug level and marked delivered.
pub fn subscribers() -> Vec<Arc<dyn stoa_core::command::outbox::Subscriber>> {
    vec![Arc::new(stoa_core::command::outbox::LogSubscriber)]
}

/// Every job handler (modules append theirs).
pub fn job_handlers() -> Vec<Arc<dyn stoa_progress::JobHandler>> {
    let mut handlers = stoa_progress::handlers();
    handlers.extend(stoa_audit_logs::retention::handlers());
    handlers
}

/// Every recurring job (modules append theirs); each runs once per period
/// across all processes. Reads the modules' settings from the environment
/// (access-log retention): a malformed one stops start-up.
pub fn job_schedules() -> Result<Vec<stoa_progress::Schedule>, stoa_core::config::ConfigError> {
    let mut schedules = stoa_progress::schedules();
    schedules.push(stoa_audit_logs::retention::RetentionConfig::from_env()?.schedule());
    Ok(schedules)
}
