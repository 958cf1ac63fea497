//! `cargo xtask pooler`: PgBouncer (the distribution's package) on
//! 127.0.0.1 in front of the private Postgres, in each pool mode.
//!
//! - **transaction** and **statement** mode: `stoa migrate` refuses to run
//!   with a message naming the mode (`stoa_core::pooler::check`): stoa keeps
//!   its row-level security role and tenant in session settings, which
//!   transaction pooling would hand to other clients.
//! - **session** mode: `stoa migrate` runs, and the authorization matrix
//!   (`stoa-server authorization`) and the row-level security tests
//!   (`stoa-core rls`) pass with every test database reached through
//!   PgBouncer, and so do the modules' tenant-isolation tests (`scope::`).
//! - **the shared server connection** (`pooler_share`, `pooler_turn`; alone
//!   with `--share-only`): two tenants hammering through few server
//!   connections never get or write a foreign row.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::balancer::system_tool;
use super::{pooler_share, pooler_turn, stoa_binary, stop_child, verdict};
use crate::cmd::{self, Result, cargo, output};
use crate::pg::{self, Database};

pub fn run(args: &[String]) -> Result<u8> {
    let stoa = stoa_binary(args)?;
    let db = Database::discover()?;
    let result = drill(&stoa, &db, args.iter().any(|a| a == "--share-only"));
    db.finish();
    Ok(verdict("pooler", &result?))
}

/// A PgBouncer child in one pool mode; stopped on drop.
pub(super) struct Bouncer {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Bouncer {
    /// PgBouncer in `mode` with at most `servers` server connections per
    /// database (`default_pool_size` and `max_db_connections`).
    pub(super) fn start(server_url: &str, mode: &str, servers: u32) -> Result<Self> {
        let program = pgbouncer()?;
        let (host, port) = host_port(server_url)?;
        // PgBouncer refuses to run as root: as root it runs as `postgres`,
        // from a folder that user can read.
        let root = cmd_output_ok(Command::new("id").arg("-u")).is_some_and(|o| o.trim() == "0");
        let dir = std::env::temp_dir().join(format!(
            "stoa-pgbouncer-{}-{mode}-{servers}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let listen = cmd::free_port()?;
        // `*`: every database name, so that each test's own database is
        // reached through the pooler too. Trust, as the private cluster.
        // `server_reset_query` is the default, written out as docs/operations.md
        // says; the admin console (`SHOW SERVERS`) is open to `postgres`.
        let config = format!(
            "[databases]\n* = host={host} port={port}\n\n\
             [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {listen}\nunix_socket_dir =\n\
             auth_type = trust\nauth_file = {auth}\npool_mode = {mode}\nadmin_users = postgres\n\
             max_client_conn = 2000\ndefault_pool_size = {servers}\nmax_db_connections = {servers}\n\
             server_reset_query = DISCARD ALL\n\
             ignore_startup_parameters = extra_float_digits,options\n",
            auth = dir.join("users.txt").display()
        );
        std::fs::write(dir.join("users.txt"), "\"postgres\" \"\"\n").map_err(|e| e.to_string())?;
        let ini = dir.join("pgbouncer.ini");
        std::fs::write(&ini, config).map_err(|e| e.to_string())?;
        let log = std::fs::File::create(dir.join("pgbouncer.log")).map_err(|e| e.to_string())?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        let mut c = if root {
            let _ = cmd_output_ok(Command::new("chown").args(["-R", "postgres"]).arg(&dir));
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        let child = c
            .arg(&ini)
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start pgbouncer: {e}"))?;
        let mut bouncer = Self {
            child,
            port: listen,
            dir,
        };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", listen)).is_err() {
            if let Ok(Some(status)) = bouncer.child.try_wait() {
                return Err(format!("pgbouncer exited with {status}: {}", bouncer.log()));
            }
            if started.elapsed() > Duration::from_secs(10) {
                return Err(format!(
                    "pgbouncer not listening within 10 s: {}",
                    bouncer.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(bouncer)
    }

    pub(super) fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// `SHOW <what>` on the admin console: a row per line, each a map from
    /// column name to value.
    pub(super) fn show(
        &self,
        what: &str,
    ) -> Result<Vec<std::collections::HashMap<String, String>>> {
        let (ok, out) = output(
            Command::new(pg::psql())
                .args([
                    "-XAq",
                    "-P",
                    "footer=off",
                    "-d",
                    &self.url("pgbouncer"),
                    "-c",
                ])
                .arg(format!("SHOW {what}"))
                .env("PGCONNECT_TIMEOUT", "5"),
        )?;
        if !ok {
            return Err(format!("SHOW {what}: {out}"));
        }
        let mut lines = out.lines();
        let header: Vec<&str> = lines.next().unwrap_or_default().split('|').collect();
        Ok(lines
            .map(|l| {
                header
                    .iter()
                    .zip(l.split('|'))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
            .collect())
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        // runuser passes SIGTERM on to pgbouncer.
        stop_child(&mut self.child, Duration::from_secs(5));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `pgbouncer` of the system, installing the distribution's package when it
/// is missing and this process may (root with apt-get), as the failover
/// drill does for pg_auto_failover.
fn pgbouncer() -> Result<PathBuf> {
    if let Ok(found) = system_tool("pgbouncer", "pgbouncer") {
        return Ok(found);
    }
    if pg::is_root() && Path::new("/usr/bin/apt-get").is_file() {
        println!("xtask: pgbouncer is missing; running `apt-get install -y pgbouncer`");
        let (ok, out) = output(
            Command::new("apt-get")
                .args(["install", "-y", "-q", "pgbouncer"])
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )?;
        if !ok {
            return Err(format!("`apt-get install -y pgbouncer` failed:\n{out}"));
        }
    }
    system_tool("pgbouncer", "pgbouncer")
}

fn cmd_output_ok(c: &mut Command) -> Option<String> {
    output(c).ok().filter(|(ok, _)| *ok).map(|(_, out)| out)
}

/// Host and port of a `postgres://user@host:port/db` URL.
fn host_port(url: &str) -> Result<(String, u16)> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let hostport = rest.split(['/', '?']).next().unwrap_or_default();
    match hostport.rsplit_once(':') {
        Some((h, p)) => Ok((
            h.to_string(),
            p.parse().map_err(|_| format!("bad port in {url}"))?,
        )),
        None => Ok((hostport.to_string(), 5432)),
    }
}

/// `stoa migrate` through `url`: (succeeded, output).
fn migrate(stoa: &Path, url: &str) -> Result<(bool, String)> {
    output(
        Command::new(stoa)
            .arg("migrate")
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )
}

fn refused(stoa: &Path, db: &Database, mode: &str) -> Result<String> {
    let bouncer = Bouncer::start(&db.server_url, mode, 20)?;
    let started = Instant::now();
    let (ok, out) = migrate(stoa, &bouncer.url("postgres"))?;
    let said = out
        .lines()
        .find(|l| l.contains("pooler in"))
        .unwrap_or_default()
        .trim()
        .to_string();
    if !ok && said.contains(&format!("{mode} mode")) {
        Ok(format!(
            "refused in {:.2} s: {}",
            started.elapsed().as_secs_f64(),
            said.chars().take(160).collect::<String>()
        ))
    } else {
        Err(format!(
            "stoa migrate through {mode} pooling: ok={ok}: {out}"
        ))
    }
}

/// `cargo nextest run -p <each package> <filter>` with every test database
/// reached through `bouncer`.
fn tests(bouncer: &Bouncer, packages: &[&str], filter: &str) -> Result<String> {
    let started = Instant::now();
    let mut run = cargo();
    run.args(["nextest", "run", "--no-fail-fast"]);
    for package in packages {
        run.args(["-p", package]);
    }
    let (ok, out) = output(run.arg(filter).env("DATABASE_URL", bouncer.url("postgres")))?;
    let summary = out
        .lines()
        .rev()
        .find(|l| l.contains("Summary"))
        .unwrap_or("no nextest summary")
        .trim()
        .to_string();
    let figures = format!(
        "{} {filter}: {summary} ({:.0} s)",
        packages.join(" "),
        started.elapsed().as_secs_f64()
    );
    if ok {
        Ok(figures)
    } else {
        Err(format!("{figures}\n{}", tail(&out, 40)))
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// `share_only` (`--share-only`): the two shared-connection checks alone.
fn drill(stoa: &Path, db: &Database, share_only: bool) -> Result<Vec<String>> {
    let mut failures = Vec::new();
    let mut record = |name: &str, outcome: Result<String>| match outcome {
        Ok(figures) => println!("xtask: PASS {name}: {figures}"),
        Err(why) => {
            println!("xtask: FAIL {name}: {why}");
            failures.push(format!("{name}: {why}"));
        }
    };
    if !share_only {
        record(
            "transaction pooling refused",
            refused(stoa, db, "transaction"),
        );
        record("statement pooling refused", refused(stoa, db, "statement"));
        let session = Bouncer::start(&db.server_url, "session", 20)?;
        let scratch = db.scratch_database("stoa_pooler")?;
        let name = scratch.rsplit('/').next().unwrap_or("stoa_pooler");
        record(
            "stoa migrate through session pooling",
            migrate(stoa, &session.url(name)).and_then(|(ok, out)| {
                if ok { Ok("migrated".into()) } else { Err(out) }
            }),
        );
        record(
            "authorization matrix through session pooling",
            tests(&session, &["stoa-server"], "authorization"),
        );
        record(
            "row-level security tests through session pooling",
            tests(&session, &["stoa-core"], "rls"),
        );
        // The modules' tenant-isolation files (`tests/api/scope.rs`: another
        // tenant's rows, from the attacker's side).
        record(
            "tenant isolation tests through session pooling",
            tests(
                &session,
                &["stoa-customers", "stoa-catalog", "stoa-directory"],
                "scope::",
            ),
        );
    }
    let (url, tenants) = pooler_share::prepare(stoa, db)?;
    record(
        "two tenants on two shared tenant-pool server connections",
        pooler_share::hammer(stoa, db, &url, &tenants),
    );
    record(
        "two tenants' clients in turn on one server connection",
        pooler_turn::in_turn(db, &tenants),
    );
    Ok(failures)
}
