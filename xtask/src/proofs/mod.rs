//! The reliability drills: `cargo xtask schemathesis`, `faults`, `cluster`,
//! `failover`, `replica` and `soak`. Each starts its own database (a private cluster, or the
//! server of `DATABASE_URL`; the fault drill always uses a private cluster
//! of its own because it stops and crashes it), seeds the demo tenant, runs
//! `stoa serve` / `stoa worker` processes as children and checks what
//! docs/reliability.md promises. Figures are printed; docs/reliability.md
//! records the measured ones with the command that reproduces them.

pub mod balancer;
mod client;
pub mod cluster;
pub mod failover;
pub mod faults;
mod formation;
mod model_hang;
pub mod pooler;
mod pooler_share;
mod pooler_turn;
pub mod replica;
pub mod schemathesis;
pub mod soak;

pub use client::*;

use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::bench::load::{self, Request};
use crate::cmd::{self, Result, root};

/// The demo accounts `stoa init --demo` creates (password `secret`).
pub const SUPER_ADMIN: &str = "superadmin@acme.com";
pub const TENANT_ADMIN: &str = "admin@acme.com";

/// Where the drills keep their logs and files: `.stoa/proofs/<task>`.
pub fn work_dir(task: &str) -> Result<PathBuf> {
    let dir = root().join(".stoa/proofs").join(task);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Whether `--release` was given (the default is the debug build, which
/// `cargo xtask test` has already built; the figures say which one ran).
pub fn release_flag(args: &[String]) -> bool {
    args.iter().any(|a| a == "--release")
}

/// The `stoa` binary a drill runs: `STOA_BIN` when set (one built already,
/// e.g. while the tree does not build), else the debug build, or the
/// release build with `--release`.
pub fn stoa_binary(args: &[String]) -> Result<PathBuf> {
    if let Some(bin) = std::env::var_os("STOA_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let release = release_flag(args);
    println!(
        "xtask: building the {} server",
        if release { "release" } else { "debug" }
    );
    cmd::build_stoa(release)
}

/// The value after `--name`, parsed.
pub fn arg_value<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

/// Migrates `url` and creates the demo tenant (Acme Corp and its three
/// accounts), then `deals` demo deals.
pub fn seed(stoa: &Path, url: &str, deals: u64) -> Result<()> {
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["init", "--demo"])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    if !ok {
        return Err(format!("stoa init --demo failed:\n{out}"));
    }
    if deals > 0 {
        let (ok, out) = cmd::output(
            Command::new(stoa)
                .args(["seed", "demo", "--deals", &deals.to_string()])
                .env("DATABASE_URL", url)
                .env("STOA_LOG", "warn"),
        )?;
        if !ok {
            return Err(format!("stoa seed demo failed:\n{out}"));
        }
    }
    Ok(())
}

/// One `stoa serve` or `stoa worker` child; SIGTERM and wait on drop.
pub struct Node {
    child: Option<Child>,
    pub name: String,
    /// The HTTP address (`stoa serve` only).
    pub addr: Option<SocketAddr>,
    pub log: PathBuf,
}

/// Settings every node of a drill shares (one secret, one key, one data
/// directory), so that any node can read what another wrote.
pub fn node_command(stoa: &Path, url: &str, dir: &Path, env: &[(&str, String)]) -> Command {
    let mut c = Command::new(stoa);
    c.env("DATABASE_URL", url)
        .env("STOA_LOG", "warn")
        .env("STOA_JWT_SECRET", "proofs-secret-0123456789abcdef0123")
        .env(
            "STOA_ENCRYPTION_KEY",
            "0303030303030303030303030303030303030303030303030303030303030303",
        )
        .env("APP_URL", "http://localhost:3000")
        .env("RATE_LIMIT_ENABLED", "false")
        .env("STOA_DATA_DIR", dir.join("data"));
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

impl Node {
    /// Starts `stoa serve` on a free port and waits until it answers.
    pub fn serve(
        stoa: &Path,
        url: &str,
        dir: &Path,
        name: &str,
        env: &[(&str, String)],
    ) -> Result<Self> {
        let addr: SocketAddr = ([127, 0, 0, 1], cmd::free_port()?).into();
        Self::serve_at(stoa, url, dir, name, env, addr)
    }

    /// [`Self::serve`] on a given address (a restart behind a load balancer
    /// comes back where the balancer expects it).
    pub fn serve_at(
        stoa: &Path,
        url: &str,
        dir: &Path,
        name: &str,
        env: &[(&str, String)],
        addr: SocketAddr,
    ) -> Result<Self> {
        let mut c = node_command(stoa, url, dir, env);
        c.args(["serve", "--bind", &addr.to_string()]);
        let mut node = Self::spawn(c, dir, name)?;
        node.addr = Some(addr);
        let started = Instant::now();
        loop {
            if let Ok((200, _)) = load::once(addr, &Request::get("/api/version")) {
                return Ok(node);
            }
            if let Some(child) = node.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(format!(
                    "{name} exited with {status} (see {})",
                    node.log.display()
                ));
            }
            if started.elapsed() > Duration::from_secs(60) {
                return Err(format!("{name} did not answer within 60 s"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts `stoa worker`.
    pub fn worker(
        stoa: &Path,
        url: &str,
        dir: &Path,
        name: &str,
        env: &[(&str, String)],
    ) -> Result<Self> {
        let mut c = node_command(stoa, url, dir, env);
        c.arg("worker");
        Self::spawn(c, dir, name)
    }

    fn spawn(mut c: Command, dir: &Path, name: &str) -> Result<Self> {
        let log = dir.join(format!("{name}.log"));
        let out =
            File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = c
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        Ok(Self {
            child: Some(child),
            name: name.to_string(),
            addr: None,
            log,
        })
    }

    pub fn addr(&self) -> Result<SocketAddr> {
        self.addr
            .ok_or_else(|| format!("{} serves no HTTP", self.name))
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// SIGKILL, no chance to clean up.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM, then waits for the process to exit (SIGKILL after `within`);
    /// returns how long it took to exit.
    pub fn stop_gracefully(&mut self, within: Duration) -> Result<Duration> {
        let mut child = self
            .child
            .take()
            .ok_or_else(|| format!("{} is not running", self.name))?;
        stop_child(&mut child, within)
            .ok_or_else(|| format!("{} did not exit within {within:?} of SIGTERM", self.name))
    }

    /// Resident memory in MiB (from /proc).
    pub fn rss_mib(&self) -> f64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    }

    /// Lines of its log that report a panic.
    pub fn panics(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("panicked"))
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            cmd::terminate(child.id());
            let deadline = Instant::now() + Duration::from_secs(15);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// SIGTERM, then SIGKILL when `child` has not exited within `within`;
/// how long it took to exit after SIGTERM (`None`: it was killed).
pub fn stop_child(child: &mut Child, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    cmd::terminate(child.id());
    while started.elapsed() < within {
        if let Ok(Some(_)) = child.try_wait() {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Prints a drill's verdict over its failed checks; the exit code.
pub fn verdict(task: &str, failures: &[String]) -> u8 {
    if failures.is_empty() {
        println!("xtask: {task}: every check passed");
        0
    } else {
        eprintln!(
            "xtask: {task}: {} check(s) failed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        );
        1
    }
}

/// p-quantile of sorted values.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}
