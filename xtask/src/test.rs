//! `cargo xtask test`: the whole workspace's tests against a real Postgres.

use crate::cmd::{Result, cargo, output};
use crate::pg::Database;

pub fn run(args: &[String]) -> Result<u8> {
    let db = Database::discover()?;
    let nextest = output(cargo().args(["nextest", "--version"]))
        .map(|(ok, _)| ok)
        .unwrap_or(false);
    let mut cmd = cargo();
    cmd.args(if nextest {
        ["nextest", "run"]
    } else {
        ["test", "--no-fail-fast"]
    });
    if nextest {
        cmd.arg("--no-fail-fast");
    }
    // `cargo xtask test -p stoa-devices [filter]` runs one crate's tests.
    let one_package = args
        .iter()
        .any(|a| a == "-p" || a == "--package" || a.starts_with("--package="));
    if !one_package {
        cmd.arg("--workspace");
    }
    cmd.args(args).env("DATABASE_URL", &db.server_url);
    // stoa-core's storage tests and stoa-attachments' S3 test use an
    // S3-compatible server when one runs.
    let wants_s3 = (!one_package
        || args
            .iter()
            .any(|a| a.contains("stoa-core") || a.contains("stoa-attachments")))
        && std::env::var_os("STOA_TEST_S3_ENDPOINT").is_none();
    let s3 = if wants_s3 {
        crate::s3::S3Server::start()
    } else {
        None
    };
    if let Some(s3) = &s3 {
        cmd.env("STOA_TEST_S3_ENDPOINT", &s3.endpoint);
    }
    println!(
        "xtask: running {} against {}",
        if nextest {
            "cargo nextest"
        } else {
            "cargo test"
        },
        redact(&db.server_url)
    );
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"));
    drop(s3);
    db.finish();
    let status = status?;
    Ok(if status.success() { 0 } else { 1 })
}

/// Hides a password in a URL for printing.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.find('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{}:***{}", &url[..s + 3], user, &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}
