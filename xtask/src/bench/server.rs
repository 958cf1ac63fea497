//! The release server under test: started against the bench database,
//! read for its statement count and memory, stopped on drop.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::load::{self, Request};
use crate::cmd::{self, Result};

/// The running server under test; stopped on drop.
pub(super) struct Server {
    child: Child,
    pub(super) addr: SocketAddr,
    metrics: SocketAddr,
    pub(super) startup: Duration,
}

impl Server {
    pub(super) fn start(stoa: &std::path::Path, url: &str) -> Result<Self> {
        Self::start_with_env(stoa, url, &[])
    }

    /// [`Server::start`] with extra environment variables (a module switched on).
    pub(super) fn start_with_env(
        stoa: &std::path::Path,
        url: &str,
        env: &[(&str, &str)],
    ) -> Result<Self> {
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
            .envs(env.iter().copied())
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
    pub(super) fn db_queries(&self) -> Option<u64> {
        self.metric("stoa_db_queries")
    }

    /// A counter or gauge of the server's `/metrics`.
    pub(super) fn metric(&self, name: &str) -> Option<u64> {
        let (_, body) = load::once(self.metrics, &Request::get("/metrics")).ok()?;
        String::from_utf8_lossy(&body)
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .map(|v| v as u64)
    }

    /// (current RSS, peak RSS) in MiB, from /proc.
    pub(super) fn memory_mib(&self) -> (f64, f64) {
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
