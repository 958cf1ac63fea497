//! `cargo xtask bench`: starts the release server against its own database,
//! drives each scenario with concurrent keep-alive connections and writes
//! requests/s, p50/p99 latency and server memory to docs/benchmarks.md.
//!
//! Environment: `STOA_BENCH_SECONDS` (default 10 per scenario),
//! `STOA_BENCH_CONNECTIONS` (default 32).

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
    startup: Duration,
}

impl Server {
    fn start(stoa: &std::path::Path, url: &str) -> Result<Self> {
        let port = cmd::free_port()?;
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let started = Instant::now();
        let child = Command::new(stoa)
            .args(["serve", "--bind", &addr.to_string()])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn")
            .env("RATE_LIMIT_ENABLED", "false")
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start stoa: {e}"))?;
        let mut server = Self {
            child,
            addr,
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
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "GET /api/version",
            requests: vec![Request::get("/api/version")],
        },
        Scenario {
            name: "GET /api/health (one DB round trip)",
            requests: vec![Request::get("/api/health")],
        },
    ]
}

pub fn run(_args: &[String]) -> Result<u8> {
    let seconds = env_number("STOA_BENCH_SECONDS", 10);
    let connections = env_number("STOA_BENCH_CONNECTIONS", 32) as usize;
    println!("xtask: building the release server");
    let stoa = cmd::build_stoa(true)?;
    let db = Database::discover()?;
    let result = bench(&stoa, &db, seconds, connections);
    db.finish();
    let rows = result?;
    report::write(&rows, seconds, connections)?;
    Ok(0)
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
            .arg("migrate")
            .env("DATABASE_URL", &url)
            .stdout(Stdio::null()),
    )?;
    let server = Server::start(stoa, &url)?;
    let (idle_rss, _) = server.memory_mib();
    println!(
        "xtask: server ready in {:.0} ms, idle RSS {idle_rss:.1} MiB",
        server.startup.as_secs_f64() * 1000.0
    );
    let mut rows = vec![Row::startup(server.startup, idle_rss)];
    for scenario in scenarios() {
        let outcome = load::drive(
            server.addr,
            &scenario.requests,
            connections,
            Duration::from_secs(1),
            Duration::from_secs(seconds),
        );
        let (rss, peak) = server.memory_mib();
        let row = Row::from_outcome(scenario.name, &outcome, rss, peak);
        println!("{}", row.describe());
        rows.push(row);
    }
    Ok(rows)
}
