//! `stoa`: the multi-tenant business platform server.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use stoa_core::Config;
use stoa_server::commands::{self, CommandError};

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
    /// Apply pending database migrations (idempotent).
    Migrate,
    /// Serve the HTTP API.
    Serve {
        /// Address to listen on (default 127.0.0.1:8080).
        #[arg(long, env = "STOA_BIND")]
        bind: Option<SocketAddr>,
    },
    /// Print the OpenAPI document as JSON.
    Openapi,
}

fn load_config() -> Result<Config, CommandError> {
    let config = Config::from_env()?;
    stoa_core::telemetry::init(&config.log);
    Ok(config)
}

fn run(cli: Cli) -> Result<(), CommandError> {
    match cli.command {
        Command::Openapi => {
            println!("{}", commands::openapi()?);
            Ok(())
        }
        Command::Migrate => {
            let config = load_config()?;
            // diesel-async's migration harness needs a multi-threaded runtime.
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .map_err(|e| CommandError::Other(e.to_string()))?
                .block_on(commands::migrate(&config))
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
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("stoa: {err}");
            ExitCode::FAILURE
        }
    }
}
