//! The fault drill's hanging model provider: an OpenAI-compatible endpoint
//! (`OPENAI_BASE_URL`) that accepts connections and then stops answering,
//! in three ways:
//!
//! - **silent**: reads the request and never says a word;
//! - **stalled**: answers the stream's head and one text delta, then nothing;
//! - **after a tool call**: the first step streams a call of the read tool
//!   `customers.get_deal`, the follow-up step (with the tool's result) gets
//!   silence.
//!
//! Checked for each: `POST /ai_assistant/ai/chat` answers 200 and its stream
//! ends with an `error` frame within the provider timeout (plus slack),
//! other requests stay served, and afterwards no pending action is left
//! `executing`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Node, TENANT_ADMIN, api, login, stage};
use crate::bench::load;
use crate::cmd::Result;
use crate::pg::Database;

/// `AI_PROVIDER_TIMEOUT_MS` of the drill's server.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(3);

const SILENT: u8 = 0;
const STALLED: u8 = 1;
const TOOL_THEN_SILENT: u8 = 2;

/// Reads one HTTP request (head and a `content-length` body) from `s`.
fn read_request(s: &mut TcpStream) -> String {
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        let text = String::from_utf8_lossy(&buf);
        if let Some(head_end) = text.find("\r\n\r\n") {
            let length = text[..head_end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())
                        .flatten()
                })
                .unwrap_or(0);
            if buf.len() >= head_end + 4 + length {
                break;
            }
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

const STREAM_HEAD: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";

/// The provider; `mode` says how it fails. Held connections stay open
/// until `stop`.
fn provider(mode: Arc<AtomicU8>, deal: String) -> Result<(SocketAddr, Arc<AtomicBool>)> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        while !flag.load(Ordering::Relaxed) {
            let Ok((mut s, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            };
            let _ = s.set_nonblocking(false);
            let request = read_request(&mut s);
            let follow_up = request.contains("\"role\":\"tool\"");
            match mode.load(Ordering::Relaxed) {
                STALLED => {
                    let delta = json!({"choices": [{"index": 0, "delta": {"content": "Hel"}}]});
                    let _ = write!(s, "{STREAM_HEAD}data: {delta}\n\n");
                }
                TOOL_THEN_SILENT if !follow_up => {
                    let call = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
                        "index": 0, "id": "call_drill", "type": "function",
                        "function": {"name": "customers__get_deal",
                                     "arguments": json!({"id": deal}).to_string()}}]},
                        "finish_reason": "tool_calls"}]});
                    let _ = write!(s, "{STREAM_HEAD}data: {call}\n\ndata: [DONE]\n\n");
                    continue;
                }
                _ => {}
            }
            held.push(s);
        }
    });
    Ok((addr, stop))
}

pub(super) fn drill(stoa: &Path, db: &Database, url: &str, dir: &Path) -> Result<String> {
    let mode = Arc::new(AtomicU8::new(SILENT));
    // The deal the tool reads (any of the tenant's).
    let deal = db.psql(url, "SELECT id FROM customer_deals LIMIT 1")?;
    let (provider_addr, stop) = provider(mode.clone(), deal)?;
    let node = Node::serve(
        stoa,
        url,
        dir,
        "server-model",
        &[
            ("STOA_WORKERS", "0".into()),
            ("OPENAI_API_KEY", "drill-key".into()),
            ("OPENAI_BASE_URL", format!("http://{provider_addr}/v1")),
            ("OM_AI_PROVIDER", "openai".into()),
            ("OM_AI_MODEL", "gpt-4o-mini".into()),
            (
                "AI_PROVIDER_TIMEOUT_MS",
                PROVIDER_TIMEOUT.as_millis().to_string(),
            ),
        ],
    )?;
    let addr = node.addr()?;
    let token = login(addr, TENANT_ADMIN)?;
    stage(addr, &token, "Lead")?;
    let mut problems = Vec::new();
    let mut figures = Vec::new();
    // Two model steps at most in a turn (the tool call and its follow-up),
    // each bounded by the timeout; slack for a debug build.
    let bound = PROVIDER_TIMEOUT * 2 + Duration::from_secs(3);
    for (name, m) in [
        ("silent", SILENT),
        ("stalled mid stream", STALLED),
        ("silent after a tool call", TOOL_THEN_SILENT),
    ] {
        mode.store(m, Ordering::Relaxed);
        let body = json!({"messages": [{"role": "user", "content": "How is my deal doing?"}]});
        let req = api(
            "POST",
            "/api/ai_assistant/ai/chat?agent=customers.account_assistant",
            &token,
            Some(&body),
        );
        let started = Instant::now();
        let answer = load::once_within(addr, &req, Duration::from_secs(60));
        let took = started.elapsed();
        let (status, text) = match &answer {
            Ok((status, body)) => (Some(*status), String::from_utf8_lossy(body).into_owned()),
            Err(e) => (None, e.clone()),
        };
        let error_frame = text.contains("\"type\":\"error\"");
        let tool_ran = text.contains("call_drill") && text.contains("tool-output");
        figures.push(format!(
            "{name}: {status:?} after {:.1} s, error frame {error_frame}{}",
            took.as_secs_f64(),
            if m == TOOL_THEN_SILENT {
                format!(", tool output streamed {tool_ran}")
            } else {
                String::new()
            }
        ));
        if status != Some(200) || !error_frame || took > bound {
            problems.push(format!(
                "{name}: {status:?} after {:.1} s (bound {bound:?}), error frame {error_frame}: {}",
                took.as_secs_f64(),
                text.chars().take(300).collect::<String>()
            ));
        }
        if m == TOOL_THEN_SILENT && !tool_ran {
            problems.push(format!("{name}: the tool call was not run and streamed"));
        }
        // The server serves others meanwhile and after.
        let t = Instant::now();
        match load::once(
            addr,
            &api(
                "GET",
                "/api/customers/deals?pageSize=5&includeTotal=false",
                &token,
                None,
            ),
        ) {
            Ok((200, _)) if t.elapsed() < Duration::from_secs(2) => {}
            other => problems.push(format!(
                "{name}: a deal list after the turn answered {:?} in {:.1} s",
                other.map(|(s, _)| s),
                t.elapsed().as_secs_f64()
            )),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let executing = db.psql(
        url,
        "SELECT count(*) FROM ai_pending_actions WHERE status = 'executing'",
    )?;
    if executing != "0" {
        problems.push(format!("{executing} pending actions stayed executing"));
    }
    let panics = node.panics();
    if !panics.is_empty() {
        problems.push(format!("panics: {}", panics.join("; ")));
    }
    let figures = format!(
        "provider timeout {} ms; {}; {executing} pending actions executing afterwards",
        PROVIDER_TIMEOUT.as_millis(),
        figures.join("; ")
    );
    if problems.is_empty() {
        Ok(figures)
    } else {
        Err(format!("{}; figures: {figures}", problems.join("; ")))
    }
}
