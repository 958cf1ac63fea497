//! An S3-compatible server for the storage tests: moto (`moto[server]` from
//! PyPI), started by `cargo xtask test` on a free loopback port and stopped
//! when the tests end. Its URL reaches the tests as `STOA_TEST_S3_ENDPOINT`.
//!
//! moto is used when `python3` can import it; otherwise it is installed into
//! a virtualenv under `.stoa/moto-venv` (once). Any failure only prints why:
//! the S3 test then skips with a message, the other tests run as usual.
//! `STOA_TEST_S3=off` skips all of this.

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{output, root};

/// A running moto server; stopped on drop.
pub struct S3Server {
    child: Child,
    pub endpoint: String,
}

impl S3Server {
    /// Starts moto, or says why not and returns `None`.
    pub fn start() -> Option<Self> {
        if std::env::var("STOA_TEST_S3").is_ok_and(|v| v == "off") {
            println!("xtask: S3 tests skipped (STOA_TEST_S3=off)");
            return None;
        }
        match Self::try_start() {
            Ok(server) => {
                println!("xtask: moto S3 server on {}", server.endpoint);
                Some(server)
            }
            Err(reason) => {
                println!("xtask: no S3-compatible server, S3 tests will skip: {reason}");
                None
            }
        }
    }

    fn try_start() -> Result<Self, String> {
        let python = python_with_moto()?;
        let port = TcpListener::bind(("127.0.0.1", 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let dir = root().join(".stoa");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let log = File::create(dir.join("moto.log")).map_err(|e| e.to_string())?;
        let err_log = log.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(&python)
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err_log)
            .spawn()
            .map_err(|e| format!("cannot start moto: {e}"))?;
        let mut server = Self {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("moto exited with {status} (see .stoa/moto.log)"));
            }
            if Instant::now() > deadline {
                return Err("moto did not listen within 30 s (see .stoa/moto.log)".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `python3` when it can import moto's server, else the virtualenv's
/// python after installing `moto[server]` into it.
fn python_with_moto() -> Result<PathBuf, String> {
    let importable = |python: &PathBuf| {
        output(Command::new(python).args(["-c", "import moto.server, flask_cors"]))
            .map(|(ok, _)| ok)
            .unwrap_or(false)
    };
    let system = PathBuf::from("python3");
    if importable(&system) {
        return Ok(system);
    }
    let venv = root().join(".stoa/moto-venv");
    let python = venv.join("bin/python");
    if importable(&python) {
        return Ok(python);
    }
    println!("xtask: installing moto[server] into .stoa/moto-venv");
    let (ok, out) = output(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
    if !ok {
        return Err(format!("python3 -m venv failed: {}", out.trim()));
    }
    let (ok, out) = output(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "moto[server]>=5,<6",
    ]))?;
    if !ok || !importable(&python) {
        return Err(format!("pip install moto[server] failed: {}", out.trim()));
    }
    Ok(python)
}
