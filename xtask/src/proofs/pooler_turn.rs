//! `cargo xtask pooler`, one server connection for clients of two tenants
//! in turn (see [`super::pooler_share`]): PgBouncer in session mode with one
//! server connection, four threads of short-lived psql clients queueing for
//! it, each doing what a stoa pool connection does and leaving its role and
//! tenant set for the next client to find (it must not).

use std::collections::{BTreeSet, HashMap};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Instant;

use super::pooler::Bouncer;
use super::pooler_share::{DATABASE, WINDOW, watch};
use crate::cmd::{Result, output};
use crate::pg::{self, Database};

/// What the clients of one or all threads found.
#[derive(Default)]
struct Turns {
    clients: u64,
    /// The Postgres backends that served them.
    pids: BTreeSet<String>,
    /// A role or tenant a client found set when it connected.
    leftovers: Vec<String>,
    /// Rows of another tenant (or, with no tenant set, of any tenant).
    foreign: Vec<String>,
    rows: u64,
    errors: Vec<String>,
}

impl Turns {
    fn add(&mut self, other: Self) {
        self.clients += other.clients;
        self.pids.extend(other.pids);
        self.leftovers.extend(other.leftovers);
        self.foreign.extend(other.foreign);
        self.rows += other.rows;
        self.errors.extend(other.errors);
    }
}

/// One psql client through `bouncer` as `tenant` (or none): (backend pid,
/// the role and tenant it found on connecting, the tenant ids of the rows
/// it updated and read). It ends with `stoa_app` and its tenant still set.
fn client(bouncer: &Bouncer, tenant: Option<&str>) -> Result<(String, String, Vec<String>)> {
    let mut c = Command::new(pg::psql());
    c.args([
        "-XAtq",
        "-v",
        "ON_ERROR_STOP=1",
        "-d",
        &bouncer.url(DATABASE),
    ])
    .args([
        "-c",
        "SELECT pg_backend_pid() || '|' || current_user || '|' || \
             coalesce(current_setting('stoa.tenant_id', true), '')",
    ])
    .args(["-c", "SET ROLE stoa_app"]);
    if let Some(t) = tenant {
        c.args([
            "-c",
            &format!("SELECT set_config('stoa.tenant_id', '{t}', false)"),
        ]);
    }
    c.args([
        "-c",
        "UPDATE customer_deals SET title = title WHERE id IN \
         (SELECT id FROM customer_deals ORDER BY id LIMIT 20) RETURNING tenant_id",
    ])
    .args([
        "-c",
        "SELECT tenant_id FROM customer_deals ORDER BY id DESC LIMIT 100",
    ]);
    let (ok, out) = output(c.env("PGCONNECT_TIMEOUT", "30"))?;
    if !ok {
        return Err(format!("psql client: {out}"));
    }
    let mut lines = out.lines();
    let (pid, found) = lines
        .next()
        .unwrap_or_default()
        .split_once('|')
        .unwrap_or_default();
    let (pid, found) = (pid.to_string(), found.to_string());
    // Not a row: `set_config` echoes the tenant.
    let rows = lines.skip(usize::from(tenant.is_some()));
    Ok((pid, found, rows.map(str::to_string).collect()))
}

/// A thread's clients for [`WINDOW`], every fourth with no tenant set.
fn clients(bouncer: &Bouncer, tenant: &str, started: Instant) -> Turns {
    let mut t = Turns::default();
    let mut k = 0;
    while started.elapsed() < WINDOW {
        k += 1;
        let forgetful = k % 4 == 0;
        match client(bouncer, (!forgetful).then_some(tenant)) {
            Ok((pid, found, rows)) => {
                t.clients += 1;
                t.pids.insert(pid);
                if found != "postgres|" {
                    t.leftovers.push(found);
                }
                t.rows += rows.len() as u64;
                t.foreign
                    .extend(rows.into_iter().filter(|r| forgetful || r != tenant));
            }
            Err(e) => t.errors.push(e),
        }
    }
    t
}

/// Clients of both tenants, one after another on one server connection.
pub(super) fn in_turn(db: &Database, tenants: &HashMap<String, String>) -> Result<String> {
    let bouncer = Arc::new(Bouncer::start(&db.server_url, "session", 1)?);
    let ids: Vec<String> = ["Acme Corp", "Beta Corp"]
        .iter()
        .map(|n| tenants.get(*n).cloned().ok_or(format!("no tenant {n}")))
        .collect::<Result<_>>()?;
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = watch(Arc::clone(&bouncer), Arc::clone(&stop));
    let started = Instant::now();
    let threads: Vec<_> = (0..4)
        .map(|n| {
            let (bouncer, tenant) = (Arc::clone(&bouncer), ids[n % 2].clone());
            thread::spawn(move || clients(&bouncer, &tenant, started))
        })
        .collect();
    let mut all = Turns::default();
    for t in threads {
        all.add(t.join().map_err(|_| "a client thread panicked")?);
    }
    let elapsed = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let servers = watcher
        .join()
        .map_err(|_| "the SHOW SERVERS sampler panicked")?;
    let summary = format!(
        "{} clients in {elapsed:.0} s ({:.0}/s, a quarter with no tenant set), {} rows \
         updated or read, {} failed; backends that served them: {} {:?} (SHOW SERVERS, {} \
         samples: {} server connection(s), most clients waiting {}); {} found a role or \
         tenant left behind, {} foreign rows",
        all.clients,
        all.clients as f64 / elapsed,
        all.rows,
        all.errors.len(),
        all.pids.len(),
        all.pids,
        servers.samples,
        servers.pids.len(),
        servers.most_waiting,
        all.leftovers.len(),
        all.foreign.len(),
    );
    let one_server = all.pids.len() == 1 && servers.pids.len() <= 1;
    let clean = all.leftovers.is_empty() && all.foreign.is_empty() && all.errors.is_empty();
    if one_server && clean && all.clients > 0 {
        Ok(summary)
    } else {
        let detail: Vec<String> = all
            .leftovers
            .iter()
            .chain(&all.foreign)
            .chain(&all.errors)
            .take(5)
            .cloned()
            .collect();
        Err(format!("{summary}: {}", detail.join("; ")))
    }
}
