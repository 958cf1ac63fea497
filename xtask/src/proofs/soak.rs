//! `cargo xtask soak [--minutes N] [--release]`: the server under a mixed
//! load (deal list, deal read, product list, deal creation, deal update:
//! two writes in five requests) for N minutes (default 10) at 70% of the
//! peak it reached with the same mix just before. The load is paced (open
//! loop: a request every 1/rate seconds whatever the answers did), so a
//! server that slows down shows it in the latencies instead of in fewer
//! requests. Every window (a tenth of the run, at least 15 s) reports
//! requests/s, p50/p99, the server's RSS and the machine's load average.
//! Checked: the last window's RSS is within 20% (+16 MiB) of the first's;
//! the p99 of the last fifth of the run is within 2x the p99 of the first
//! fifth (a trend, not one window: on a shared machine a single window's
//! p99 is the neighbours' as much as the server's; every window is printed);
//! no request failed. It also draws RSS and p99 per window into
//! docs/reliability/soak-rss.svg and soak-p99.svg (docs/reliability.md
//! embeds them), each with the bound it is checked against.

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{
    Node, TENANT_ADMIN, api, arg_value, deal_ids, login, quantile, release_flag, seed, stage,
    work_dir,
};
use crate::bench::load::{self, Request};
use crate::bench::svg::{Timeline, timeline};
use crate::cmd::{self, Result};
use crate::pg::Database;

pub fn run(args: &[String]) -> Result<u8> {
    let minutes: f64 = arg_value(args, "--minutes").unwrap_or(10.0);
    let release = release_flag(args);
    println!(
        "xtask: building the {} server",
        if release { "release" } else { "debug" }
    );
    let stoa = cmd::build_stoa(release)?;
    let db = Database::discover()?;
    let build = if release { "release" } else { "debug" };
    let result = soak(&stoa, &db, Duration::from_secs_f64(minutes * 60.0), build);
    db.finish();
    result
}

/// The request mix, as the tenant admin.
fn mix(addr: SocketAddr, token: &str) -> Result<Vec<Request>> {
    let lead = stage(addr, token, "Lead")?;
    let ids = deal_ids(addr, token, &lead, 1)?;
    let id = ids.first().ok_or("no demo deal to read")?;
    Ok(vec![
        api(
            "GET",
            "/api/customers/deals?pageSize=20&includeTotal=false",
            token,
            None,
        ),
        api(
            "POST",
            "/api/customers/deals",
            token,
            Some(
                &json!({"title": "soak deal", "pipelineStageId": lead, "valueAmount": "1250.00", "valueCurrency": "EUR"}),
            ),
        ),
        api("GET", &format!("/api/customers/deals/{id}"), token, None),
        api(
            "PUT",
            &format!("/api/customers/deals/{id}"),
            token,
            Some(&json!({"description": "updated by the soak"})),
        ),
        api("GET", "/api/catalog/products?pageSize=20", token, None),
    ])
}

/// One answered request: when it was due (seconds from the start), its
/// latency in ms, and whether it succeeded.
type Sample = (f64, f64, bool);

/// One window: its end (s), requests/s, p50, p99 (ms), RSS (MiB), errors,
/// load average.
type Row = (f64, f64, f64, f64, f64, usize, f64);

/// A chart to write: file, title, unit, (minute, value) points, the bound.
type Chart = (
    &'static str,
    String,
    &'static str,
    Vec<(f64, f64)>,
    Option<(f64, &'static str)>,
);

/// Writes the soak's charts into docs/reliability/ (the last run's; the
/// lead commits the one the docs cite).
fn write_charts(charts: &[Chart]) -> Result<()> {
    let dir = crate::cmd::root().join("docs").join("reliability");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (file, title, unit, points, limit) in charts {
        let svg = timeline(&Timeline {
            title,
            unit,
            points,
            limit: *limit,
        });
        let path = dir.join(file);
        std::fs::write(&path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("xtask: wrote {}", path.display());
    }
    Ok(())
}

/// Paced load: `rate` requests/s over `connections` keep-alive connections
/// for `duration`. Latency counts from when the request was due, so a
/// server falling behind is not hidden by the client waiting.
fn paced(
    addr: SocketAddr,
    requests: &[Request],
    rate: f64,
    connections: usize,
    duration: Duration,
    stop: Arc<AtomicBool>,
) -> Vec<Sample> {
    let encoded: Vec<Vec<u8>> = requests.iter().map(Request::encode).collect();
    let start = Instant::now();
    let interval = Duration::from_secs_f64(connections as f64 / rate.max(0.1));
    let handles: Vec<_> = (0..connections)
        .map(|worker| {
            let encoded = encoded.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut samples = Vec::new();
                let mut conn: Option<(TcpStream, BufReader<TcpStream>)> = None;
                let offset = interval.mul_f64(worker as f64 / connections as f64);
                let mut n: u32 = 0;
                loop {
                    let due = start + offset + interval * n;
                    if due.duration_since(start) >= duration || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let now = Instant::now();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                    if conn.is_none() {
                        conn = TcpStream::connect(addr).ok().and_then(|s| {
                            s.set_nodelay(true).ok()?;
                            s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
                            let r = BufReader::new(s.try_clone().ok()?);
                            Some((s, r))
                        });
                    }
                    let payload = &encoded[(worker + n as usize) % encoded.len()];
                    let ok = match conn.as_mut() {
                        Some((writer, reader)) => match writer
                            .write_all(payload)
                            .map_err(|e| e.to_string())
                            .and_then(|_| load::read_response(reader))
                        {
                            Ok((status, _)) => status < 400,
                            Err(_) => {
                                conn = None;
                                false
                            }
                        },
                        None => false,
                    };
                    let took = Instant::now().duration_since(due);
                    samples.push((
                        due.duration_since(start).as_secs_f64(),
                        took.as_secs_f64() * 1000.0,
                        ok,
                    ));
                    n += 1;
                }
                samples
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        if let Ok(s) = h.join() {
            all.extend(s);
        }
    }
    all
}

fn soak(stoa: &std::path::Path, db: &Database, duration: Duration, build: &str) -> Result<u8> {
    let dir = work_dir("soak")?;
    let url = db.scratch_database("stoa_soak")?;
    println!("xtask: seeding the demo tenant and 20,000 deals");
    seed(stoa, &url, 20_000)?;
    let node = Node::serve(stoa, &url, &dir, "server", &[("STOA_WORKERS", "1".into())])?;
    let addr = node.addr()?;
    let token = login(addr, TENANT_ADMIN)?;
    let requests = mix(addr, &token)?;
    for r in &requests {
        let (status, body) = load::once(addr, r)?;
        if status >= 400 {
            return Err(format!(
                "{} {} answered {status}: {}",
                r.method,
                r.path,
                String::from_utf8_lossy(&body)
            ));
        }
    }
    // Peak: closed loop, 8 connections, 15 s after a 3 s warm-up.
    let peak = load::drive(
        addr,
        &requests,
        8,
        Duration::from_secs(3),
        Duration::from_secs(15),
    );
    let rate = peak.rps() * 0.7;
    println!(
        "xtask: peak {:.0} requests/s (p99 {:.1} ms, {} errors); soaking at {rate:.0} requests/s for {:.1} min",
        peak.rps(),
        peak.percentile_ms(0.99),
        peak.errors,
        duration.as_secs_f64() / 60.0
    );
    let window = (duration.as_secs_f64() / 10.0).max(15.0);
    // RSS sampled at each window's end, while the load runs.
    let stop = Arc::new(AtomicBool::new(false));
    let load_stop = stop.clone();
    let load_requests = requests.clone();
    let loader =
        std::thread::spawn(move || paced(addr, &load_requests, rate, 16, duration, load_stop));
    let started = Instant::now();
    let mut rss = Vec::new();
    let windows = (duration.as_secs_f64() / window).ceil() as usize;
    for i in 1..=windows {
        let at = Duration::from_secs_f64((window * i as f64).min(duration.as_secs_f64()));
        if let Some(wait) = at.checked_sub(started.elapsed()) {
            std::thread::sleep(wait);
        }
        let load = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| {
                l.split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<f64>().ok())
            })
            .unwrap_or(0.0);
        rss.push((node.rss_mib(), load));
    }
    stop.store(true, Ordering::Relaxed);
    let samples = loader.join().map_err(|_| "the load thread panicked")?;
    let mut rows: Vec<Row> = Vec::new();
    let mut failures = 0;
    let mut fifths: (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    let total = duration.as_secs_f64();
    for (due, ms, _) in &samples {
        if *due < total / 5.0 {
            fifths.0.push(*ms);
        } else if *due >= total * 4.0 / 5.0 {
            fifths.1.push(*ms);
        }
    }
    fifths.0.sort_by(f64::total_cmp);
    fifths.1.sort_by(f64::total_cmp);
    let (start_p99, end_p99) = (quantile(&fifths.0, 0.99), quantile(&fifths.1, 0.99));
    for (i, (rss, load)) in rss.iter().enumerate() {
        let (from, to) = (window * i as f64, window * (i + 1) as f64);
        let in_window: Vec<&Sample> = samples
            .iter()
            .filter(|(due, _, _)| *due >= from && *due < to)
            .collect();
        let errors = in_window.iter().filter(|(_, _, ok)| !ok).count();
        failures += errors;
        let mut ms: Vec<f64> = in_window.iter().map(|(_, ms, _)| *ms).collect();
        ms.sort_by(f64::total_cmp);
        rows.push((
            to.min(duration.as_secs_f64()),
            in_window.len() as f64 / (to - from),
            quantile(&ms, 0.5),
            quantile(&ms, 0.99),
            *rss,
            errors,
            *load,
        ));
    }
    println!("\n| minute | requests/s | p50 ms | p99 ms | RSS MiB | errors | load avg |");
    println!("|---|---|---|---|---|---|---|");
    for (t, rps, p50, p99, rss, errors, load) in &rows {
        println!(
            "| {:.1} | {rps:.0} | {p50:.1} | {p99:.1} | {rss:.1} | {errors} | {load:.2} |",
            t / 60.0
        );
    }
    let first = rows.first().ok_or("the soak measured nothing")?;
    let last = rows.last().ok_or("the soak measured nothing")?;
    let minutes = duration.as_secs_f64() / 60.0;
    let run = if minutes.fract() == 0.0 {
        format!("{build} build, {minutes:.0} min at {rate:.0} requests/s")
    } else {
        format!("{build} build, {minutes:.1} min at {rate:.0} requests/s")
    };
    let per_window = |pick: fn(&Row) -> f64| -> Vec<(f64, f64)> {
        rows.iter().map(|r| (r.0 / 60.0, pick(r))).collect()
    };
    write_charts(&[
        (
            "soak-rss.svg",
            format!("Server RSS per window ({run})"),
            "MiB",
            per_window(|r| r.4),
            Some((first.4 * 1.2 + 16.0, "bound: first window +20% +16 MiB")),
        ),
        (
            "soak-p99.svg",
            format!("p99 latency per window ({run})"),
            "ms",
            per_window(|r| r.3),
            Some((
                start_p99 * 2.0,
                "bound of the last fifth: 2x the first fifth",
            )),
        ),
    ])?;
    let worst_p99 = rows.iter().map(|r| r.3).fold(0.0, f64::max);
    let mut problems = Vec::new();
    if last.4 > first.4 * 1.2 + 16.0 {
        problems.push(format!("RSS grew from {:.1} to {:.1} MiB", first.4, last.4));
    }
    if end_p99 > start_p99 * 2.0 {
        problems.push(format!(
            "p99 of the last fifth {end_p99:.1} ms, over 2x the first fifth's {start_p99:.1} ms"
        ));
    }
    if failures > 0 {
        problems.push(format!("{failures} requests failed"));
    }
    let panics = node.panics();
    if !panics.is_empty() {
        problems.push(format!("server panics: {}", panics.join("\n")));
    }
    println!(
        "\nxtask: soak: {} requests at {rate:.0}/s target (70% of the {:.0}/s peak); RSS {:.1} -> {:.1} MiB; \
         p99 first fifth {start_p99:.1} ms, last fifth {end_p99:.1} ms, worst window {worst_p99:.1} ms",
        samples.len(),
        peak.rps(),
        first.4,
        last.4,
    );
    if problems.is_empty() {
        println!(
            "xtask: soak passed: memory flat, p99 at the end within 2x of the start, no errors"
        );
        Ok(0)
    } else {
        eprintln!("xtask: soak failed: {}", problems.join("; "));
        Ok(1)
    }
}
