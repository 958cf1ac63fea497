//! A pg_auto_failover formation on 127.0.0.1 for `cargo xtask failover`:
//! a monitor, a primary and a synchronous secondary, each a `pg_autoctl
//! ... --run` child in a process group of its own (so that killing a node
//! kills its keeper and its Postgres together, as a dead machine would),
//! with data directories and pg_autoctl's own files under one temporary
//! folder that is removed when the formation is dropped.
//!
//! pg_autoctl refuses to run as root, like Postgres: as root the nodes run
//! as the `postgres` system user (as `crate::pg` runs the private cluster).

use std::fs::{self, File};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{self, Result, output};
use crate::pg;

/// The monitor's health checks, tightened from the defaults (5 s period,
/// 20 s before a node is considered unhealthy, 30 s demote timeout) so that
/// the drill measures stoa's side of a failover in seconds rather than the
/// monitor's patience. Production keeps the defaults or sets its own.
const MONITOR_SETTINGS: [(&str, u32); 6] = [
    ("health_check_period", 1000),
    ("health_check_timeout", 1000),
    ("health_check_max_retries", 1),
    ("health_check_retry_delay", 500),
    ("node_considered_unhealthy_timeout", 2000),
    ("primary_demote_timeout", 2000),
];

struct Member {
    name: String,
    child: Option<Child>,
}

/// A running formation; stopped and removed on drop.
pub struct Formation {
    autoctl: PathBuf,
    pg_ctl: PathBuf,
    base: PathBuf,
    logs: PathBuf,
    run_as: Option<&'static str>,
    pub monitor_port: u16,
    /// The data nodes' ports: `node1` starts as the primary.
    pub ports: [u16; 2],
    members: Vec<Member>,
}

/// `pg_autoctl` of the system, installing the distribution's packages when
/// it is missing and this process may (root with apt-get).
fn autoctl(bin: &Path) -> Result<PathBuf> {
    let find = || {
        [bin.join("pg_autoctl"), PathBuf::from("/usr/bin/pg_autoctl")]
            .into_iter()
            .find(|p| p.is_file())
    };
    if let Some(found) = find() {
        return Ok(found);
    }
    // /usr/lib/postgresql/<major>/bin: the extension must match the server.
    let major = bin
        .parent()
        .and_then(Path::file_name)
        .map(|m| m.to_string_lossy().into_owned())
        .unwrap_or_else(|| "15".into());
    let packages = [
        format!("postgresql-{major}-auto-failover"),
        "pg-auto-failover-cli".to_string(),
    ];
    let install = format!("apt-get install -y {}", packages.join(" "));
    if pg::is_root() && Path::new("/usr/bin/apt-get").is_file() {
        println!("xtask: pg_autoctl is missing; running `{install}`");
        let (ok, out) = output(
            Command::new("apt-get")
                .args(["install", "-y", "-q"])
                .args(&packages)
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )?;
        if !ok {
            return Err(format!("`{install}` failed:\n{out}"));
        }
    }
    find().ok_or_else(|| {
        format!(
            "pg_autoctl (pg_auto_failover 2.0) is not installed: run `{install}` (Debian/Ubuntu)"
        )
    })
}

impl Formation {
    /// Creates and starts the monitor and both data nodes, and waits until
    /// the monitor reports `primary` and `secondary`.
    pub fn start(logs: &Path) -> Result<Self> {
        let bin = pg::find_bin_dir().ok_or("PostgreSQL server binaries were not found")?;
        let autoctl = autoctl(&bin)?;
        let run_as = pg::is_root().then_some("postgres");
        let base = std::env::temp_dir().join(format!("stoa-failover-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(&base).map_err(|e| format!("cannot create {}: {e}", base.display()))?;
        if let Some(user) = run_as {
            cmd::run(Command::new("chown").args([user, &base.to_string_lossy()]))?;
        }
        let mut formation = Self {
            autoctl,
            pg_ctl: bin.join("pg_ctl"),
            base,
            logs: logs.to_path_buf(),
            run_as,
            monitor_port: cmd::free_port()?,
            ports: [cmd::free_port()?, cmd::free_port()?],
            members: Vec::new(),
        };
        formation.create_monitor()?;
        for (i, port) in formation.ports.into_iter().enumerate() {
            formation.create_node(&format!("node{}", i + 1), port)?;
            let wanted: &[&str] = if i == 0 {
                &["single"]
            } else {
                &["primary", "secondary"]
            };
            formation.wait_states(wanted, Duration::from_secs(120))?;
        }
        Ok(formation)
    }

    fn command(&self) -> Command {
        let xdg = [
            ("XDG_CONFIG_HOME", self.base.join("config")),
            ("XDG_DATA_HOME", self.base.join("share")),
            ("XDG_RUNTIME_DIR", self.base.join("run")),
        ];
        let mut c = match self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--", "env"]);
                for (k, v) in &xdg {
                    c.arg(format!("{k}={}", v.display()));
                }
                c.arg(&self.autoctl);
                c
            }
            None => {
                let mut c = Command::new(&self.autoctl);
                c.envs(xdg);
                c
            }
        };
        c.current_dir(&self.base);
        c
    }

    /// `pg_autoctl <args> --run` as a child in its own process group.
    fn spawn(&mut self, name: &str, args: &[String]) -> Result<()> {
        let log = self.logs.join(format!("{name}.log"));
        let out =
            File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = self
            .command()
            .args(args)
            .arg("--run")
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start pg_autoctl for {name}: {e}"))?;
        self.members.push(Member {
            name: name.to_string(),
            child: Some(child),
        });
        Ok(())
    }

    fn common(&self, name: &str, port: u16) -> Vec<String> {
        vec![
            "--pgdata".into(),
            self.base.join(name).display().to_string(),
            "--pgport".into(),
            port.to_string(),
            "--pgctl".into(),
            self.pg_ctl.display().to_string(),
            "--hostname".into(),
            "127.0.0.1".into(),
            "--auth".into(),
            "trust".into(),
            "--no-ssl".into(),
        ]
    }

    fn create_monitor(&mut self) -> Result<()> {
        let mut args = vec!["create".to_string(), "monitor".to_string()];
        args.extend(self.common("monitor", self.monitor_port));
        self.spawn("monitor", &args)?;
        let monitor = self.monitor_url();
        let started = Instant::now();
        while psql(
            &monitor,
            "SELECT extversion FROM pg_extension WHERE extname = 'pgautofailover'",
        )
        .map_or(true, |v| v.is_empty())
        {
            if started.elapsed() > Duration::from_secs(60) {
                return Err(format!(
                    "the monitor was not ready within 60 s (see {})",
                    self.logs.join("monitor.log").display()
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        // The monitor's own Postgres listens on every address (pg_autoctl
        // passes `-h *`); trust is granted to 127.0.0.0/8 only.
        for (name, value) in MONITOR_SETTINGS {
            psql(
                &monitor,
                &format!("ALTER SYSTEM SET pgautofailover.{name} = {value}"),
            )?;
        }
        psql(&monitor, "SELECT pg_reload_conf()")?;
        Ok(())
    }

    fn create_node(&mut self, name: &str, port: u16) -> Result<()> {
        let mut args = vec!["create".to_string(), "postgres".to_string()];
        args.extend(self.common(name, port));
        args.extend([
            "--name".into(),
            name.into(),
            "--pghost".into(),
            "127.0.0.1".into(),
            "--listen".into(),
            "127.0.0.1".into(),
            "--monitor".into(),
            format!(
                "postgres://autoctl_node@127.0.0.1:{}/pg_auto_failover?sslmode=disable",
                self.monitor_port
            ),
        ]);
        self.spawn(name, &args)
    }

    /// The monitor's database, as its superuser.
    pub fn monitor_url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/pg_auto_failover",
            self.monitor_port
        )
    }

    /// `database` on whichever node accepts writes (libpq and tokio-postgres
    /// both read this form).
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{database}?target_session_attrs=read-write&connect_timeout=2",
            self.ports[0], self.ports[1]
        )
    }

    /// (node name, reported state, assigned state) of each data node.
    pub fn states(&self) -> Result<Vec<(String, String, String)>> {
        let out = psql(
            &self.monitor_url(),
            "SELECT nodename, reportedstate, goalstate FROM pgautofailover.node ORDER BY nodeid",
        )?;
        Ok(out
            .lines()
            .filter_map(|l| {
                let mut f = l.split('|');
                Some((
                    f.next()?.to_string(),
                    f.next()?.to_string(),
                    f.next()?.to_string(),
                ))
            })
            .collect())
    }

    /// Waits until the nodes report exactly `wanted` (in node order), each
    /// also its assigned state.
    fn wait_states(&self, wanted: &[&str], within: Duration) -> Result<()> {
        let started = Instant::now();
        loop {
            let states = self.states().unwrap_or_default();
            let settled = states.len() == wanted.len()
                && states
                    .iter()
                    .zip(wanted)
                    .all(|((_, reported, goal), w)| reported == w && goal == w);
            if settled {
                return Ok(());
            }
            if started.elapsed() > within {
                return Err(format!(
                    "the formation did not reach {wanted:?} within {within:?}: {states:?} (logs in {})",
                    self.logs.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The node the monitor says is primary now (`primary`, `wait_primary`
    /// or `single`, reported and assigned).
    pub fn primary(&self) -> Result<Option<String>> {
        Ok(self
            .states()?
            .into_iter()
            .find(|(_, reported, goal)| {
                reported == goal
                    && matches!(reported.as_str(), "primary" | "wait_primary" | "single")
            })
            .map(|(name, _, _)| name))
    }

    /// SIGKILL to a node's keeper and Postgres at once (its process group):
    /// the machine is gone, nothing restarts it.
    pub fn kill(&mut self, name: &str) -> Result<()> {
        let member = self
            .members
            .iter_mut()
            .find(|m| m.name == name)
            .ok_or_else(|| format!("no formation member {name}"))?;
        let mut child = member
            .child
            .take()
            .ok_or_else(|| format!("{name} is not running"))?;
        signal_group(child.id(), "KILL");
        let _ = child.wait();
        Ok(())
    }
}

fn signal_group(pid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([format!("-{signal}"), "--".into(), format!("-{pid}")])
        .stderr(Stdio::null())
        .status();
}

impl Drop for Formation {
    fn drop(&mut self) {
        // Data nodes first, so that no keeper waits on a stopped monitor.
        for member in self.members.iter_mut().rev() {
            let Some(mut child) = member.child.take() else {
                continue;
            };
            signal_group(child.id(), "TERM");
            let deadline = Instant::now() + Duration::from_secs(20);
            let mut exited = false;
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    exited = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            // Whatever is left of the group (Postgres children included).
            signal_group(child.id(), "KILL");
            if !exited {
                let _ = child.wait();
            }
        }
        if let Err(e) = fs::remove_dir_all(&self.base) {
            eprintln!("xtask: cannot remove {}: {e}", self.base.display());
        }
    }
}

/// `psql -XAtq` running `sql` (sent on standard input: an id list can pass
/// the 128 KiB limit of one argument) against `url`, with a 5 s connect
/// timeout.
pub fn psql(url: &str, sql: &str) -> Result<String> {
    use std::io::Write;
    let mut child = Command::new(pg::psql())
        .args(["-XAtq", "-v", "ON_ERROR_STOP=1", "-d", url])
        .env("PGCONNECT_TIMEOUT", "5")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run psql: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(sql.as_bytes())
            .map_err(|e| format!("psql stdin: {e}"))?;
    }
    let out = child.wait_with_output().map_err(|e| format!("psql: {e}"))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(text.trim().to_string())
    } else {
        Err(format!(
            "psql failed on `{}`: {text}",
            sql.chars().take(200).collect::<String>()
        ))
    }
}
