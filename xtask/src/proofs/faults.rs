//! `cargo xtask faults [--release]`: three fault drills against a private
//! Postgres cluster of their own (`.stoa/postgres-faults`, fsync and
//! synchronous commit on, since it is crashed on purpose):
//!
//! 1. **Postgres crashes under load.** Writers create deals and readers list
//!    them while the cluster is stopped with `pg_ctl stop -m immediate` (a
//!    crash: no checkpoint, every connection cut), kept down 3 s and started
//!    again. Checked: every request sent during the outage gets an answer
//!    (a 503, within the pool's wait, not a hang); the server serves again
//!    within 5 s of Postgres accepting connections, by itself; every deal
//!    whose creation was acknowledged (201) is in the database afterwards.
//! 2. **A worker is killed mid bulk job.** One `stoa worker` runs a bulk
//!    stage move; it gets SIGKILL once some units are done; a second worker
//!    picks the job up when its lease lapses. Checked: the job completes,
//!    its processed count equals the number of deals (no unit counted
//!    twice), exactly those deals moved, the queue row took two attempts.
//! 3. **Storage fails mid upload.** The server's S3 endpoint is a proxy in
//!    front of moto that cuts every connection after 512 KiB of a request;
//!    a 3 MiB upload must fail with a clear 503 in bounded time and leave
//!    no attachment row and no object (nor unfinished multipart upload) in
//!    the bucket; a small upload through the same proxy then succeeds.
//!    Skipped (and said so) when no moto server can start.
//! 4. **The SMTP server hangs.** A listener accepts connections and never
//!    answers; `POST /api/auth/reset` (which sends mail in the request)
//!    must answer within a bounded time, and other requests stay fast.
//! 5. **The model provider hangs** ([`super::model_hang`]): chat turns end
//!    with an error frame within the provider timeout, nothing stays
//!    `executing`. `--only model` runs this drill alone.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{
    Node, TENANT_ADMIN, api, bulk_stage, deal_ids, login, progress, quantile, release_flag, seed,
    stage, wait_completed, work_dir,
};
use crate::bench::load;
use crate::cmd::{self, Result};

use crate::pg::Database;

pub fn run(args: &[String]) -> Result<u8> {
    let release = release_flag(args);
    println!(
        "xtask: building the {} server",
        if release { "release" } else { "debug" }
    );
    let stoa = cmd::build_stoa(release)?;
    let db = Database::private_named("postgres-faults", true)?;
    // `--only model`: the hanging model provider alone (it needs no load).
    let only_model = args.windows(2).any(|w| w[0] == "--only" && w[1] == "model");
    let result = if only_model {
        model_only(&stoa, &db)
    } else {
        drills(&stoa, &db)
    };
    db.finish();
    let failures = result?;
    if failures.is_empty() {
        println!("xtask: faults: every drill passed");
        Ok(0)
    } else {
        eprintln!(
            "xtask: faults: {} drill(s) failed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        );
        Ok(1)
    }
}

fn model_only(stoa: &Path, db: &Database) -> Result<Vec<String>> {
    let dir = work_dir("faults")?;
    let url = db.fresh_database("stoa_faults")?;
    seed(stoa, &url, 100)?;
    Ok(match super::model_hang::drill(stoa, db, &url, &dir) {
        Ok(figures) => {
            println!("xtask: PASS hanging model provider: {figures}");
            Vec::new()
        }
        Err(why) => {
            println!("xtask: FAIL hanging model provider: {why}");
            vec![format!("hanging model provider: {why}")]
        }
    })
}

fn drills(stoa: &Path, db: &Database) -> Result<Vec<String>> {
    let dir = work_dir("faults")?;
    let url = db.fresh_database("stoa_faults")?;
    println!("xtask: seeding the demo tenant and 60,000 deals");
    seed(stoa, &url, 60_000)?;
    let mut failures = Vec::new();
    let mut record = |name: &str, outcome: Result<String>| match outcome {
        Ok(figures) => println!("xtask: PASS {name}: {figures}"),
        Err(why) => {
            println!("xtask: FAIL {name}: {why}");
            failures.push(format!("{name}: {why}"));
        }
    };
    let server = Node::serve(stoa, &url, &dir, "server", &[("STOA_WORKERS", "0".into())])?;
    record(
        "postgres crash under load",
        postgres_crash(db, &url, &server),
    );
    record(
        "worker SIGKILL mid bulk job",
        worker_kill(stoa, db, &url, &dir, &server),
    );
    drop(server);
    match crate::s3::S3Server::start() {
        Some(s3) => record(
            "storage failing mid upload",
            storage_cut(stoa, db, &url, &dir, &s3),
        ),
        None => println!("xtask: SKIP storage failing mid upload: no S3-compatible server"),
    }
    record("hanging SMTP server", smtp_hang(stoa, &url, &dir));
    record(
        "hanging model provider",
        super::model_hang::drill(stoa, db, &url, &dir),
    );
    Ok(failures)
}

/// One answered (or failed) request of a drill's mixed load.
pub(super) struct Sample {
    pub sent: Instant,
    pub took: Duration,
    /// `None`: no HTTP answer (connection refused, reset or timed out).
    pub status: Option<u16>,
    /// The created deal's id (writers, on 201).
    pub created: Option<String>,
}

/// Four writers creating deals in stage `lead` and two readers listing
/// deals, each one request every 20 ms until `stop`; each thread returns
/// its samples. A request gets at most `patience` per read of its answer
/// (longer counts as no answer).
pub(super) fn mixed_load(
    addr: SocketAddr,
    token: &str,
    lead: &str,
    stop: &Arc<AtomicBool>,
    patience: Duration,
) -> Vec<std::thread::JoinHandle<Vec<Sample>>> {
    let mut threads = Vec::new();
    for worker in 0..6 {
        let stop = stop.clone();
        let token = token.to_string();
        let lead = lead.to_string();
        threads.push(std::thread::spawn(move || {
            let mut samples = Vec::new();
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                // Four writers, two readers.
                let (req, writes) = if worker < 4 {
                    let body =
                        json!({"title": format!("drill {worker}-{i}"), "pipelineStageId": lead});
                    (
                        api("POST", "/api/customers/deals", &token, Some(&body)),
                        true,
                    )
                } else {
                    (
                        api(
                            "GET",
                            "/api/customers/deals?pageSize=10&includeTotal=false",
                            &token,
                            None,
                        ),
                        false,
                    )
                };
                let sent = Instant::now();
                let answer = load::once_within(addr, &req, patience);
                let took = sent.elapsed();
                let (status, created) = match answer {
                    Ok((status, body)) => {
                        let created = (writes && status == 201)
                            .then(|| serde_json::from_slice::<Value>(&body).ok())
                            .flatten()
                            .and_then(|j| j["id"].as_str().map(str::to_string));
                        (Some(status), created)
                    }
                    Err(_) => (None, None),
                };
                samples.push(Sample {
                    sent,
                    took,
                    status,
                    created,
                });
                std::thread::sleep(Duration::from_millis(20));
            }
            samples
        }));
    }
    threads
}

/// Joins the load threads; their samples in the order sent.
pub(super) fn join_load(threads: Vec<std::thread::JoinHandle<Vec<Sample>>>) -> Result<Vec<Sample>> {
    let mut samples: Vec<Sample> = Vec::new();
    for t in threads {
        samples.extend(t.join().map_err(|_| "a load thread panicked")?);
    }
    samples.sort_by_key(|s| s.sent);
    Ok(samples)
}

/// How many of the deals whose creation was acknowledged (201) `count`
/// finds (it gets a quoted, comma-separated id list): (present, acknowledged).
pub(super) fn acknowledged_present(
    samples: &[Sample],
    count: impl Fn(&str) -> Result<String>,
) -> Result<(usize, usize)> {
    let acknowledged: Vec<&String> = samples.iter().filter_map(|s| s.created.as_ref()).collect();
    if acknowledged.is_empty() {
        return Ok((0, 0));
    }
    let list = acknowledged
        .iter()
        .map(|id| format!("'{id}'"))
        .collect::<Vec<_>>()
        .join(",");
    let present = count(&list)?
        .parse()
        .map_err(|e| format!("count of acknowledged deals: {e}"))?;
    Ok((present, acknowledged.len()))
}

fn postgres_crash(db: &Database, url: &str, server: &Node) -> Result<String> {
    let addr = server.addr()?;
    let token = login(addr, TENANT_ADMIN)?;
    let lead = stage(addr, &token, "Lead")?;
    let stop = Arc::new(AtomicBool::new(false));
    let threads = mixed_load(addr, &token, &lead, &stop, Duration::from_secs(10));
    std::thread::sleep(Duration::from_secs(3));
    let down_at = Instant::now();
    db.stop_server(true)?;
    let stopped = down_at.elapsed();
    std::thread::sleep(Duration::from_secs(3));
    let starting = Instant::now();
    db.start_server(true)?;
    let up_at = Instant::now();
    let start_took = up_at.duration_since(starting);
    std::thread::sleep(Duration::from_secs(10));
    stop.store(true, Ordering::Relaxed);
    let samples = join_load(threads)?;
    let ok = |s: &Sample| s.status.is_some_and(|c| c < 400);
    let mut problems = Vec::new();
    // During the outage (sent after the crash began, before Postgres was up).
    let outage: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.sent >= down_at && s.sent < up_at)
        .collect();
    let outage_503 = outage.iter().filter(|s| s.status == Some(503)).count();
    let outage_other: Vec<String> = outage
        .iter()
        .filter(|s| s.status != Some(503) && !ok(s))
        .map(|s| format!("{:?} after {:.1} s", s.status, s.took.as_secs_f64()))
        .collect();
    let mut outage_ms: Vec<f64> = outage
        .iter()
        .map(|s| s.took.as_secs_f64() * 1000.0)
        .collect();
    outage_ms.sort_by(f64::total_cmp);
    let outage_max = outage_ms.last().copied().unwrap_or(0.0);
    if !outage_other.is_empty() {
        problems.push(format!(
            "{} outage answers were not 503: {}",
            outage_other.len(),
            outage_other
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if outage_max > 6000.0 {
        problems.push(format!(
            "an outage request took {outage_max:.0} ms (a hang)"
        ));
    }
    // Recovery: the first success sent after Postgres was up, and no
    // failure sent after that.
    let after: Vec<&Sample> = samples.iter().filter(|s| s.sent >= up_at).collect();
    let first_ok = after
        .iter()
        .find(|s| ok(s))
        .map(|s| (s.sent + s.took).duration_since(up_at));
    let recovered = match first_ok {
        Some(d) => d,
        None => {
            problems.push("no request succeeded after Postgres came back".into());
            Duration::MAX
        }
    };
    let recovered_at = up_at + recovered;
    let late_failures: Vec<String> = after
        .iter()
        .filter(|s| s.sent > recovered_at && !ok(s))
        .map(|s| format!("{:?}", s.status))
        .collect();
    // The first failures after Postgres is back can be requests already
    // waiting on a dead pooled connection; the bound is 5 s for the server
    // to serve every request again.
    let last_failure = after
        .iter()
        .filter(|s| !ok(s))
        .map(|s| (s.sent + s.took).duration_since(up_at))
        .max()
        .unwrap_or(Duration::ZERO);
    if recovered > Duration::from_secs(5) || last_failure > Duration::from_secs(5) {
        problems.push(format!(
            "recovery took {:.1} s (first success), last failure {:.1} s after Postgres was up",
            recovered.as_secs_f64(),
            last_failure.as_secs_f64()
        ));
    }
    // Acknowledged writes.
    let (present, acknowledged) = acknowledged_present(&samples, |list| {
        db.psql(
            url,
            &format!("SELECT count(*) FROM customer_deals WHERE id IN ({list})"),
        )
    })?;
    if present != acknowledged {
        problems.push(format!(
            "{} acknowledged deals are missing",
            acknowledged - present
        ));
    }
    let figures = format!(
        "{} requests; crash took {:.1} s, restart {:.1} s; {} requests during the outage: {outage_503} answered 503, \
         p50 {:.0} ms, max {outage_max:.0} ms; first success {:.2} s after Postgres was up, last failure {:.2} s after; \
         {} failures after recovery; {}/{} acknowledged deals present",
        samples.len(),
        stopped.as_secs_f64(),
        start_took.as_secs_f64(),
        outage.len(),
        quantile(&outage_ms, 0.5),
        recovered.as_secs_f64(),
        last_failure.as_secs_f64(),
        late_failures.len(),
        present,
        acknowledged,
    );
    if problems.is_empty() {
        Ok(figures)
    } else {
        Err(format!("{}; figures: {figures}", problems.join("; ")))
    }
}

fn worker_kill(stoa: &Path, db: &Database, url: &str, dir: &Path, server: &Node) -> Result<String> {
    let addr = server.addr()?;
    let token = login(addr, TENANT_ADMIN)?;
    let lead = stage(addr, &token, "Lead")?;
    let won = stage(addr, &token, "Won")?;
    let ids = deal_ids(addr, &token, &lead, 10_000)?;
    let count_in = |stage: &str| -> Result<i64> {
        db.psql(
            url,
            &format!("SELECT count(*) FROM customer_deals WHERE pipeline_stage_id = '{stage}'"),
        )?
        .parse::<i64>()
        .map_err(|e| e.to_string())
    };
    let won_before = count_in(&won)?;
    let env = [
        ("STOA_WORKERS", "1".to_string()),
        ("STOA_JOB_VISIBILITY_SECS", "3".to_string()),
        ("STOA_JOB_POLL_MS", "100".to_string()),
    ];
    let mut first = Node::worker(stoa, url, dir, "worker-1", &env)?;
    let job = bulk_stage(addr, &token, &ids, &won)?;
    let n = ids.len() as u64;
    // Kill as soon as part of the job is done.
    let started = Instant::now();
    let at_kill = loop {
        let p = progress(addr, &token, &job)?;
        let done = p["processedCount"].as_u64().unwrap_or(0);
        if done > 0 && done < n {
            first.kill9();
            break done;
        }
        if p["status"] == "completed" {
            return Err(format!(
                "the job of {n} deals completed before the kill; the drill needs a slower job"
            ));
        }
        if started.elapsed() > Duration::from_secs(120) {
            return Err(format!("the job made no progress within 120 s: {p}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let killed = Instant::now();
    let _second = Node::worker(stoa, url, dir, "worker-2", &env)?;
    let done = wait_completed(addr, &token, &job, Duration::from_secs(300))?;
    let resumed_in = killed.elapsed();
    let processed = done["processedCount"].as_u64().unwrap_or(0);
    let failed = done["resultSummary"]["failedCount"].as_u64().unwrap_or(0);
    let won_after = count_in(&won)?;
    let queue = db.psql(
        url,
        &format!(
            "SELECT q.attempts, q.status, (SELECT coalesce(sum(items), 0) FROM job_units u WHERE u.job_id = q.id) \
             FROM job_queue q WHERE q.progress_job_id = '{job}'"
        ),
    )?;
    let fields: Vec<&str> = queue.split('|').collect();
    let attempts: i64 = fields.first().and_then(|a| a.parse().ok()).unwrap_or(0);
    let unit_items: i64 = fields.get(2).and_then(|a| a.parse().ok()).unwrap_or(-1);
    let figures = format!(
        "{n} deals; SIGKILL at {at_kill} processed; completed {:.1} s after the kill by the second worker; \
         processed {processed}, failed {failed}; deals in Won {won_before} -> {won_after}; queue row: {attempts} attempts, \
         status {}, unit items {unit_items}",
        resumed_in.as_secs_f64(),
        fields.get(1).unwrap_or(&"?"),
    );
    let exact = processed == n
        && failed == 0
        && won_after - won_before == n as i64
        && unit_items == n as i64
        && attempts >= 2
        && fields.get(1) == Some(&"done");
    if exact {
        Ok(figures)
    } else {
        Err(format!("not exactly once: {figures}"))
    }
}

/// An SMTP server that accepts connections and never says a word.
fn hanging_smtp() -> Result<(SocketAddr, Arc<AtomicBool>)> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        while !flag.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, _)) => held.push(stream),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
            // Drain whatever the client sends; never answer.
            for s in &mut held {
                let _ = s.set_nonblocking(true);
                let mut buf = [0u8; 512];
                let _ = s.read(&mut buf);
            }
        }
    });
    Ok((addr, stop))
}

fn smtp_hang(stoa: &Path, url: &str, dir: &Path) -> Result<String> {
    let (smtp, stop) = hanging_smtp()?;
    let node = Node::serve(
        stoa,
        url,
        dir,
        "server-smtp",
        &[
            ("STOA_WORKERS", "0".into()),
            ("SMTP_URL", format!("smtp://{smtp}")),
            ("MAIL_FROM", "stoa@example.com".into()),
        ],
    )?;
    let addr = node.addr()?;
    let token = login(addr, TENANT_ADMIN)?;
    // Other requests while the mail waits on the mail server.
    let busy = Arc::new(AtomicBool::new(true));
    let flag = busy.clone();
    let reader_token = token.clone();
    let reader = std::thread::spawn(move || {
        let mut ms = Vec::new();
        let mut errors = 0;
        while flag.load(Ordering::Relaxed) {
            let t = Instant::now();
            let req = api(
                "GET",
                "/api/customers/deals?pageSize=10&includeTotal=false",
                &reader_token,
                None,
            );
            match load::once(addr, &req) {
                Ok((200, _)) => ms.push(t.elapsed().as_secs_f64() * 1000.0),
                _ => errors += 1,
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        (ms, errors)
    });
    let form = format!("email={}", TENANT_ADMIN.replace('@', "%40"));
    let started = Instant::now();
    let answer = load::once_within(
        addr,
        &load::Request::post(
            "/api/auth/reset",
            "application/x-www-form-urlencoded",
            &form,
        ),
        Duration::from_secs(90),
    );
    let answered = started.elapsed();
    // The message goes out behind the answer; its delivery must end (as a
    // logged failure) within the mailer's bound, not hang.
    let gave_up = loop {
        let log = std::fs::read_to_string(&node.log).unwrap_or_default();
        if log.contains("SMTP delivery failed") {
            break Some(started.elapsed());
        }
        if started.elapsed() > Duration::from_secs(75) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    busy.store(false, Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    let (mut ms, errors) = reader.join().map_err(|_| "the reader thread panicked")?;
    ms.sort_by(f64::total_cmp);
    // Stopped with SIGTERM: the mailer is dropped on the way out.
    let log = node.log.clone();
    drop(node);
    let clean_stop = !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("panicked");
    let status = answer.as_ref().map(|(s, _)| *s).map_err(Clone::clone);
    let figures = format!(
        "POST /api/auth/reset answered {status:?} after {:.2} s; the delivery gave up after {}; \
         clean stop: {clean_stop}; \
         meanwhile {} list requests, p99 {:.0} ms, {errors} errors",
        answered.as_secs_f64(),
        gave_up.map_or("more than 75 s (a hang)".to_string(), |d| format!(
            "{:.1} s",
            d.as_secs_f64()
        )),
        ms.len(),
        quantile(&ms, 0.99),
    );
    // The reset answers as if all went well whatever happened (it never
    // tells whether the address has an account): the answer is immediate,
    // the delivery bounded.
    let bounded = status == Ok(200)
        && clean_stop
        && answered < Duration::from_secs(2)
        && gave_up.is_some_and(|d| d < Duration::from_secs(16));
    if bounded && errors == 0 && quantile(&ms, 0.99) < 1000.0 {
        Ok(figures)
    } else {
        Err(figures)
    }
}

/// A TCP proxy to `target` that cuts any connection once more than `limit`
/// bytes of requests went through it. Returns its address and a counter of
/// the connections it cut.
fn cutting_proxy(target: SocketAddr, limit: usize) -> Result<(SocketAddr, Arc<AtomicUsize>)> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let cuts = Arc::new(AtomicUsize::new(0));
    let counter = cuts.clone();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(upstream) = TcpStream::connect(target) else {
                continue;
            };
            let cuts = counter.clone();
            let (Ok(mut client_r), Ok(mut upstream_w)) = (client.try_clone(), upstream.try_clone())
            else {
                continue;
            };
            let (mut upstream_r, mut client_w) = (upstream, client);
            // Answers flow back untouched.
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut upstream_r, &mut client_w);
                let _ = client_w.shutdown(Shutdown::Both);
            });
            std::thread::spawn(move || {
                let mut sent = 0usize;
                let mut buf = [0u8; 16 * 1024];
                loop {
                    let n = match client_r.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if sent + n > limit {
                        cuts.fetch_add(1, Ordering::Relaxed);
                        let _ = client_r.shutdown(Shutdown::Both);
                        let _ = upstream_w.shutdown(Shutdown::Both);
                        return;
                    }
                    sent += n;
                    if upstream_w.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = upstream_w.shutdown(Shutdown::Write);
            });
        }
    });
    Ok((addr, cuts))
}

fn storage_cut(
    stoa: &Path,
    db: &Database,
    url: &str,
    dir: &Path,
    s3: &crate::s3::S3Server,
) -> Result<String> {
    let moto: SocketAddr = s3
        .endpoint
        .trim_start_matches("http://")
        .parse()
        .map_err(|e| format!("moto endpoint: {e}"))?;
    let bucket = format!("stoa-faults-{}", std::process::id());
    let plain = |method: &'static str, path: String| load::Request {
        method,
        path,
        headers: Vec::new(),
        body: None,
    };
    match load::once(moto, &plain("PUT", format!("/{bucket}")))? {
        (200, _) => {}
        (status, _) => return Err(format!("creating bucket {bucket} answered {status}")),
    }
    let (proxy, cuts) = cutting_proxy(moto, 512 * 1024)?;
    let node = Node::serve(
        stoa,
        url,
        dir,
        "server-storage",
        &[
            ("STOA_WORKERS", "0".into()),
            ("STOA_S3_BUCKET", bucket.clone()),
            ("STOA_S3_ENDPOINT", format!("http://{proxy}")),
            ("STOA_S3_REGION", "us-east-1".into()),
            ("STOA_S3_ACCESS_KEY_ID", "testing".into()),
            ("STOA_S3_SECRET_ACCESS_KEY", "testing".into()),
        ],
    )?;
    let addr = node.addr()?;
    let token = login(addr, TENANT_ADMIN)?;
    let content: Vec<u8> = (0..3 * 1024 * 1024u32)
        .map(|i| b"abcdefghijklmnopqrstuvwxyz0123456789\n"[(i % 37) as usize])
        .collect();
    let upload = |name: &str, content: &[u8]| -> Result<(u16, Value, Duration)> {
        let (content_type, body) = super::cluster::multipart(
            &[
                ("entityId", "attachments:library"),
                ("recordId", "storage-fault"),
            ],
            name,
            content,
        );
        let mut req = api("POST", "/api/attachments", &token, None);
        req.body = Some((content_type, body));
        let started = Instant::now();
        let (status, body) = load::once_within(addr, &req, Duration::from_secs(300))?;
        Ok((
            status,
            serde_json::from_slice(&body).unwrap_or(Value::Null),
            started.elapsed(),
        ))
    };
    let (status, answer, took) = upload("storage-fault.txt", &content)?;
    let rows: i64 = db
        .psql(
            url,
            "SELECT count(*) FROM attachments WHERE file_name = 'storage-fault.txt'",
        )?
        .parse()
        .map_err(|e| format!("attachment count: {e}"))?;
    let listing = |query: &str| -> Result<String> {
        let (status, body) = load::once(moto, &plain("GET", format!("/{bucket}?{query}")))?;
        if status == 200 {
            Ok(String::from_utf8_lossy(&body).into_owned())
        } else {
            Err(format!("listing the bucket ({query}) answered {status}"))
        }
    };
    let objects = listing("list-type=2")?.matches("<Key>").count();
    let pending = listing("uploads")?.matches("<UploadId>").count();
    let (small_status, _, _) = upload("storage-after.txt", b"small file after the fault")?;
    drop(node);
    let figures = format!(
        "3 MiB upload answered {status} after {:.1} s ({}), {} connections cut; {rows} attachment rows, \
         {objects} objects, {pending} unfinished multipart uploads left; a small upload then answered {small_status}",
        took.as_secs_f64(),
        answer["error"].as_str().unwrap_or("no error message"),
        cuts.load(Ordering::Relaxed),
    );
    let clear = status == 503 && answer["error"].is_string();
    if clear
        && took < Duration::from_secs(30)
        && rows == 0
        && objects == 0
        && pending == 0
        && small_status == 200
    {
        Ok(figures)
    } else {
        Err(figures)
    }
}
