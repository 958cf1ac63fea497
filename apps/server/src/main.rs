//! `stoa`: the multi-tenant business platform server.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use stoa_auth::bootstrap::InitRequest;
use stoa_core::Config;
use stoa_core::config::FromEnv;
use stoa_server::bench;
use stoa_server::commands::{self, CommandError};

/// jemalloc, not glibc's malloc. A bulk job's units build and drop many
/// small JSON trees (snapshots, diffs, events) on a few threads: glibc,
/// even tuned to one arena, spent over a quarter of the server's CPU in
/// malloc and free there, jemalloc about a twentieth (server CPU per
/// 100,000 moved deals 5.5-6.0 -> 4.2-4.4 s). Its settings are compiled in
/// from `.cargo/config.toml` (`JEMALLOC_SYS_WITH_MALLOC_CONF`, the one place
/// they are listed); docs/architecture.md, "Memory".
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "stoa",
    version,
    about = "stoa: multi-tenant business platform back end"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Apply pending database migrations, then sync default grants and module
    /// seed data (idempotent).
    Migrate,
    /// Give existing tenants' built-in roles the default grants of modules added
    /// since they were created (never re-adding one an administrator revoked).
    Grants {
        #[command(subcommand)]
        command: GrantsCommand,
    },
    /// Serve the HTTP API.
    Serve {
        /// Address to listen on (default 127.0.0.1:8080).
        #[arg(long, env = "STOA_BIND")]
        bind: Option<SocketAddr>,
    },
    /// Create the first tenant, its root organization, the default roles and a
    /// super admin (migrates first). Prints one JSON line with the new ids.
    Init {
        /// Tenant name.
        #[arg(long, required_unless_present = "demo")]
        tenant: Option<String>,
        /// Root organization name (default: the tenant name).
        #[arg(long)]
        organization: Option<String>,
        /// The super admin's e-mail.
        #[arg(long, required_unless_present = "demo")]
        email: Option<String>,
        /// The super admin's password (must meet the password policy unless --demo).
        #[arg(long, env = "STOA_INIT_PASSWORD", required_unless_present = "demo")]
        password: Option<String>,
        /// Also create admin@DOMAIN and employee@DOMAIN with the same password
        /// (defaults: Acme Corp, superadmin@acme.com, password `secret`).
        #[arg(long)]
        demo: bool,
    },
    /// Run job-queue workers (count: STOA_WORKERS, at least 1) without serving HTTP.
    Worker,
    /// Old name of `seed action-logs`.
    #[command(hide = true)]
    BenchAudit {
        #[arg(long, default_value_t = 1_000_000)]
        count: i64,
        #[arg(long, default_value_t = 200)]
        mutations: u32,
        #[arg(long, default_value_t = 0)]
        months: u32,
    },
    /// Time recording action-log entries one by one against one batch
    /// (used by `cargo xtask bench`); rolled back, nothing stays.
    #[command(hide = true)]
    BenchRecord {
        #[arg(long, default_value_t = 10_000)]
        count: usize,
    },
    /// Time the job queue's cost per unit for jobs of each size (used by
    /// `cargo xtask bench`). Prints `{"perUnitUs": {"<units>": µs, ...}}`.
    #[command(hide = true)]
    BenchJobs {
        #[arg(long, value_delimiter = ',', default_values_t = [1_000u32, 10_000, 100_000])]
        units: Vec<u32>,
    },
    /// Old name of `seed users`.
    #[command(hide = true)]
    BenchUsers {
        #[arg(long, default_value_t = 100_000)]
        count: i64,
    },
    /// Give existing tenants the seed data of modules added since they were
    /// created (`seed sync`), or seed benchmark data into the demo tenant.
    #[command(subcommand)]
    Seed(Seed),
    /// Print the OpenAPI document as JSON.
    Openapi,
    /// Time password hashing with the production argon2id parameters
    /// (used by `cargo xtask bench`). Prints `{"msPerHash","msPerVerify"}`.
    #[command(hide = true)]
    HashBench {
        #[arg(long, default_value_t = 20)]
        count: u32,
    },
    /// Write a photo-like `width`×`height` JPEG to `out` (used by `cargo
    /// xtask bench` for the image-resize scenarios).
    #[command(hide = true)]
    BenchJpeg {
        #[arg(long, default_value_t = 4000)]
        width: u32,
        #[arg(long, default_value_t = 3000)]
        height: u32,
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Time a streamed multipart upload into local storage and Money parsing
    /// (used by `cargo xtask bench`). Prints `{"uploadMibPerSec","uploadPeakGrowthMib","usPerMoney"}`.
    #[command(hide = true)]
    IoBench {
        #[arg(long, default_value_t = 256)]
        mib: u64,
    },
}

/// Seed data: the modules' per-tenant data for existing tenants, and
/// benchmark data. The server only dispatches; every module seeds its own
/// tables (`stoa_directory::seed_sync`, `stoa_auth::seed`,
/// `stoa_directory::seed`, `stoa_audit_logs::seed`, `stoa_catalog::seed`).
#[derive(Subcommand)]
enum Seed {
    /// Run the module seeders existing tenants have not had yet, once each
    /// (also run by `migrate`); what an administrator deleted is not re-added.
    Sync,
    /// Add `count` users (`user000001@bench.acme.com`, ...) over ten new
    /// branches of the demo organization, each holding the `employee` role.
    Users {
        #[arg(long, default_value_t = 100_000)]
        count: i64,
    },
    /// Add `count` action-log entries (one second apart, or spread evenly
    /// over the last `months` months, in their monthly partitions), then
    /// time `mutations` organization renames with and without the command bus.
    ActionLogs {
        #[arg(long, default_value_t = 1_000_000)]
        count: i64,
        #[arg(long, default_value_t = 200)]
        mutations: u32,
        #[arg(long, default_value_t = 0)]
        months: u32,
    },
    /// Demo data in the demo tenant (`stoa init --demo` first), each module
    /// seeding its own tables in batches with a progress bar. Every count is
    /// optional: `--deals N` customer deals, `--products N` catalog products.
    Demo(bench::DemoCounts),
}

#[derive(Subcommand)]
enum GrantsCommand {
    /// Add missing default grants to existing tenants (also run by `migrate`).
    Sync,
}

fn load_config() -> Result<Config, CommandError> {
    let config = Config::from_env()?;
    stoa_core::telemetry::init(&config.log);
    Ok(config)
}

/// A one-worker multi-threaded runtime: diesel-async's migration harness needs
/// a multi-threaded one, and one-shot commands need no more.
fn one_thread_runtime() -> Result<tokio::runtime::Runtime, CommandError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| CommandError::Other(e.to_string()))
}

fn run(cli: Cli) -> Result<(), CommandError> {
    match cli.command {
        Command::HashBench { count } => tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| CommandError::Other(e.to_string()))?
            .block_on(bench::hash_bench(count.max(1))),
        Command::IoBench { mib } => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CommandError::Other(e.to_string()))?
            .block_on(bench::io_bench(mib.max(1))),
        Command::BenchJpeg { width, height, out } => {
            let bytes = stoa_attachments::bench::sample_jpeg(width, height)
                .map_err(|e| CommandError::Other(e.to_string()))?;
            std::fs::write(&out, bytes).map_err(|e| CommandError::Other(e.to_string()))
        }
        Command::Openapi => {
            println!("{}", commands::openapi()?);
            Ok(())
        }
        Command::Migrate => {
            let config = load_config()?;
            // diesel-async's migration harness needs a multi-threaded runtime.
            one_thread_runtime()?.block_on(commands::migrate(&config))
        }
        Command::Grants {
            command: GrantsCommand::Sync,
        } => {
            let config = load_config()?;
            one_thread_runtime()?.block_on(commands::sync_grants(&config))
        }
        Command::Init {
            tenant,
            organization,
            email,
            password,
            demo,
        } => {
            let config = load_config()?;
            let tenant = tenant.unwrap_or_else(|| "Acme Corp".into());
            let request = InitRequest {
                organization: organization.unwrap_or_else(|| tenant.clone()),
                tenant,
                email: email.unwrap_or_else(|| "superadmin@acme.com".into()),
                password: password.unwrap_or_else(|| "secret".into()),
                demo,
            };
            one_thread_runtime()?.block_on(commands::init(&config, request))
        }
        Command::Seed(Seed::Sync) => {
            let config = load_config()?;
            one_thread_runtime()?.block_on(commands::sync_seeds(&config))
        }
        Command::Seed(Seed::ActionLogs {
            count,
            mutations,
            months,
        })
        | Command::BenchAudit {
            count,
            mutations,
            months,
        } => {
            let config = load_config()?;
            one_thread_runtime()?.block_on(bench::bench_audit(
                &config,
                count,
                mutations.max(1),
                months,
            ))
        }
        Command::BenchRecord { count } => {
            let config = load_config()?;
            one_thread_runtime()?.block_on(bench::bench_record(&config, count.max(1)))
        }
        Command::BenchJobs { units } => {
            let config = load_config()?;
            one_thread_runtime()?.block_on(bench::bench_jobs(&config, &units))
        }
        Command::Seed(Seed::Demo(counts)) => {
            let config = load_config()?;
            one_thread_runtime()?.block_on(bench::seed_demo(&config, &counts))
        }
        Command::Seed(Seed::Users { count }) | Command::BenchUsers { count } => {
            let config = load_config()?;
            one_thread_runtime()?.block_on(bench::bench_users(&config, count.max(1)))
        }
        Command::Worker => {
            let config = load_config()?;
            actix_web::rt::System::new().block_on(commands::worker(config))
        }
        Command::Serve { bind } => {
            let mut config = load_config()?;
            if let Some(bind) = bind {
                config.http.bind = bind;
            }
            actix_web::rt::System::new().block_on(commands::serve(config))
        }
    }
}

fn main() -> ExitCode {
    let result = run(Cli::parse());
    // Spans still batched go out before the process ends (a no-op when
    // traces are off).
    stoa_core::traces::shutdown();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("stoa: {err}");
            ExitCode::FAILURE
        }
    }
}
