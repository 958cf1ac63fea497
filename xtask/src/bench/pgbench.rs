//! The machine's yardsticks from pgbench on a scratch database of the
//! bench's cluster (scale 10, initialised once, after the scenarios):
//! select-only, beside `/auth/profile`, then simple-update, beside the write
//! rows (the deal update, the bulk jobs).

use std::process::{Command, Stdio};

use crate::cmd::{self, Result};
use crate::pg::Database;

/// Select-only transactions/s at 4 clients and simple-update transactions/s
/// at 32 clients, 10 s each; both `None` (and a message) without pgbench.
pub(super) fn yardsticks(db: &Database) -> Result<(Option<f64>, Option<f64>)> {
    let url = db.scratch_database("stoa_pgbench")?;
    let init = Command::new(crate::pg::pgbench())
        .args(["-i", "-q", "-s", "10", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !init.is_ok_and(|s| s.success()) {
        println!("xtask: pgbench not found or failed to initialise: no pgbench yardstick");
        return Ok((None, None));
    }
    // Select-only first: the updates do not change what it reads.
    let select = tps(&url, "-S", "4", "select-only")?;
    let write = tps(&url, "-N", "32", "simple-update")?;
    Ok((select, write))
}

/// One 10-second pgbench run of `mode` at `clients`; its `tps = N`.
fn tps(url: &str, mode: &str, clients: &str, what: &str) -> Result<Option<f64>> {
    let (_, out) = cmd::output(
        Command::new(crate::pg::pgbench())
            .args(["-n", mode, "-c", clients, "-j", "2", "-T", "10", url]),
    )?;
    let tps = out
        .lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l["tps = ".len()..].split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok());
    println!("xtask: pgbench {what}: {tps:?} tps");
    Ok(tps)
}
