//! The load-balancer case of `cargo xtask cluster`: HAProxy (the
//! distribution's package) on 127.0.0.1 in front of the `stoa serve` nodes,
//! checking `GET /api/health`; under load through HAProxy, every node is
//! restarted in turn (SIGTERM, drain, start on the same address). Checked:
//! no request fails, HAProxy marks each node DOWN before its listener
//! closes (health answers 503 `draining` first, `STOA_DRAIN_MS`), and each
//! comes back UP before the next one stops. p50/p99 are reported.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Node, TENANT_ADMIN, api, login, stop_child};
use crate::bench::load::{self, Request};
use crate::cmd::{self, Result};

/// How long a stopping node serves with health at 503: above the checks'
/// interval (300 ms) times their fall count (2), with room to spare.
pub const DRAIN_MS: &str = "1500";

/// How long the load runs; the restarts must end within it.
const LOAD_WINDOW: Duration = Duration::from_secs(60);

/// A system tool from a distribution package: on `PATH`, or in `/usr/sbin`
/// (not on a non-root user's `PATH`); otherwise says what to install.
pub fn system_tool(binary: &str, package: &str) -> Result<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/bin", "/sbin"].map(PathBuf::from));
    dirs.into_iter()
        .map(|d| d.join(binary))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "`{binary}` not found: install the distribution's package \
                 (Debian/Ubuntu: `apt-get install -y {package}`) and run the drill again"
            )
        })
}

/// An HAProxy child process; stopped on drop.
struct Haproxy {
    child: Child,
    front: SocketAddr,
    stats: SocketAddr,
}

impl Haproxy {
    fn start(dir: &Path, backends: &[(&str, SocketAddr)]) -> Result<Self> {
        let program = system_tool("haproxy", "haproxy")?;
        let front: SocketAddr = ([127, 0, 0, 1], cmd::free_port()?).into();
        let stats: SocketAddr = ([127, 0, 0, 1], cmd::free_port()?).into();
        let servers: String = backends
            .iter()
            .map(|(name, addr)| format!("    server {name} {addr} check\n"))
            .collect();
        // Retries cover connections refused (never sent, so safe for any
        // method); nothing retries a request a server has received.
        let config = format!(
            "global\n    maxconn 2000\n\n\
             defaults\n    mode http\n    timeout connect 2s\n    timeout client 60s\n    \
             timeout server 60s\n    retries 3\n    option redispatch\n\n\
             frontend front\n    bind {front}\n    default_backend stoa\n\n\
             backend stoa\n    balance roundrobin\n    option httpchk GET /api/health\n    \
             http-check expect status 200\n    default-server inter 300ms fall 2 rise 2\n{servers}\n\
             listen stats\n    bind {stats}\n    stats enable\n    stats uri /stats\n"
        );
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, config)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let log = std::fs::File::create(dir.join("haproxy.log")).map_err(|e| e.to_string())?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(program)
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start haproxy: {e}"))?;
        let mut proxy = Self {
            child,
            front,
            stats,
        };
        let started = Instant::now();
        while proxy
            .statuses()
            .map_or(true, |s| s.iter().any(|(_, st)| st != "UP"))
        {
            if let Ok(Some(status)) = proxy.child.try_wait() {
                return Err(format!(
                    "haproxy exited with {status} (see {})",
                    dir.join("haproxy.log").display()
                ));
            }
            if started.elapsed() > Duration::from_secs(20) {
                return Err(format!(
                    "haproxy backends not UP within 20 s: {:?}",
                    proxy.statuses()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(proxy)
    }

    /// (server, status) of every backend server, from the stats CSV.
    fn statuses(&self) -> Result<Vec<(String, String)>> {
        statuses(self.stats)
    }
}

fn statuses(stats: SocketAddr) -> Result<Vec<(String, String)>> {
    let (code, body) =
        load::once_within(stats, &Request::get("/stats;csv"), Duration::from_secs(2))?;
    if code != 200 {
        return Err(format!("haproxy stats answered {code}"));
    }
    let text = String::from_utf8_lossy(&body);
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .trim_start_matches("# ")
        .split(',')
        .collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (px, sv, st) = match (col("pxname"), col("svname"), col("status")) {
        (Some(a), Some(b), Some(c)) => (a, b, c),
        _ => return Err(format!("unexpected haproxy stats header: {header:?}")),
    };
    Ok(lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| {
            f.get(px) == Some(&"stoa") && !matches!(f.get(sv), Some(&"BACKEND" | &"FRONTEND"))
        })
        .filter_map(|f| Some((f.get(sv)?.to_string(), f.get(st)?.to_string())))
        .collect())
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        stop_child(&mut self.child, Duration::from_secs(5));
    }
}

/// Status changes HAProxy reported, sampled every 20 ms.
type Transitions = Arc<Mutex<Vec<(Instant, String, String)>>>;

fn watch(stats: SocketAddr, stop: Arc<AtomicBool>) -> (Transitions, std::thread::JoinHandle<()>) {
    let seen: Transitions = Arc::default();
    let out = seen.clone();
    let handle = std::thread::spawn(move || {
        let mut last: Vec<(String, String)> = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            if let Ok(now) = statuses(stats) {
                for (server, status) in &now {
                    if !last.iter().any(|(s, st)| s == server && st == status)
                        && let Ok(mut seen) = out.lock()
                    {
                        seen.push((Instant::now(), server.clone(), status.clone()));
                    }
                }
                last = now;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    (seen, handle)
}

/// When `server` first reached `status` (exactly: `UP 1/2` is a server
/// going down) at or after `after`.
fn first_after(seen: &Transitions, server: &str, after: Instant, status: &str) -> Option<Instant> {
    seen.lock()
        .ok()?
        .iter()
        .find_map(|(at, sv, st)| (sv == server && *at >= after && st == status).then_some(*at))
}

/// The case: `nodes` are the running `stoa serve` nodes (started with
/// `STOA_DRAIN_MS` = [`DRAIN_MS`] in `env`), replaced by their restarts.
pub fn rolling_restart(
    stoa: &Path,
    url: &str,
    dir: &Path,
    env: &[(&str, String)],
    nodes: &mut [Node],
) -> Result<String> {
    let mut backends = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        backends.push((format!("s{i}"), node.addr()?));
    }
    let named: Vec<(&str, SocketAddr)> = backends.iter().map(|(n, a)| (n.as_str(), *a)).collect();
    let proxy = Haproxy::start(dir, &named)?;
    let token = login(proxy.front, TENANT_ADMIN)?;
    let deal = json!({"title": "behind the load balancer"});
    let requests = vec![
        api(
            "GET",
            "/api/customers/deals?pageSize=20&includeTotal=false",
            &token,
            None,
        ),
        api("POST", "/api/customers/deals", &token, Some(&deal)),
        api("GET", "/api/auth/roles", &token, None),
        api("GET", "/api/customers/pipeline-stages", &token, None),
    ];
    let front = proxy.front;
    let load =
        std::thread::spawn(move || load::drive(front, &requests, 6, Duration::ZERO, LOAD_WINDOW));
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let (seen, watcher) = watch(proxy.stats, stop.clone());
    std::thread::sleep(Duration::from_secs(3));
    let mut timeline = Vec::new();
    let mut problems = Vec::new();
    for (i, node) in nodes.iter_mut().enumerate() {
        let server = &backends[i].0;
        let addr = backends[i].1;
        let term = Instant::now();
        let exited = node.stop_gracefully(Duration::from_secs(40))?;
        let exit_at = term + exited;
        let name = format!("{}-restarted", node.name);
        *node = Node::serve_at(stoa, url, dir, &name, env, addr)?;
        let listening = term.elapsed();
        let up = loop {
            if let Some(at) = first_after(&seen, server, exit_at, "UP") {
                break at;
            }
            if term.elapsed() > Duration::from_secs(30) {
                problems.push(format!("{server} not back UP within 30 s of SIGTERM"));
                break Instant::now();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        match first_after(&seen, server, term, "DOWN") {
            Some(down) if down <= exit_at => timeline.push(format!(
                "{server}: DOWN in HAProxy {:.2} s after SIGTERM, exited at {:.2} s, listening again at {:.2} s, UP at {:.2} s",
                (down - term).as_secs_f64(),
                exited.as_secs_f64(),
                listening.as_secs_f64(),
                (up - term).as_secs_f64()
            )),
            other => problems.push(format!(
                "{server}: HAProxy saw DOWN at {:?} s, the process exited at {:.2} s (not taken out first)",
                other.map(|d| (d - term).as_secs_f64()),
                exited.as_secs_f64()
            )),
        }
    }
    let restarts_took = started.elapsed();
    if restarts_took + Duration::from_secs(2) > LOAD_WINDOW {
        problems.push(format!(
            "the restarts took {:.1} s, longer than the load window",
            restarts_took.as_secs_f64()
        ));
    }
    let outcome = load.join().map_err(|_| "the load thread panicked")?;
    stop.store(true, Ordering::Relaxed);
    let _ = watcher.join();
    drop(proxy);
    let total = outcome.requests + outcome.errors;
    if outcome.errors > 0 {
        problems.push(format!("{} of {total} requests failed", outcome.errors));
    }
    let figures = format!(
        "{total} requests through HAProxy in {:.0} s ({:.0}/s, 6 connections, reads and deal creation), {} failed, p50 {:.1} ms, p99 {:.1} ms; restarts done {:.1} s after the first SIGTERM; {}",
        LOAD_WINDOW.as_secs_f64(),
        outcome.rps(),
        outcome.errors,
        outcome.percentile_ms(0.50),
        outcome.percentile_ms(0.99),
        (restarts_took - Duration::from_secs(3)).as_secs_f64(),
        timeline.join("; ")
    );
    if problems.is_empty() {
        Ok(figures)
    } else {
        Err(format!("{}; {figures}", problems.join("; ")))
    }
}
