//! The CLI's commands: `migrate`, `grants sync`, `seed sync`, `init`, `serve`, `worker`,
//! `openapi`. The hidden benchmark and seeding commands are in `bench`.

use std::net::SocketAddr;

use actix_web::{HttpServer, web};
use stoa_auth::AuthConfig;
use stoa_auth::bootstrap::{InitError, InitRequest};
use stoa_core::Config;
use stoa_core::config::FromEnv;
use stoa_core::db::{Db, run_migrations};
use stoa_core::http::{AppContext, Metrics, app, metrics_app};

/// A failure that ends the process with a message.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Config(#[from] stoa_core::config::ConfigError),
    #[error(transparent)]
    Db(#[from] stoa_core::db::DbError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("{0}")]
    Other(String),
}

/// `stoa migrate`: applies pending migrations, then syncs default grants and
/// module seed data; idempotent.
pub async fn migrate(config: &Config) -> Result<(), CommandError> {
    refuse_pooler(config).await?;
    let applied = run_migrations(config.db.url.expose()).await?;
    if applied.is_empty() {
        println!("migrations: database is up to date");
    } else {
        for version in &applied {
            println!("migrations: applied {version}");
        }
    }
    sync_grants(config).await?;
    sync_seeds(config).await
}

/// The registry and one pooled connection (with its pool, kept alive while
/// the connection is used): what both syncs work with.
async fn registry_and_connection(
    config: &Config,
) -> Result<(Db, stoa_acl::Registry, stoa_core::db::DbConn), CommandError> {
    // Administrative command: across tenants.
    let db = Db::connect(&config.db)?.bypassing("cli");
    let registry = crate::registry().map_err(|e| CommandError::Other(e.to_string()))?;
    let conn = db
        .conn()
        .await
        .map_err(|e| CommandError::Other(e.to_string()))?;
    Ok((db, registry, conn))
}

/// `stoa seed sync`: runs the module seeders existing tenants have not had
/// yet, once each (`stoa_directory::seed_sync`).
pub async fn sync_seeds(config: &Config) -> Result<(), CommandError> {
    let (_db, registry, mut conn) = registry_and_connection(config).await?;
    let report = stoa_directory::seed_sync::sync(&mut conn, &registry)
        .await
        .map_err(|e| CommandError::Other(e.to_string()))?;
    println!(
        "seeds: {} seeder run(s) for existing tenants, {} recorded without running",
        report.seeded, report.recorded
    );
    Ok(())
}

/// `stoa grants sync`: gives existing tenants' built-in roles the registry's
/// default grants their ledger lacks (`stoa_auth::grant_sync`).
pub async fn sync_grants(config: &Config) -> Result<(), CommandError> {
    let (_db, registry, mut conn) = registry_and_connection(config).await?;
    let report = stoa_auth::grant_sync::sync(&mut conn, &registry)
        .await
        .map_err(|e| CommandError::Other(e.to_string()))?;
    println!(
        "grants: {} default grant(s) added to existing roles, {} recorded",
        report.added, report.recorded
    );
    Ok(())
}

/// `stoa init`: migrates, then creates the first tenant, its organization, the
/// default roles and a super admin; prints `{"tenantId","organizationId","userId"}`.
pub async fn init(config: &Config, request: InitRequest) -> Result<(), CommandError> {
    run_migrations(config.db.url.expose()).await?;
    // Provisioning the first tenant and its super admin: across tenants.
    let db = Db::connect(&config.db)?.bypassing("stoa init");
    let policy = stoa_auth::password::PasswordPolicy::from_env(&stoa_core::config::Env(
        &std::env::vars().collect(),
    ))?;
    let registry = crate::registry().map_err(|e| CommandError::Other(e.to_string()))?;
    let demo = request.demo;
    let outcome = stoa_auth::bootstrap::init(&db, &registry, &policy, request)
        .await
        .map_err(|err| match err {
            InitError::Db(db) => CommandError::Db(db),
            other => CommandError::Other(other.to_string()),
        })?;
    println!(
        "{}",
        serde_json::to_string(&outcome).map_err(|e| CommandError::Other(e.to_string()))?
    );
    if demo {
        for (email, role) in &outcome.demo_accounts {
            eprintln!(
                "demo credentials: {email} (role {role}) - demo password, change it outside demos"
            );
        }
    }
    Ok(())
}

/// `stoa serve`: serves the API until SIGINT/SIGTERM, then drains: health
/// answers 503 `draining` for `STOA_DRAIN_MS` (a load balancer's checks
/// take the node out while it still serves what it is sent), then it stops
/// accepting and finishes in-flight requests (30 s at most).
pub async fn serve(config: Config) -> Result<(), CommandError> {
    refuse_pooler(&config).await?;
    let db = Db::connect(&config.db)?;
    let auth = AuthConfig::from_env()?;
    if auth.jwt_secret_generated {
        tracing::warn!(
            "STOA_JWT_SECRET is not set: generated a random secret for this development process \
             (tokens stop working when it restarts)"
        );
    }
    let keys_config = stoa_api_keys::ApiKeysConfig::from_env()?;
    // Devices store push tokens encrypted: production needs STOA_ENCRYPTION_KEY.
    let (encryption, generated) = stoa_core::crypto::KeyRing::from_env()?;
    if generated {
        tracing::warn!(
            "STOA_ENCRYPTION_KEY is not set: generated a random key for this development process \
             (push tokens stored now cannot be decrypted after a restart)"
        );
    }
    let encryption = std::sync::Arc::new(encryption);
    let services = build_services(&db, &config, &auth, encryption.clone())?;
    let modules = crate::modules(&services, auth).map_err(CommandError::Other)?;
    let api_keys = modules.api_keys;
    let configurators = modules.configurators;
    let list = modules.list;
    let mut ctx = AppContext::new(db.clone(), config.http.clone(), configurators)
        .with_access(modules.access)
        .with_reads(modules.reads);
    crate::register_platform_caller(&services, api_keys.clone(), &ctx)
        .map_err(CommandError::Other)?;
    let metrics = match config.http.metrics_bind {
        Some(_) => {
            let metrics = web::Data::new(
                Metrics::new(db.clone()).map_err(|e| CommandError::Other(e.to_string()))?,
            );
            ctx = ctx.with_metrics(metrics.clone());
            Some(metrics)
        }
        None => None,
    };
    let bind = config.http.bind;
    let drain = drain_delay()?;
    // The signals are handled below (drain first, then stop), not by actix.
    // TCP_NODELAY: a response written in several pieces (a streamed CSV
    // export, a download, an event stream) otherwise waits for the client's
    // delayed ACK before its second piece, about 40 ms on Linux (issue 52:
    // the export's p50 was 48 ms at 4 connections and 8 ms of work).
    let mut server = HttpServer::new(move || app(&ctx))
        .tcp_nodelay(true)
        .shutdown_timeout(30)
        .disable_signals();
    if config.http.workers > 0 {
        server = server.workers(config.http.workers);
    }
    let server = server
        .bind(bind)
        .map_err(|source| CommandError::Bind { addr: bind, source })?;
    for addr in server.addrs() {
        tracing::info!(%addr, "stoa listening on http://{addr}/api");
    }
    let api = server.run();
    let mut handles = vec![api.handle()];
    // Events are delivered after commit by the outbox dispatcher.
    let dispatcher = std::sync::Arc::new(stoa_core::command::outbox::Dispatcher::new(
        db.clone(),
        crate::subscribers(&services, &list),
    ));
    actix_web::rt::spawn(dispatcher.run(std::time::Duration::from_millis(250)));
    start_workers(
        &services,
        &list,
        stoa_jobs::WorkerConfig::from_env()?,
        crate::job_schedules(&list)?,
    );
    // Push tokens stored before encryption (or under a rotated key) are
    // rewritten under the current key, in the background.
    actix_web::rt::spawn(reencrypt_push_tokens(db.clone(), encryption));
    // API-key uses are written as `last_used_at` in batches, not per request.
    actix_web::rt::spawn(api_keys.clone().run_flusher(keys_config.last_used_flush));

    let served = match (config.http.metrics_bind, metrics) {
        (Some(metrics_bind), Some(metrics)) => {
            let metrics_server = HttpServer::new(move || metrics_app(metrics.clone()))
                .workers(1)
                .disable_signals()
                .bind(metrics_bind)
                .map_err(|source| CommandError::Bind {
                    addr: metrics_bind,
                    source,
                })?;
            tracing::info!(addr = %metrics_bind, "metrics on http://{metrics_bind}/metrics");
            let metrics_server = metrics_server.run();
            handles.push(metrics_server.handle());
            actix_web::rt::spawn(stop_on_signal(handles, drain));
            let (a, b) = tokio::join!(api, metrics_server);
            a.and(b).map_err(|e| CommandError::Other(e.to_string()))
        }
        _ => {
            actix_web::rt::spawn(stop_on_signal(handles, drain));
            api.await.map_err(|e| CommandError::Other(e.to_string()))
        }
    };
    // Access-log entries of kept answers still queued are written too.
    let settle = stoa_core::command::access::settle(&db);
    match tokio::time::timeout(std::time::Duration::from_secs(10), settle).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "access log: could not write queued entries at shutdown");
        }
        Err(_) => tracing::warn!("access log: queued entries not written within 10 s of shutdown"),
    }
    // Uses recorded since the last flush are written before the process ends.
    if let Err(err) = api_keys.flush().await {
        tracing::warn!(error = %err, "api keys: could not record last use at shutdown");
    }
    served
}

/// Refuses a transaction- or statement-mode pooler in front of the
/// database (`stoa_core::pooler`). A database that cannot be reached is
/// not refused: the server starts and its health answers 503 until it can.
async fn refuse_pooler(config: &Config) -> Result<(), CommandError> {
    match stoa_core::pooler::check(config.db.url.expose()).await {
        Err(stoa_core::pooler::PoolerError::Unavailable(err)) => {
            tracing::warn!(error = %err, "could not check for a connection pooler");
            Ok(())
        }
        other => other.map_err(|e| CommandError::Other(e.to_string())),
    }
}

/// `STOA_DRAIN_MS` (default 0): how long a stopping server keeps serving
/// with health at 503 before it stops accepting connections. Behind a load
/// balancer, set it above the checks' interval times their fall count.
fn drain_delay() -> Result<std::time::Duration, CommandError> {
    match std::env::var("STOA_DRAIN_MS") {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<u64>()
            .map(std::time::Duration::from_millis)
            .map_err(|_| {
                CommandError::Other(format!(
                    "STOA_DRAIN_MS must be a number of milliseconds, got {v:?}"
                ))
            }),
        _ => Ok(std::time::Duration::ZERO),
    }
}

/// On SIGTERM or SIGINT: health turns 503 (`draining`), the server keeps
/// serving for `drain`, then the servers stop gracefully (in-flight
/// requests finish; idle keep-alive connections are closed).
async fn stop_on_signal(handles: Vec<actix_web::dev::ServerHandle>, drain: std::time::Duration) {
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
    match term {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(err) => {
            tracing::warn!(error = %err, "cannot listen for SIGTERM; stopping on SIGINT only");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
    stoa_core::system::start_draining();
    tracing::info!(drain_ms = drain.as_millis() as u64, "stopping: draining");
    tokio::time::sleep(drain).await;
    for handle in handles {
        handle.stop(true).await;
    }
}

/// `stoa openapi`: the OpenAPI document, pretty-printed.
pub fn openapi() -> Result<String, CommandError> {
    crate::openapi()
        .map_err(CommandError::Other)?
        .to_pretty_json()
        .map_err(|e| CommandError::Other(e.to_string()))
}

/// Builds the module context once (`crate::services`): the object store
/// from `STOA_DATA_DIR` / `STOA_S3_*` (an unwritable directory or a bad
/// setting stops start-up), the outbound clients, the mailer and the
/// account interfaces, shared by the routes, the workers and the dispatcher.
fn build_services(
    db: &Db,
    config: &Config,
    auth: &AuthConfig,
    keys: std::sync::Arc<stoa_core::crypto::KeyRing>,
) -> Result<stoa_acl::Services, CommandError> {
    let storage = stoa_core::storage::Storage::from_config(&config.storage, &config.outbound)
        .map_err(|e| CommandError::Other(e.to_string()))?;
    tracing::info!(storage.kind = storage.kind(), "object storage ready");
    crate::services(db, config.clone(), auth, keys, storage).map_err(CommandError::Other)
}

/// Encrypts the push tokens not yet under the current key (see
/// `stoa_devices::secrets`); failures are logged and retried at the next start.
async fn reencrypt_push_tokens(db: Db, keys: std::sync::Arc<stoa_core::crypto::KeyRing>) {
    // Tokens of every tenant.
    let result = stoa_core::rls::bypass("push token re-encryption", async {
        match db.conn().await {
            Ok(mut conn) => stoa_devices::reencrypt_push_tokens(&mut conn, &keys, 500)
                .await
                .map_err(|e| e.to_string()),
            Err(err) => Err(err.to_string()),
        }
    })
    .await;
    match result {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "devices: push tokens encrypted with the current key"),
        Err(error) => tracing::error!(%error, "devices: could not re-encrypt push tokens"),
    }
}

/// Starts the queue's workers on the current runtime: one loop keeping up to
/// `config.count` jobs in flight and enqueuing due recurring jobs.
fn start_workers(
    services: &stoa_acl::Services,
    modules: &stoa_module::Modules,
    config: stoa_jobs::WorkerConfig,
    schedules: Vec<stoa_jobs::Schedule>,
) {
    let count = config.count;
    if count == 0 {
        return;
    }
    let workers = std::sync::Arc::new(crate::workers(services, modules, config, schedules));
    actix_web::rt::spawn(workers.run());
    tracing::info!(count, "job workers started");
}

/// `stoa worker`: runs queue workers (and the outbox dispatcher) without
/// serving HTTP, until SIGINT/SIGTERM.
pub async fn worker(config: Config) -> Result<(), CommandError> {
    refuse_pooler(&config).await?;
    let db = Db::connect(&config.db)?;
    let (keys, _) = stoa_core::crypto::KeyRing::from_env()?;
    let auth = AuthConfig::from_env()?;
    let services = build_services(&db, &config, &auth, std::sync::Arc::new(keys))?;
    // Rules' platform calls run in this process too: the same app, unserved.
    let modules = crate::modules(&services, auth).map_err(CommandError::Other)?;
    let ctx = AppContext::new(
        db.clone(),
        config.http.clone(),
        modules.configurators.clone(),
    )
    .with_access(modules.access.clone());
    crate::register_platform_caller(&services, modules.api_keys.clone(), &ctx)
        .map_err(CommandError::Other)?;
    let mut workers = stoa_jobs::WorkerConfig::from_env()?;
    workers.count = workers.count.max(1);
    let count = workers.count;
    start_workers(
        &services,
        &modules.list,
        workers,
        crate::job_schedules(&modules.list)?,
    );
    let dispatcher = std::sync::Arc::new(stoa_core::command::outbox::Dispatcher::new(
        db,
        crate::subscribers(&services, &modules.list),
    ));
    actix_web::rt::spawn(dispatcher.run(std::time::Duration::from_millis(250)));
    println!("stoa worker: {count} worker(s) running");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| CommandError::Other(e.to_string()))?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    tracing::info!("stoa worker stopping");
    Ok(())
}
