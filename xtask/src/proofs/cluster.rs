//! `cargo xtask cluster [--release]`: two `stoa serve` nodes (A and B, no
//! in-process workers) and two `stoa worker` processes on one Postgres
//! database and one object store, all on 127.0.0.1. The object store is a
//! moto S3 server (as `cargo xtask test` starts it) when Python can run one,
//! else one shared `STOA_DATA_DIR` (said so in the output). Checked:
//!
//! - a role change made through A is enforced by B on its very next request
//!   (B answered the same request with 200 just before);
//! - bulk jobs queued through A are run by both workers (their process ids
//!   are seen holding leases) and each completes exactly once (processed
//!   count equal to its size, exactly those deals moved);
//! - a file uploaded through A is served byte for byte by B;
//! - the undo of a deal created through A, asked for through B, removes it
//!   (A then answers 404);
//! - the recurring jobs, which every worker process tries to enqueue every
//!   second, ran once per period: after 150 s the minute-long
//!   `progress.sweep_stale` ran 2 or 3 times (not twice as often), the
//!   others once;
//! - behind HAProxy (`balancer`), a rolling restart of both servers under
//!   load answers every request (p99 reported).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{
    Node, SUPER_ADMIN, TENANT_ADMIN, api, balancer, bulk_stage, call, deal_ids, expect, login,
    progress, release_flag, seed, stage, verdict, wait_completed, work_dir,
};
use crate::bench::load::{self, Request};
use crate::cmd::{self, Result};
use crate::pg::Database;
use crate::s3::S3Server;

pub fn run(args: &[String]) -> Result<u8> {
    let release = release_flag(args);
    println!(
        "xtask: building the {} server",
        if release { "release" } else { "debug" }
    );
    let stoa = cmd::build_stoa(release)?;
    let db = Database::discover()?;
    let result = drill(&stoa, &db);
    db.finish();
    Ok(verdict("cluster", &result?))
}

/// `STOA_S3_*` for a fresh bucket on `s3`.
fn s3_env(s3: &S3Server) -> Result<Vec<(&'static str, String)>> {
    let bucket = format!("stoa-cluster-{}", std::process::id());
    let endpoint = s3.endpoint.trim_start_matches("http://");
    let addr: SocketAddr = endpoint
        .parse()
        .map_err(|e| format!("moto endpoint {endpoint}: {e}"))?;
    let create = Request {
        method: "PUT",
        path: format!("/{bucket}"),
        headers: Vec::new(),
        body: None,
    };
    match load::once(addr, &create)? {
        (200, _) => {}
        (status, body) => {
            return Err(format!(
                "creating bucket {bucket} answered {status}: {}",
                String::from_utf8_lossy(&body)
            ));
        }
    }
    Ok(vec![
        ("STOA_S3_BUCKET", bucket),
        ("STOA_S3_ENDPOINT", s3.endpoint.clone()),
        ("STOA_S3_REGION", "us-east-1".into()),
        ("STOA_S3_ACCESS_KEY_ID", "testing".into()),
        ("STOA_S3_SECRET_ACCESS_KEY", "testing".into()),
    ])
}

fn drill(stoa: &Path, db: &Database) -> Result<Vec<String>> {
    let dir = work_dir("cluster")?;
    let url = db.scratch_database("stoa_cluster")?;
    println!("xtask: seeding the demo tenant and 20,000 deals");
    seed(stoa, &url, 20_000)?;
    let s3 = S3Server::start();
    let mut env: Vec<(&str, String)> = match &s3 {
        Some(s3) => s3_env(s3)?,
        None => Vec::new(),
    };
    let store = if s3.is_some() {
        "one moto S3 bucket"
    } else {
        "one shared STOA_DATA_DIR (no S3-compatible server could start)"
    };
    let mut serve_env = env.clone();
    serve_env.push(("STOA_WORKERS", "0".into()));
    serve_env.push(("STOA_DRAIN_MS", balancer::DRAIN_MS.into()));
    env.push(("STOA_WORKERS", "2".into()));
    env.push(("STOA_JOB_POLL_MS", "100".into()));
    let a = Node::serve(stoa, &url, &dir, "node-a", &serve_env)?;
    let b = Node::serve(stoa, &url, &dir, "node-b", &serve_env)?;
    let workers_started = db.psql(&url, "SELECT now()")?;
    let started = Instant::now();
    let w1 = Node::worker(stoa, &url, &dir, "worker-1", &env)?;
    let w2 = Node::worker(stoa, &url, &dir, "worker-2", &env)?;
    println!(
        "xtask: nodes A {} and B {}, workers pid {} and {}, storage: {store}",
        a.addr()?,
        b.addr()?,
        w1.pid(),
        w2.pid()
    );
    let mut failures = Vec::new();
    let mut record = |name: &str, outcome: Result<String>| match outcome {
        Ok(figures) => println!("xtask: PASS {name}: {figures}"),
        Err(why) => {
            println!("xtask: FAIL {name}: {why}");
            failures.push(format!("{name}: {why}"));
        }
    };
    record("role change through A enforced by B", role_change(&a, &b));
    record(
        "bulk jobs shared by both workers, each exactly once",
        bulk_shared(db, &url, &a, [&w1, &w2]),
    );
    record(
        &format!("upload through A served by B ({store})"),
        upload(&a, &b),
    );
    record("undo through B of a deal created through A", undo(&a, &b));
    record(
        "recurring jobs enqueued once per period by two workers",
        recurring(db, &url, &workers_started, started),
    );
    let mut servers = [a, b];
    record(
        "rolling restart behind HAProxy under load",
        balancer::rolling_restart(stoa, &url, &dir, &serve_env, &mut servers),
    );
    let [a, b] = servers;
    for node in [&a, &b, &w1, &w2] {
        let panics = node.panics();
        if !panics.is_empty() {
            record(
                &format!("{} ran without panics", node.name),
                Err(panics.join("\n")),
            );
        }
    }
    Ok(failures)
}

fn admin_user_id(addr: SocketAddr, token: &str) -> Result<String> {
    let users = expect(
        addr,
        &api("GET", "/api/auth/users?pageSize=100", token, None),
        200,
    )?;
    users["items"]
        .as_array()
        .and_then(|items| items.iter().find(|u| u["email"] == TENANT_ADMIN))
        .and_then(|u| u["id"].as_str())
        .map(str::to_string)
        .ok_or_else(|| format!("{TENANT_ADMIN} not in the user list: {users}"))
}

fn role_change(a: &Node, b: &Node) -> Result<String> {
    let (a, b) = (a.addr()?, b.addr()?);
    let root = login(a, SUPER_ADMIN)?;
    let admin = login(b, TENANT_ADMIN)?;
    let probe = || api("GET", "/api/auth/roles", &admin, None);
    // B has served this admin (and cached whatever it caches).
    for _ in 0..3 {
        expect(b, &probe(), 200)?;
    }
    let id = admin_user_id(a, &root)?;
    let demote = json!({"id": id, "roles": ["employee"]});
    expect(a, &api("PUT", "/api/auth/users", &root, Some(&demote)), 200)?;
    let changed = Instant::now();
    let (after, _) = call(b, &probe())?;
    let took = changed.elapsed();
    let restore = json!({"id": id, "roles": ["admin"]});
    expect(
        a,
        &api("PUT", "/api/auth/users", &root, Some(&restore)),
        200,
    )?;
    // The grant back is seen by B too (a new session if the change ended it).
    let (restored, _) = call(b, &probe())?;
    let restored = if restored == 401 {
        let fresh = login(b, TENANT_ADMIN)?;
        call(b, &api("GET", "/api/auth/roles", &fresh, None))?.0
    } else {
        restored
    };
    let figures = format!(
        "B answered 200 before, {after} on the first request after the change through A ({:.0} ms later), {restored} after the role came back",
        took.as_secs_f64() * 1000.0
    );
    if matches!(after, 401 | 403) && restored == 200 {
        Ok(figures)
    } else {
        Err(figures)
    }
}

fn bulk_shared(db: &Database, url: &str, a: &Node, workers: [&Node; 2]) -> Result<String> {
    let addr = a.addr()?;
    let token = login(addr, TENANT_ADMIN)?;
    let lead = stage(addr, &token, "Lead")?;
    let won = stage(addr, &token, "Won")?;
    let ids = deal_ids(addr, &token, &lead, 3_000)?;
    let count_won = || -> Result<i64> {
        db.psql(
            url,
            &format!("SELECT count(*) FROM customer_deals WHERE pipeline_stage_id = '{won}'"),
        )?
        .parse::<i64>()
        .map_err(|e| e.to_string())
    };
    let before = count_won()?;
    let chunks: Vec<&[String]> = ids.chunks(ids.len().div_ceil(8).max(1)).collect();
    let started = Instant::now();
    let mut jobs = Vec::new();
    for chunk in &chunks {
        jobs.push((bulk_stage(addr, &token, chunk, &won)?, chunk.len() as u64));
    }
    // Which processes hold leases while the jobs run.
    let mut holders = BTreeSet::new();
    loop {
        let seen = db.psql(
            url,
            "SELECT DISTINCT split_part(locked_by, '-', 1) FROM job_queue \
             WHERE status = 'running' AND locked_by IS NOT NULL",
        )?;
        holders.extend(seen.lines().map(str::to_string).filter(|l| !l.is_empty()));
        let mut done = 0;
        for (job, _) in &jobs {
            if progress(addr, &token, job)?["status"] == "completed" {
                done += 1;
            }
        }
        if done == jobs.len() || started.elapsed() > Duration::from_secs(300) {
            break;
        }
    }
    let took = started.elapsed();
    let mut problems = Vec::new();
    for (job, size) in &jobs {
        let p = wait_completed(addr, &token, job, Duration::from_secs(10))?;
        let processed = p["processedCount"].as_u64().unwrap_or(0);
        if processed != *size {
            problems.push(format!("job {job}: processed {processed} of {size}"));
        }
    }
    let moved = count_won()? - before;
    if moved != ids.len() as i64 {
        problems.push(format!("{moved} deals moved, expected {}", ids.len()));
    }
    let pids: Vec<String> = workers.iter().map(|w| w.pid().to_string()).collect();
    let both = pids.iter().all(|p| holders.contains(p));
    if !both {
        problems.push(format!(
            "lease holders seen: {holders:?}, workers {pids:?} (not both)"
        ));
    }
    let figures = format!(
        "{} jobs, {} deals in {:.1} s; lease holders seen {holders:?} (workers {pids:?}); {moved} deals moved",
        jobs.len(),
        ids.len(),
        took.as_secs_f64()
    );
    if problems.is_empty() {
        Ok(figures)
    } else {
        Err(format!("{}; {figures}", problems.join("; ")))
    }
}

/// A multipart form with the text fields and one file.
pub(super) fn multipart(
    fields: &[(&str, &str)],
    file_name: &str,
    content: &[u8],
) -> (String, Vec<u8>) {
    let boundary = format!("stoa-proofs-{}", std::process::id());
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\n\
             Content-Type: text/plain\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(content);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

fn upload(a: &Node, b: &Node) -> Result<String> {
    let (a, b) = (a.addr()?, b.addr()?);
    let token = login(a, TENANT_ADMIN)?;
    let content: Vec<u8> = (0..70_000u32)
        .map(|i| b"abcdefghijklmnopqrstuvwxyz0123456789\n"[(i % 37) as usize])
        .collect();
    let (content_type, body) = multipart(
        &[
            ("entityId", "attachments:library"),
            ("recordId", "cluster-proof"),
        ],
        "cluster-proof.txt",
        &content,
    );
    let mut req = api("POST", "/api/attachments", &token, None);
    req.body = Some((content_type, body));
    let uploaded = expect(a, &req, 200)?;
    let id = uploaded["item"]["id"]
        .as_str()
        .ok_or_else(|| format!("upload answered without an id: {uploaded}"))?;
    let (status, served) = load::once(
        b,
        &api("GET", &format!("/api/attachments/file/{id}"), &token, None),
    )?;
    let figures = format!(
        "{} bytes uploaded through A, B answered {status} with {} bytes",
        content.len(),
        served.len()
    );
    if status == 200 && served == content {
        Ok(figures + " (identical)")
    } else {
        Err(figures)
    }
}

fn undo(a: &Node, b: &Node) -> Result<String> {
    let (a, b) = (a.addr()?, b.addr()?);
    let token = login(a, TENANT_ADMIN)?;
    let body = json!({"title": "cluster undo proof"});
    let created = expect(
        a,
        &api("POST", "/api/customers/deals", &token, Some(&body)),
        201,
    )?;
    let id = created["id"]
        .as_str()
        .ok_or_else(|| format!("deal answered without an id: {created}"))?
        .to_string();
    let log = expect(
        b,
        &api(
            "GET",
            &format!(
                "/api/audit_logs/audit-logs/actions?undoableOnly=true&resourceId={id}&pageSize=5"
            ),
            &token,
            None,
        ),
        200,
    )?;
    let entry: Option<&Value> = log["items"].as_array().and_then(|items| items.first());
    let undo_token = entry
        .and_then(|e| e["undoToken"].as_str())
        .ok_or_else(|| format!("no undoable entry for deal {id} on B: {log}"))?;
    let undone = expect(
        b,
        &api(
            "POST",
            "/api/audit_logs/audit-logs/actions/undo",
            &token,
            Some(&json!({"undoToken": undo_token})),
        ),
        200,
    )?;
    let (gone, _) = call(
        a,
        &api("GET", &format!("/api/customers/deals/{id}"), &token, None),
    )?;
    let figures = format!(
        "deal created through A, its entry listed and undone through B ({}), A then answers {gone} for it",
        undone["ok"]
    );
    if gone == 404 {
        Ok(figures)
    } else {
        Err(figures)
    }
}

/// The periods of the recurring jobs (`stoa_progress::schedules`, the
/// audit-log retention): at most one run per period, from the first.
const SCHEDULES: [(&str, u64); 3] = [
    ("progress.sweep_stale", 60),
    ("progress.prune_queue", 3_600),
    ("audit_logs.prune_access", 300),
];

fn recurring(db: &Database, url: &str, since: &str, started: Instant) -> Result<String> {
    // Two full periods of the shortest schedule and a half.
    let window = Duration::from_secs(150);
    if let Some(wait) = window.checked_sub(started.elapsed()) {
        println!(
            "xtask: waiting {:.0} s for the recurring jobs' periods",
            wait.as_secs_f64()
        );
        std::thread::sleep(wait);
    }
    let elapsed = started.elapsed().as_secs();
    let runs = db.psql(
        url,
        &format!(
            "SELECT schedule, count(*) FROM job_queue WHERE schedule IS NOT NULL \
             AND created_at >= '{since}' GROUP BY 1 ORDER BY 1"
        ),
    )?;
    let count = |name: &str| -> u64 {
        runs.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}|")))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    for (name, period) in SCHEDULES {
        let n = count(name);
        let most = elapsed / period + 1;
        // The first run is due at once on a new database.
        let least = (elapsed / period).max(1);
        seen.push(format!("{name} {n} (period {period} s)"));
        if n < least || n > most {
            problems.push(format!(
                "{name} ran {n} times in {elapsed} s, expected {least}..={most}"
            ));
        }
    }
    let figures = format!("in {elapsed} s: {}", seen.join(", "));
    if problems.is_empty() {
        Ok(figures)
    } else {
        Err(format!("{}; {figures}", problems.join("; ")))
    }
}
