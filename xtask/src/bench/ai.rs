//! The AI assistant's chat under a fake OpenAI-compatible provider on
//! 127.0.0.1 (never a real one): stoa's own time to the first streamed text
//! (the provider's own first byte subtracted), and 100 concurrent chat
//! streams with the server's RSS. Written for the lead's `cargo xtask bench`.
//!
//! The conversation list over 100,000 conversations (the "Lists" targets)
//! is a load scenario on the main server: [`conversations_seed`] inserts
//! them with batched `INSERT ... SELECT generate_series` and
//! [`conversation_list`] is the request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::env_number;
use super::load::Request;
use super::report::Row;
use super::scenarios::{Scenario, with_bearer};
use super::server::Server;
use crate::cmd::Result;
use crate::pg::Database;

/// The seeded conversations' owner (the bench's admin).
const OWNER_EMAIL: &str = "admin@acme.com";

/// Rows per seeding statement.
const SEED_BATCH: u64 = 20_000;

/// Seeds `STOA_BENCH_AI_CONVERSATIONS` (default 100,000) conversations of
/// the bench's admin in its home organization, one second of activity
/// apart (every tenth never messaged: its creation time is its activity),
/// a third closed; returns the note and a cursor half-way down the list.
pub(super) fn conversations_seed(db: &Database, url: &str) -> Result<(String, String)> {
    let count = env_number("STOA_BENCH_AI_CONVERSATIONS", 100_000);
    let started = Instant::now();
    let mut from = 1;
    while from <= count {
        let to = (from + SEED_BATCH - 1).min(count);
        db.psql(
            url,
            &format!(
                "INSERT INTO ai_chat_conversations (id, tenant_id, organization_id, conversation_id, \
                   agent_id, owner_user_id, title, status, visibility, last_message_at, created_at, updated_at) \
                 SELECT gen_random_uuid(), u.tenant_id, u.organization_id, 'bench-' || g, \
                   CASE WHEN g % 2 = 0 THEN 'customers.deal_analyzer' ELSE 'catalog.catalog_assistant' END, \
                   u.id, 'Conversation ' || g, CASE WHEN g % 3 = 0 THEN 'closed' ELSE 'open' END, 'private', \
                   CASE WHEN g % 10 = 0 THEN NULL ELSE now() - make_interval(secs => g) END, \
                   now() - make_interval(secs => g + 1), now() \
                 FROM users u, generate_series({from}, {to}) g \
                 WHERE u.email = '{OWNER_EMAIL}' AND u.deleted_at IS NULL"
            ),
        )?;
        from = to + 1;
    }
    db.psql(url, "ANALYZE ai_chat_conversations")?;
    let seeded = db.psql(
        url,
        "SELECT count(*) FROM ai_chat_conversations WHERE conversation_id LIKE 'bench-%'",
    )?;
    let note = format!(
        "{seeded} AI conversations of {OWNER_EMAIL} seeded in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let cursor = db.psql(
        url,
        &format!(
            "SELECT to_char(COALESCE(last_message_at, created_at) AT TIME ZONE 'UTC', \
               'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') \
             FROM ai_chat_conversations WHERE conversation_id = 'bench-{}'",
            (count / 2).max(1)
        ),
    )?;
    Ok((note, cursor))
}

/// The conversation list over the seeded conversations: its first page
/// (50, capped total) and a page deep into the list through the keyset
/// cursor (`deep`: an activity time half-way down, from the seeding).
pub(super) fn conversation_list(admin: &str, deep: &str) -> Scenario {
    Scenario {
        name: "GET /api/ai_assistant/ai/conversations over 100k conversations (first page, deep cursor)",
        requests: vec![
            with_bearer(
                Request::get("/api/ai_assistant/ai/conversations?limit=50"),
                admin,
            ),
            with_bearer(
                Request::get(&format!(
                    "/api/ai_assistant/ai/conversations?limit=50&cursor={deep}"
                )),
                admin,
            ),
        ],
        connections: None,
    }
}

/// How the fake provider streams: chunks of text, a pause between them.
#[derive(Clone, Copy)]
struct Script {
    chunks: usize,
    pause: Duration,
}

/// Starts the fake provider; every connection gets one streamed answer.
fn fake_provider(script: Script) -> Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = answer(stream, script);
            });
        }
    });
    Ok(addr)
}

fn answer(stream: TcpStream, script: Script) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut length = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut out = stream;
    out.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
    )?;
    let mut send = |data: &str| -> std::io::Result<()> {
        let frame = format!("data: {data}\n\n");
        out.write_all(format!("{:x}\r\n{frame}\r\n", frame.len()).as_bytes())?;
        out.flush()
    };
    for i in 0..script.chunks {
        if i > 0 {
            std::thread::sleep(script.pause);
        }
        send(&format!(
            "{{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"word{i} \"}},\"finish_reason\":null}}]}}"
        ))?;
    }
    send("{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}")?;
    send("{\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}")?;
    send("[DONE]")?;
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

/// Sends `request` and reads until `marker` appears; the time to it, then
/// the rest of the stream.
fn time_to(addr: SocketAddr, request: &[u8], marker: &[u8]) -> Result<Duration> {
    let mut stream =
        TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    stream.write_all(request).map_err(|e| e.to_string())?;
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    let mut first = None;
    loop {
        let n = stream.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
        if first.is_none() && seen.windows(marker.len()).any(|w| w == marker) {
            first = Some(started.elapsed());
        }
        // The chat's last frame, or the fake's end.
        if seen.windows(11).any(|w| w == b"loop-finish") || seen.ends_with(b"0\r\n\r\n") {
            break;
        }
    }
    first.ok_or_else(|| format!("no {marker:?} in: {}", String::from_utf8_lossy(&seen)))
}

fn chat_request(token: &str) -> Vec<u8> {
    let body = r#"{"messages":[{"role":"user","content":"hello"}]}"#;
    format!(
        "POST /api/ai_assistant/ai/chat?agent=customers.deal_analyzer HTTP/1.1\r\nHost: bench\r\n\
         Authorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn provider_request() -> Vec<u8> {
    let body = r#"{"model":"gpt-5-mini","stream":true,"messages":[]}"#;
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// The AI rows: time to first streamed text over the provider's own, and
/// 100 concurrent streams (RSS target ≤ 150 MB).
pub(super) fn ai_rows(stoa: &std::path::Path, url: &str, login_form: &str) -> Result<Vec<Row>> {
    const RUNS: usize = 200;
    let quick = fake_provider(Script {
        chunks: 1,
        pause: Duration::ZERO,
    })?;
    let base_url = format!("http://{quick}/v1");
    let server = Server::start_with_env(
        stoa,
        url,
        &[
            ("OPENAI_API_KEY", "bench"),
            ("OPENAI_BASE_URL", &base_url),
            // One user drives every turn: lift the per-user chat limit.
            ("RATE_LIMIT_AI_CHAT_POINTS", "1000000"),
        ],
    )?;
    let token = super::http::login(server.addr, login_form)?;
    let chat = chat_request(&token);
    let direct = provider_request();
    // Warm up both paths.
    for _ in 0..10 {
        time_to(quick, &direct, b"word0")?;
        time_to(server.addr, &chat, b"text-delta")?;
    }
    let mut through = Vec::with_capacity(RUNS);
    let mut own = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        own.push(time_to(quick, &direct, b"word0")?);
        through.push(time_to(server.addr, &chat, b"text-delta")?);
    }
    let (p50_through, p50_own) = (median(through), median(own));
    let overhead = p50_through.saturating_sub(p50_own);
    let mut rows = vec![Row::note_only(
        "AI chat: time to first streamed text, fake provider (target ≤ 5 ms of stoa's own)",
        format!(
            "p50 {:.2} ms through stoa, {:.2} ms from the provider directly: {:.2} ms of stoa's own over {RUNS} turns",
            p50_through.as_secs_f64() * 1000.0,
            p50_own.as_secs_f64() * 1000.0,
            overhead.as_secs_f64() * 1000.0
        ),
    )];
    drop(server);

    // 100 streams at once, each lasting about 2 s (20 chunks, 100 ms apart).
    let slow = fake_provider(Script {
        chunks: 20,
        pause: Duration::from_millis(100),
    })?;
    let base_url = format!("http://{slow}/v1");
    let server = Server::start_with_env(
        stoa,
        url,
        &[
            ("OPENAI_API_KEY", "bench"),
            ("OPENAI_BASE_URL", &base_url),
            // One user drives every turn: lift the per-user chat limit.
            ("RATE_LIMIT_AI_CHAT_POINTS", "1000000"),
        ],
    )?;
    let token = super::http::login(server.addr, login_form)?;
    let chat = chat_request(&token);
    let addr = server.addr;
    let started = Instant::now();
    let handles: Vec<_> = (0..100)
        .map(|_| {
            let chat = chat.clone();
            std::thread::spawn(move || time_to(addr, &chat, b"text-delta"))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1000));
    let (rss_during, _) = server.memory_mib();
    let mut failed = 0;
    for handle in handles {
        if !matches!(handle.join(), Ok(Ok(_))) {
            failed += 1;
        }
    }
    let (_, peak) = server.memory_mib();
    let mut row = Row::note_only(
        "AI chat: 100 concurrent streams, fake provider (target server RSS ≤ 150 MB)",
        format!(
            "all done in {:.1} s, {failed} failed; RSS {rss_during:.1} MiB during, peak {peak:.1} MiB",
            started.elapsed().as_secs_f64()
        ),
    );
    row.set_memory(rss_during, peak);
    rows.push(row);
    Ok(rows)
}
