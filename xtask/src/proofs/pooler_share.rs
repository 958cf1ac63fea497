//! `cargo xtask pooler`, the shared server connection: two tenants (Acme
//! Corp and Beta Corp, `stoa init --demo` each) hammering reads and writes
//! through PgBouncer in session mode with the fewest server connections
//! stoa can run on, checking every answered row and, afterwards, every row
//! written.
//!
//! Session mode gives a client connection a server connection for the
//! client's whole life and queues the others, so a server connection serves
//! two tenants in turn in two ways, one check each:
//!
//! - [`hammer`]: inside stoa's client connections. `stoa serve` with
//!   `STOA_DB_POOL_SIZE=2` (two tenant-pool and two bypass-pool
//!   connections; with 1, concurrent requests wait on each other inside
//!   stoa and answer 503, with or without a pooler) behind PgBouncer with
//!   four server connections. Every tenant-scoped statement of both tenants
//!   runs on the tenant pool's two server connections, each connection's
//!   `stoa.tenant_id` switched by `Db::conn` as it changes hands.
//! - [`super::pooler_turn::in_turn`]: one client connection after another. PgBouncer with one
//!   server connection; short-lived clients of both tenants queue for it,
//!   each connecting as stoa's pools do (`SET ROLE stoa_app`, then the
//!   tenant), writing and reading, and leaving its role and tenant set. Each
//!   must find them reset (`server_reset_query = DISCARD ALL`) and see only
//!   its tenant's rows; every fourth client sets no tenant and must see none.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use super::pooler::Bouncer;
use super::{Node, TENANT_ADMIN, api, call, login, seed, work_dir};
use crate::cmd::{Result, output};
use crate::pg::Database;

pub(super) const DATABASE: &str = "stoa_pooler_share";
const SECOND_ADMIN: &str = "admin@beta.com";
/// How long each check hammers.
pub(super) const WINDOW: Duration = Duration::from_secs(20);

/// The drill's database with both tenants; (URL, tenant name → id).
pub(super) fn prepare(stoa: &Path, db: &Database) -> Result<(String, HashMap<String, String>)> {
    let url = db.scratch_database(DATABASE)?;
    seed(stoa, &url, 0)?;
    let (ok, out) = output(
        Command::new(stoa)
            .args(["init", "--demo", "--tenant", "Beta Corp", "--email"])
            .arg("superadmin@beta.com")
            .env("DATABASE_URL", &url)
            .env("STOA_LOG", "warn"),
    )?;
    if !ok {
        return Err(format!("stoa init --demo (Beta Corp) failed:\n{out}"));
    }
    let tenants = db
        .psql(&url, "SELECT name, id FROM tenants")?
        .lines()
        .filter_map(|l| l.split_once('|'))
        .map(|(n, id)| (n.to_string(), id.to_string()))
        .collect();
    Ok((url, tenants))
}

/// What `SHOW SERVERS` showed over a run: the server connections' backend
/// pids and the most at once; the most clients `SHOW POOLS` saw waiting.
#[derive(Default)]
pub(super) struct Servers {
    pub pids: BTreeSet<String>,
    pub most: usize,
    pub most_waiting: u64,
    pub samples: u64,
}

fn field<'a>(row: &'a HashMap<String, String>, name: &str) -> &'a str {
    row.get(name).map_or("", String::as_str)
}

/// Samples the admin console every 100 ms until `stop`.
pub(super) fn watch(bouncer: Arc<Bouncer>, stop: Arc<AtomicBool>) -> thread::JoinHandle<Servers> {
    thread::spawn(move || {
        let mut seen = Servers::default();
        while !stop.load(Ordering::Relaxed) {
            if let Ok(rows) = bouncer.show("SERVERS") {
                let rows: Vec<_> = rows
                    .iter()
                    .filter(|r| field(r, "database") == DATABASE)
                    .collect();
                seen.most = seen.most.max(rows.len());
                seen.pids.extend(
                    rows.iter()
                        .map(|r| field(r, "remote_pid"))
                        // 0: still logging in.
                        .filter(|p| *p != "0")
                        .map(str::to_string),
                );
                seen.samples += 1;
            }
            if let Ok(pools) = bouncer.show("POOLS") {
                let waiting = pools
                    .iter()
                    .filter(|r| field(r, "database") == DATABASE)
                    .filter_map(|r| field(r, "cl_waiting").parse::<u64>().ok())
                    .sum::<u64>();
                seen.most_waiting = seen.most_waiting.max(waiting);
            }
            thread::sleep(Duration::from_millis(100));
        }
        seen
    })
}

/// What one tenant's hammering thread counted.
#[derive(Default)]
struct Tally {
    requests: u64,
    failed: Vec<String>,
    /// Rows of another tenant in an answer, or a foreign deal not 404.
    foreign: Vec<String>,
    /// Every deal id answered to this tenant.
    seen: BTreeSet<String>,
    /// Deals this tenant created (acknowledged 201).
    created: u64,
}

/// A tenant: its name (the prefix of its deals' titles) and token. Deals
/// get no stage: the second tenant has no demo pipeline.
struct Caller {
    name: &'static str,
    token: String,
}

/// Create, list, read its own, read the other tenant's last (404), in a
/// loop for [`WINDOW`].
fn hammer_one(
    addr: SocketAddr,
    me: &Caller,
    thread_no: usize,
    mine: &Mutex<Vec<String>>,
    theirs: &Mutex<Vec<String>>,
    other: &str,
) -> Tally {
    let mut t = Tally::default();
    let started = Instant::now();
    let mut i = 0;
    while started.elapsed() < WINDOW {
        i += 1;
        let title = format!("pooler {} {thread_no}-{i}", me.name);
        let body = json!({"title": title, "valueAmount": "10.00", "valueCurrency": "EUR"});
        let steps = [
            api("POST", "/api/customers/deals", &me.token, Some(&body)),
            api(
                "GET",
                "/api/customers/deals?pageSize=50&includeTotal=false",
                &me.token,
                None,
            ),
        ];
        for req in &steps {
            t.requests += 1;
            match call(addr, req) {
                Ok((201, json)) => {
                    if let Some(id) = json["id"].as_str() {
                        t.created += 1;
                        if let Ok(mut m) = mine.lock() {
                            m.push(id.to_string());
                        }
                    }
                }
                Ok((200, json)) => {
                    for item in json["items"].as_array().into_iter().flatten() {
                        let id = item["id"].as_str().unwrap_or_default().to_string();
                        let title = item["title"].as_str().unwrap_or_default();
                        if title.starts_with(&format!("pooler {other} ")) {
                            t.foreign.push(format!("{} listed {title} ({id})", me.name));
                        }
                        if !id.is_empty() {
                            t.seen.insert(id);
                        }
                    }
                }
                Ok((status, json)) => t
                    .failed
                    .push(format!("{} {}: {status} {json}", req.method, req.path)),
                Err(e) => t.failed.push(format!("{} {}: {e}", req.method, req.path)),
            }
        }
        let own = mine.lock().ok().and_then(|m| m.last().cloned());
        let foreign = theirs.lock().ok().and_then(|m| m.last().cloned());
        for (id, expected) in [(own, 200), (foreign, 404)] {
            let Some(id) = id else { continue };
            t.requests += 1;
            let req = api(
                "GET",
                &format!("/api/customers/deals/{id}"),
                &me.token,
                None,
            );
            match call(addr, &req) {
                Ok((200, json)) if expected == 200 && !json.to_string().contains(&id) => {
                    t.foreign
                        .push(format!("{} read {id}, answered {json}", me.name));
                }
                Ok((status, _)) if status == expected => {}
                Ok((200, json)) => t.foreign.push(format!("{} read {id}: {json}", me.name)),
                Ok((status, json)) => t.failed.push(format!("GET deal {id}: {status} {json}")),
                Err(e) => t.failed.push(format!("GET deal {id}: {e}")),
            }
        }
    }
    t
}

/// Two tenants, two threads each, on one stoa whose tenant pool has two
/// connections, through PgBouncer with four server connections.
pub(super) fn hammer(
    stoa: &Path,
    db: &Database,
    url: &str,
    tenants: &HashMap<String, String>,
) -> Result<String> {
    let dir = work_dir("pooler")?;
    let bouncer = Arc::new(Bouncer::start(&db.server_url, "session", 4)?);
    let env = [
        ("STOA_DB_POOL_SIZE", "2".to_string()),
        ("STOA_DB_TIMEOUT_MS", "10000".into()),
        ("STOA_WORKERS", "0".into()),
    ];
    let node = Node::serve(stoa, &bouncer.url(DATABASE), &dir, "pooler-share", &env)?;
    let addr = node.addr()?;
    let caller = |name: &'static str, email: &str| -> Result<Caller> {
        let token = login(addr, email)?;
        Ok(Caller { name, token })
    };
    let callers = Arc::new([caller("Acme", TENANT_ADMIN)?, caller("Beta", SECOND_ADMIN)?]);
    let created: Arc<[Mutex<Vec<String>>; 2]> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = watch(Arc::clone(&bouncer), Arc::clone(&stop));
    let started = Instant::now();
    let threads: Vec<_> = (0..4)
        .map(|n| {
            let (callers, created) = (Arc::clone(&callers), Arc::clone(&created));
            thread::spawn(move || {
                let (me, them) = (n % 2, 1 - n % 2);
                hammer_one(
                    addr,
                    &callers[me],
                    n,
                    &created[me],
                    &created[them],
                    callers[them].name,
                )
            })
        })
        .collect();
    let mut tallies: [Vec<Tally>; 2] = Default::default();
    for (n, t) in threads.into_iter().enumerate() {
        tallies[n % 2].push(t.join().map_err(|_| "a hammering thread panicked")?);
    }
    let elapsed = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let servers = watcher
        .join()
        .map_err(|_| "the SHOW SERVERS sampler panicked")?;
    let panics = node.panics();
    drop(node);
    // Afterwards, as the owner (no policy applies): every deal answered to a
    // tenant and every deal it wrote is its own.
    let owner: HashMap<String, String> = db
        .psql(url, "SELECT id, tenant_id FROM customer_deals")?
        .lines()
        .filter_map(|l| l.split_once('|'))
        .map(|(id, t)| (id.to_string(), t.to_string()))
        .collect();
    let mut problems: Vec<String> = panics;
    let mut figures = Vec::new();
    let (mut requests, mut foreign) = (0, 0);
    for (side, tally) in tallies.iter().enumerate() {
        let name = callers[side].name;
        let tenant = tenants
            .get(&format!("{name} Corp"))
            .cloned()
            .unwrap_or_default();
        let wrong_seen = tally
            .iter()
            .flat_map(|t| &t.seen)
            .filter(|id| owner.get(*id) != Some(&tenant))
            .count();
        let written = db.psql(
            url,
            &format!("SELECT count(*) FILTER (WHERE tenant_id = '{tenant}'), count(*) FILTER (WHERE tenant_id <> '{tenant}') FROM customer_deals WHERE title LIKE 'pooler {name} %'"),
        )?;
        let (own_rows, wrong_rows) = written.split_once('|').unwrap_or(("?", "?"));
        let acked: u64 = tally.iter().map(|t| t.created).sum();
        let answered: u64 = tally.iter().map(|t| t.requests).sum();
        let in_answers: usize = tally.iter().map(|t| t.foreign.len()).sum();
        requests += answered;
        foreign += in_answers + wrong_seen + wrong_rows.parse::<usize>().unwrap_or(1);
        problems.extend(
            tally
                .iter()
                .flat_map(|t| t.failed.iter().chain(&t.foreign))
                .take(5)
                .cloned(),
        );
        if wrong_seen > 0 || wrong_rows != "0" || own_rows != acked.to_string() {
            problems.push(format!("{name}: {wrong_seen} answered deals not its own, {wrong_rows} written into another tenant, {own_rows} rows for {acked} acknowledged creates"));
        }
        figures.push(format!("{name} {answered} requests ({acked} deals created, {own_rows} in its tenant; {} distinct deals answered)", tally.iter().map(|t| t.seen.len()).sum::<usize>()));
    }
    let failed: usize = tallies.iter().flatten().map(|t| t.failed.len()).sum();
    if servers.pids.len() > 4 || servers.most > 4 {
        problems.push(format!(
            "more than 4 server connections: {:?}",
            servers.pids
        ));
    }
    let summary = format!(
        "{requests} requests in {elapsed:.0} s ({:.0}/s), {failed} failed; {}; server connections seen in SHOW SERVERS ({} samples): {} (backend pids {:?}), most clients waiting {}; {foreign} foreign rows",
        requests as f64 / elapsed,
        figures.join("; "),
        servers.samples,
        servers.pids.len(),
        servers.pids,
        servers.most_waiting,
    );
    if problems.is_empty() && failed == 0 && foreign == 0 {
        Ok(summary)
    } else {
        Err(format!("{}; {summary}", problems.join("; ")))
    }
}
