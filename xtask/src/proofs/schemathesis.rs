//! `cargo xtask schemathesis [--ci] [--examples N] [--seed N] [--release]`:
//! schemathesis over the server's own OpenAPI document
//! (`GET /api/docs/openapi.json`), once signed in as the demo super admin and
//! once as the demo tenant admin (each with a seeded database and a server
//! of its own, so one run's writes cannot end the other's session), with at
//! most N generated cases per
//! operation (phases: the document's examples, coverage of every parameter's
//! boundaries and invalid values, then random fuzzing).
//!
//! The checks: `not_a_server_error` (no 5xx, whatever the input),
//! `status_code_conformance` (no status the document does not list),
//! `response_schema_conformance` and `content_type_conformance` (every
//! answer matches its documented schema and media type). Any failure fails
//! the task; the reports (JUnit, NDJSON) are under `.stoa/proofs/schemathesis`.
//!
//! Two operations are left out: `POST /api/auth/logout` and
//! `PUT /api/auth/profile` end (or can end) the very session the run signs
//! its requests with; everything after them would only see 401.
//!
//! schemathesis comes from `xtask/schemathesis/install.sh` (a pinned version
//! in `.venv-schemathesis`, git-ignored). `--ci` is the short profile CI
//! runs: 10 cases per operation and a fixed seed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::{Node, SUPER_ADMIN, TENANT_ADMIN, arg_value, login, release_flag, seed, work_dir};
use crate::cmd::{self, Result, root};
use crate::pg::Database;

const CHECKS: &str = "not_a_server_error,status_code_conformance,response_schema_conformance,content_type_conformance";
const EXCLUDED_OPERATIONS: [&str; 2] = ["logout", "update_profile"];
/// The seed of the CI profile (any fixed value: reruns generate the same cases).
const CI_SEED: &str = "20261129";

pub fn run(args: &[String]) -> Result<u8> {
    let ci = args.iter().any(|a| a == "--ci");
    let examples: u32 = arg_value(args, "--examples").unwrap_or(if ci { 10 } else { 50 });
    let seed_arg: Option<String> = arg_value(args, "--seed").or(ci.then(|| CI_SEED.to_string()));
    let st = install()?;
    let release = release_flag(args);
    println!(
        "xtask: building the {} server",
        if release { "release" } else { "debug" }
    );
    let stoa = cmd::build_stoa(release)?;
    let db = Database::discover()?;
    let result = drill(&stoa, &db, &st, examples, seed_arg.as_deref());
    db.finish();
    result
}

/// The `st` executable, installing it first when missing or out of date.
fn install() -> Result<PathBuf> {
    let venv = root().join(".venv-schemathesis");
    let st = venv.join("bin/st");
    let wanted = std::fs::read_to_string(root().join("xtask/schemathesis/requirements.txt"))
        .map_err(|e| format!("cannot read xtask/schemathesis/requirements.txt: {e}"))?
        .lines()
        .find_map(|l| l.trim().strip_prefix("schemathesis=="))
        .map(str::to_string)
        .ok_or("xtask/schemathesis/requirements.txt pins no schemathesis version")?;
    let installed = cmd::output(Command::new(&st).arg("--version"))
        .map(|(ok, out)| ok && out.contains(&wanted))
        .unwrap_or(false);
    if !installed {
        println!("xtask: installing schemathesis {wanted} into .venv-schemathesis");
        cmd::run(&mut Command::new(
            root().join("xtask/schemathesis/install.sh"),
        ))?;
    }
    Ok(st)
}

fn drill(
    stoa: &Path,
    db: &Database,
    st: &Path,
    examples: u32,
    seed_arg: Option<&str>,
) -> Result<u8> {
    let dir = work_dir("schemathesis")?;
    let mut failed = Vec::new();
    // Each account gets a database and a server of its own: the super
    // admin's run may change or delete the tenant admin (a password change
    // ends every session of that user), after which the tenant admin's run
    // would see only 401s (it did: 9,756 of 10,430 cases).
    for (who, account) in [("super-admin", SUPER_ADMIN), ("tenant-admin", TENANT_ADMIN)] {
        let url = db.scratch_database(&format!("stoa_schemathesis_{}", who.replace('-', "_")))?;
        seed(stoa, &url, 200)?;
        let node = Node::serve(stoa, &url, &dir, who, &[("STOA_WORKERS", "2".into())])?;
        let addr = node.addr()?;
        let token = login(addr, account)?;
        let report = dir.join(who);
        let started = Instant::now();
        let mut c = Command::new(st);
        c.arg("run")
            .arg(format!("http://{addr}/api/docs/openapi.json"))
            .args(["--url", &format!("http://{addr}")])
            .args(["-H", &format!("Authorization: Bearer {token}")])
            .args(["--max-examples", &examples.to_string()])
            .args(["--phases", "examples,coverage,fuzzing"])
            .args(["--checks", CHECKS])
            .args(["--workers", "2"])
            .args(["--request-timeout", "30"])
            .args(["--suppress-health-check", "all"])
            .arg("--no-shrink")
            .args(["--report", "junit,ndjson"])
            .arg("--report-dir")
            .arg(&report);
        for op in EXCLUDED_OPERATIONS {
            c.args(["--exclude-operation-id", op]);
        }
        if let Some(seed) = seed_arg {
            c.args(["--seed", seed]);
        }
        let (ok, out) = cmd::output(&mut c)?;
        let log = dir.join(format!("{who}.txt"));
        std::fs::write(&log, &out).map_err(|e| format!("cannot write {}: {e}", log.display()))?;
        let summary = summary(&out);
        println!(
            "xtask: schemathesis as the {who}: {} in {:.0} s ({examples} cases per operation at most)\n{summary}",
            if ok { "passed" } else { "FAILED" },
            started.elapsed().as_secs_f64(),
        );
        if !ok {
            failed.push(format!("{who} (see {})", log.display()));
        }
        let panics = node.panics();
        drop(node);
        if !panics.is_empty() {
            failed.push(format!("server panics as the {who}: {}", panics.join("\n")));
        }
    }
    if failed.is_empty() {
        println!(
            "xtask: schemathesis: 0 server errors, 0 schema violations, 0 undocumented statuses"
        );
        Ok(0)
    } else {
        eprintln!("xtask: schemathesis failed: {}", failed.join("; "));
        Ok(1)
    }
}

/// The run's summary lines: operations, failures by kind, cases, seed.
fn summary(out: &str) -> String {
    out.lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("Selected:")
                || t.starts_with("Tested:")
                || t.starts_with("❌ ST")
                || t.contains("generated,")
                || t.starts_with("Seed:")
                || t.starts_with("___")
        })
        .map(|l| format!("    {}", l.trim()))
        .collect::<Vec<_>>()
        .join("\n")
}
