//! Attachments (issue 29) on a server of their own, so its peak RSS is
//! theirs: a photo-like 4000×3000 JPEG (`stoa bench-jpeg`) uploaded to the
//! public `productsMedia` partition; its first 320 px resize timed alone;
//! 32 different sizes rendered at once (peak RSS, target ≤ 300 MB); the
//! cached 320 px variant served at the bench's connections (target ≥ 5,000
//! req/s at 32); then a 1 MiB and a 100 MiB upload, each with the server's
//! peak RSS before and after (it must not grow by the file's size).

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use super::load::{self, Request};
use super::report::Row;
use super::scenarios::with_bearer;
use super::server::Server;
use crate::cmd::{self, Result};

const ENTITY: &str = "catalog:catalog_product";
const CONCURRENT_RESIZES: u32 = 32;
const RESIZE_RSS_TARGET_MIB: f64 = 300.0;
const CACHED_RPS_TARGET: f64 = 5_000.0;

/// A multipart upload of `bytes` as `name` to the media of `product`.
fn upload_request(token: &str, product: &str, name: &str, mime: &str, bytes: &[u8]) -> Request {
    let boundary = "stoa-bench-boundary";
    let mut body = Vec::with_capacity(bytes.len() + 512);
    for (field, value) in [("entityId", ENTITY), ("recordId", product)] {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
             Content-Type: {mime}\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    with_bearer(
        Request {
            method: "POST",
            path: "/api/attachments".into(),
            headers: Vec::new(),
            body: Some((format!("multipart/form-data; boundary={boundary}"), body)),
        },
        token,
    )
}

/// A product to attach the files to (uploads name a real record).
fn create_product(addr: SocketAddr, token: &str) -> Result<String> {
    let req = with_bearer(
        Request::post(
            "/api/catalog/products",
            "application/json",
            r#"{"title":"Bench product"}"#,
        ),
        token,
    );
    let (status, body) = load::once(addr, &req)?;
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    match json["id"].as_str() {
        Some(id) if status == 201 => Ok(id.to_string()),
        _ => Err(format!(
            "creating the bench product answered {status}: {}",
            String::from_utf8_lossy(&body)
        )),
    }
}

/// Uploads and returns (attachment id, seconds taken).
fn upload(addr: SocketAddr, req: &Request) -> Result<(String, f64)> {
    let started = Instant::now();
    let (status, body) = load::once_within(addr, req, Duration::from_secs(300))?;
    let elapsed = started.elapsed().as_secs_f64();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    match json["item"]["id"].as_str() {
        Some(id) if status == 200 => Ok((id.to_string(), elapsed)),
        _ => Err(format!(
            "upload answered {status}: {}",
            String::from_utf8_lossy(&body)
        )),
    }
}

fn image_request(id: &str, width: u32) -> Request {
    Request::get(&format!("/api/attachments/image/{id}?width={width}"))
}

/// The attachment rows; the server is started here and stopped at the end.
pub(super) fn rows(
    stoa: &std::path::Path,
    url: &str,
    login_form: &str,
    seconds: u64,
    connections: usize,
) -> Result<Vec<Row>> {
    let jpeg_path = std::env::temp_dir().join(format!("stoa-bench-{}.jpg", std::process::id()));
    cmd::run(Command::new(stoa).args([
        "bench-jpeg",
        "--width",
        "4000",
        "--height",
        "3000",
        "--out",
        &jpeg_path.to_string_lossy(),
    ]))?;
    let jpeg = std::fs::read(&jpeg_path).map_err(|e| format!("reading the sample JPEG: {e}"))?;
    let _ = std::fs::remove_file(&jpeg_path);
    let data_dir = std::env::temp_dir().join(format!("stoa-bench-files-{}", std::process::id()));
    let data_dir_text = data_dir.to_string_lossy().to_string();
    let server = Server::start_with_env(
        stoa,
        url,
        &[
            ("STOA_DATA_DIR", &data_dir_text),
            ("OM_ATTACHMENT_MAX_UPLOAD_MB", "128"),
            ("OM_ATTACHMENT_TENANT_QUOTA_MB", "4096"),
            // The 32 sizes below are all kept, as before the per-image cap.
            ("OM_ATTACHMENT_IMAGE_MAX_VARIANTS", "64"),
        ],
    )?;
    let result = measure(&server, login_form, &jpeg, seconds, connections);
    drop(server);
    let _ = std::fs::remove_dir_all(&data_dir);
    result
}

fn measure(
    server: &Server,
    login_form: &str,
    jpeg: &[u8],
    seconds: u64,
    connections: usize,
) -> Result<Vec<Row>> {
    let addr = server.addr;
    let token = super::http::login(addr, login_form)?;
    let mut rows = Vec::new();
    let (idle, _) = server.memory_mib();

    let product = create_product(addr, &token)?;
    let (photo, _) = upload(
        addr,
        &upload_request(&token, &product, "photo.jpg", "image/jpeg", jpeg),
    )?;
    // The first resize: decode 12 MP, resize, encode, store the variant.
    let started = Instant::now();
    let (status, body) =
        load::once_within(addr, &image_request(&photo, 320), Duration::from_secs(60))?;
    let first = started.elapsed();
    if status != 200 {
        return Err(format!(
            "first resize answered {status}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    let (rss, peak) = server.memory_mib();
    let mut row = Row::note_only(
        "attachments: first 320 px resize of a 4000×3000 JPEG",
        format!(
            "{:.0} ms ({:.1} MiB JPEG in, {:.1} KiB variant out)",
            first.as_secs_f64() * 1000.0,
            jpeg.len() as f64 / 1_048_576.0,
            body.len() as f64 / 1024.0
        ),
    );
    row.set_memory(rss, peak);
    rows.push(row);

    // 32 different widths at once: each a real render; the semaphore bounds
    // how many decode together, and the peak RSS shows what that costs.
    let started = Instant::now();
    let results: Vec<std::result::Result<u16, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CONCURRENT_RESIZES)
            .map(|i| {
                let req = image_request(&photo, 400 + i);
                s.spawn(move || {
                    load::once_within(addr, &req, Duration::from_secs(120))
                        .map(|(status, _)| status)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())))
            .collect()
    });
    let wall = started.elapsed();
    let failed = results.iter().filter(|r| !matches!(r, Ok(200))).count();
    let (rss, peak) = server.memory_mib();
    let mut row = Row::note_only(
        "attachments: 32 concurrent resizes of a 4000×3000 JPEG (32 sizes)",
        format!(
            "{:.1} s for all, {failed} failed; peak RSS {peak:.1} MiB (target ≤ {RESIZE_RSS_TARGET_MIB:.0}: {})",
            wall.as_secs_f64(),
            if peak <= RESIZE_RSS_TARGET_MIB && failed == 0 {
                "met"
            } else {
                "MISSED"
            }
        ),
    );
    row.set_memory(rss, peak);
    rows.push(row);

    // The cached variant: a storage read per request, no decoding.
    let outcome = load::drive(
        addr,
        &[image_request(&photo, 320)],
        connections,
        Duration::from_secs(1),
        Duration::from_secs(seconds),
    );
    let (rss, peak) = server.memory_mib();
    let mut row = Row::from_outcome(
        &format!(
            "GET /api/attachments/image/{{id}}?width=320 (cached variant), {connections} connections"
        ),
        &outcome,
        rss,
        peak,
    );
    row.add_note(&format!(
        "target ≥ {CACHED_RPS_TARGET:.0} req/s at 32 connections: {}",
        if outcome.rps() >= CACHED_RPS_TARGET && outcome.errors == 0 {
            "met"
        } else {
            "MISSED"
        }
    ));
    rows.push(row);

    // Uploads: the body streams to storage; peak RSS must not follow the
    // file's size.
    for (label, mib) in [("1 MiB", 1usize), ("100 MiB", 100)] {
        let file = vec![0x5a_u8; mib * 1024 * 1024];
        let req = upload_request(
            &token,
            &product,
            "data.bin",
            "application/octet-stream",
            &file,
        );
        drop(file);
        let (_, peak_before) = server.memory_mib();
        let (_, seconds_taken) = upload(addr, &req)?;
        let (rss, peak) = server.memory_mib();
        let mut row = Row::note_only(
            &format!("attachments: {label} upload (streamed to local storage)"),
            format!(
                "{:.0} ms ({:.0} MiB/s); peak RSS {peak_before:.1} → {peak:.1} MiB (+{:.1} for a {mib} MiB file; idle {idle:.1})",
                seconds_taken * 1000.0,
                mib as f64 / seconds_taken.max(1e-9),
                peak - peak_before
            ),
        );
        row.set_memory(rss, peak);
        rows.push(row);
    }
    Ok(rows)
}
