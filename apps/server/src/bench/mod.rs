//! The hidden benchmark and seeding commands `cargo xtask bench` runs
//! (`hash-bench`, `io-bench`, `bench-*`, `seed ...`). Each module seeds and
//! times its own tables (`stoa_auth::seed`, `stoa_directory::seed`,
//! `stoa_audit_logs::seed`, `stoa_progress::bench`); these functions only
//! connect, call them in order and print one JSON line, so the rest of the
//! binary (`commands`) carries no benchmark code.

mod io;

use stoa_core::Config;
use stoa_core::db::Db;

use crate::commands::CommandError;

pub use io::io_bench;

/// `stoa hash-bench` (hidden, for `cargo xtask bench`): milliseconds per
/// argon2id hash and per verification with the production parameters,
/// averaged over `count`. Prints one JSON line.
pub async fn hash_bench(count: u32) -> Result<(), CommandError> {
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
    println!(r#"{{"msPerHash":{per_hash:.2},"msPerVerify":{per_verify:.2}}}"#);
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

/// What `stoa seed demo` adds to the demo tenant: one optional count per
/// module (absent: nothing of that module).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct DemoCounts {
    /// Deals (with the demo pipeline and its stages), owned in turn by the
    /// demo tenant's users (`stoa_customers::seed`).
    #[arg(long)]
    pub deals: Option<i64>,
    /// Catalog products (`stoa_catalog::seed::demo_products`).
    #[arg(long)]
    pub products: Option<i64>,
}

/// `stoa seed demo`: seeds each requested count into the demo tenant's root
/// organization, with a progress bar per module on a terminal. Prints one
/// JSON line with what was added.
pub async fn seed_demo(config: &Config, counts: &DemoCounts) -> Result<(), CommandError> {
    let db = Db::connect(&config.db)?.bypassing("seeding and benchmark set-up");
    let mut conn = db.conn().await?;
    let admin = stoa_auth::seed::demo_admin(&mut conn)
        .await
        .map_err(seed_error)?;
    let show = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut added = serde_json::Map::new();
    let seconds = |started: std::time::Instant| {
        serde_json::json!((started.elapsed().as_secs_f64() * 10.0).round() / 10.0)
    };
    if let Some(count) = counts.deals.filter(|n| *n > 0) {
        let started = std::time::Instant::now();
        let owners = stoa_auth::seed::tenant_users(&mut conn, admin.tenant_id, 20)
            .await
            .map_err(seed_error)?;
        let n = stoa_customers::seed::demo_with_bar(
            &mut conn,
            admin.tenant_id,
            admin.organization_id,
            &owners,
            count,
        )
        .await
        .map_err(seed_error)?;
        added.insert("deals".into(), n.into());
        added.insert("dealsSeconds".into(), seconds(started));
    }
    if let Some(products) = counts.products.filter(|n| *n > 0) {
        let started = std::time::Instant::now();
        let n = stoa_catalog::seed::demo_products(
            &mut conn,
            admin.tenant_id,
            admin.organization_id,
            products,
            show,
        )
        .await
        .map_err(seed_error)?;
        added.insert("products".into(), n.into());
        added.insert("productsSeconds".into(), seconds(started));
    }
    println!("{}", serde_json::Value::Object(added));
    Ok(())
}

/// `stoa bench-jobs` (hidden, for `cargo xtask bench`): the job queue's cost
/// per unit for one job of each size in `units`
/// (`stoa_progress::bench::per_unit_costs`). Prints one JSON line.
pub async fn bench_jobs(config: &Config, units: &[u32]) -> Result<(), CommandError> {
    let db = Db::connect(&config.db)?.bypassing("seeding and benchmark set-up");
    let admin = stoa_auth::seed::demo_admin(&mut *db.conn().await?)
        .await
        .map_err(seed_error)?;
    let per_unit = stoa_progress::bench::per_unit_costs(&db, admin.tenant_id, units)
        .await
        .map_err(CommandError::Other)?;
    println!("{}", serde_json::json!({ "perUnitUs": per_unit }));
    Ok(())
}

/// `stoa seed action-logs` (and the hidden `bench-audit`, for `cargo xtask
/// bench`): seeds `count` action-log entries for the demo tenant, spread
/// over the last `months` months (0: one second apart;
/// `stoa_audit_logs::seed`) and measures the command bus's cost per mutation
/// against the same write without it (`stoa_directory::seed`). Prints one
/// JSON line.
pub async fn bench_audit(
    config: &Config,
    count: i64,
    mutations: u32,
    months: u32,
) -> Result<(), CommandError> {
    let other = seed_error;
    let db = Db::connect(&config.db)?.bypassing("seeding and benchmark set-up");
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
        months,
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
    let db = Db::connect(&config.db)?.bypassing("seeding and benchmark set-up");
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
    let db = Db::connect(&config.db)?.bypassing("seeding and benchmark set-up");
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
