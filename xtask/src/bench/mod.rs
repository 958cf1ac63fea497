//! `cargo xtask bench`: starts the release server against its own database,
//! drives each scenario with concurrent keep-alive connections and writes
//! requests/s, p50/p99 latency and server memory to docs/benchmarks.md.
//!
//! Environment: `STOA_BENCH_SECONDS` (default 10 per scenario),
//! `STOA_BENCH_CONNECTIONS` (default 32), `STOA_BENCH_JOB_UNITS` (job sizes
//! for the queue's cost per unit, default `1000,10000,100000`).
//!
//! `cargo xtask bench jobs` runs only the job-queue measurement and prints it
//! (docs/benchmarks.md is left alone).

mod load;
mod report;

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{self, Result};
use crate::pg::Database;
use load::Request;
pub use report::Row;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The running server under test; stopped on drop.
struct Server {
    child: Child,
    addr: SocketAddr,
    metrics: SocketAddr,
    startup: Duration,
}

impl Server {
    fn start(stoa: &std::path::Path, url: &str) -> Result<Self> {
        let port = cmd::free_port()?;
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let metrics: SocketAddr = ([127, 0, 0, 1], cmd::free_port()?).into();
        let started = Instant::now();
        let child = Command::new(stoa)
            .args(["serve", "--bind", &addr.to_string()])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn")
            .env("STOA_METRICS_BIND", metrics.to_string())
            .env("STOA_JWT_SECRET", "bench-secret-0123456789abcdef")
            .env(
                "STOA_ENCRYPTION_KEY",
                "0202020202020202020202020202020202020202020202020202020202020202",
            )
            .env("APP_URL", "http://localhost:3000")
            .env("RATE_LIMIT_ENABLED", "false")
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start stoa: {e}"))?;
        let mut server = Self {
            child,
            addr,
            metrics,
            startup: Duration::ZERO,
        };
        loop {
            if let Ok((200, _)) = load::once(addr, &Request::get("/api/version")) {
                server.startup = started.elapsed();
                return Ok(server);
            }
            if started.elapsed() > Duration::from_secs(30) {
                return Err("stoa did not answer within 30 s".into());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Statements the server has sent to Postgres (from `/metrics`).
    fn db_queries(&self) -> Option<u64> {
        let (_, body) = load::once(self.metrics, &Request::get("/metrics")).ok()?;
        String::from_utf8_lossy(&body)
            .lines()
            .find(|l| l.starts_with("stoa_db_queries "))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
    }

    /// (current RSS, peak RSS) in MiB, from /proc.
    fn memory_mib(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
                .map(|kb| kb / 1024.0)
                .unwrap_or(0.0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        cmd::terminate(self.child.id());
        let _ = self.child.wait();
    }
}

/// One named load scenario.
struct Scenario {
    name: &'static str,
    requests: Vec<Request>,
    /// Overrides `STOA_BENCH_CONNECTIONS` (to read latency below saturation).
    connections: Option<usize>,
}

/// The demo accounts `stoa init --demo` creates.
const LOGIN_FORM: &str = "email=superadmin%40acme.com&password=secret";

/// The demo tenant's admin (not a super admin).
const ADMIN_LOGIN_FORM: &str = "email=admin%40acme.com&password=secret";

fn with_bearer(mut r: Request, token: &str) -> Request {
    r.headers
        .push(("Authorization".into(), format!("Bearer {token}")));
    r
}

fn scenarios(token: &str, admin: &str, key: &str, deep_cursor: &str) -> Vec<Scenario> {
    let bearer = |r: Request| with_bearer(r, token);
    let as_admin = |r: Request| with_bearer(r, admin);
    let with_key = |mut r: Request| {
        r.headers.push(("x-api-key".into(), key.to_string()));
        r
    };
    let features: Vec<String> = (0..20).map(|i| format!("\"auth.feature{i}\"")).collect();
    let feature_check = format!("{{\"features\":[{}]}}", features.join(","));
    vec![
        Scenario {
            name: "GET /api/version",
            requests: vec![Request::get("/api/version")],
            connections: None,
        },
        Scenario {
            name: "GET /api/health (one DB round trip)",
            requests: vec![Request::get("/api/health")],
            connections: None,
        },
        Scenario {
            name: "POST /api/auth/login (one argon2id verify each)",
            requests: vec![Request::post(
                "/api/auth/login",
                "application/x-www-form-urlencoded",
                LOGIN_FORM,
            )],
            connections: None,
        },
        Scenario {
            name: "GET /api/auth/profile (cached ACL)",
            requests: vec![bearer(Request::get("/api/auth/profile"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50 (100k users, capped count, tenant admin)",
            requests: vec![as_admin(Request::get("/api/auth/users?pageSize=50"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/auth/roles (tenant admin)",
            requests: vec![as_admin(Request::get("/api/auth/roles"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/devices/admin/devices?pageSize=50 (one statement, tenant admin)",
            requests: vec![as_admin(Request::get(
                "/api/devices/admin/devices?pageSize=50",
            ))],
            connections: None,
        },
        Scenario {
            name: "GET /api/api_keys/keys (one statement with role names, tenant admin)",
            requests: vec![as_admin(Request::get("/api/api_keys/keys"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/directory/tenants (one statement with access log, super admin)",
            requests: vec![bearer(Request::get("/api/directory/tenants"))],
            connections: None,
        },
        Scenario {
            name: "GET /api/auth/roles (super admin, every tenant)",
            requests: vec![bearer(Request::get("/api/auth/roles"))],
            connections: None,
        },
        Scenario {
            name: "GET action logs, 2 filters, 1M entries (count 1,000 ahead)",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions?actionType=edit&resourceKind=bench.kind3&pageSize=50",
            ))],
            connections: None,
        },
        Scenario {
            name: "same, includeTotal=true (exact count of 50,000)",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions?actionType=edit&resourceKind=bench.kind3&pageSize=50&includeTotal=true",
            ))],
            connections: None,
        },
        Scenario {
            name: "same, includeTotal=false",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions?actionType=edit&resourceKind=bench.kind3&pageSize=50&includeTotal=false",
            ))],
            connections: None,
        },
        Scenario {
            name: "GET action-log CSV export, 1000 entries",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions/export?limit=1000&actionType=edit",
            ))],
            connections: None,
        },
        Scenario {
            // Streamed downloads skip gzip: this must cost what the plain one does.
            name: "same export, client sends Accept-Encoding: gzip (sent uncompressed)",
            requests: vec![{
                let mut r = bearer(Request::get(
                    "/api/audit_logs/audit-logs/actions/export?limit=1000&actionType=edit",
                ));
                r.headers.push(("Accept-Encoding".into(), "gzip".into()));
                r
            }],
            connections: None,
        },
        Scenario {
            name: "GET action logs, 2 filters, 1M entries, 4 connections",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions?actionType=edit&resourceKind=bench.kind3&pageSize=50",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET action-log CSV export, 1000 entries, 4 connections",
            requests: vec![bearer(Request::get(
                "/api/audit_logs/audit-logs/actions/export?limit=1000&actionType=edit",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50&search=user01234 (10 of 100k users match, tenant admin)",
            requests: vec![as_admin(Request::get(
                "/api/auth/users?pageSize=50&search=user01234",
            ))],
            connections: None,
        },
        Scenario {
            name: "same, 4 connections",
            requests: vec![as_admin(Request::get(
                "/api/auth/users?pageSize=50&search=user01234",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50&search=user0123 (100 match: page + count), 4 connections",
            requests: vec![as_admin(Request::get(
                "/api/auth/users?pageSize=50&search=user0123",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50&search=bench (all 100k match), 4 connections",
            requests: vec![as_admin(Request::get(
                "/api/auth/users?pageSize=50&search=bench",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50 (first page of 100k), 4 connections",
            requests: vec![as_admin(Request::get("/api/auth/users?pageSize=50"))],
            connections: Some(4),
        },
        Scenario {
            name: "GET /api/auth/users?pageSize=50&page=1000 (offset 49,950), 4 connections",
            requests: vec![as_admin(Request::get(
                "/api/auth/users?pageSize=50&page=1000",
            ))],
            connections: Some(4),
        },
        Scenario {
            name: "same page by cursor (keyset), 4 connections",
            requests: vec![as_admin(Request::get(&format!(
                "/api/auth/users?pageSize=50&cursor={deep_cursor}"
            )))],
            connections: Some(4),
        },
        Scenario {
            // The user-list scenarios above logged the admin's reads.
            name: "GET access logs, the admin's own reads (page, capped count, names in one statement)",
            requests: vec![as_admin(Request::get(
                "/api/audit_logs/audit-logs/access?pageSize=50",
            ))],
            connections: None,
        },
        Scenario {
            name: "GET /api/progress/jobs?includeCompleted=true (page and capped count in one statement)",
            requests: vec![as_admin(Request::get(
                "/api/progress/jobs?includeCompleted=true&pageSize=50",
            ))],
            connections: None,
        },
        Scenario {
            name: "POST /api/auth/feature-check (20 features)",
            requests: vec![bearer(Request::post(
                "/api/auth/feature-check",
                "application/json",
                &feature_check,
            ))],
            connections: None,
        },
        Scenario {
            name: "POST /api/auth/feature-check (20 features), tenant admin JWT",
            requests: vec![as_admin(Request::post(
                "/api/auth/feature-check",
                "application/json",
                &feature_check,
            ))],
            connections: None,
        },
        Scenario {
            name: "same, API key with the admin role (x-api-key)",
            requests: vec![with_key(Request::post(
                "/api/auth/feature-check",
                "application/json",
                &feature_check,
            ))],
            connections: None,
        },
        Scenario {
            name: "same, API key sent as Authorization: Bearer",
            requests: vec![with_bearer(
                Request::post(
                    "/api/auth/feature-check",
                    "application/json",
                    &feature_check,
                ),
                key,
            )],
            connections: None,
        },
        Scenario {
            name: "GET /api/auth/admin/nav (tenant admin)",
            requests: vec![as_admin(Request::get("/api/auth/admin/nav"))],
            connections: None,
        },
    ]
}

/// `nextCursor` of a list page.
fn cursor_of(addr: SocketAddr, path: &str, token: &str) -> Result<String> {
    let (status, body) = load::once(addr, &with_bearer(Request::get(path), token))?;
    let json: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| format!("{path} is not JSON: {e}"))?;
    match json["nextCursor"].as_str() {
        Some(cursor) if status == 200 => Ok(cursor.to_string()),
        _ => Err(format!("{path} answered {status} without a cursor: {json}")),
    }
}

/// Signs in with a login form and returns the access token.
fn login(addr: SocketAddr, form: &str) -> Result<String> {
    let req = Request::post("/api/auth/login", "application/x-www-form-urlencoded", form);
    let (status, body) = load::once(addr, &req)?;
    let json: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| format!("login answer is not JSON: {e}"))?;
    match json["token"].as_str() {
        Some(token) if status == 200 => Ok(token.to_string()),
        _ => Err(format!("login failed with {status}: {json}")),
    }
}

/// Seeds `STOA_BENCH_AUDIT_ROWS` (default 1,000,000) action-log entries and
/// returns the command-bus overhead note.
fn audit_seed(stoa: &std::path::Path, url: &str) -> Result<String> {
    let rows = env_number("STOA_BENCH_AUDIT_ROWS", 1_000_000);
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args([
                "seed",
                "action-logs",
                "--count",
                &rows.to_string(),
                "--mutations",
                "200",
            ])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    let json: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap_or(""))
        .map_err(|e| format!("seed action-logs printed `{out}`: {e}"))?;
    match (ok, json["msBareWrite"].as_f64(), json["msCommand"].as_f64()) {
        (true, Some(bare), Some(bus)) => Ok(format!(
            "{:.2} ms bare write, {:.2} ms through the bus (+{:.2} ms: action log + outbox in the same transaction); {} action-log rows seeded in {:.0} s",
            bare,
            bus,
            bus - bare,
            json["seeded"],
            json["seedSeconds"].as_f64().unwrap_or(0.0)
        )),
        _ => Err(format!("seed action-logs failed: {out}")),
    }
}

/// Times recording `STOA_BENCH_RECORD_ROWS` (default 10,000) action-log
/// entries one by one against one batch; returns the note.
fn record_bench(stoa: &std::path::Path, url: &str) -> Result<String> {
    let rows = env_number("STOA_BENCH_RECORD_ROWS", 10_000);
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["bench-record", "--count", &rows.to_string()])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    let json: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap_or(""))
        .map_err(|e| format!("bench-record printed `{out}`: {e}"))?;
    match (ok, json["msOneByOne"].as_f64(), json["msBatch"].as_f64()) {
        (true, Some(one), Some(batch)) if batch > 0.0 => Ok(format!(
            "{} rows (+1 event each) in one transaction: {:.0} ms one by one, {:.0} ms as one batch ({:.1}x; {:.1} vs {:.1} µs per row)",
            json["rows"],
            one,
            batch,
            one / batch,
            one * 1000.0 / rows as f64,
            batch * 1000.0 / rows as f64,
        )),
        _ => Err(format!("bench-record failed: {out}")),
    }
}

/// Creates an API key holding the demo `admin` role (as the super admin) and
/// returns its secret.
fn create_key(addr: SocketAddr, token: &str) -> Result<String> {
    let req = with_bearer(
        Request::post(
            "/api/api_keys/keys",
            "application/json",
            r#"{"name":"bench","roles":["admin"]}"#,
        ),
        token,
    );
    let (status, body) = load::once(addr, &req)?;
    let json: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| format!("key answer is not JSON: {e}"))?;
    match json["secret"].as_str() {
        Some(secret) if status == 201 => Ok(secret.to_string()),
        _ => Err(format!("creating an API key failed with {status}: {json}")),
    }
}

/// Runs `stoa bench-jobs`: one job of each size in `STOA_BENCH_JOB_UNITS`
/// through a worker; returns the note with the cost per unit at each size.
fn jobs_cost(stoa: &std::path::Path, url: &str) -> Result<String> {
    let sizes =
        std::env::var("STOA_BENCH_JOB_UNITS").unwrap_or_else(|_| "1000,10000,100000".into());
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["bench-jobs", "--units", &sizes])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    let json: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap_or(""))
        .map_err(|e| format!("bench-jobs printed `{out}`: {e}"))?;
    match (ok, json["perUnitUs"].as_object()) {
        (true, Some(per_unit)) if !per_unit.is_empty() => {
            let figures: Vec<String> = sizes
                .split(',')
                .filter_map(|n| {
                    let units = n.trim();
                    let us = per_unit.get(units)?.as_f64()?;
                    Some(format!("{us:.0} µs/unit at {units} units"))
                })
                .collect();
            Ok(format!(
                "{} (one empty unit per item: its job_units row, the progress counter, one transaction)",
                figures.join(", ")
            ))
        }
        _ => Err(format!("bench-jobs failed: {out}")),
    }
}

/// Adds `STOA_BENCH_USERS` (default 100,000) users to the demo tenant; returns a note.
fn users_seed(stoa: &std::path::Path, url: &str) -> Result<String> {
    let count = env_number("STOA_BENCH_USERS", 100_000);
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["seed", "users", "--count", &count.to_string()])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    let json: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap_or(""))
        .map_err(|e| format!("seed users printed `{out}`: {e}"))?;
    match (ok, json["seedSeconds"].as_f64()) {
        (true, Some(secs)) => Ok(format!("{count} users seeded in {secs:.0} s")),
        _ => Err(format!("seed users failed: {out}")),
    }
}

/// Milliseconds per argon2id hash and verify, measured by the release binary.
fn hash_cost(stoa: &std::path::Path) -> Result<(f64, f64)> {
    let (ok, out) = cmd::output(Command::new(stoa).args(["hash-bench", "--count", "20"]))?;
    let json: serde_json::Value =
        serde_json::from_str(out.trim()).map_err(|e| format!("hash-bench printed `{out}`: {e}"))?;
    match (ok, json["msPerHash"].as_f64(), json["msPerVerify"].as_f64()) {
        (true, Some(h), Some(v)) => Ok((h, v)),
        _ => Err(format!("hash-bench failed: {out}")),
    }
}

/// A 256 MiB multipart upload streamed into local storage and Money parsing,
/// measured in-process by the release binary; returns the row's note.
fn io_cost(stoa: &std::path::Path) -> Result<String> {
    let (ok, out) = cmd::output(Command::new(stoa).args(["io-bench", "--mib", "256"]))?;
    let json: serde_json::Value =
        serde_json::from_str(out.trim()).map_err(|e| format!("io-bench printed `{out}`: {e}"))?;
    match (
        ok,
        json["uploadMibPerSec"].as_f64(),
        json["uploadPeakGrowthMib"].as_f64(),
        json["usPerMoney"].as_f64(),
    ) {
        (true, Some(rate), Some(growth), Some(money)) => Ok(format!(
            "{rate:.0} MiB/s, peak RSS +{growth:.1} MiB for a 256 MiB file; \
             Money parse + format {money:.2} µs"
        )),
        _ => Err(format!("io-bench failed: {out}")),
    }
}

pub fn run(args: &[String]) -> Result<u8> {
    let seconds = env_number("STOA_BENCH_SECONDS", 10);
    let connections = env_number("STOA_BENCH_CONNECTIONS", 32) as usize;
    println!("xtask: building the release server");
    let stoa = cmd::build_stoa(true)?;
    let db = Database::discover()?;
    if args.first().map(String::as_str) == Some("jobs") {
        let result = jobs_only(&stoa, &db);
        db.finish();
        println!("xtask: job queue cost per unit: {}", result?);
        return Ok(0);
    }
    let result = bench(&stoa, &db, seconds, connections);
    db.finish();
    let rows = result?;
    report::write(&rows, seconds, connections)?;
    Ok(0)
}

/// `cargo xtask bench jobs`: the job-queue measurement alone.
fn jobs_only(stoa: &std::path::Path, db: &Database) -> Result<String> {
    let url = db.fresh_database("stoa_bench")?;
    cmd::run(
        Command::new(stoa)
            .args(["init", "--demo"])
            .env("DATABASE_URL", &url)
            .env("STOA_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )?;
    jobs_cost(stoa, &url)
}

fn bench(
    stoa: &std::path::Path,
    db: &Database,
    seconds: u64,
    connections: usize,
) -> Result<Vec<Row>> {
    let url = db.fresh_database("stoa_bench")?;
    cmd::run(
        Command::new(stoa)
            .args(["init", "--demo"])
            .env("DATABASE_URL", &url)
            .env("STOA_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )?;
    let (per_hash, per_verify) = hash_cost(stoa)?;
    let io = io_cost(stoa)?;
    println!("xtask: streamed upload {io}");
    let audit = audit_seed(stoa, &url)?;
    println!("xtask: {audit}");
    let record = record_bench(stoa, &url)?;
    println!("xtask: {record}");
    let users = users_seed(stoa, &url)?;
    println!("xtask: {users}");
    let jobs = jobs_cost(stoa, &url)?;
    println!("xtask: job queue: {jobs}");
    println!("xtask: argon2id {per_hash:.1} ms per hash, {per_verify:.1} ms per verify");
    let server = Server::start(stoa, &url)?;
    let (idle_rss, _) = server.memory_mib();
    let token = login(server.addr, LOGIN_FORM)?;
    let admin = login(server.addr, ADMIN_LOGIN_FORM)?;
    let key = create_key(server.addr, &token)?;
    println!(
        "xtask: server ready in {:.0} ms, idle RSS {idle_rss:.1} MiB",
        server.startup.as_secs_f64() * 1000.0
    );
    let mut rows = vec![
        Row::startup(server.startup, idle_rss),
        Row::note_only("command bus cost per mutation (organization update)", audit),
        Row::note_only("batch recording of action-log rows (record_batch)", record),
        Row::note_only("user-list data set", users),
        Row::note_only("job queue cost per unit (1k / 10k / 100k units)", jobs),
        Row::note_only(
            "argon2id password hash (m=19 MiB, t=2, p=1)",
            format!("{per_hash:.1} ms per hash, {per_verify:.1} ms per verify (one thread)"),
        ),
        Row::note_only(
            "multipart upload streamed to local storage (stoa_core::upload, in-process)",
            io,
        ),
    ];
    let deep_cursor = cursor_of(server.addr, "/api/auth/users?pageSize=50&page=999", &admin)?;
    for scenario in scenarios(&token, &admin, &key, &deep_cursor) {
        let queries_before = server.db_queries();
        let outcome = load::drive(
            server.addr,
            &scenario.requests,
            scenario.connections.unwrap_or(connections),
            Duration::from_secs(1),
            Duration::from_secs(seconds),
        );
        let (rss, peak) = server.memory_mib();
        let mut row = Row::from_outcome(scenario.name, &outcome, rss, peak);
        if let (Some(before), Some(after)) = (queries_before, server.db_queries()) {
            // Server-side statements over every request sent (warm-up included).
            let total = outcome.sent_total;
            if total > 0 {
                row.add_note(&format!(
                    "{:.2} DB statements/request",
                    (after - before) as f64 / total as f64
                ));
            }
        }
        println!("{}", row.describe());
        rows.push(row);
    }
    Ok(rows)
}
