//! Per-test databases cloned from a migrated template.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

/// The workspace root, found from this crate's manifest directory.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The Postgres server the tests use (any database on it).
pub fn server_url() -> String {
    if let Ok(url) = std::env::var("DATABASE_URL")
        && !url.trim().is_empty()
    {
        return url;
    }
    let file = workspace_root().join(".stoa").join("database-url");
    match std::fs::read_to_string(&file) {
        Ok(url) if !url.trim().is_empty() => url.trim().to_string(),
        _ => panic!(
            "No database for tests: set DATABASE_URL, or run the suite with `cargo xtask test`, \
             which starts a private Postgres cluster and writes its URL to {}",
            file.display()
        ),
    }
}

/// `url` with its database name replaced by `name` (query string kept).
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let authority_start = base.find("://").map(|i| i + 3).unwrap_or(0);
    let path_start = base[authority_start..]
        .find('/')
        .map(|i| i + authority_start)
        .unwrap_or(base.len());
    let mut out = format!("{}/{}", &base[..path_start], name);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// FNV-1a over every file in `migrations/`, so the template is rebuilt when any
/// migration changes.
fn migrations_hash() -> String {
    let mut files = Vec::new();
    let mut stack = vec![workspace_root().join("migrations")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    let root = workspace_root().join("migrations");
    for file in files {
        // Relative names: two checkouts of the same migrations share a template.
        let name = file.strip_prefix(&root).unwrap_or(&file);
        feed(name.to_string_lossy().as_bytes());
        feed(&std::fs::read(&file).unwrap_or_default());
    }
    format!("{hash:016x}")
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    datname: String,
}

/// Runs one statement of the harness's own; failing fails the test with `what`.
async fn exec(conn: &mut AsyncPgConnection, sql: String, what: &str) {
    if let Err(err) = diesel::sql_query(sql).execute(conn).await {
        panic!("{what}: {err}");
    }
}

const TEMPLATE_LOCK_KEY: i64 = 0x5354_4f41_5450_4c54; // "STOATPLT"

async fn database_exists(conn: &mut AsyncPgConnection, name: &str) -> bool {
    diesel::sql_query("SELECT count(*) AS n FROM pg_database WHERE datname = $1")
        .bind::<Text, _>(name)
        .get_result::<Count>(conn)
        .await
        .map(|c| c.n > 0)
        .expect("query pg_database")
}

/// Seconds since the epoch (0 if the clock is before it).
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Creates the template once per migrations hash, across processes.
async fn ensure_template(server: &str) -> String {
    let name = format!("stoa_tpl_{}", migrations_hash());
    let admin = with_database(server, "postgres");
    let mut conn = AsyncPgConnection::establish(&admin)
        .await
        .unwrap_or_else(|err| panic!("cannot connect to the test database server: {err}"));
    exec(
        &mut conn,
        format!("SELECT pg_advisory_lock({TEMPLATE_LOCK_KEY})"),
        "take the template lock",
    )
    .await;
    if !database_exists(&mut conn, &name).await {
        let building = format!("{name}_building");
        // Left over by a run that crashed while migrating.
        exec(
            &mut conn,
            format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"),
            "drop a half-built template",
        )
        .await;
        exec(
            &mut conn,
            format!("CREATE DATABASE {building}"),
            "create the template database",
        )
        .await;
        stoa_core::db::run_migrations(&with_database(server, &building))
            .await
            .unwrap_or_else(|err| panic!("migrating the template failed: {err}"));
        exec(
            &mut conn,
            format!("ALTER DATABASE {building} RENAME TO {name}"),
            "rename the template",
        )
        .await;
        exec(
            &mut conn,
            format!("ALTER DATABASE {name} IS_TEMPLATE true"),
            "mark the template",
        )
        .await;
        exec(
            &mut conn,
            format!(
                "COMMENT ON DATABASE {name} IS 'stoa test template built at {}'",
                unix_now()
            ),
            "date the template",
        )
        .await;
        // Templates of older migration sets are dead weight now, once they
        // are a day old: a younger one may belong to another checkout whose
        // tests run at this moment against the same server (another branch,
        // another migration set), and dropping it would fail them.
        let stale = diesel::sql_query(
            "SELECT datname FROM pg_database d WHERE datname LIKE 'stoa_tpl_%' AND datname <> $1 \
             AND datname NOT LIKE '%_building' \
             AND coalesce(substring(shobj_description(d.oid, 'pg_database') \
                 FROM 'built at ([0-9]+)')::bigint, 0) < $2",
        )
        .bind::<Text, _>(&name)
        .bind::<diesel::sql_types::BigInt, _>(unix_now() - 24 * 3600)
        .load::<Name>(&mut conn)
        .await
        .unwrap_or_default();
        for old in stale {
            let _ = diesel::sql_query(format!("ALTER DATABASE {} IS_TEMPLATE false", old.datname))
                .execute(&mut conn)
                .await;
            let _ = diesel::sql_query(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                old.datname
            ))
            .execute(&mut conn)
            .await;
        }
    }
    exec(
        &mut conn,
        format!("SELECT pg_advisory_unlock({TEMPLATE_LOCK_KEY})"),
        "release the template lock",
    )
    .await;
    name
}

/// Runs `f` on a fresh multi-threaded runtime in its own thread: migrations
/// need `block_in_place`, and Drop cannot await.
fn on_own_runtime<T, F, Fut>(f: F) -> T
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    spawn_on_own_runtime(f)
        .join()
        .expect("the database helper thread panicked")
}

/// Starts `f` on a fresh multi-threaded runtime (one worker) in a thread of
/// its own, as a separate process would run it: migrations block their
/// thread (`block_in_place`), so runs meant to overlap, or to be watched by
/// a timeout, each need one.
pub fn spawn_on_own_runtime<T, F, Fut>(f: F) -> std::thread::JoinHandle<T>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("build a tokio runtime")
            .block_on(f())
    })
}

fn template_name() -> &'static str {
    static TEMPLATE: OnceLock<String> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let server = server_url();
        on_own_runtime(move || async move { ensure_template(&server).await })
    })
}

/// A database of the test's own, dropped when this value is dropped.
pub struct TestDb {
    url: String,
    name: String,
    admin: String,
}

impl TestDb {
    /// Clones the migrated template into a new database.
    pub async fn new() -> Self {
        Self::create(Some(template_name())).await
    }

    /// A new database without any migration (for migration tests).
    pub async fn empty() -> Self {
        Self::create(None).await
    }

    async fn create(template: Option<&str>) -> Self {
        let server = server_url();
        let admin = with_database(&server, "postgres");
        let name = format!("t_{}", uuid::Uuid::new_v4().simple());
        let mut conn = AsyncPgConnection::establish(&admin)
            .await
            .unwrap_or_else(|err| panic!("cannot connect to the test database server: {err}"));
        let sql = match template {
            Some(template) => format!("CREATE DATABASE {name} TEMPLATE {template}"),
            None => format!("CREATE DATABASE {name}"),
        };
        let mut attempt = 0;
        loop {
            match diesel::sql_query(&sql).execute(&mut conn).await {
                Ok(_) => break,
                // Another session still touching the template (rare): wait and retry.
                Err(err)
                    if attempt < 20
                        && err.to_string().contains("being accessed by other users") =>
                {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(err) => panic!("cannot create the test database: {err}"),
            }
        }
        Self {
            url: with_database(&server, &name),
            name,
            admin,
        }
    }

    /// The connection URL of this test's database.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let admin = self.admin.clone();
        let name = self.name.clone();
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async move {
                let mut conn = AsyncPgConnection::establish(&admin).await.ok()?;
                diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut conn)
                    .await
                    .ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(_))) {
            eprintln!("stoa-testkit: could not drop test database {}", self.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn replaces_the_database_name() {
        assert_eq!(
            with_database("postgres://u@h:5432/db", "x"),
            "postgres://u@h:5432/x"
        );
        assert_eq!(
            with_database("postgres://u@h:5432", "x"),
            "postgres://u@h:5432/x"
        );
        assert_eq!(
            with_database("postgres://u:p@h/db?sslmode=disable", "x"),
            "postgres://u:p@h/x?sslmode=disable"
        );
    }
}
