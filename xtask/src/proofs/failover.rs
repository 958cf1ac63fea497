//! `cargo xtask failover [--release]`: a standby that takes over. A
//! pg_auto_failover formation on 127.0.0.1 (monitor, primary `node1`,
//! synchronous secondary `node2`: [`super::formation`]); one `stoa serve`
//! and two `stoa worker` processes reach it through one multi-host URL
//! (`postgres://…:p1,…:p2/db?target_session_attrs=read-write`). Under mixed
//! load (four writers, two readers) and while a bulk job runs, the primary
//! machine dies (SIGKILL to its keeper and Postgres). Checked:
//!
//! - the monitor promotes the secondary and stoa serves writes again,
//!   without a restart or a configuration change, within 60 s (the time to
//!   the first acknowledged write after the kill is reported);
//! - every deal whose creation was acknowledged (201) before or after the
//!   kill is on the new primary (synchronous replication);
//! - no request waited past the pool's bound: while no primary exists,
//!   requests answer 503 within `STOA_DB_TIMEOUT_MS` plus the connect
//!   timeout, none hangs;
//! - the bulk job completes with every unit done once: processed count
//!   equal to its size, exactly those deals moved, one `job_units` row per
//!   unit.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::faults::{acknowledged_present, join_load, mixed_load};
use super::formation::{Formation, psql};
use super::{
    Node, TENANT_ADMIN, bulk_stage, deal_ids, login, progress, quantile, seed, stage, stoa_binary,
    wait_completed, work_dir,
};
use crate::cmd::Result;

/// What the drill gives the pool to find a primary: a request waits at most
/// this long for a connection (`STOA_DB_TIMEOUT_MS`).
const DB_TIMEOUT_MS: u64 = 2_000;

/// Longest answer accepted from a request sent while no primary exists: the
/// pool's wait, one connect attempt per host (`connect_timeout=2`), and the
/// slack of a debug build on two cores.
const HANG_BOUND: Duration = Duration::from_secs(8);

pub fn run(args: &[String]) -> Result<u8> {
    let stoa = stoa_binary(args)?;
    let dir = work_dir("failover")?;
    println!("xtask: starting a pg_auto_failover formation (monitor, primary, secondary)");
    let mut formation = Formation::start(&dir)?;
    let outcome = drill(&stoa, &dir, &mut formation);
    drop(formation);
    match outcome {
        Ok(figures) => {
            println!("xtask: PASS standby takes over: {figures}");
            println!("xtask: failover: every check passed");
            Ok(0)
        }
        Err(why) => {
            println!("xtask: FAIL standby takes over: {why}");
            Ok(1)
        }
    }
}

fn drill(stoa: &Path, dir: &Path, formation: &mut Formation) -> Result<String> {
    let admin = formation.url("postgres");
    let sync = psql(&admin, "SHOW synchronous_standby_names")?;
    if sync.is_empty() {
        return Err("the primary has no synchronous standby".into());
    }
    psql(&admin, "CREATE DATABASE stoa_failover")?;
    let url = formation.url("stoa_failover");
    println!("xtask: DATABASE_URL={url} (synchronous_standby_names = {sync})");
    println!("xtask: seeding the demo tenant and 12,000 deals through the multi-host URL");
    seed(stoa, &url, 12_000)?;
    let timeout = ("STOA_DB_TIMEOUT_MS", DB_TIMEOUT_MS.to_string());
    let server = Node::serve(
        stoa,
        &url,
        dir,
        "server",
        &[("STOA_WORKERS", "0".into()), timeout.clone()],
    )?;
    let worker_env = [
        ("STOA_WORKERS", "1".to_string()),
        ("STOA_JOB_VISIBILITY_SECS", "5".to_string()),
        ("STOA_JOB_POLL_MS", "100".to_string()),
        timeout,
    ];
    let workers = [
        Node::worker(stoa, &url, dir, "worker-1", &worker_env)?,
        Node::worker(stoa, &url, dir, "worker-2", &worker_env)?,
    ];
    let addr = server.addr()?;
    let token = login(addr, TENANT_ADMIN)?;
    let lead = stage(addr, &token, "Lead")?;
    let won = stage(addr, &token, "Won")?;
    let ids = deal_ids(addr, &token, &lead, 10_000)?;
    let n = ids.len() as u64;
    // The writers create deals in Lead: Won grows by the job only.
    let count_in = |stage: &str| -> Result<u64> {
        psql(
            &url,
            &format!("SELECT count(*) FROM customer_deals WHERE pipeline_stage_id = '{stage}'"),
        )?
        .parse()
        .map_err(|e| format!("deal count: {e}"))
    };
    let won_before = count_in(&won)?;

    let stop = Arc::new(AtomicBool::new(false));
    // Patience well past the bound: a hang shows as a long `took`.
    let threads = mixed_load(addr, &token, &lead, &stop, Duration::from_secs(30));
    std::thread::sleep(Duration::from_secs(3));
    let job = bulk_stage(addr, &token, &ids, &won)?;
    let started = Instant::now();
    let at_kill = loop {
        let p = progress(addr, &token, &job)?;
        let done = p["processedCount"].as_u64().unwrap_or(0);
        if done > 0 && done < n {
            break done;
        }
        if p["status"] == "completed" {
            stop.store(true, Ordering::Relaxed);
            return Err(format!("the job of {n} deals completed before the kill"));
        }
        if started.elapsed() > Duration::from_secs(120) {
            stop.store(true, Ordering::Relaxed);
            return Err(format!("the job made no progress within 120 s: {p}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let old = formation.primary()?.unwrap_or_else(|| "node1".into());
    let killed_at = Instant::now();
    formation.kill(&old)?;
    println!("xtask: killed the primary {old} at {at_kill} of {n} units processed");
    // The monitor's view: when another node is primary.
    let promoted = loop {
        if let Ok(Some(now)) = formation.primary()
            && now != old
        {
            break Some((now, killed_at.elapsed()));
        }
        if killed_at.elapsed() > Duration::from_secs(60) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let done = wait_completed(addr, &token, &job, Duration::from_secs(240));
    // Some load on the new primary after the job too.
    std::thread::sleep(Duration::from_secs(5));
    stop.store(true, Ordering::Relaxed);
    let samples = join_load(threads)?;
    let panics: Vec<String> = std::iter::once(&server)
        .chain(workers.iter())
        .flat_map(Node::panics)
        .collect();
    drop(workers);
    drop(server);

    let mut problems = Vec::new();
    let (new_primary, promoted_in) = match promoted {
        Some((name, took)) => (name, took),
        None => {
            problems.push("the monitor promoted no node within 60 s".into());
            (String::from("none"), Duration::MAX)
        }
    };
    let ok = |s: &super::faults::Sample| s.status.is_some_and(|c| c < 400);
    let first_write = samples
        .iter()
        .filter(|s| s.sent >= killed_at && s.created.is_some())
        .map(|s| (s.sent + s.took).duration_since(killed_at))
        .min();
    let serves_in = match first_write {
        Some(d) if d <= Duration::from_secs(60) => d,
        other => {
            problems.push(format!(
                "no write acknowledged within 60 s of the kill ({other:?})"
            ));
            other.unwrap_or(Duration::MAX)
        }
    };
    // Requests sent between the kill and the first acknowledged write.
    let outage: Vec<&super::faults::Sample> = samples
        .iter()
        .filter(|s| s.sent >= killed_at && s.sent < killed_at + serves_in)
        .collect();
    let answered_503 = outage.iter().filter(|s| s.status == Some(503)).count();
    let other: Vec<String> = outage
        .iter()
        .filter(|s| s.status != Some(503) && !ok(s))
        .map(|s| format!("{:?} after {:.1} s", s.status, s.took.as_secs_f64()))
        .collect();
    if !other.is_empty() {
        problems.push(format!(
            "{} requests during the failover failed otherwise than 503: {}",
            other.len(),
            other.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    let mut all_ms: Vec<f64> = samples
        .iter()
        .map(|s| s.took.as_secs_f64() * 1000.0)
        .collect();
    all_ms.sort_by(f64::total_cmp);
    let longest = all_ms.last().copied().unwrap_or(0.0);
    if longest > HANG_BOUND.as_secs_f64() * 1000.0 {
        problems.push(format!(
            "a request took {longest:.0} ms (bound {} ms)",
            HANG_BOUND.as_millis()
        ));
    }
    let late: Vec<&super::faults::Sample> = samples
        .iter()
        .filter(|s| s.sent > killed_at + serves_in + Duration::from_secs(5) && !ok(s))
        .collect();
    if !late.is_empty() {
        problems.push(format!(
            "{} requests failed more than 5 s after the first acknowledged write",
            late.len()
        ));
    }
    let (present, acknowledged) = acknowledged_present(&samples, |list| {
        psql(
            &url,
            &format!("SELECT count(*) FROM customer_deals WHERE id IN ({list})"),
        )
    })?;
    let before_kill = samples
        .iter()
        .filter(|s| s.sent < killed_at && s.created.is_some())
        .count();
    if present != acknowledged {
        problems.push(format!(
            "{} of {acknowledged} acknowledged deals are missing",
            acknowledged - present
        ));
    }
    let job_figures = match done {
        Ok(p) => {
            let processed = p["processedCount"].as_u64().unwrap_or(0);
            let failed = p["resultSummary"]["failedCount"].as_u64().unwrap_or(0);
            let moved = count_in(&won)? - won_before;
            let queue = psql(
                &url,
                &format!(
                    "SELECT q.attempts, q.status, (SELECT coalesce(sum(items), 0) FROM job_units u WHERE u.job_id = q.id) \
                     FROM job_queue q WHERE q.progress_job_id = '{job}'"
                ),
            )?;
            let fields: Vec<&str> = queue.split('|').collect();
            let unit_items: u64 = fields.get(2).and_then(|a| a.parse().ok()).unwrap_or(0);
            if processed != n || failed != 0 || moved != n || unit_items != n {
                problems.push(format!(
                    "the job is not exactly once: processed {processed}, failed {failed}, moved {moved}, unit items {unit_items} of {n}"
                ));
            }
            format!(
                "bulk job of {n}: {at_kill} done at the kill, completed with processed {processed}, failed {failed}, \
                 {moved} moved, unit items {unit_items}, queue row {} attempts, status {}",
                fields.first().unwrap_or(&"?"),
                fields.get(1).unwrap_or(&"?")
            )
        }
        Err(e) => {
            problems.push(format!("the bulk job did not complete: {e}"));
            "bulk job incomplete".into()
        }
    };
    if !panics.is_empty() {
        problems.push(format!("panics: {}", panics.join("; ")));
    }
    let mut outage_ms: Vec<f64> = outage
        .iter()
        .map(|s| s.took.as_secs_f64() * 1000.0)
        .collect();
    outage_ms.sort_by(f64::total_cmp);
    let figures = format!(
        "{} requests; the monitor promoted {new_primary} {:.1} s after the kill, stoa acknowledged a write again \
         {:.1} s after it; {} requests in between: {answered_503} answered 503, p50 {:.0} ms, max {:.0} ms; \
         longest request of the run {longest:.0} ms; {present}/{acknowledged} acknowledged deals on the new primary \
         ({before_kill} acknowledged before the kill); {job_figures}",
        samples.len(),
        promoted_in.as_secs_f64(),
        serves_in.as_secs_f64(),
        outage.len(),
        quantile(&outage_ms, 0.5),
        outage_ms.last().copied().unwrap_or(0.0),
    );
    if problems.is_empty() {
        Ok(figures)
    } else {
        Err(format!("{}; figures: {figures}", problems.join("; ")))
    }
}
