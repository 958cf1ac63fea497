//! Developer tasks, run as `cargo xtask <task>`:
//!
//! - `dev`: a private Postgres cluster (or `DATABASE_URL`), migrations, the server.
//! - `test [args]`: the whole workspace's tests against a real Postgres.
//! - `bench`: the release server under load; figures go to docs/benchmarks.md.
//! - `schemathesis`, `faults`, `cluster`, `failover`, `replica`, `soak`: the
//!   reliability drills (`proofs/`); their figures are in docs/reliability.md.
//! - `explorer-check`: the API explorer in headless Chromium (`explorer.rs`).
//! - `schema-report`: the schema's distance from distributing tenants (`schema_report.rs`).
//!
//! Plain Rust with std only (plus ctrlc), so it builds in seconds.

mod bench;
mod cmd;
mod dev;
mod explorer;
mod pg;
mod proofs;
mod s3;
mod schema_report;
mod test;

use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!(
        "usage: cargo xtask <task>\n\n\
         tasks:\n  \
         dev            start Postgres (private cluster unless DATABASE_URL is set), migrate, serve\n  \
         test [args]    run every test against a real Postgres (args go to nextest / cargo test)\n  \
         bench          benchmark the release server and update docs/benchmarks.md\n  \
         bench jobs     only the job queue's cost per unit (printed)\n  \
         bench charts   redraw docs/benchmarks/*.svg from the table in docs/benchmarks.md\n  \
         schemathesis [--ci] [--examples N] [--seed N] [--release]\n                 \
         schemathesis over the OpenAPI document, as a super admin and a tenant admin\n  \
         faults [--release] [--only model]\n                 \
         Postgres crash under load, worker SIGKILL mid job, hanging SMTP server and model provider\n  \
         cluster [--release]\n                 \
         two `stoa serve` + two `stoa worker` on one Postgres (and moto S3 when available)\n  \
         failover [--release]\n                 \
         pg_auto_failover formation (monitor, primary, sync standby): the primary dies under load\n  \
         replica [--release]\n                 \
         a pg_basebackup streaming replica behind DATABASE_REPLICA_URL: routing, lag bound, RLS\n  \
         soak [--minutes N] [--release]\n                 \
         mixed load at 70% of the measured peak: RSS and p99 over time\n  \
         explorer-check /api/docs in headless Chromium (the distribution's): every tag, try it out,\n                 \
         no request outside the server; screenshot to docs/explorer.png\n  \
         pooler [--release]\n                 \
         PgBouncer in each pool mode: transaction/statement refused, the matrix through session mode\n  \
         schema-report [--write]\n                 \
         the migrated schema against distributing tenants (Citus); --write updates docs/scaling.md\n  \
         pg-stop        stop the private Postgres cluster"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let task = args.next();
    let rest: Vec<String> = args.collect();
    let result = match task.as_deref() {
        Some("dev") => dev::run(),
        Some("test") => test::run(&rest),
        Some("bench") => bench::run(&rest),
        Some("pg-stop") => pg::stop_private(),
        Some("explorer-check") => explorer::run(&rest),
        Some("schemathesis") => proofs::schemathesis::run(&rest),
        Some("faults") => proofs::faults::run(&rest),
        Some("cluster") => proofs::cluster::run(&rest),
        Some("failover") => proofs::failover::run(&rest),
        Some("replica") => proofs::replica::run(&rest),
        Some("soak") => proofs::soak::run(&rest),
        Some("schema-report") => schema_report::run(&rest),
        Some("pooler") => proofs::pooler::run(&rest),
        _ => return usage(),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("xtask: {err}");
            ExitCode::FAILURE
        }
    }
}
