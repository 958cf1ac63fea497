//! The database for dev, test and bench: `DATABASE_URL` when set, otherwise a
//! private Postgres cluster under `.stoa/postgres`, made from the system's
//! Postgres binaries, listening on 127.0.0.1 only, on a free port.
//!
//! Postgres refuses to run as root; when xtask runs as root the cluster is
//! owned by and run as the `postgres` system user (via `runuser`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd::{self, Result, output, root};

/// Where the Postgres server is and whether this process started it.
pub struct Database {
    /// Connection URL of the server's `postgres` database (or the given URL).
    pub server_url: String,
    cluster: Option<Cluster>,
    started_here: bool,
    /// The shared private cluster of `discover` (its users are counted).
    shared: bool,
}

impl Database {
    /// `DATABASE_URL`, or the private cluster (started if needed).
    pub fn discover() -> Result<Self> {
        if let Ok(url) = std::env::var("DATABASE_URL")
            && !url.trim().is_empty()
        {
            println!("xtask: using DATABASE_URL");
            return Ok(Self {
                server_url: url,
                cluster: None,
                started_here: false,
                shared: false,
            });
        }
        let cluster = Cluster::locate()?;
        let started_here = cluster.start(false)?;
        users::join(started_here);
        let server_url = cluster.url("postgres");
        fs::write(stoa_dir().join("database-url"), &server_url)
            .map_err(|e| format!("cannot write .stoa/database-url: {e}"))?;
        Ok(Self {
            server_url,
            cluster: Some(cluster),
            started_here,
            shared: true,
        })
    }

    /// A URL for database `name` on the same server; creates it when it is a
    /// private cluster (with `DATABASE_URL`, the given database is used as is).
    pub fn database(&self, name: &str) -> Result<String> {
        match &self.cluster {
            Some(cluster) => {
                cluster.create_database(name)?;
                Ok(cluster.url(name))
            }
            None => Ok(self.server_url.clone()),
        }
    }

    /// Drops and recreates `name` on the private cluster.
    pub fn fresh_database(&self, name: &str) -> Result<String> {
        if let Some(cluster) = &self.cluster {
            cluster.drop_database(name)?;
        }
        self.database(name)
    }

    /// A private cluster of its own under `.stoa/<name>` whatever
    /// `DATABASE_URL` says (for `cargo xtask faults`, which stops and starts
    /// it). `durable` turns fsync and synchronous commit back on, so that an
    /// immediate (crash) stop loses nothing a client saw committed.
    pub fn private_named(name: &str, durable: bool) -> Result<Self> {
        let cluster = Cluster::locate_named(name)?;
        // Left running by an interrupted run: restart it with these settings.
        if cluster.running() {
            cluster.stop();
        }
        let started_here = cluster.start(durable)?;
        let server_url = cluster.url("postgres");
        Ok(Self {
            server_url,
            cluster: Some(cluster),
            started_here,
            shared: false,
        })
    }

    /// Stops the private cluster: `immediate` is a crash (no checkpoint,
    /// open connections cut), otherwise a fast shutdown.
    pub fn stop_server(&self, immediate: bool) -> Result<()> {
        let cluster = self
            .cluster
            .as_ref()
            .ok_or("only a private cluster can be stopped")?;
        let mode = if immediate { "immediate" } else { "fast" };
        let (ok, out) = output(
            cluster
                .tool("pg_ctl")
                .args(["stop", "-w", "-m", mode, "-D"])
                .arg(cluster.data()),
        )?;
        if ok {
            Ok(())
        } else {
            Err(format!("pg_ctl stop failed: {out}"))
        }
    }

    /// Starts the private cluster again on its port (after [`Self::stop_server`]).
    pub fn start_server(&self, durable: bool) -> Result<()> {
        let cluster = self
            .cluster
            .as_ref()
            .ok_or("only a private cluster can be started")?;
        cluster.start(durable).map(|_| ())
    }

    /// Runs `sql` with psql against `url` and returns the unaligned,
    /// tuples-only output (fields separated by `|`).
    pub fn psql(&self, url: &str, sql: &str) -> Result<String> {
        let program = find_bin_dir()
            .map(|d| d.join("psql"))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("psql"));
        let (ok, out) = output(
            Command::new(program)
                .args(["-XAtq", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql])
                .env("PGCONNECT_TIMEOUT", "5"),
        )?;
        if ok {
            Ok(out.trim().to_string())
        } else {
            Err(format!("psql failed on `{sql}`: {out}"))
        }
    }

    /// A new, empty database `name` for a drill: on the private cluster, or
    /// on the server of `DATABASE_URL` (dropped and created with psql; the
    /// given database itself is never used, so a drill cannot touch it).
    pub fn scratch_database(&self, name: &str) -> Result<String> {
        if self.cluster.is_some() {
            return self.fresh_database(name);
        }
        self.psql(
            &self.server_url,
            &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
        )?;
        self.psql(&self.server_url, &format!("CREATE DATABASE \"{name}\""))?;
        let (base, query) = match self.server_url.split_once('?') {
            Some((b, q)) => (b, format!("?{q}")),
            None => (self.server_url.as_str(), String::new()),
        };
        let prefix = base
            .rsplit_once('/')
            .map(|(p, _)| p)
            .ok_or("DATABASE_URL has no database path")?;
        Ok(format!("{prefix}/{name}{query}"))
    }

    /// Stops the shared private cluster when this process is the last xtask
    /// using it and an xtask started it (one left running by `pg_ctl` or
    /// another tool stays up). Two `cargo xtask test` runs side by side (two
    /// worktrees' developers, a helper) no longer stop each other's server.
    pub fn finish(self) {
        let Some(cluster) = &self.cluster else {
            return;
        };
        let last = if self.shared {
            users::leave()
        } else {
            self.started_here
        };
        if last {
            cluster.stop();
        }
    }
}

/// The xtask processes sharing the private cluster: a file per process under
/// `.stoa/postgres.users/` (its pid), and `.stoa/postgres.users/started`
/// while an xtask started the server.
mod users {
    use std::fs;
    use std::path::PathBuf;

    fn dir() -> PathBuf {
        super::stoa_dir().join("postgres.users")
    }

    fn alive(pid: &str) -> bool {
        std::path::Path::new("/proc").join(pid).exists()
    }

    /// Registers this process (and whether it started the server).
    pub fn join(started_here: bool) {
        let dir = dir();
        if fs::create_dir_all(&dir).is_err() {
            return;
        }
        let _ = fs::write(dir.join(std::process::id().to_string()), "");
        if started_here {
            let _ = fs::write(dir.join("started"), "");
        }
    }

    /// Unregisters this process; `true` when it was the last live user of a
    /// server an xtask started (the caller then stops it).
    pub fn leave() -> bool {
        let dir = dir();
        let own = std::process::id().to_string();
        let _ = fs::remove_file(dir.join(&own));
        let others = fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| name != "started")
                    .filter(|pid| {
                        let live = alive(pid);
                        if !live {
                            let _ = fs::remove_file(dir.join(pid));
                        }
                        live
                    })
                    .count()
            })
            .unwrap_or(0);
        others == 0 && fs::remove_file(dir.join("started")).is_ok()
    }
}

fn stoa_dir() -> PathBuf {
    root().join(".stoa")
}

const NO_POSTGRES: &str = "PostgreSQL server binaries (initdb, pg_ctl, postgres) were not found on PATH \
or under /usr/lib/postgresql/*/bin. Install them (Debian/Ubuntu: `apt-get install postgresql`; \
Fedora: `dnf install postgresql-server`; macOS: `brew install postgresql`), or point DATABASE_URL \
at an existing PostgreSQL 14+ server (for example \
DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres) and run the command again.";

/// The `psql` of the system's Postgres binaries (or the one on `PATH`).
pub fn psql() -> PathBuf {
    find_bin_dir()
        .map(|dir| dir.join("psql"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("psql"))
}

/// pgbench of the same Postgres installation (the bench's yardstick).
pub fn pgbench() -> PathBuf {
    find_bin_dir()
        .map(|dir| dir.join("pgbench"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("pgbench"))
}

/// The directory holding initdb and pg_ctl.
pub(crate) fn find_bin_dir() -> Option<PathBuf> {
    let has_tools = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if has_tools(&dir) {
                // PATH often holds symlinks to a few tools only; the real folder
                // also has createdb and dropdb.
                let real = fs::canonicalize(dir.join("initdb"))
                    .ok()
                    .and_then(|p| p.parent().map(Path::to_path_buf))
                    .filter(|d| has_tools(d));
                return Some(real.unwrap_or(dir));
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            has_tools(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

pub(crate) fn is_root() -> bool {
    output(Command::new("id").arg("-u"))
        .map(|(ok, out)| ok && out.trim() == "0")
        .unwrap_or(false)
}

struct Cluster {
    bin: PathBuf,
    /// `<base>/data` is the data directory, `<base>/server.log` the log.
    base: PathBuf,
    port_file: PathBuf,
    run_as: Option<&'static str>,
}

impl Cluster {
    fn locate() -> Result<Self> {
        Self::locate_named("postgres")
    }

    /// The cluster under `.stoa/<name>` (port in `.stoa/<name>.port`).
    fn locate_named(name: &str) -> Result<Self> {
        let bin = find_bin_dir().ok_or_else(|| NO_POSTGRES.to_string())?;
        let run_as = is_root().then_some("postgres");
        let stoa = stoa_dir();
        fs::create_dir_all(&stoa).map_err(|e| format!("cannot create {}: {e}", stoa.display()))?;
        let mut base = stoa.join(name);
        if let Some(user) = run_as {
            if output(Command::new("id").arg("-u").arg(user))
                .map(|(ok, _)| !ok)
                .unwrap_or(true)
            {
                return Err(format!(
                    "running as root, but there is no `{user}` user to run PostgreSQL as \
                     (Postgres refuses to run as root). Create it (`useradd --system {user}`) \
                     or run as an ordinary user."
                ));
            }
            fs::create_dir_all(&base)
                .map_err(|e| format!("cannot create {}: {e}", base.display()))?;
            cmd::run(Command::new("chown").args([user, &base.to_string_lossy()]))?;
            // The postgres user must be able to reach the folder; a checkout under a
            // private home directory is not, so fall back to a folder in /tmp.
            let reachable = output(
                Command::new("runuser")
                    .args(["-u", user, "--", "test", "-w"])
                    .arg(&base),
            )
            .map(|(ok, _)| ok)
            .unwrap_or(false);
            if !reachable {
                base = std::env::temp_dir().join(format!("stoa-{name}-{}", path_tag(&root())));
                fs::create_dir_all(&base)
                    .map_err(|e| format!("cannot create {}: {e}", base.display()))?;
                cmd::run(Command::new("chown").args([user, &base.to_string_lossy()]))?;
            }
        }
        Ok(Self {
            bin,
            base,
            port_file: stoa.join(format!("{name}.port")),
            run_as,
        })
    }

    fn data(&self) -> PathBuf {
        self.base.join("data")
    }

    /// A command for a Postgres tool, run as the cluster's owner.
    fn tool(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        match self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(program);
                c.current_dir(std::env::temp_dir());
                c
            }
            None => Command::new(program),
        }
    }

    fn port(&self) -> Option<u16> {
        fs::read_to_string(&self.port_file)
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{database}",
            self.port().unwrap_or(5432)
        )
    }

    fn running(&self) -> bool {
        output(self.tool("pg_ctl").arg("status").arg("-D").arg(self.data()))
            .map(|(ok, _)| ok)
            .unwrap_or(false)
    }

    /// Initialises (once) and starts the cluster. Returns whether it was started
    /// now (false when it was already running, e.g. under `cargo xtask dev`).
    fn start(&self, durable: bool) -> Result<bool> {
        if !self.data().join("PG_VERSION").is_file() {
            println!(
                "xtask: creating a private PostgreSQL cluster in {}",
                self.data().display()
            );
            let (ok, out) = output(
                self.tool("initdb")
                    .args([
                        "-U",
                        "postgres",
                        "--auth=trust",
                        "--encoding=UTF8",
                        "--no-locale",
                        "-D",
                    ])
                    .arg(self.data()),
            )?;
            if !ok {
                return Err(format!("initdb failed:\n{out}"));
            }
        }
        if self.running() && self.port().is_some() {
            return Ok(false);
        }
        let port = match self.port() {
            Some(p) if std::net::TcpListener::bind(("127.0.0.1", p)).is_ok() => p,
            _ => cmd::free_port()?,
        };
        fs::write(&self.port_file, port.to_string())
            .map_err(|e| format!("cannot write port file: {e}"))?;
        // Durability settings are off: this cluster holds only dev and test
        // data (the fault drills turn them on: they crash it on purpose).
        let durability = if durable {
            "-c fsync=on -c synchronous_commit=on -c full_page_writes=on"
        } else {
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        };
        let options = format!(
            "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' \
             {durability} -c max_connections=300"
        );
        let (ok, out) = output(
            self.tool("pg_ctl")
                .args(["start", "-w", "-t", "60", "-D"])
                .arg(self.data())
                .arg("-l")
                .arg(self.base.join("server.log"))
                .args(["-o", &options]),
        )?;
        if !ok {
            return Err(format!(
                "could not start PostgreSQL:\n{out}\n(see {})",
                self.base.join("server.log").display()
            ));
        }
        println!("xtask: PostgreSQL is listening on 127.0.0.1:{port}");
        Ok(true)
    }

    fn stop(&self) {
        match output(
            self.tool("pg_ctl")
                .args(["stop", "-m", "fast", "-D"])
                .arg(self.data()),
        ) {
            Ok((true, _)) => println!("xtask: PostgreSQL stopped"),
            Ok((false, out)) => eprintln!("xtask: stopping PostgreSQL failed: {out}"),
            Err(err) => eprintln!("xtask: {err}"),
        }
    }

    fn port_arg(&self) -> String {
        self.port().unwrap_or(5432).to_string()
    }

    /// createdb/dropdb against this cluster's port, as its owner.
    fn db_tool(&self, tool: &str, args: &[&str]) -> Result<(bool, String)> {
        output(
            self.tool(tool)
                .args(["-h", "127.0.0.1", "-p", &self.port_arg(), "-U", "postgres"])
                .args(args),
        )
    }

    fn create_database(&self, name: &str) -> Result<()> {
        let (ok, out) = self.db_tool("createdb", &[name])?;
        if ok || out.contains("already exists") {
            Ok(())
        } else {
            Err(format!("createdb {name} failed: {out}"))
        }
    }

    fn drop_database(&self, name: &str) -> Result<()> {
        let (ok, out) = self.db_tool("dropdb", &["--if-exists", "--force", name])?;
        if ok {
            Ok(())
        } else {
            Err(format!("dropdb {name} failed: {out}"))
        }
    }
}

/// A short, stable tag for a path (for the /tmp fallback folder name).
fn path_tag(path: &Path) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for b in path.to_string_lossy().bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

/// `cargo xtask pg-stop`.
pub fn stop_private() -> Result<u8> {
    let cluster = Cluster::locate()?;
    if cluster.running() {
        cluster.stop();
    } else {
        println!("xtask: the private PostgreSQL cluster is not running");
    }
    Ok(0)
}
