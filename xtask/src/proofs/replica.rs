//! `cargo xtask replica [--release]`: replicas for heavy reads. A private
//! Postgres of its own (`.stoa/postgres-replica`) gets a streaming replica
//! made with `pg_basebackup -R` (a hot standby on another port, its data
//! directory in a temporary folder removed afterwards); one `stoa serve`
//! runs with `DATABASE_REPLICA_URL` pointing at it. Checked:
//!
//! - routing: with the replica's replay paused, a deal's action-log entry
//!   is missing from the action-log list right after the deal was created
//!   (the list read the replica) while the deal itself is there (its read
//!   went to the primary);
//! - the lag bound: once the paused replica is more than
//!   `STOA_REPLICA_MAX_LAG_MS` behind, the list reads the primary and shows
//!   the entry (the time from the write is reported); after replay resumes,
//!   the list reads the replica again;
//! - row-level security on the replica: as `stoa_app`, a connection sees
//!   only the rows of the tenant its setting names (none without one),
//!   while `stoa_bypass` sees both tenants' roles.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{
    Node, SUPER_ADMIN, TENANT_ADMIN, api, call, expect, login, seed, stoa_binary, work_dir,
};
use crate::cmd::{self, Result, output};
use crate::pg::{self, Database};

/// The bound the drill runs with (the default of `STOA_REPLICA_MAX_LAG_MS`).
const MAX_LAG_MS: u64 = 1_000;

pub fn run(args: &[String]) -> Result<u8> {
    let stoa = stoa_binary(args)?;
    let db = Database::private_named("postgres-replica", false)?;
    let outcome = Standby::create(&db).and_then(|standby| drill(&stoa, &db, &standby));
    db.finish();
    match outcome {
        Ok(figures) => {
            println!("xtask: PASS replica for heavy reads: {figures}");
            Ok(0)
        }
        Err(why) => {
            println!("xtask: FAIL replica for heavy reads: {why}");
            Ok(1)
        }
    }
}

/// A hot standby of the drill's cluster (`max_connections` as the
/// primary's, 300, which a standby needs); stopped and removed on drop.
struct Standby {
    pg_ctl: PathBuf,
    base: PathBuf,
    run_as: Option<&'static str>,
    port: u16,
}

/// The port of a `postgres://user@host:port/db` URL.
fn port_of(url: &str) -> Result<u16> {
    url.rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| format!("no port in {url}"))
}

impl Standby {
    fn create(db: &Database) -> Result<Self> {
        let bin = pg::find_bin_dir().ok_or("PostgreSQL server binaries were not found")?;
        let run_as = pg::is_root().then_some("postgres");
        let base = std::env::temp_dir().join(format!("stoa-replica-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base)
            .map_err(|e| format!("cannot create {}: {e}", base.display()))?;
        if let Some(user) = run_as {
            cmd::run(Command::new("chown").args([user, &base.to_string_lossy()]))?;
        }
        let standby = Self {
            pg_ctl: bin.join("pg_ctl"),
            base,
            run_as,
            port: cmd::free_port()?,
        };
        let primary = port_of(&db.server_url)?;
        println!("xtask: pg_basebackup -R from 127.0.0.1:{primary}");
        let (ok, out) = output(
            standby
                .tool(&bin.join("pg_basebackup"))
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &primary.to_string(),
                    "-U",
                    "postgres",
                ])
                .args(["-X", "stream", "-R", "-c", "fast", "-D"])
                .arg(standby.base.join("data")),
        )?;
        if !ok {
            return Err(format!("pg_basebackup failed:\n{out}"));
        }
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c hot_standby=on \
             -c fsync=off -c max_connections=300",
            standby.port
        );
        let (ok, out) = output(
            standby
                .tool(&standby.pg_ctl)
                .args(["start", "-w", "-t", "60", "-D"])
                .arg(standby.base.join("data"))
                .arg("-l")
                .arg(standby.base.join("server.log"))
                .args(["-o", &options]),
        )?;
        if !ok {
            let log = std::fs::read_to_string(standby.base.join("server.log")).unwrap_or_default();
            return Err(format!("the standby did not start:\n{out}\n{log}"));
        }
        Ok(standby)
    }

    fn tool(&self, program: &Path) -> Command {
        match self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(program);
                c.current_dir(std::env::temp_dir());
                c
            }
            None => Command::new(program),
        }
    }

    fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }
}

impl Drop for Standby {
    fn drop(&mut self) {
        let _ = output(
            self.tool(&self.pg_ctl)
                .args(["stop", "-m", "immediate", "-D"])
                .arg(self.base.join("data")),
        );
        if let Err(e) = std::fs::remove_dir_all(&self.base) {
            eprintln!("xtask: cannot remove {}: {e}", self.base.display());
        }
    }
}

/// A new deal's id.
fn create_deal(addr: std::net::SocketAddr, token: &str, title: &str) -> Result<String> {
    let created = expect(
        addr,
        &api(
            "POST",
            "/api/customers/deals",
            token,
            Some(&json!({"title": title})),
        ),
        201,
    )?;
    created["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("deal answered without an id: {created}"))
}

/// Whether the action-log list shows an entry for `resource`.
fn listed(addr: std::net::SocketAddr, token: &str, resource: &str) -> Result<bool> {
    let page = expect(
        addr,
        &api(
            "GET",
            &format!("/api/audit_logs/audit-logs/actions?resourceId={resource}&pageSize=5"),
            token,
            None,
        ),
        200,
    )?;
    Ok(page["items"].as_array().is_some_and(|i| !i.is_empty()))
}

/// Creates a deal with replay paused; returns (listed right after the
/// write, deal readable right after, time until the list showed it).
fn paused_write(
    db: &Database,
    standby: &Standby,
    addr: std::net::SocketAddr,
    token: &str,
    title: &str,
) -> Result<(bool, u16, Option<Duration>)> {
    let replica = standby.url("postgres");
    db.psql(&replica, "SELECT pg_wal_replay_pause()")?;
    let id = create_deal(addr, token, title)?;
    let written = Instant::now();
    let at_once = listed(addr, token, &id)?;
    let (deal, _) = call(
        addr,
        &api("GET", &format!("/api/customers/deals/{id}"), token, None),
    )?;
    let mut seen = at_once.then_some(Duration::ZERO);
    while seen.is_none() && written.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(100));
        if listed(addr, token, &id)? {
            seen = Some(written.elapsed());
        }
    }
    db.psql(&replica, "SELECT pg_wal_replay_resume()")?;
    Ok((at_once, deal, seen))
}

fn drill(stoa: &Path, db: &Database, standby: &Standby) -> Result<String> {
    let dir = work_dir("replica")?;
    let url = db.fresh_database("stoa_replica")?;
    seed(stoa, &url, 0)?;
    let replica_url = standby.url("stoa_replica");
    // The standby replays the seeding (and the database's creation).
    let started = Instant::now();
    while db
        .psql(&replica_url, "SELECT count(*) FROM action_logs")
        .is_err()
    {
        if started.elapsed() > Duration::from_secs(30) {
            return Err("the standby did not replay the seeded database within 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let server = Node::serve(
        stoa,
        &url,
        &dir,
        "server",
        &[
            ("STOA_WORKERS", "0".into()),
            ("DATABASE_REPLICA_URL", replica_url.clone()),
            ("STOA_REPLICA_MAX_LAG_MS", MAX_LAG_MS.to_string()),
        ],
    )?;
    let addr = server.addr()?;
    let token = login(addr, TENANT_ADMIN)?;
    // The sampler starts with the first heavy read; give it two periods.
    listed(addr, &token, "warm-up")?;
    std::thread::sleep(Duration::from_secs(3));
    let mut problems = Vec::new();
    let (hidden, deal, seen) = paused_write(db, standby, addr, &token, "replica drill 1")?;
    if hidden {
        problems
            .push("the entry was listed at once: the list did not read the paused replica".into());
    }
    if deal != 200 {
        problems.push(format!(
            "the deal's own read answered {deal} (it must read the primary)"
        ));
    }
    let bound = Duration::from_millis(MAX_LAG_MS) + Duration::from_secs(3);
    match seen {
        Some(d) if d <= bound => {}
        other => problems.push(format!(
            "the paused replica's list did not fall back to the primary within {bound:?}: {other:?}"
        )),
    }
    // Caught up again: the list goes back to the replica.
    std::thread::sleep(Duration::from_secs(3));
    let (again_hidden, _, again_seen) = paused_write(db, standby, addr, &token, "replica drill 2")?;
    if again_hidden {
        problems.push("after replay resumed, the list no longer read the replica".into());
    }
    let rls = rls_on_replica(db, standby, addr)?;
    if let Err(why) = &rls {
        problems.push(why.clone());
    }
    let panics = server.panics();
    if !panics.is_empty() {
        problems.push(format!("panics: {}", panics.join("; ")));
    }
    let figures = format!(
        "bound {MAX_LAG_MS} ms; with replay paused the new entry was {} right after the write and listed after \
         {:.2} s (the primary's read); after replay resumed, {} at once again (replica), listed after {:.2} s; \
         deal read {deal}; {}",
        if hidden { "listed" } else { "missing" },
        seen.map_or(f64::NAN, |d| d.as_secs_f64()),
        if again_hidden { "listed" } else { "missing" },
        again_seen.map_or(f64::NAN, |d| d.as_secs_f64()),
        rls.unwrap_or_else(|e| e),
    );
    if problems.is_empty() {
        Ok(figures)
    } else {
        Err(format!("{}; figures: {figures}", problems.join("; ")))
    }
}

/// Row-level security on the standby, for a second tenant's rows.
fn rls_on_replica(
    db: &Database,
    standby: &Standby,
    addr: std::net::SocketAddr,
) -> Result<std::result::Result<String, String>> {
    let root = login(addr, SUPER_ADMIN)?;
    let created: Value = expect(
        addr,
        &api(
            "POST",
            "/api/directory/tenants",
            &root,
            Some(&json!({"name": "Replica Drill Corp"})),
        ),
        201,
    )?;
    let other = created["id"]
        .as_str()
        .ok_or_else(|| format!("tenant answered without an id: {created}"))?
        .to_string();
    let replica = standby.url("stoa_replica");
    let count = |sql: String| -> Result<i64> {
        db.psql(&replica, &sql)?
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .ok_or_else(|| format!("no count from `{sql}`"))
    };
    // Wait until the standby has the new tenant's roles.
    let started = Instant::now();
    let bypass = loop {
        let n = count(format!(
            "SET ROLE stoa_bypass; SELECT count(*) FROM roles WHERE tenant_id = '{other}'"
        ))?;
        if n > 0 || started.elapsed() > Duration::from_secs(10) {
            break n;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let acme = db.psql(
        &replica,
        "SELECT id FROM tenants WHERE name = 'Acme Corp' LIMIT 1",
    )?;
    let as_app = |setting: &str, filter: &str| {
        count(format!(
            "SET ROLE stoa_app; SELECT set_config('stoa.tenant_id', '{setting}', false); \
             SELECT count(*) FROM roles {filter}"
        ))
    };
    // Rows without a tenant are shared (their policy shows them to all).
    let closed = as_app("", "WHERE tenant_id IS NOT NULL")?;
    let foreign = as_app(&acme, &format!("WHERE tenant_id = '{other}'"))?;
    let own = as_app(&acme, "")?;
    let figures = format!(
        "on the replica, stoa_bypass sees {bypass} roles of the second tenant; stoa_app sees {closed} tenant roles \
         without a tenant setting, {foreign} of the second tenant and {own} of its own as Acme"
    );
    Ok(if bypass > 0 && closed == 0 && foreign == 0 && own > 0 {
        Ok(figures)
    } else {
        Err(format!("row-level security on the replica: {figures}"))
    })
}
