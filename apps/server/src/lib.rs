//! The `stoa` server: the list of mounted modules and the commands of the CLI.
//! No business logic lives here; every endpoint belongs to a module crate (or to
//! stoa-core's system endpoints).
#![doc = include_str!("../README.md")]

use std::sync::Arc;
use std::time::Duration;

use stoa_acl::{AccessMatrix, Accounts, Registry, RegistryError, Services};
use stoa_auth::{AuthConfig, AuthState};
use stoa_core::Config;
use stoa_core::command::CommandRegistry;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::http::{AccessPolicy, ApiConfigurator, ReadCache};
use stoa_core::outbound::Outbound;
use stoa_core::storage::Storage;

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
    stoa_catalog::register(&mut registry)?;
    stoa_dashboards::register(&mut registry)?;
    stoa_customers::register(&mut registry)?;
    stoa_attachments::register(&mut registry)?;
    stoa_onboarding::register(&mut registry)?;
    stoa_business_rules::register(&mut registry)?;
    stoa_ai_assistant::register(&mut registry)?;
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
        stoa_catalog::operations::OPERATIONS,
        stoa_dashboards::operations::OPERATIONS,
        stoa_customers::operations::OPERATIONS,
        stoa_attachments::operations::OPERATIONS,
        stoa_onboarding::operations::OPERATIONS,
        stoa_business_rules::operations::OPERATIONS,
        stoa_ai_assistant::operations::OPERATIONS,
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
        .chain(stoa_catalog::handlers())
        .chain(stoa_dashboards::handlers_with(Arc::new(
            stoa_auth::PgAccounts,
        )))
        .chain(stoa_customers::handlers())
        .chain(stoa_business_rules::handlers())
        .fold(CommandRegistry::new(), CommandRegistry::handler)
}

/// Builds every shared service once: the one module context that
/// [`modules`], the workers, the outbox dispatcher, the tests and the
/// OpenAPI document all use (`stoa_acl::Services`). `storage` is built by the
/// caller (`Storage::from_config` in `serve`, memory in tests); the mailer
/// follows `SMTP_URL` / `MAIL_FROM` of `auth`.
pub fn services(
    db: &Db,
    config: Config,
    auth: &AuthConfig,
    keys: Arc<KeyRing>,
    storage: Storage,
) -> Result<Services, String> {
    let registry = Arc::new(registry().map_err(|e| e.to_string())?);
    // The account interfaces (stoa_acl::accounts) other modules use instead
    // of depending on stoa-auth.
    let accounts: Arc<dyn Accounts> = Arc::new(stoa_auth::PgAccounts);
    // Job creators: users by stoa-auth, API keys by stoa-api-keys (which
    // resolves the key's creating user through stoa-auth's resolver).
    let users = Arc::new(stoa_auth::PgCreators::new());
    let keys_creators = Arc::new(stoa_api_keys::KeyCreators::new(accounts.clone(), users));
    let creators = Arc::new(stoa_auth::PgCreators::new().with_api_keys(keys_creators));
    let outbound = Outbound::new(&config.outbound).map_err(|e| e.to_string())?;
    let mailer = stoa_mail::mailer(
        db.clone(),
        auth.smtp_url.as_ref().map(|s| s.expose()),
        &auth.mail_from,
    )
    .map_err(|e| e.to_string())?;
    let organizations: Arc<dyn stoa_acl::OrganizationDirectory> =
        Arc::new(stoa_directory::PgDirectory);
    let api_keys = Arc::new(stoa_api_keys::PgKeyDirectory::new(
        accounts.clone(),
        organizations.clone(),
    ));
    Ok(Services {
        db: db.clone(),
        config: Arc::new(config),
        registry,
        accounts,
        api_keys,
        creators,
        onboarding: Arc::new(stoa_auth::PgOnboarding::new(auth)),
        // The tenant and organization interface (stoa_acl::organizations),
        // so modules need not depend on stoa-directory.
        organizations,
        storage,
        outbound,
        keys,
        mailer,
        // Filled by `serve` and `worker` once the app exists (`platform_caller`).
        platform: Default::default(),
    })
}

/// [`services`] for tests and the OpenAPI document: memory storage, a fixed
/// key ring, the development auth settings (mail goes to `mail_outbox`).
pub fn test_services(db: &Db) -> Result<Services, String> {
    let vars = std::collections::HashMap::from([(
        "DATABASE_URL".to_string(),
        "postgres://docs@127.0.0.1:1/none".to_string(),
    )]);
    let config = Config::from_vars(&vars).map_err(|e| e.to_string())?;
    let keys = Arc::new(KeyRing::new(&[7; 32], &[]));
    services(
        db,
        config,
        &AuthConfig::for_tests(),
        keys,
        Storage::memory(),
    )
}

/// Every module's routes, in mount order (see [`modules`]).
pub fn configurators(
    services: &Services,
    auth: AuthConfig,
) -> Result<Vec<ApiConfigurator>, String> {
    modules(services, auth).map(|m| m.configurators)
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

/// Builds every module from the module context. The first configurator
/// registers every shared service as app data (`Services::configurator`),
/// so a handler extracting one finds it wherever the modules are mounted.
/// Each new module crate adds its `configure` here (and its features to
/// [`registry`]).
pub fn modules(services: &Services, auth: AuthConfig) -> Result<Modules, String> {
    let onboarding = stoa_onboarding::OnboardingConfig::from_env().map_err(|e| e.to_string())?;
    modules_with_onboarding(services, auth, onboarding)
}

/// [`modules`] with the onboarding settings given rather than read from the
/// environment (tests enable self-service onboarding this way).
pub fn modules_with_onboarding(
    services: &Services,
    auth: AuthConfig,
    onboarding: stoa_onboarding::OnboardingConfig,
) -> Result<Modules, String> {
    let db = &services.db;
    let onboarding = Arc::new(stoa_onboarding::OnboardingState::new(
        db.clone(),
        onboarding,
        services.registry.clone(),
        services.onboarding.clone(),
        auth.jwt_secret.expose(),
    ));
    let accounts = services.accounts.clone();
    let api_keys = stoa_api_keys::ApiKeyAuthenticator::new(db.clone(), accounts.clone());
    let preferences = stoa_preferences::PreferencesState::new(
        db.clone(),
        auth.jwt_secret.expose(),
        accounts.clone(),
    );
    let mut auth =
        AuthState::new(db.clone(), auth, services.registry.clone()).map_err(|e| e.to_string())?;
    auth.mailer = services.mailer.clone();
    let auth = Arc::new(auth.with_api_keys(api_keys.clone()));
    let access = Arc::new(AccessMatrix::new(
        services.registry.operations(),
        auth.clone(),
    ));
    let reads = Arc::new(auth.reads());
    Ok(Modules {
        configurators: vec![
            services.configurator(),
            Arc::new(stoa_auth::configure(auth)),
            Arc::new(stoa_preferences::configure(preferences)),
            Arc::new(stoa_directory::configure),
            Arc::new(stoa_audit_logs::configure(
                Arc::new(commands()),
                accounts.clone(),
            )),
            Arc::new(stoa_progress::configure),
            Arc::new(stoa_devices::configure(
                services.keys.clone(),
                accounts.clone(),
            )),
            Arc::new(stoa_api_keys::configure(
                accounts.clone(),
                services.organizations.clone(),
            )),
            Arc::new(stoa_catalog::configure(services.organizations.clone())),
            Arc::new(stoa_dashboards::configure),
            Arc::new(stoa_customers::configure(accounts)),
            Arc::new(stoa_attachments::configure(
                stoa_attachments::AttachmentsConfig::from_env().map_err(|e| e.to_string())?,
            )),
            Arc::new(stoa_onboarding::configure(onboarding)),
            Arc::new(stoa_business_rules::configure),
            Arc::new(stoa_ai_assistant::configure(Arc::new(
                stoa_ai_assistant::AiState::new(
                    services,
                    stoa_ai_assistant::AiConfig::from_env().map_err(|e| e.to_string())?,
                ),
            ))),
        ],
        api_keys,
        access,
        reads,
    })
}

/// Registers the in-process platform caller (business rules'
/// `CALL_OPEN_MERCATO`): a copy of the server's app over `ctx` on a thread of
/// its own (`stoa_core::http::InProcess`), called as the action's API key
/// (`stoa_api_keys::KeyCaller`), so a rule's call takes the same service
/// path — access matrix, handler checks, command bus — as the key's HTTP
/// requests. `serve` and `worker` run it before the outbox dispatcher starts.
pub fn register_platform_caller(
    services: &Services,
    api_keys: Arc<stoa_api_keys::ApiKeyAuthenticator>,
    ctx: &stoa_core::http::AppContext,
) -> Result<(), String> {
    let mut ctx = ctx.clone();
    // The in-process calls are not network requests: no metrics.
    ctx.metrics = None;
    let app = stoa_core::http::InProcess::start(ctx).map_err(|e| e.to_string())?;
    let guards = services
        .registry
        .write_guards()
        .clone()
        .logging_to(services.db.clone());
    services
        .platform
        .set(Arc::new(stoa_api_keys::KeyCaller::new(
            api_keys, guards, app,
        )));
    Ok(())
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
    // The document's app serves no request: test services (memory storage,
    // a fixed key) build the same routes as `serve`.
    let services = test_services(&db)?;
    let modules = modules(&services, AuthConfig::for_tests())?;
    let mut doc = stoa_core::http::openapi_doc(&modules.configurators, stoa_core::BUILD_VERSION);
    modules.access.document(&mut doc);
    Ok(doc)
}

/// In-process event subscribers (modules append theirs, built from the
/// module context). Events nobody subscribes to are logged at debug level
/// and marked delivered.
pub fn subscribers(services: &Services) -> Vec<Arc<dyn stoa_core::command::outbox::Subscriber>> {
    let mut list: Vec<Arc<dyn stoa_core::command::outbox::Subscriber>> = vec![
        Arc::new(stoa_core::command::outbox::LogSubscriber),
        // Mail queued in a transaction (`stoa_mail::queue`) goes out after commit.
        Arc::new(stoa_mail::MailSubscriber::new(services.mailer.clone())),
        // A deleted attachment's objects leave storage after commit, at least once.
        Arc::new(stoa_attachments::StorageCleanup::new(
            services.storage.clone(),
            services.db.clone(),
        )),
    ];
    // Business rules run on domain events after commit.
    list.extend(stoa_business_rules::subscribers(
        services.db.clone(),
        services.registry.clone(),
        services.platform.clone(),
        services.creators.clone(),
    ));
    list
}

/// Every job handler (modules append theirs, built from the module
/// context). The workers that run them get the context too
/// ([`workers`]), so a handler can act as its job's creator.
pub fn job_handlers(services: &Services) -> Vec<Arc<dyn stoa_jobs::JobHandler>> {
    let mut handlers = stoa_jobs::handlers();
    handlers.extend(stoa_progress::handlers());
    handlers.extend(stoa_audit_logs::retention::handlers());
    handlers.extend(stoa_catalog::job_handlers());
    handlers.extend(stoa_customers::job_handlers(services.accounts.clone()));
    handlers.extend(stoa_onboarding::job_handlers(&services.registry));
    handlers.extend(stoa_business_rules::job_handlers(
        services.outbound.clone(),
        services.keys.clone(),
    ));
    handlers.extend(stoa_ai_assistant::job_handlers());
    handlers
}

/// Every recurring job (modules append theirs); each runs once per period
/// across all processes. Reads the modules' settings from the environment
/// (audit-log retention): a malformed one stops start-up.
pub fn job_schedules() -> Result<Vec<stoa_jobs::Schedule>, stoa_core::config::ConfigError> {
    let mut schedules = stoa_jobs::schedules();
    schedules.extend(stoa_progress::schedules());
    schedules.extend(stoa_audit_logs::retention::RetentionConfig::from_env()?.schedules());
    schedules.extend(stoa_onboarding::schedules());
    schedules.extend(stoa_ai_assistant::schedules()?);
    Ok(schedules)
}

/// The queue's workers of this process, with every module's handlers and
/// the module context (creators re-resolved, write guards attached) and
/// progress's records of the jobs (what clients poll).
pub fn workers(
    services: &Services,
    config: stoa_jobs::WorkerConfig,
    schedules: Vec<stoa_jobs::Schedule>,
) -> stoa_jobs::Workers {
    stoa_jobs::Workers::new(services.db.clone(), job_handlers(services), config)
        .with_services(services)
        .with_records(stoa_progress::records())
        .with_schedules(schedules)
}
