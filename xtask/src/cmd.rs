//! Small helpers around `std::process::Command`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub type Result<T> = std::result::Result<T, String>;

/// The workspace root (xtask lives in `<root>/xtask`).
pub fn root() -> PathBuf {
    // `cargo run` sets CARGO_MANIFEST_DIR at run time too; prefer it, so a
    // binary built in another checkout (shared target dir) still works on
    // the checkout it was invoked from.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Runs a command to completion with inherited output; fails on a non-zero exit.
pub fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{:?} failed with {status}", cmd.get_program()))
    }
}

/// Runs a command and captures its output: (success, stdout + stderr).
pub fn output(cmd: &mut Command) -> Result<(bool, String)> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok((out.status.success(), text))
}

/// `cargo` as invoked by the user (respects `$CARGO`).
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Builds the `stoa` binary in the given profile and returns its path.
///
/// The release binary is built by exactly the command a user runs,
/// `cargo build --release` over the default members: a `-p stoa-server` build
/// would resolve features for that package alone and could produce a second,
/// different binary, so every measured change would cost two release builds.
/// The debug binary is built alone (`-p stoa-server --bin stoa`), which keeps
/// `cargo xtask dev` from compiling the test kit.
pub fn build_stoa(release: bool) -> Result<PathBuf> {
    let mut cmd = cargo();
    if release {
        cmd.args(["build", "--quiet", "--release"]);
    } else {
        cmd.args(["build", "--quiet", "-p", "stoa-server", "--bin", "stoa"]);
    }
    run(&mut cmd)?;
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join("target"));
    Ok(target
        .join(if release { "release" } else { "debug" })
        .join("stoa"))
}

/// A TCP port that is free right now on 127.0.0.1.
pub fn free_port() -> Result<u16> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

/// Sends SIGTERM to a process (graceful stop).
pub fn terminate(pid: u32) {
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}
