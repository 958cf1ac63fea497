//! The machine's yardsticks from pgbench on a scratch database of the
//! bench's cluster: select-only (beside `/auth/profile`) and simple-update
//! (beside the write rows).

use std::process::{Command, Stdio};

use crate::cmd::{self, Result};
use crate::pg::Database;

/// The machine's yardstick beside `/auth/profile`: pgbench's select-only
/// transactions/s (scale 10, 4 clients, 10 s) on a scratch database of the
/// same cluster, after the scenarios. `None` (and a message) without pgbench.
pub(super) fn select_tps(db: &Database) -> Result<Option<f64>> {
    let pgbench = crate::pg::pgbench();
    let url = db.scratch_database("stoa_pgbench")?;
    let init = Command::new(&pgbench)
        .args(["-i", "-q", "-s", "10", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !init.is_ok_and(|s| s.success()) {
        println!("xtask: pgbench not found or failed to initialise: no pgbench yardstick");
        return Ok(None);
    }
    let (_, out) = cmd::output(
        Command::new(&pgbench).args(["-n", "-S", "-c", "4", "-j", "2", "-T", "10", &url]),
    )?;
    let tps = tps_of(&out);
    println!("xtask: pgbench select-only: {tps:?} tps");
    Ok(tps)
}

/// pgbench's simple-update transactions/s (scale 10, 32 clients, 10 s) on
/// the yardstick's scratch database: what the machine's disk and two cores
/// commit, beside the write rows (the deal update, the bulk jobs).
pub(super) fn write_tps(db: &Database) -> Result<Option<f64>> {
    let url = db.scratch_database("stoa_pgbench")?;
    let init = Command::new(crate::pg::pgbench())
        .args(["-i", "-q", "-s", "10", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !init.is_ok_and(|s| s.success()) {
        return Ok(None);
    }
    let (_, out) = cmd::output(
        Command::new(crate::pg::pgbench())
            .args(["-n", "-N", "-c", "32", "-j", "2", "-T", "10", &url]),
    )?;
    let tps = tps_of(&out);
    println!("xtask: pgbench simple-update: {tps:?} tps");
    Ok(tps)
}

/// The `tps = N` of pgbench's report.
fn tps_of(out: &str) -> Option<f64> {
    out.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l["tps = ".len()..].split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
}
