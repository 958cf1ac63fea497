//! Postgres access: the connection pool (diesel-async + deadpool), a transaction
//! helper and the migrations embedded in the binary.
//!
//! Nothing here needs libpq: diesel-async talks the wire protocol through
//! tokio-postgres, and migrations run through diesel-async's harness.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;

use deadpool::managed::ObjectId;
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::command::access::AccessQueue;
use crate::config::DbConfig;
use crate::rls::{self, Scope};

mod counter;
mod plans;
mod replica;

use counter::install_query_counter;
pub(crate) use counter::uncounted;
pub use counter::{queries_total, thread_queries};
pub use plans::generic_plans;
pub use replica::{lagging_reads, note_write, replica_reads_total};

/// Every migration of every module, from the workspace's `migrations/` folder.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

pub mod migrations;
pub use migrations::Migrations;

/// A pooled Postgres connection.
pub type DbConn = Object<AsyncPgConnection>;

/// Errors of the database layer.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// No connection could be had in time (server down, pool exhausted).
    #[error("database unavailable: {0}")]
    Unavailable(String),
    #[error(transparent)]
    Query(#[from] diesel::result::Error),
    #[error("migration failed: {0}")]
    Migration(String),
}

/// The shared pool. Cheap to clone.
#[derive(Clone)]
pub struct Db {
    /// Connections for tenant and closed scopes; each carries the settings
    /// of the last scope that took it (`settings`).
    pool: Pool<AsyncPgConnection>,
    /// Connections for bypass scopes, acting as [`rls::BYPASS_ROLE`] from
    /// connection on (the session check of every request takes one: switching a shared
    /// connection to bypass and back would cost two statements a request).
    bypass_pool: Pool<AsyncPgConnection>,
    timeout: Duration,
    /// Access-log entries written behind kept answers (one queue per pool).
    access: Arc<AccessQueue>,
    /// Work requests left running after their answers ([`crate::behind`]).
    behind: Arc<crate::behind::Behind>,
    /// The row-level security settings each pooled connection holds now.
    settings: Arc<Mutex<HashMap<ObjectId, String>>>,
    /// The scope of work outside every [`rls`] scope: closed for the
    /// server; test fixtures get a handle that bypasses ([`Db::fixtures`]).
    default_scope: Scope,
    /// The streaming replica for reads that may lag ([`Db::reader`]).
    replica: Option<Arc<replica::Replica>>,
    /// Set on a [`Db::reader`] handle that reads the replica: the primary's.
    primary: Option<Arc<Db>>,
}

/// Session settings of every pooled connection, sent with `SET ROLE`.
///
/// No parallel workers and no JIT: a request's statement runs beside other
/// requests on a few cores, where workers only take their cores (a filtered
/// deals list over 1M rows planned as a parallel scan took 26 ms instead of
/// 5 ms at 4 connections on 2 cores), and compiling a plan costs more than
/// the millisecond such statements run. Work that needs either (a one-off
/// report) sets it in its own transaction with `SET LOCAL`.
const OLTP_SETTINGS: &str = "SET max_parallel_workers_per_gather = 0; SET jit = off";

/// A pool whose connections act as `role` ([`rls::APP_ROLE`] or
/// [`rls::BYPASS_ROLE`]), set once when connected: neither owns a table, so
/// the row-level security policies of that role apply. Connection set-up is
/// not a request's round trip: it is not counted for the thread
/// ([`uncounted`]).
fn pool(url: &str, size: usize, role: &'static str) -> Result<Pool<AsyncPgConnection>, DbError> {
    let mut manager_cfg = ManagerConfig::<AsyncPgConnection>::default();
    manager_cfg.recycling_method = diesel_async::pooled_connection::RecyclingMethod::Fast;
    manager_cfg.custom_setup = Box::new(move |url| {
        Box::pin(uncounted(async move {
            let mut conn = AsyncPgConnection::establish(url).await?;
            conn.batch_execute(&format!("SET ROLE {role}; {OLTP_SETTINGS}"))
                .await
                .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
            Ok(conn)
        }))
    });
    let manager =
        AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, manager_cfg);
    Pool::builder(manager)
        .max_size(size)
        .build()
        .map_err(|err| DbError::Unavailable(err.to_string()))
}

/// Forget the settings of connections past this many (closed connections
/// leave their entry behind; forgetting costs one `set_config` each).
const MAX_REMEMBERED_SETTINGS: usize = 1024;

impl Db {
    /// Builds the pool; no connection is opened until the first request, so a
    /// server starts (and answers `/health` with 503) while the database is down.
    pub fn connect(cfg: &DbConfig) -> Result<Self, DbError> {
        let mut db = Self::from_url(cfg.url.expose(), cfg.pool_size, cfg.timeout)?;
        if let Some(url) = &cfg.replica_url {
            db.replica = Some(Arc::new(replica::Replica::new(
                url.expose(),
                cfg.pool_size,
                cfg.replica_max_lag,
            )?));
        }
        Ok(db)
    }

    pub fn from_url(url: &str, pool_size: usize, timeout: Duration) -> Result<Self, DbError> {
        install_query_counter();
        Ok(Self {
            pool: pool(url, pool_size, rls::APP_ROLE)?,
            bypass_pool: pool(url, pool_size, rls::BYPASS_ROLE)?,
            timeout,
            access: Arc::default(),
            behind: Arc::default(),
            settings: Arc::default(),
            default_scope: Scope::Closed,
            replica: None,
            primary: None,
        })
    }

    /// The same pool, for test fixtures and seeding tools: work outside
    /// every [`rls`] scope bypasses the policies instead of seeing nothing.
    pub fn fixtures(&self) -> Self {
        self.bypassing("fixtures")
    }

    /// The same pool, for administrative tools (command-line seeding,
    /// benchmark set-up): work outside every [`rls`] scope bypasses the
    /// policies, each connection logged and counted as a bypass named
    /// `reason`. Never the server's handle.
    pub fn bypassing(&self, reason: &'static str) -> Self {
        Self {
            default_scope: Scope::Bypass(reason),
            ..self.clone()
        }
    }

    /// A connection from the pool, waiting at most the configured timeout
    /// (including the time to open a new connection).
    ///
    /// The connection carries the row-level security settings of the
    /// current [`rls`] scope: one `set_config` round trip when they differ
    /// from what the connection last held, none otherwise.
    pub async fn conn(&self) -> Result<DbConn, DbError> {
        let scope = if rls::is_scoped() {
            rls::current()
        } else if let Scope::Bypass(reason) = self.default_scope {
            rls::bypass_scope(reason)
        } else {
            self.default_scope
        };
        if let Scope::Bypass(_) = scope {
            // Acts as the bypass role from connection on; no setting needed.
            return self.checkout(&self.bypass_pool).await;
        }
        let mut conn = self.checkout(&self.pool).await?;
        let wanted = scope.settings();
        let id = Object::id(&conn);
        let remembered = self.remembered(id);
        let held = match &remembered {
            Some(held) => Some(held.clone()),
            // A connection never handed out before holds no setting: closed.
            None if Object::metrics(&conn).recycle_count == 0 => Some(Scope::Closed.settings()),
            None => None,
        };
        if held.as_ref() != Some(&wanted) {
            // Unknown until the statement succeeds (a cancelled or failed
            // one leaves the connection's settings in doubt).
            self.forget(id);
            // Session-level (not `SET LOCAL`) and outside any transaction,
            // so a rollback later cannot undo it.
            diesel::sql_query("SELECT set_config('stoa.tenant_id', $1, false)")
                .bind::<diesel::sql_types::Text, _>(&wanted)
                .execute(&mut *conn)
                .await?;
        }
        if remembered.as_ref() != Some(&wanted) {
            self.remember(id, wanted);
        }
        Ok(conn)
    }

    async fn checkout(&self, pool: &Pool<AsyncPgConnection>) -> Result<DbConn, DbError> {
        match tokio::time::timeout(self.timeout, pool.get()).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(err)) => Err(DbError::Unavailable(err.to_string())),
            Err(_) => Err(DbError::Unavailable(format!(
                "no connection within {} ms",
                self.timeout.as_millis()
            ))),
        }
    }

    fn remembered(&self, id: ObjectId) -> Option<String> {
        match self.settings.lock() {
            Ok(map) => map.get(&id).cloned(),
            Err(poisoned) => poisoned.into_inner().get(&id).cloned(),
        }
    }

    fn forget(&self, id: ObjectId) {
        match self.settings.lock() {
            Ok(mut map) => map.remove(&id),
            Err(poisoned) => poisoned.into_inner().remove(&id),
        };
    }

    fn remember(&self, id: ObjectId, settings: String) {
        let mut map = match self.settings.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        };
        if map.len() >= MAX_REMEMBERED_SETTINGS {
            map.clear();
        }
        map.insert(id, settings);
    }

    /// Runs `f` in one transaction: committed when it returns `Ok`, rolled back
    /// otherwise (and on panic or cancellation, when the connection is dropped).
    ///
    /// ```ignore
    /// db.transaction(|conn| Box::pin(async move { insert(conn).await })).await?;
    /// ```
    pub async fn transaction<R, E, F>(&self, f: F) -> Result<R, E>
    where
        F: for<'r> FnOnce(&'r mut AsyncPgConnection) -> BoxFuture<'r, Result<R, E>> + Send,
        E: From<diesel::result::Error> + From<DbError> + Send,
        R: Send,
    {
        let mut conn = self.conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |c| f(c).await).await
    }

    /// `SELECT 1`, bounded by the pool timeout: what `/health` reports.
    pub async fn ping(&self) -> Result<(), DbError> {
        let mut conn = self.conn().await?;
        match tokio::time::timeout(
            self.timeout,
            diesel::sql_query("SELECT 1").execute(&mut *conn),
        )
        .await
        {
            Ok(result) => result.map(|_| ()).map_err(DbError::from),
            Err(_) => Err(DbError::Unavailable("ping timed out".into())),
        }
    }

    /// The access-log entries waiting to be written (see
    /// [`crate::command::access::log_behind`]).
    pub fn access_queue(&self) -> &Arc<AccessQueue> {
        &self.access
    }

    /// Work requests left running after their answers (see [`crate::behind`]).
    pub fn behind(&self) -> &Arc<crate::behind::Behind> {
        &self.behind
    }

    /// Pool statistics for `/metrics`: (size, available, max).
    /// Both pools together (tenant and bypass connections).
    pub fn pool_status(&self) -> (usize, usize, usize) {
        let (a, b) = (self.pool.status(), self.bypass_pool.status());
        (
            a.size + b.size,
            a.available + b.available,
            a.max_size + b.max_size,
        )
    }
}

/// An arbitrary, fixed key for the advisory lock that serialises migrations
/// across processes (several servers starting at once).
const MIGRATION_LOCK_KEY: i64 = 0x5354_4f41_4d49_4752; // "STOAMIGR"

/// Applies pending migrations and returns the versions applied. Safe to run
/// concurrently from several processes and idempotent.
///
/// diesel-async's harness uses `block_in_place`, so this must run on a
/// multi-threaded tokio runtime.
pub async fn run_migrations(url: &str) -> Result<Vec<String>, DbError> {
    run_migrations_from(url, MIGRATIONS).await
}

/// [`run_migrations`] of `source` alone: a program that embeds a few
/// modules applies theirs only ([`Migrations`]).
pub async fn run_migrations_from<S>(url: &str, source: S) -> Result<Vec<String>, DbError>
where
    S: diesel::migration::MigrationSource<diesel::pg::Pg> + Send,
{
    let mut conn = AsyncPgConnection::establish(url)
        .await
        .map_err(|err| DbError::Unavailable(err.to_string()))?;
    diesel::sql_query(format!("SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})"))
        .execute(&mut conn)
        .await?;
    let mut harness = diesel_async::AsyncMigrationHarness::new(conn);
    let applied = harness
        .run_pending_migrations(source)
        .map(|versions| versions.iter().map(ToString::to_string).collect::<Vec<_>>())
        .map_err(|err| DbError::Migration(err.to_string()));
    let mut conn = harness.into_inner();
    // The lock is released with the session anyway; unlock explicitly for pools.
    diesel::sql_query(format!("SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})"))
        .execute(&mut conn)
        .await?;
    applied
}
