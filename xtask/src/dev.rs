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
    if let Some(key) = encryption_key()? {
        server.env("STOA_ENCRYPTION_KEY", key);
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

/// The `STOA_ENCRYPTION_KEY` of the development server (push tokens are
/// encrypted with it): `None` when the environment sets one, else the key kept
/// in `.stoa/encryption-key`, generated (32 random bytes, hex) the first time
/// so that data stored in one run can be read in the next.
fn encryption_key() -> Result<Option<String>> {
    if std::env::var("STOA_ENCRYPTION_KEY").is_ok_and(|k| !k.trim().is_empty()) {
        return Ok(None);
    }
    let dir = cmd::root().join(".stoa");
    let path = dir.join("encryption-key");
    if let Ok(existing) = std::fs::read_to_string(&path)
        && !existing.trim().is_empty()
    {
        println!("xtask: STOA_ENCRYPTION_KEY from .stoa/encryption-key (development key)");
        return Ok(Some(existing.trim().to_string()));
    }
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| format!("cannot read random bytes for STOA_ENCRYPTION_KEY: {e}"))?;
    let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create .stoa: {e}"))?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, key.as_bytes()))
        .map_err(|e| format!("cannot write .stoa/encryption-key: {e}"))?;
    println!(
        "xtask: STOA_ENCRYPTION_KEY is not set: generated a development key in \
         .stoa/encryption-key (reused by later runs; production needs its own key)"
    );
    Ok(Some(key))
}

/// Seeds the reference's demo tenant (Acme Corp, superadmin@acme.com,
/// admin@acme.com and employee@acme.com, password `secret`) once, and with
/// it a small set of demo records (`stoa seed demo`: deals and products).
fn seed_demo(stoa: &std::path::Path, url: &str) -> Result<()> {
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["init", "--demo"])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    if ok {
        println!("xtask: seeded the demo tenant Acme Corp");
        // Demo records of the modules, once: only with a new demo tenant.
        let (seeded, out) = cmd::output(
            Command::new(stoa)
                .args(["seed", "demo", "--deals", "200", "--products", "200"])
                .env("DATABASE_URL", url)
                .env("STOA_LOG", "warn"),
        )?;
        if !seeded {
            return Err(format!("stoa seed demo failed:\n{out}"));
        }
        println!("xtask: seeded the demo records (200 deals, 200 products)");
    } else if out.contains("already exists") {
        println!("xtask: demo tenant already present");
    } else {
        return Err(format!("stoa init --demo failed:\n{out}"));
    }
    Ok(())
}
