//! Customer deals: the seeded data set (`stoa seed demo --deals N`), the
//! filtered list's request, and the bulk stage move of 100,000 deals
//! through the API, timed end to end while polling its progress.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::env_number;
use super::load::{self, Request};
use super::report::Row;
use super::scenarios::with_bearer;
use super::server::Server;
use crate::cmd::{self, Result};

/// Seeds `STOA_BENCH_DEALS` (default 1,000,000) demo deals; returns the note.
pub(super) fn deals_seed(stoa: &std::path::Path, url: &str) -> Result<String> {
    let deals = env_number("STOA_BENCH_DEALS", 1_000_000);
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["seed", "demo", "--deals", &deals.to_string()])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    let json: Value = serde_json::from_str(out.trim().lines().last().unwrap_or(""))
        .map_err(|e| format!("seed demo printed `{out}`: {e}"))?;
    match (ok, json["deals"].as_u64()) {
        (true, Some(n)) => Ok(format!(
            "{n} deals (6 stages, owners in turn, 3 currencies) seeded in {:.0} s",
            json["dealsSeconds"].as_f64().unwrap_or(0.0)
        )),
        _ => Err(format!("seed demo failed: {out}")),
    }
}

fn get_json(addr: SocketAddr, path: &str, token: &str) -> Result<Value> {
    let (status, body) = load::once(addr, &with_bearer(Request::get(path), token))?;
    let json: Value =
        serde_json::from_slice(&body).map_err(|e| format!("{path} is not JSON: {e}"))?;
    if status != 200 {
        return Err(format!("{path} answered {status}: {json}"));
    }
    Ok(json)
}

/// The demo stage ids by label.
fn stage(addr: SocketAddr, token: &str, label: &str) -> Result<String> {
    let stages = get_json(addr, "/api/customers/pipeline-stages", token)?;
    stages["items"]
        .as_array()
        .and_then(|items| items.iter().find(|s| s["label"] == label))
        .and_then(|s| s["id"].as_str())
        .map(String::from)
        .ok_or_else(|| format!("no demo stage {label}: {stages}"))
}

/// The filtered deal-list request of the list scenario: one stage, one
/// owner and a value range (about 1/12 of the deals match).
pub(super) fn list_path(addr: SocketAddr, token: &str) -> Result<String> {
    let proposal = stage(addr, token, "Proposal")?;
    let first = get_json(
        addr,
        &format!("/api/customers/deals?pipelineStageId={proposal}&pageSize=1"),
        token,
    )?;
    let owner = first["items"][0]["owner_user_id"]
        .as_str()
        .ok_or_else(|| format!("no owner on the first deal: {first}"))?
        .to_string();
    Ok(format!(
        "/api/customers/deals?pipelineStageId={proposal}&ownerUserId={owner}&valueMin=1000&valueMax=50000&pageSize=50"
    ))
}

/// What the bulk stage job changed, for its floor (`floor::deal_stage`).
pub(super) struct Moved {
    pub(super) rows: usize,
    /// The stage the deals left (the floor moves them back).
    pub(super) from_stage: String,
    pub(super) seconds: f64,
}

/// Moves `STOA_BENCH_BULK_DEALS` (default 100,000) deals from Lead to
/// Qualified with `POST /customers/deals/bulk-update-stage` (10,000 ids per
/// request, the API's limit), polling every job's progress until all are
/// done. The time runs from the first request to the last completion.
pub(super) fn bulk_stage(server: &Server, token: &str) -> Result<(Row, Moved)> {
    let addr = server.addr;
    let wanted = env_number("STOA_BENCH_BULK_DEALS", 100_000) as usize;
    let lead = stage(addr, token, "Lead")?;
    let qualified = stage(addr, token, "Qualified")?;
    // The ids, read through the list by cursor (not timed).
    let mut ids: Vec<String> = Vec::with_capacity(wanted);
    let mut cursor: Option<String> = None;
    while ids.len() < wanted {
        let mut path =
            format!("/api/customers/deals?pipelineStageId={lead}&pageSize=100&includeTotal=false");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let page = get_json(addr, &path, token)?;
        let items = page["items"].as_array().cloned().unwrap_or_default();
        ids.extend(
            items
                .iter()
                .filter_map(|d| d["id"].as_str().map(String::from)),
        );
        cursor = page["nextCursor"].as_str().map(String::from);
        if cursor.is_none() {
            break;
        }
    }
    ids.truncate(wanted);
    let started = Instant::now();
    let mut jobs = Vec::new();
    for chunk in ids.chunks(10_000) {
        let body = serde_json::json!({"ids": chunk, "pipelineStageId": qualified}).to_string();
        let req = with_bearer(
            Request::post(
                "/api/customers/deals/bulk-update-stage",
                "application/json",
                &body,
            ),
            token,
        );
        let (status, answer) = load::once(addr, &req)?;
        let json: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
        match json["progressJobId"].as_str() {
            Some(id) if status == 201 => jobs.push(id.to_string()),
            _ => return Err(format!("bulk-update-stage answered {status}: {json}")),
        }
    }
    let queued = started.elapsed();
    // Progress as a client sees it: the sum of processed deals over the jobs.
    let mut seen = BTreeSet::new();
    let mut failed = 0;
    loop {
        let mut processed = 0;
        let mut finished = 0;
        for job in &jobs {
            let j = get_json(addr, &format!("/api/progress/jobs/{job}"), token)?;
            processed += j["processedCount"].as_u64().unwrap_or(0);
            match j["status"].as_str() {
                Some("completed") => {
                    finished += 1;
                    failed += j["resultSummary"]["failedCount"].as_u64().unwrap_or(0);
                }
                Some("failed" | "cancelled") => return Err(format!("bulk job ended: {j}")),
                _ => {}
            }
        }
        seen.insert(processed);
        if finished == jobs.len() {
            break;
        }
        failed = 0;
        if started.elapsed() > Duration::from_secs(600) {
            return Err("the bulk stage jobs did not finish within 10 minutes".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = started.elapsed();
    let (rss, peak) = server.memory_mib();
    let mut row = Row::note_only(
        &format!(
            "bulk stage update of {} deals (10 jobs of 10,000, API to last completion)",
            ids.len()
        ),
        format!(
            "{:.1} s end to end ({:.0} deals/s; requests answered in {:.0} ms); {} distinct progress readings at 100 ms polls; {failed} failed; server RSS {rss:.1} MiB, peak {peak:.1} MiB",
            took.as_secs_f64(),
            ids.len() as f64 / took.as_secs_f64(),
            queued.as_secs_f64() * 1000.0,
            seen.len(),
        ),
    );
    row.set_memory(rss, peak);
    let moved = Moved {
        rows: ids.len(),
        from_stage: lead,
        seconds: took.as_secs_f64(),
    };
    Ok((row, moved))
}
