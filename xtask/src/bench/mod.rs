//! `cargo xtask bench`: starts the release server against its own database,
//! drives each scenario with concurrent keep-alive connections and writes
//! requests/s, p50/p99 latency and server memory to docs/benchmarks.md.
//!
//! Environment: `STOA_BENCH_SECONDS` (default 10 per scenario),
//! `STOA_BENCH_CONNECTIONS` (default 32), `STOA_BENCH_JOB_UNITS` (job sizes
//! for the queue's cost per unit, default `1000,10000,100000`),
//! `STOA_BENCH_PRODUCTS` (catalog products, default 100,000),
//! `STOA_BENCH_ONBOARDING` (self-service sign-ups verified, default 100),
//! `STOA_BENCH_ONLY` (comma-separated substrings: only the scenarios whose
//! name contains one run, and docs/benchmarks.md is left alone; for
//! investigating one endpoint), `STOA_BENCH_RECORD=1` (with
//! `STOA_BENCH_ONLY`: the opening table's rows of the scenarios that ran and
//! the charts are updated all the same).
//!
//! Every run writes the opening table of docs/benchmarks.md (`summary.rs`:
//! each target's latest figure with its run's yardstick) and its charts
//! (`svg.rs`: docs/benchmarks/throughput.svg, p99.svg); a full run also the
//! table of every row. The yardstick is `/auth/profile`'s rate and pgbench's
//! select-only rate on the same cluster (`pgbench_tps`).
//!
//! `cargo xtask bench jobs` runs only the job-queue measurement and prints it
//! (docs/benchmarks.md is left alone). `cargo xtask bench charts` redraws the
//! charts from the table in docs/benchmarks.md (nothing runs).

mod ai;
mod attachments;
mod catalog;
mod deals;
mod floor;
mod http;
mod lists;
pub(crate) mod load;
mod measures;
mod numbers;
mod onboarding;
mod pgbench;
mod report;
mod rules;
mod scenarios;
mod server;
mod summary;
pub(crate) mod svg;
mod targets;

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::cmd::{self, Result};
use crate::pg::Database;
use http::{create_key, cursor_of, login};
use measures::{
    audit_seed, hash_cost, io_cost, jobs_cost, products_seed, record_bench, users_seed,
};
pub use report::Row;
use scenarios::{ADMIN_LOGIN_FORM, LOGIN_FORM, beside_note, profile_beside, scenarios};
use server::Server;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub fn run(args: &[String]) -> Result<u8> {
    if args.first().map(String::as_str) == Some("charts") {
        return summary::charts_only();
    }
    let seconds = env_number("STOA_BENCH_SECONDS", 10);
    let connections = env_number("STOA_BENCH_CONNECTIONS", 32) as usize;
    println!("xtask: building the release server");
    let stoa = cmd::build_stoa(true)?;
    let db = Database::discover()?;
    if args.first().map(String::as_str) == Some("jobs") {
        let result = jobs_only(&stoa, &db);
        db.finish();
        println!("xtask: job queue cost per unit: {}", result?);
        return Ok(0);
    }
    let only: Vec<String> = std::env::var("STOA_BENCH_ONLY")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let record = only.is_empty() || std::env::var("STOA_BENCH_RECORD").is_ok_and(|v| v == "1");
    let result = bench(&stoa, &db, seconds, connections, &only).and_then(|mut rows| {
        let (tps, writes) = if record {
            pgbench::yardsticks(&db)?
        } else {
            (None, None)
        };
        if let Some(writes) = writes {
            rows.push(Row::note_only(
                "pgbench simple-update (-N), 32 clients, 10 s: the machine's write yardstick",
                format!(
                    "{writes:.0} tps (a single-row update, a select and an insert per commit: \
                     what this machine commits of small write transactions)"
                ),
            ));
        }
        Ok((rows, tps))
    });
    db.finish();
    let (rows, tps) = result?;
    if record {
        report::write(&rows, seconds, connections, tps, only.is_empty())?;
    }
    Ok(0)
}

/// `cargo xtask bench jobs`: the job-queue measurement alone.
fn jobs_only(stoa: &std::path::Path, db: &Database) -> Result<String> {
    let url = db.scratch_database("stoa_bench")?;
    cmd::run(
        Command::new(stoa)
            .args(["init", "--demo"])
            .env("DATABASE_URL", &url)
            .env("STOA_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )?;
    jobs_cost(stoa, &url)
}

fn bench(
    stoa: &std::path::Path,
    db: &Database,
    seconds: u64,
    connections: usize,
    only: &[String],
) -> Result<Vec<Row>> {
    let url = db.scratch_database("stoa_bench")?;
    cmd::run(
        Command::new(stoa)
            .args(["init", "--demo"])
            .env("DATABASE_URL", &url)
            .env("STOA_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )?;
    let (per_hash, per_verify) = hash_cost(stoa)?;
    let io = io_cost(stoa)?;
    println!("xtask: streamed upload {io}");
    let audit = audit_seed(stoa, &url)?;
    println!("xtask: {audit}");
    let record = record_bench(stoa, &url)?;
    println!("xtask: {record}");
    let users = users_seed(stoa, &url)?;
    println!("xtask: {users}");
    let products = products_seed(stoa, &url)?;
    println!("xtask: {products}");
    let jobs = jobs_cost(stoa, &url)?;
    println!("xtask: job queue: {jobs}");
    let deals = deals::deals_seed(stoa, &url)?;
    println!("xtask: {deals}");
    // A table of a million deals in use has long been vacuumed; one seeded a
    // second ago has not: the bulk job would set every page's hint bits and
    // meet autovacuum's first pass over the table (20.3 s instead of about
    // 14 at stop 40). Seeding is setup, so the table is settled first.
    let settled = std::time::Instant::now();
    db.psql(&url, "VACUUM ANALYZE customer_deals")?;
    println!(
        "xtask: deals vacuumed in {:.1} s",
        settled.elapsed().as_secs_f64()
    );
    let (conversations, deep_conversation) = ai::conversations_seed(db, &url)?;
    println!("xtask: {conversations}");
    if std::env::var("STOA_BENCH_NO_RLS").is_ok_and(|v| v == "1") {
        without_row_level_security(db, &url)?;
    }
    println!("xtask: argon2id {per_hash:.1} ms per hash, {per_verify:.1} ms per verify");
    let server = Server::start(stoa, &url)?;
    let (idle_rss, _) = server.memory_mib();
    let token = login(server.addr, LOGIN_FORM)?;
    let admin = login(server.addr, ADMIN_LOGIN_FORM)?;
    let key = create_key(server.addr, &token)?;
    println!(
        "xtask: server ready in {:.0} ms, idle RSS {idle_rss:.1} MiB",
        server.startup.as_secs_f64() * 1000.0
    );
    let mut rows = vec![
        Row::startup(server.startup, idle_rss),
        Row::note_only("command bus cost per mutation (organization update)", audit),
        Row::note_only("batch recording of action-log rows (record_batch)", record),
        Row::note_only("user-list data set", users),
        Row::note_only("catalog data set (stoa seed demo --products)", products),
        Row::note_only("job queue cost per unit (1k / 10k / 100k units)", jobs),
        Row::note_only("deal data set", deals),
        Row::note_only("AI conversation data set", conversations),
        Row::note_only(
            "argon2id password hash (m=7 MiB, t=5, p=1)",
            format!("{per_hash:.1} ms per hash, {per_verify:.1} ms per verify (one thread)"),
        ),
        Row::note_only(
            "multipart upload streamed to local storage (stoa_core::upload, in-process)",
            io,
        ),
    ];
    // The bulk job first, so its peak RSS is its own.
    if only.is_empty()
        || only
            .iter()
            .any(|o| "bulk stage update".contains(o.as_str()))
    {
        // Rows the machine decides are reported beside a profile read.
        let beside = beside_note(profile_beside(&server, &token, connections, seconds));
        let (mut bulk, moved) = deals::bulk_stage(&server, &admin)?;
        bulk.add_note(&beside);
        settle_after_bulk(db, &url)?;
        let (took, changed) = floor::deal_stage(db, &url, moved.rows, &moved.from_stage)?;
        bulk.add_note(&floor::note(
            "the same UPDATE",
            took,
            changed,
            moved.seconds,
        ));
        println!("{}", bulk.describe());
        rows.push(bulk);
    }
    let deep_cursor = cursor_of(server.addr, "/api/auth/users?pageSize=50&page=999", &admin)?;
    let deal_list = deals::list_path(server.addr, &admin)?;
    let mut all = scenarios(&token, &admin, &key, &deep_cursor);
    all.push(scenarios::Scenario {
        name: "GET /api/customers/deals, stage + owner + value range over 1M deals, 4 connections",
        requests: vec![scenarios::with_bearer(
            load::Request::get(&deal_list),
            &admin,
        )],
        connections: Some(4),
    });
    all.push(ai::conversation_list(&admin, &deep_conversation));
    for scenario in all {
        if !only.is_empty() && !only.iter().any(|o| scenario.name.contains(o.as_str())) {
            continue;
        }
        let at = scenario.connections.unwrap_or(connections);
        let beside = targets::share_of_profile(scenario.name)
            .then(|| beside_note(profile_beside(&server, &token, at, seconds)));
        let queries_before = server.db_queries();
        let outcome = load::drive(
            server.addr,
            &scenario.requests,
            at,
            Duration::from_secs(1),
            Duration::from_secs(seconds),
        );
        let (rss, peak) = server.memory_mib();
        let mut row = Row::from_outcome(scenario.name, &outcome, rss, peak);
        if let (Some(before), Some(after)) = (queries_before, server.db_queries()) {
            // Server-side statements over every request sent (warm-up included).
            let total = outcome.sent_total;
            if total > 0 {
                row.add_note(&format!(
                    "{:.2} DB statements/request",
                    (after - before) as f64 / total as f64
                ));
            }
        }
        if let Some(beside) = &beside {
            row.add_note(beside);
        }
        // Access-log entries still queued behind kept answers when the load
        // stops: a writer falling behind defers work the figure omits.
        if let Some(pending) = server.metric("stoa_access_log_pending").filter(|&n| n > 0) {
            row.add_note(&format!("{pending} access-log entries still queued"));
        }
        println!("{}", row.describe());
        rows.push(row);
    }
    let onboarding = "onboarding: sign-up + verify end to end";
    if only.is_empty() || only.iter().any(|o| onboarding.contains(o.as_str())) {
        let row = onboarding::signup_and_verify(stoa, &url)?;
        println!("{}", row.describe());
        rows.push(row);
    }
    // Business rules: the deal-update baseline needs the tenant without
    // rules, so these run after every other scenario has read the deals.
    rows.extend(rules::run(
        &server,
        (&token, &admin),
        seconds,
        connections,
        only,
    )?);
    // The lists no scenario above reads, over data seeded now (after the
    // rules' baseline), each beside a profile read of the same phase.
    rows.extend(lists::run(
        &server,
        db,
        &url,
        (&token, &admin),
        seconds,
        connections,
        only,
    )?);
    // The assistant runs on servers of its own (a fake provider each).
    let ai_names = "AI chat: time to first streamed text; AI chat: 100 concurrent streams";
    if only.is_empty() || only.iter().any(|o| ai_names.contains(o.as_str())) {
        for row in ai::ai_rows(stoa, &url, ADMIN_LOGIN_FORM)? {
            println!("{}", row.describe());
            rows.push(row);
        }
    }
    // Attachments on a server of their own (its peak RSS is theirs).
    let attachment_names = "attachments: first resize, concurrent resizes, cached variant, uploads";
    if only.is_empty() || only.iter().any(|o| attachment_names.contains(o.as_str())) {
        for row in attachments::rows(stoa, &url, ADMIN_LOGIN_FORM, seconds, connections)? {
            println!("{}", row.describe());
            rows.push(row);
        }
    }
    // Last: it deletes the products the list scenarios read.
    let bulk = "bulk delete of every catalog product (jobs, polled to the end)";
    if only.is_empty() || only.iter().any(|o| bulk.contains(o.as_str())) {
        let beside = beside_note(profile_beside(&server, &token, connections, seconds));
        let (took, deleted) = floor::product_delete(db, &url)?;
        let (note, job_seconds) = catalog::bulk_delete_all(&server, &admin)?;
        let mut row = Row::note_only(bulk, note);
        row.add_note(&beside);
        row.add_note(&floor::note("the same DELETE", took, deleted, job_seconds));
        println!("{}", row.describe());
        rows.push(row);
    }
    Ok(rows)
}

/// Waits until the bulk job's events are delivered and its dead deal rows
/// vacuumed, so that the scenarios after it measure themselves: at stop 38
/// the outbox was still dispatching 100,000 events during the deals list
/// (its statements counted as the list's: 3.56 per request) and autovacuum
/// was rewriting the deals' visibility.
fn settle_after_bulk(db: &Database, url: &str) -> Result<()> {
    let started = std::time::Instant::now();
    loop {
        let pending = db.psql(
            url,
            "SELECT count(*) FROM event_outbox WHERE status = 'pending'",
        )?;
        if pending.trim() == "0" || started.elapsed() > Duration::from_secs(300) {
            println!(
                "xtask: outbox settled in {:.1} s ({} events pending)",
                started.elapsed().as_secs_f64(),
                pending.trim()
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    db.psql(url, "VACUUM ANALYZE customer_deals")?;
    // The job's 100,000 action-log entries are the newest of the month:
    // autovacuum would analyze that partition within a minute of them, and
    // the action-log scenarios read past them (issue 52).
    db.psql(url, "VACUUM ANALYZE action_logs")?;
    Ok(())
}

/// `STOA_BENCH_NO_RLS=1`: the A/B baseline of row-level security's cost with
/// the same build. Turns the policies off on every table of the bench
/// database (the queries keep their own tenant filters, and the pools still
/// send their settings), so the difference between two runs is what the
/// policies cost the planner and the executor.
fn without_row_level_security(db: &Database, url: &str) -> Result<()> {
    db.psql(
        url,
        "DO $$ DECLARE t record; BEGIN \
           FOR t IN SELECT c.relname FROM pg_class c \
             WHERE c.relnamespace = 'public'::regnamespace AND c.relrowsecurity LOOP \
             EXECUTE format('ALTER TABLE %I NO FORCE ROW LEVEL SECURITY', t.relname); \
             EXECUTE format('ALTER TABLE %I DISABLE ROW LEVEL SECURITY', t.relname); \
           END LOOP; END $$",
    )?;
    println!(
        "xtask: row-level security OFF on every table (STOA_BENCH_NO_RLS=1, the A/B baseline)"
    );
    Ok(())
}
