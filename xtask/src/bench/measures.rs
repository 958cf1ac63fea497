//! Measurements made by running `stoa` subcommands (no server): the command
//! bus, batch recording, the user-list data set, the job queue, password
//! hashing and streamed uploads. Each returns the note the report shows.

use std::process::Command;

use super::env_number;
use crate::cmd::{self, Result};

/// Seeds `STOA_BENCH_AUDIT_ROWS` (default 10,000,000) action-log entries
/// spread over the last `STOA_BENCH_AUDIT_MONTHS` (default 12) months, in
/// their monthly partitions (issue 33: the list and export over 10M rows),
/// and returns the command-bus overhead note.
pub(super) fn audit_seed(stoa: &std::path::Path, url: &str) -> Result<String> {
    let rows = env_number("STOA_BENCH_AUDIT_ROWS", 10_000_000);
    let months = env_number("STOA_BENCH_AUDIT_MONTHS", 12);
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args([
                "seed",
                "action-logs",
                "--count",
                &rows.to_string(),
                "--mutations",
                "200",
                "--months",
                &months.to_string(),
            ])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    let json: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap_or(""))
        .map_err(|e| format!("seed action-logs printed `{out}`: {e}"))?;
    match (ok, json["msBareWrite"].as_f64(), json["msCommand"].as_f64()) {
        (true, Some(bare), Some(bus)) => Ok(format!(
            "{:.2} ms bare write, {:.2} ms through the bus (+{:.2} ms: action log + outbox in the same transaction); {} action-log rows over {months} months seeded in {:.0} s",
            bare,
            bus,
            bus - bare,
            json["seeded"],
            json["seedSeconds"].as_f64().unwrap_or(0.0)
        )),
        _ => Err(format!("seed action-logs failed: {out}")),
    }
}

/// Times recording `STOA_BENCH_RECORD_ROWS` (default 10,000) action-log
/// entries one by one against one batch; returns the note.
pub(super) fn record_bench(stoa: &std::path::Path, url: &str) -> Result<String> {
    let rows = env_number("STOA_BENCH_RECORD_ROWS", 10_000);
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["bench-record", "--count", &rows.to_string()])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    let json: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap_or(""))
        .map_err(|e| format!("bench-record printed `{out}`: {e}"))?;
    match (ok, json["msOneByOne"].as_f64(), json["msBatch"].as_f64()) {
        (true, Some(one), Some(batch)) if batch > 0.0 => Ok(format!(
            "{} rows (+1 event each) in one transaction: {:.0} ms one by one, {:.0} ms as one batch ({:.1}x; {:.1} vs {:.1} µs per row)",
            json["rows"],
            one,
            batch,
            one / batch,
            one * 1000.0 / rows as f64,
            batch * 1000.0 / rows as f64,
        )),
        _ => Err(format!("bench-record failed: {out}")),
    }
}

/// Runs `stoa bench-jobs`: one job of each size in `STOA_BENCH_JOB_UNITS`
/// through a worker; returns the note with the cost per unit at each size.
pub(super) fn jobs_cost(stoa: &std::path::Path, url: &str) -> Result<String> {
    let sizes =
        std::env::var("STOA_BENCH_JOB_UNITS").unwrap_or_else(|_| "1000,10000,100000".into());
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["bench-jobs", "--units", &sizes])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    let json: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap_or(""))
        .map_err(|e| format!("bench-jobs printed `{out}`: {e}"))?;
    match (ok, json["perUnitUs"].as_object()) {
        (true, Some(per_unit)) if !per_unit.is_empty() => {
            let figures: Vec<String> = sizes
                .split(',')
                .filter_map(|n| {
                    let units = n.trim();
                    let us = per_unit.get(units)?.as_f64()?;
                    Some(format!("{us:.0} µs/unit at {units} units"))
                })
                .collect();
            Ok(format!(
                "{} (one empty unit per item: its job_units row, the progress counter, one transaction)",
                figures.join(", ")
            ))
        }
        _ => Err(format!("bench-jobs failed: {out}")),
    }
}

/// Adds `STOA_BENCH_USERS` (default 100,000) users to the demo tenant; returns a note.
pub(super) fn users_seed(stoa: &std::path::Path, url: &str) -> Result<String> {
    let count = env_number("STOA_BENCH_USERS", 100_000);
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["seed", "users", "--count", &count.to_string()])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    let json: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap_or(""))
        .map_err(|e| format!("seed users printed `{out}`: {e}"))?;
    match (ok, json["seedSeconds"].as_f64()) {
        (true, Some(secs)) => Ok(format!("{count} users seeded in {secs:.0} s")),
        _ => Err(format!("seed users failed: {out}")),
    }
}

/// Milliseconds per argon2id hash and verify, measured by the release binary.
pub(super) fn hash_cost(stoa: &std::path::Path) -> Result<(f64, f64)> {
    let (ok, out) = cmd::output(Command::new(stoa).args(["hash-bench", "--count", "20"]))?;
    let json: serde_json::Value =
        serde_json::from_str(out.trim()).map_err(|e| format!("hash-bench printed `{out}`: {e}"))?;
    match (ok, json["msPerHash"].as_f64(), json["msPerVerify"].as_f64()) {
        (true, Some(h), Some(v)) => Ok((h, v)),
        _ => Err(format!("hash-bench failed: {out}")),
    }
}

/// A 256 MiB multipart upload streamed into local storage and Money parsing,
/// measured in-process by the release binary; returns the row's note.
pub(super) fn io_cost(stoa: &std::path::Path) -> Result<String> {
    let (ok, out) = cmd::output(Command::new(stoa).args(["io-bench", "--mib", "256"]))?;
    let json: serde_json::Value =
        serde_json::from_str(out.trim()).map_err(|e| format!("io-bench printed `{out}`: {e}"))?;
    match (
        ok,
        json["uploadMibPerSec"].as_f64(),
        json["uploadPeakGrowthMib"].as_f64(),
        json["usPerMoney"].as_f64(),
    ) {
        (true, Some(rate), Some(growth), Some(money)) => Ok(format!(
            "{rate:.0} MiB/s, peak RSS +{growth:.1} MiB for a 256 MiB file; \
             Money parse + format {money:.2} µs"
        )),
        _ => Err(format!("io-bench failed: {out}")),
    }
}

/// Adds `STOA_BENCH_PRODUCTS` (default 100,000) demo products to the demo
/// tenant (`stoa seed demo --products N`); returns a note.
pub(super) fn products_seed(stoa: &std::path::Path, url: &str) -> Result<String> {
    let count = env_number("STOA_BENCH_PRODUCTS", 100_000);
    let (ok, out) = cmd::output(
        Command::new(stoa)
            .args(["seed", "demo", "--products", &count.to_string()])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn"),
    )?;
    let json: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap_or(""))
        .map_err(|e| format!("seed demo printed `{out}`: {e}"))?;
    match (ok, json["productsSeconds"].as_f64()) {
        (true, Some(secs)) => Ok(format!(
            "{} products seeded in {secs:.1} s (batches of 5,000)",
            json["products"]
        )),
        _ => Err(format!("seed demo failed: {out}")),
    }
}
