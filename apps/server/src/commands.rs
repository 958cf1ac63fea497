//! The CLI's commands: `migrate`, `serve`, `openapi`.

use std::net::SocketAddr;

use actix_web::{HttpServer, web};
use stoa_auth::AuthConfig;
use stoa_auth::bootstrap::{InitError, InitRequest};
use stoa_core::Config;
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

/// `stoa migrate`: applies pending migrations, then syncs default grants;
/// idempotent.
pub async fn migrate(config: &Config) -> Result<(), CommandError> {
    let applied = run_migrations(config.db.url.expose()).await?;
    if applied.is_empty() {
        println!("migrations: database is up to date");
    } else {
        for version in &applied {
            println!("migrations: applied {version}");
        }
    }
    sync_grants(config).await
}

/// `stoa grants sync`: gives existing tenants' built-in roles the registry's
/// default grants their ledger lacks (`stoa_auth::grant_sync`).
pub async fn sync_grants(config: &Config) -> Result<(), CommandError> {
    let db = Db::connect(&config.db)?;
    let registry = crate::registry().map_err(|e| CommandError::Other(e.to_string()))?;
    let mut conn = db
        .conn()
        .await
        .map_err(|e| CommandError::Other(e.to_string()))?;
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
    let db = Db::connect(&config.db)?;
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

/// `stoa serve`: serves the API until SIGINT/SIGTERM, then drains in-flight
/// requests (actix's graceful shutdown, 30 s at most).
pub async fn serve(config: Config) -> Result<(), CommandError> {
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
    let modules = crate::modules(&db, auth, encryption.clone()).map_err(CommandError::Other)?;
    let api_keys = modules.api_keys;
    let mut configurators = modules.configurators;
    configurators.push(io_data(&config)?);
    let mut ctx =
        AppContext::new(db.clone(), config.http.clone(), configurators).with_access(modules.access);
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
    let mut server = HttpServer::new(move || app(&ctx)).shutdown_timeout(30);
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
    // Events are delivered after commit by the outbox dispatcher.
    let dispatcher = std::sync::Arc::new(stoa_core::command::outbox::Dispatcher::new(
        db.clone(),
        crate::subscribers(),
    ));
    actix_web::rt::spawn(dispatcher.run(std::time::Duration::from_millis(250)));
    start_workers(&db, stoa_progress::WorkerConfig::from_env()?);
    // Push tokens stored before encryption (or under a rotated key) are
    // rewritten under the current key, in the background.
    actix_web::rt::spawn(reencrypt_push_tokens(db.clone(), encryption));
    // API-key uses are written as `last_used_at` in batches, not per request.
    actix_web::rt::spawn(api_keys.clone().run_flusher(keys_config.last_used_flush));

    let served = match (config.http.metrics_bind, metrics) {
        (Some(metrics_bind), Some(metrics)) => {
            let metrics_server = HttpServer::new(move || metrics_app(metrics.clone()))
                .workers(1)
                .bind(metrics_bind)
                .map_err(|source| CommandError::Bind {
                    addr: metrics_bind,
                    source,
                })?;
            tracing::info!(addr = %metrics_bind, "metrics on http://{metrics_bind}/metrics");
            let (a, b) = tokio::join!(api, metrics_server.run());
            a.and(b).map_err(|e| CommandError::Other(e.to_string()))
        }
        _ => api.await.map_err(|e| CommandError::Other(e.to_string())),
    };
    // Uses recorded since the last flush are written before the process ends.
    if let Err(err) = api_keys.flush().await {
        tracing::warn!(error = %err, "api keys: could not record last use at shutdown");
    }
    served
}

/// `stoa openapi`: the OpenAPI document, pretty-printed.
pub fn openapi() -> Result<String, CommandError> {
    crate::openapi()
        .map_err(CommandError::Other)?
        .to_pretty_json()
        .map_err(|e| CommandError::Other(e.to_string()))
}

/// Milliseconds per argon2id hash and per verification, averaged over `count`.
pub async fn hash_bench(count: u32) -> Result<(f64, f64), CommandError> {
    use stoa_auth::password::{hash_password, verify_password};
    let other = |e: stoa_core::AppError| CommandError::Other(e.to_string());
    let started = std::time::Instant::now();
    let mut hash = String::new();
    for _ in 0..count {
        hash = hash_password("Bench!pass1".into()).await.map_err(other)?;
    }
    let per_hash = started.elapsed().as_secs_f64() * 1000.0 / f64::from(count);
    let started = std::time::Instant::now();
    for _ in 0..count {
        verify_password("Bench!pass1".into(), Some(hash.clone()))
            .await
            .map_err(other)?;
    }
    let per_verify = started.elapsed().as_secs_f64() * 1000.0 / f64::from(count);
    Ok((per_hash, per_verify))
}

/// Encrypts the push tokens not yet under the current key (see
/// `stoa_devices::secrets`); failures are logged and retried at the next start.
/// Streams a `mib` MiB multipart upload through `stoa_core::upload::receive`
/// into a local store in a temporary directory. Returns MiB/s, the growth of
/// the process's peak RSS during the upload in MiB (it stays near the
/// store's part buffer, whatever the file size) and microseconds per
/// `Money` parse + format.
pub async fn io_bench(mib: u64) -> Result<(f64, f64, f64), CommandError> {
    use actix_web::web::Bytes;
    use futures_util::StreamExt;
    use stoa_core::upload::actix_multipart::Multipart;
    use stoa_core::upload::{UploadPolicy, receive};
    let other = |e: String| CommandError::Other(e);
    let dir = std::env::temp_dir().join(format!("stoa-io-bench-{}", uuid::Uuid::new_v4()));
    let storage = stoa_core::storage::Storage::local(&dir).map_err(|e| other(e.to_string()))?;
    let boundary = "stoa-io-bench";
    let head = Bytes::from(format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"bench.bin\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    ));
    let tail = Bytes::from(format!("\r\n--{boundary}--\r\n"));
    let chunk = Bytes::from(vec![0x5a_u8; 64 * 1024]);
    let chunks = usize::try_from(mib * 16).map_err(|e| other(e.to_string()))?;
    let length = head.len() + tail.len() + chunks * chunk.len();
    let body = futures_util::stream::iter(
        std::iter::once(head)
            .chain(std::iter::repeat_n(chunk, chunks))
            .chain(std::iter::once(tail)),
    )
    .map(Ok::<_, actix_web::error::PayloadError>);
    let req = actix_web::test::TestRequest::post()
        .insert_header((
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        ))
        .insert_header(("content-length", length.to_string()))
        .to_http_request();
    let payload = Multipart::new(req.headers(), body);
    let peak_before = peak_rss_mib();
    let started = std::time::Instant::now();
    let upload = receive(
        &req,
        payload,
        &storage,
        &UploadPolicy::single(mib * 1024 * 1024),
        |_| stoa_core::storage::key(["bench", "upload.bin"]),
    )
    .await
    .map_err(|e| other(e.to_string()));
    let elapsed = started.elapsed().as_secs_f64();
    let peak_growth = peak_rss_mib() - peak_before;
    let _ = std::fs::remove_dir_all(&dir);
    let upload = upload?;
    if upload.files.first().map(|f| f.size) != Some(mib * 1024 * 1024) {
        return Err(other("the upload did not store the whole file".into()));
    }
    let rounds = 200_000u32;
    let started = std::time::Instant::now();
    let mut total = 0usize;
    for i in 0..rounds {
        let text = format!("{}.{:04}", 12_345 + i, i % 10_000);
        let money: stoa_core::money::Money = text.parse().map_err(|e| other(format!("{e}")))?;
        total += money.to_string().len();
    }
    let per_money = started.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    std::hint::black_box(total);
    Ok((mib as f64 / elapsed, peak_growth, per_money))
}

/// The process's peak resident set (VmHWM) in MiB; 0 where /proc is missing.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Builds the outbound HTTP clients and the object store once (a bad
/// setting or an unwritable `STOA_DATA_DIR` stops start-up) and shares them
/// with every module as app data: handlers take `web::Data<Outbound>` /
/// `web::Data<Storage>`.
fn io_data(config: &Config) -> Result<stoa_core::http::ApiConfigurator, CommandError> {
    let outbound = web::Data::new(
        stoa_core::outbound::Outbound::new(&config.outbound)
            .map_err(|e| CommandError::Other(e.to_string()))?,
    );
    let storage = web::Data::new(
        stoa_core::storage::Storage::from_config(&config.storage, &config.outbound)
            .map_err(|e| CommandError::Other(e.to_string()))?,
    );
    tracing::info!(storage.kind = storage.kind(), "object storage ready");
    Ok(std::sync::Arc::new(move |cfg| {
        cfg.app_data(outbound.clone()).app_data(storage.clone());
    }))
}

async fn reencrypt_push_tokens(db: Db, keys: std::sync::Arc<stoa_core::crypto::KeyRing>) {
    let result = match db.conn().await {
        Ok(mut conn) => stoa_devices::reencrypt_push_tokens(&mut conn, &keys, 500)
            .await
            .map_err(|e| e.to_string()),
        Err(err) => Err(err.to_string()),
    };
    match result {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "devices: push tokens encrypted with the current key"),
        Err(error) => tracing::error!(%error, "devices: could not re-encrypt push tokens"),
    }
}

/// Starts the queue's workers on the current runtime: one loop keeping up to
/// `config.count` jobs in flight and enqueuing due recurring jobs.
fn start_workers(db: &Db, config: stoa_progress::WorkerConfig) {
    let count = config.count;
    if count == 0 {
        return;
    }
    let workers = std::sync::Arc::new(
        stoa_progress::Workers::new(db.clone(), crate::job_handlers(), config)
            .with_schedules(crate::job_schedules()),
    );
    actix_web::rt::spawn(workers.run());
    tracing::info!(count, "job workers started");
}

/// `stoa worker`: runs queue workers (and the outbox dispatcher) without
/// serving HTTP, until SIGINT/SIGTERM.
pub async fn worker(config: Config) -> Result<(), CommandError> {
    let db = Db::connect(&config.db)?;
    let mut workers = stoa_progress::WorkerConfig::from_env()?;
    workers.count = workers.count.max(1);
    let count = workers.count;
    start_workers(&db, workers);
    let dispatcher = std::sync::Arc::new(stoa_core::command::outbox::Dispatcher::new(
        db,
        crate::subscribers(),
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

/// A module's seeding error as the command line shows it: the message, or
/// for a server-side failure everything about it (the operator needs the
/// cause, which an HTTP client never sees).
fn seed_error(e: stoa_core::AppError) -> CommandError {
    if e.status().is_server_error() {
        CommandError::Other(format!("{e:?}"))
    } else {
        CommandError::Other(e.message().to_string())
    }
}

/// `stoa bench-jobs` (hidden, for `cargo xtask bench`): the job queue's cost
/// per unit for one job of each size in `units`
/// (`stoa_progress::bench::per_unit_costs`). Prints one JSON line.
pub async fn bench_jobs(config: &Config, units: &[u32]) -> Result<(), CommandError> {
    let db = Db::connect(&config.db)?;
    let per_unit = stoa_progress::bench::per_unit_costs(&db, units)
        .await
        .map_err(CommandError::Other)?;
    println!("{}", serde_json::json!({ "perUnitUs": per_unit }));
    Ok(())
}

/// `stoa seed action-logs` (and the hidden `bench-audit`, for `cargo xtask
/// bench`): seeds `count` action-log entries for the demo tenant
/// (`stoa_audit_logs::seed`) and measures the command bus's cost per mutation
/// against the same write without it (`stoa_directory::seed`). Prints one
/// JSON line.
pub async fn bench_audit(config: &Config, count: i64, mutations: u32) -> Result<(), CommandError> {
    let other = seed_error;
    let db = Db::connect(&config.db)?;
    let mut conn = db.conn().await?;
    let admin = stoa_auth::seed::demo_admin(&mut conn)
        .await
        .map_err(other)?;
    let started = std::time::Instant::now();
    stoa_audit_logs::seed::action_logs(
        &mut conn,
        admin.tenant_id,
        admin.organization_id,
        admin.user_id,
        count,
    )
    .await
    .map_err(other)?;
    let seed_secs = started.elapsed().as_secs_f64();
    drop(conn);
    let actor = stoa_core::command::Actor::api(
        Some(admin.user_id),
        Some(admin.tenant_id),
        Some(admin.organization_id),
    );
    let (bare, bus) = stoa_directory::seed::command_cost(
        &db,
        &actor,
        admin.tenant_id,
        admin.organization_id,
        mutations,
    )
    .await
    .map_err(other)?;
    println!(
        r#"{{"seeded":{count},"seedSeconds":{seed_secs:.1},"msBareWrite":{bare:.3},"msCommand":{bus:.3}}}"#
    );
    Ok(())
}

/// `stoa bench-record` (hidden, for `cargo xtask bench`): times recording
/// `count` action-log entries of the demo tenant one by one against one batch
/// (`stoa_audit_logs::seed::record_timings`); rolled back. Prints one JSON line.
pub async fn bench_record(config: &Config, count: usize) -> Result<(), CommandError> {
    let db = Db::connect(&config.db)?;
    let mut conn = db.conn().await?;
    let admin = stoa_auth::seed::demo_admin(&mut conn)
        .await
        .map_err(seed_error)?;
    let actor = stoa_core::command::Actor::api(
        Some(admin.user_id),
        Some(admin.tenant_id),
        Some(admin.organization_id),
    );
    let (one_by_one, batched) = stoa_audit_logs::seed::record_timings(&mut conn, &actor, count)
        .await
        .map_err(seed_error)?;
    println!(r#"{{"rows":{count},"msOneByOne":{one_by_one:.1},"msBatch":{batched:.1}}}"#);
    Ok(())
}

/// `stoa seed users` (and the hidden `bench-users`, for `cargo xtask bench`):
/// adds ten branches under the demo organization (`stoa_directory::seed`) and
/// `count` users spread over them, each holding the `employee` role
/// (`stoa_auth::seed`). Prints one JSON line.
pub async fn bench_users(config: &Config, count: i64) -> Result<(), CommandError> {
    let other = seed_error;
    let db = Db::connect(&config.db)?;
    let mut conn = db.conn().await?;
    let admin = stoa_auth::seed::demo_admin(&mut conn)
        .await
        .map_err(other)?;
    let started = std::time::Instant::now();
    let branches =
        stoa_directory::seed::bench_branches(&mut conn, admin.tenant_id, admin.organization_id, 10)
            .await
            .map_err(other)?;
    stoa_auth::seed::bench_users(&mut conn, admin.tenant_id, &branches, count)
        .await
        .map_err(other)?;
    println!(
        r#"{{"seeded":{count},"seedSeconds":{:.1}}}"#,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
