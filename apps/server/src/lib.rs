//! The `stoa` server: the list of mounted modules and the commands of the CLI.
//! No business logic lives here; every endpoint belongs to a module crate (or to
//! stoa-core's system endpoints).
#![doc = include_str!("../README.md")]

use std::sync::Arc;
use std::time::Duration;

use stoa_acl::{AccessMatrix, Accounts, Registry, Services};
use stoa_auth::AuthConfig;
use stoa_core::Config;
use stoa_core::command::CommandRegistry;
use stoa_core::config::FromEnv;
use stoa_core::crypto::KeyRing;
use stoa_core::db::Db;
use stoa_core::http::{AccessPolicy, ApiConfigurator, ReadCache};
use stoa_core::outbound::Outbound;
use stoa_core::storage::Storage;

pub mod bench;
pub mod commands;

/// Every module the server mounts, in mount order (dependency order: a
/// module registers after those whose features its slots name). The one
/// list everything else derives from: the registry, the undo handlers, the
/// routes, the job handlers, the recurring jobs and the subscribers. Each
/// module is built from the module context (`services`); auth, preferences
/// and onboarding also take their settings. A new module crate adds itself
/// here, once.
pub fn module_list(
    services: &Services,
    auth: &Arc<stoa_auth::AuthModule>,
    onboarding: Option<stoa_onboarding::OnboardingConfig>,
) -> stoa_module::Modules {
    let secret = auth.config().jwt_secret.expose();
    vec![
        stoa_directory::module(),
        auth.module(),
        stoa_preferences::module(secret),
        stoa_audit_logs::module(),
        stoa_progress::module(),
        stoa_devices::module(),
        stoa_api_keys::module(),
        stoa_catalog::module(services),
        stoa_dashboards::module(services),
        stoa_customers::module(services),
        stoa_attachments::module(),
        stoa_onboarding::module(secret, onboarding),
        stoa_business_rules::module(services),
        stoa_ai_assistant::module(),
    ]
}

/// Every module's features, operations and slots (the catalog behind
/// `GET /api/auth/features`), as [`services`] builds it.
pub fn registry() -> Result<Registry, String> {
    Ok(test_services(&docs_db()?)?.registry.as_ref().clone())
}

/// The registry of `modules`: core's system operations, then each module's
/// features and operations (who may call each operation, declared next to
/// its routes: the authorization matrix, docs/security.md; a documented
/// operation missing there fails the matrix test), and the slots checked
/// once every module has registered.
fn registry_of(modules: &stoa_module::Modules) -> Result<Registry, String> {
    let mut base = Registry::new();
    base.register_operations(stoa_core::system::OPERATIONS)
        .map_err(|e| e.to_string())?;
    stoa_module::registry_of(base, modules).map_err(|e| e.to_string())
}

/// Every module's undo/redo handlers.
pub fn commands(modules: &stoa_module::Modules) -> CommandRegistry {
    stoa_module::commands_of(modules)
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
    let mut services = Services {
        db: db.clone(),
        config: Arc::new(config),
        // Filled below from the modules, which are built from the rest of
        // the context (they keep the directories they need, never the
        // registry).
        registry: Arc::default(),
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
    };
    let auth = Arc::new(stoa_auth::AuthModule::new(auth.clone()));
    services.registry = Arc::new(registry_of(&module_list(&services, &auth, None))?);
    Ok(services)
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
    /// The modules themselves ([`module_list`]): their job handlers,
    /// recurring jobs and subscribers.
    pub list: stoa_module::Modules,
}

/// Builds every module from the module context. The first configurator
/// registers every shared service as app data (`Services::configurator`),
/// so a handler extracting one finds it wherever the modules are mounted.
pub fn modules(services: &Services, auth: AuthConfig) -> Result<Modules, String> {
    modules_with_onboarding(services, auth, None)
}

/// [`modules`] with the onboarding settings given rather than read from the
/// environment (tests enable self-service onboarding this way).
pub fn modules_with_onboarding(
    services: &Services,
    auth: AuthConfig,
    onboarding: Option<stoa_onboarding::OnboardingConfig>,
) -> Result<Modules, String> {
    let api_keys =
        stoa_api_keys::ApiKeyAuthenticator::new(services.db.clone(), services.accounts.clone());
    let auth = Arc::new(stoa_auth::AuthModule::new(auth).with_api_keys(api_keys.clone()));
    // Auth's state is also the access policy and the kept reads: the same
    // one its routes use.
    let state = auth.state(services)?;
    let access = Arc::new(AccessMatrix::new(
        services.registry.operations(),
        state.clone(),
    ));
    let reads = Arc::new(state.reads());
    let list = module_list(services, &auth, onboarding);
    let commands = Arc::new(commands(&list));
    let mut configurators = vec![services.configurator()];
    configurators.extend(stoa_module::configurators_of(&list, services, &commands)?);
    Ok(Modules {
        configurators,
        api_keys,
        access,
        reads,
        list,
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

/// A pool that never connects: documentation and the registry need no
/// database.
fn docs_db() -> Result<Db, String> {
    Db::from_url(
        "postgres://docs@127.0.0.1:1/none",
        1,
        Duration::from_millis(1),
    )
    .map_err(|e| e.to_string())
}

/// The OpenAPI document of the whole API.
pub fn openapi() -> Result<utoipa::openapi::OpenApi, String> {
    // The document's app serves no request: test services (memory storage,
    // a fixed key) build the same routes as `serve`.
    let services = test_services(&docs_db()?)?;
    let modules = modules(&services, AuthConfig::for_tests())?;
    Ok(stoa_core::http::openapi_doc(
        &modules.configurators,
        stoa_core::BUILD_VERSION,
        Some(modules.access.as_ref()),
    ))
}

/// In-process event subscribers: core's and the mail queue's, then the
/// modules'. Events nobody subscribes to are logged at debug level and
/// marked delivered.
pub fn subscribers(
    services: &Services,
    modules: &stoa_module::Modules,
) -> Vec<Arc<dyn stoa_core::command::outbox::Subscriber>> {
    let mut list: Vec<Arc<dyn stoa_core::command::outbox::Subscriber>> = vec![
        Arc::new(stoa_core::command::outbox::LogSubscriber),
        // Mail queued in a transaction (`stoa_mail::queue`) goes out after commit.
        Arc::new(stoa_mail::MailSubscriber::new(services.mailer.clone())),
    ];
    list.extend(stoa_module::subscribers_of(modules, services));
    list
}

/// Every job handler: the queue's own, then the modules'. The workers that
/// run them get the module context too ([`workers`]), so a handler can act
/// as its job's creator.
pub fn job_handlers(
    services: &Services,
    modules: &stoa_module::Modules,
) -> Vec<Arc<dyn stoa_jobs::JobHandler>> {
    let mut handlers = stoa_jobs::handlers();
    handlers.extend(stoa_module::job_handlers_of(modules, services));
    handlers
}

/// Every recurring job: the queue's own, then the modules'; each runs once
/// per period across all processes. Modules read their settings from the
/// environment (audit-log retention): a malformed one stops start-up.
pub fn job_schedules(
    modules: &stoa_module::Modules,
) -> Result<Vec<stoa_jobs::Schedule>, stoa_core::config::ConfigError> {
    let mut schedules = stoa_jobs::schedules();
    schedules.extend(stoa_module::schedules_of(modules)?);
    Ok(schedules)
}

/// The queue's workers of this process, with every module's handlers and
/// the module context (creators re-resolved, write guards attached) and
/// progress's records of the jobs (what clients poll).
pub fn workers(
    services: &Services,
    modules: &stoa_module::Modules,
    config: stoa_jobs::WorkerConfig,
    schedules: Vec<stoa_jobs::Schedule>,
) -> stoa_jobs::Workers {
    stoa_jobs::Workers::new(services.db.clone(), job_handlers(services, modules), config)
        .with_services(services)
        .with_records(stoa_progress::records())
        .with_schedules(schedules)
}
