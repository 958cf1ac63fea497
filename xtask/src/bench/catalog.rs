//! The catalog's bulk delete measured end to end through the API: every
//! product id read by cursor, `POST /api/catalog/bulk-delete` in requests of
//! 10,000 ids (the limit), then `GET /api/progress/jobs/{id}` polled until
//! every job ended; the note has the time, the progress seen while it ran
//! and the server's memory.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::load::{self, Request};
use super::scenarios::with_bearer;
use super::server::Server;
use crate::cmd::Result;

/// Most ids one bulk-delete request may name.
const PER_REQUEST: usize = 10_000;

fn json_of(path: &str, status: u16, body: &[u8]) -> Result<serde_json::Value> {
    serde_json::from_slice(body).map_err(|e| format!("{path} answered {status}, not JSON: {e}"))
}

/// Every product id of the admin's tenant, 100 per page by cursor.
fn product_ids(addr: SocketAddr, token: &str) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    let mut path =
        "/api/catalog/products?pageSize=100&sortField=createdAt&includeTotal=false".to_string();
    loop {
        let (status, body) = load::once(addr, &with_bearer(Request::get(&path), token))?;
        let json = json_of(&path, status, &body)?;
        if status != 200 {
            return Err(format!("{path} answered {status}: {json}"));
        }
        for item in json["items"].as_array().into_iter().flatten() {
            if let Some(id) = item["id"].as_str() {
                ids.push(id.to_string());
            }
        }
        match json["nextCursor"].as_str() {
            Some(cursor) => {
                path = format!(
                    "/api/catalog/products?pageSize=100&sortField=createdAt&includeTotal=false&cursor={cursor}"
                )
            }
            None => return Ok(ids),
        }
    }
}

/// Deletes every product of the admin's tenant with bulk deletes and
/// returns the report's note and the seconds it took.
pub(super) fn bulk_delete_all(server: &Server, token: &str) -> Result<(String, f64)> {
    let addr = server.addr;
    let ids = product_ids(addr, token)?;
    if ids.is_empty() {
        return Err("no products to delete (seed demo products first)".into());
    }
    let started = Instant::now();
    let mut jobs = Vec::new();
    for chunk in ids.chunks(PER_REQUEST) {
        let body =
            serde_json::json!({"confirm": true, "ids": chunk, "scope": "selected"}).to_string();
        let req = with_bearer(
            Request::post("/api/catalog/bulk-delete", "application/json", &body),
            token,
        );
        let (status, answer) = load::once(addr, &req)?;
        let json = json_of("/api/catalog/bulk-delete", status, &answer)?;
        match json["progressJobId"].as_str() {
            Some(job) if status == 201 => jobs.push(job.to_string()),
            _ => return Err(format!("bulk delete answered {status}: {json}")),
        }
    }
    let queued = started.elapsed();
    // Poll every job's progress record until all ended; count the distinct
    // progress values seen (progress visible while it runs).
    let mut snapshots = 0usize;
    let mut distinct = std::collections::BTreeSet::new();
    let mut peak_rss: f64 = 0.0;
    loop {
        let mut processed = 0u64;
        let mut open = 0usize;
        for job in &jobs {
            let path = format!("/api/progress/jobs/{job}");
            let (status, body) = load::once(addr, &with_bearer(Request::get(&path), token))?;
            let json = json_of(&path, status, &body)?;
            match json["status"].as_str() {
                Some("completed") => {}
                Some("failed" | "cancelled") => {
                    return Err(format!("bulk delete job {job} ended: {json}"));
                }
                _ => open += 1,
            }
            processed += json["processedCount"].as_u64().unwrap_or(0);
        }
        snapshots += 1;
        distinct.insert(processed);
        peak_rss = peak_rss.max(server.memory_mib().0);
        if open == 0 {
            break;
        }
        if started.elapsed() > Duration::from_secs(900) {
            return Err("bulk delete did not finish within 15 minutes".into());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let total = started.elapsed();
    let (_, remaining) = load::once(
        addr,
        &with_bearer(
            Request::get("/api/catalog/products?pageSize=1&includeTotal=true"),
            token,
        ),
    )?;
    let left = json_of("/api/catalog/products", 200, &remaining)?["total"].clone();
    let note = format!(
        "{:.1} s end to end: {} products in {} requests (queued in {:.1} s), all jobs \
         completed ({:.0} products/s); {} distinct progress values over {} polls; products \
         left: {left}; server RSS while running ≤ {:.1} MiB",
        total.as_secs_f64(),
        ids.len(),
        jobs.len(),
        queued.as_secs_f64(),
        ids.len() as f64 / total.as_secs_f64().max(1e-9),
        distinct.len(),
        snapshots,
        peak_rss,
    );
    Ok((note, total.as_secs_f64()))
}
