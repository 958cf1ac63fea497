//! `cargo xtask dev`: database, migrations, server; Ctrl-C stops the server and
//! the private cluster cleanly.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::cmd::{self, Result};
use crate::pg::Database;
use crate::test::redact;

pub fn run() -> Result<u8> {
    let stoa = cmd::build_stoa(false)?;
    let db = Database::discover()?;
    let result = serve(&stoa, &db);
    db.finish();
    result
}

fn serve(stoa: &std::path::Path, db: &Database) -> Result<u8> {
    let url = db.database("stoa_dev")?;
    cmd::run(Command::new(stoa).arg("migrate").env("DATABASE_URL", &url))?;
    seed_demo(stoa, &url)?;
    let bind = std::env::var("STOA_BIND").unwrap_or_else(|_| "127.0.0.1:8080".into());

    let child_pid = Arc::new(AtomicU32::new(0));
    let handler_pid = child_pid.clone();
    // Ctrl-C reaches the server too (same process group); SIGTERM sent to xtask
    // alone is forwarded. Either way xtask waits for the server, then stops Postgres.
    ctrlc::set_handler(move || {
        let pid = handler_pid.load(Ordering::SeqCst);
        if pid != 0 {
            cmd::terminate(pid);
        }
    })
    .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))?;

    let mut server = Command::new(stoa);
    server
        .args(["serve", "--bind", &bind])
        .env("DATABASE_URL", &url)
        // Development: a JWT secret is generated unless one is set.
        .env("STOA_ENV", "development");
    if std::env::var_os("APP_URL").is_none() {
        server.env("APP_URL", "http://localhost:3000");
    }
    let mut child = server
        .spawn()
        .map_err(|e| format!("cannot start stoa: {e}"))?;
    child_pid.store(child.id(), Ordering::SeqCst);
    println!(
        "\n  stoa is serving http://{bind}/api\n  docs:      http://{bind}/api/docs\n  database:  {}\n  login:     superadmin@acme.com / secret  (also admin@acme.com, employee@acme.com;\n             demo credentials: POST /api/auth/login with a form body)\n  Ctrl-C stops the server{}.\n",
        redact(&url),
        if std::env::var("DATABASE_URL").is_ok() {
            ""
        } else {
            " and the private PostgreSQL cluster"
        }
    );
    let status = child.wait().map_err(|e| format!("waiting for stoa: {e}"))?;
    Ok(if status.success() { 0 } else { 1 })
}

/// Seeds the reference's demo tenant (Acme Corp, superadmin@acme.com,
/// admin@acme.com and employee@acme.com, password `secret`) once.
fn seed_demo(stoa: &std::path::Path, url: &str) -> Result<()> {
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["init", "--demo"])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    if ok {
        println!("xtask: seeded the demo tenant Acme Corp");
    } else if out.contains("already exists") {
        println!("xtask: demo tenant already present");
    } else {
        return Err(format!("stoa init --demo failed:\n{out}"));
    }
    Ok(())
}
