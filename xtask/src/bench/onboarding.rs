//! Self-service onboarding end to end through the API, on a server started
//! with `SELF_SERVICE_ONBOARDING_ENABLED=true`: `STOA_BENCH_ONBOARDING`
//! sign-ups (default 100, argon2id hashing and the 250 ms answer floor
//! included), each verification token read from the queued e-mail in the
//! outbox, then every link opened at 4 connections: the verification
//! (provisioning a tenant with every module's seeder, queuing the demo
//! data) has no password hashing in it. Target: verify p99 ≤ 200 ms.

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use super::env_number;
use super::load::{self, Request};
use super::report::Row;
use super::server::Server;
use crate::cmd::{self, Result};

/// Connections opening verification links at once.
const VERIFY_CONNECTIONS: usize = 4;
/// The verification target (p99).
const VERIFY_P99_TARGET_MS: f64 = 200.0;

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

fn signup_body(email: &str) -> String {
    serde_json::json!({
        "email": email,
        "firstName": "Bench",
        "lastName": "Mark",
        "organizationName": format!("Bench {email}"),
        "password": "Bench-Passw0rd!",
        "confirmPassword": "Bench-Passw0rd!",
        "termsAccepted": true,
    })
    .to_string()
}

/// The verification tokens e-mailed to addresses starting `prefix`
/// (read from the outbox's queued `mail.send` events with psql).
fn tokens(url: &str, prefix: &str) -> Result<Vec<String>> {
    let sql = format!(
        "SELECT payload->>'body' FROM event_outbox WHERE name = 'mail.send' \
         AND payload->>'to' LIKE '{prefix}%' ORDER BY id"
    );
    let (ok, out) = cmd::output(Command::new(crate::pg::psql()).args([url, "-Atc", &sql]))?;
    if !ok {
        return Err(format!("psql failed: {out}"));
    }
    Ok(out
        .split("token=")
        .skip(1)
        .filter_map(|rest| rest.get(..64))
        .filter(|t| t.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(String::from)
        .collect())
}

/// Opens every link, `VERIFY_CONNECTIONS` at a time; the latencies of the
/// 200 answers and the other statuses seen.
fn verify_all(addr: SocketAddr, tokens: &[String]) -> (Vec<Duration>, Vec<String>) {
    let per = tokens.len().div_ceil(VERIFY_CONNECTIONS).max(1);
    let results: Vec<(Vec<Duration>, Vec<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = tokens
            .chunks(per)
            .map(|chunk| {
                scope.spawn(move || {
                    let mut times = Vec::new();
                    let mut errors = Vec::new();
                    for token in chunk {
                        let mut req = Request::get(&format!(
                            "/api/onboarding/onboarding/verify?token={token}"
                        ));
                        req.headers
                            .push(("Accept".into(), "application/json".into()));
                        let started = Instant::now();
                        match load::once(addr, &req) {
                            // Every outcome is a 200: a verified link says `ok:true`.
                            Ok((200, body))
                                if String::from_utf8_lossy(&body).contains("\"ok\":true") =>
                            {
                                times.push(started.elapsed())
                            }
                            Ok((status, body)) => errors.push(format!(
                                "{status} {}",
                                String::from_utf8_lossy(&body)
                                    .chars()
                                    .take(120)
                                    .collect::<String>()
                            )),
                            Err(e) => errors.push(e),
                        }
                    }
                    (times, errors)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| (Vec::new(), vec!["panicked".into()]))
            })
            .collect()
    });
    let mut times = Vec::new();
    let mut errors = Vec::new();
    for (t, e) in results {
        times.extend(t);
        errors.extend(e);
    }
    times.sort();
    (times, errors)
}

/// Signs up and verifies `STOA_BENCH_ONBOARDING` workspaces; the report row.
pub(super) fn signup_and_verify(stoa: &std::path::Path, url: &str) -> Result<Row> {
    let count = env_number("STOA_BENCH_ONBOARDING", 100) as usize;
    let server = Server::start_with_env(
        stoa,
        url,
        &[
            ("SELF_SERVICE_ONBOARDING_ENABLED", "true"),
            ("STOA_PUBLIC_URL", "http://bench.stoa.test"),
        ],
    )?;
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let prefix = format!("bench-{run}-");
    let mut signups = Vec::with_capacity(count);
    let started = Instant::now();
    for i in 0..count {
        let body = signup_body(&format!("{prefix}{i}@example.com"));
        let req = Request::post("/api/onboarding/onboarding", "application/json", &body);
        let t = Instant::now();
        let (status, answer) = load::once(server.addr, &req)?;
        if status != 201 {
            return Err(format!(
                "sign-up answered {status}: {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        signups.push(t.elapsed());
    }
    signups.sort();
    let tokens = tokens(url, &prefix)?;
    if tokens.len() != count {
        return Err(format!(
            "{count} sign-ups queued {} verification links",
            tokens.len()
        ));
    }
    let verify_started = Instant::now();
    let (verifies, errors) = verify_all(server.addr, &tokens);
    let verify_wall = verify_started.elapsed();
    let total = started.elapsed();
    if !errors.is_empty() {
        return Err(format!(
            "{} of {count} verifications failed: {}",
            errors.len(),
            errors.first().map_or("", String::as_str)
        ));
    }
    let p99 = percentile(&verifies, 0.99);
    let (rss, peak) = server.memory_mib();
    let mut row = Row::note_only(
        "onboarding: sign-up + verify end to end (tenant provisioning with every seeder)",
        format!(
            "{count} sign-ups one at a time: p50 {:.0} ms, p99 {:.0} ms (argon2id and the 250 ms floor included); \
             {count} verifications at {VERIFY_CONNECTIONS} connections: p50 {:.1} ms, p99 {p99:.1} ms \
             ({:.1} verifications/s; target p99 ≤ {VERIFY_P99_TARGET_MS:.0} ms: {}); {:.1} s in all",
            percentile(&signups, 0.5),
            percentile(&signups, 0.99),
            percentile(&verifies, 0.5),
            count as f64 / verify_wall.as_secs_f64().max(1e-9),
            if p99 <= VERIFY_P99_TARGET_MS {
                "met"
            } else {
                "MISSED"
            },
            total.as_secs_f64(),
        ),
    );
    row.set_memory(rss, peak);
    Ok(row)
}
