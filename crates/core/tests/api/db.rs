//! Pool, transactions and migrations against a real database.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use stoa_core::AppError;
use stoa_core::db::{Db, run_migrations};
use stoa_testkit::{TestDb, spawn_on_own_runtime};

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn count(db: &Db) -> i64 {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query("SELECT count(*) AS n FROM tx_probe")
        .get_result::<Count>(&mut *conn)
        .await
        .unwrap()
        .n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_apply_once_and_are_idempotent() {
    let test_db = TestDb::empty().await;
    let url = test_db.url();
    let [first] = migrate_apart(url).await;
    assert!(!first.is_empty(), "a fresh database gets every migration");
    let [second] = migrate_apart(url).await;
    assert!(second.is_empty(), "nothing left to apply: {second:?}");
    // Concurrent runs (several servers starting) serialise on the advisory
    // lock.
    for applied in migrate_apart::<2>(url).await {
        assert!(applied.is_empty(), "{applied:?}");
    }
}

/// Runs `N` migrations of `url` at once, each on a thread and runtime of
/// its own as separate servers would, and returns what each applied. The
/// harness blocks its thread (`block_in_place`), so a run awaited in the
/// test's own task would also block the deadline meant to catch it: a
/// hang here once held CI for three minutes with nothing to go on. After a
/// minute this fails naming what the database's sessions wait on.
async fn migrate_apart<const N: usize>(url: &str) -> [Vec<String>; N] {
    let runs = std::array::from_fn::<_, N, _>(|_| {
        let url = url.to_string();
        spawn_on_own_runtime(move || async move { run_migrations(&url).await })
    });
    let joined = tokio::task::spawn_blocking(move || runs.map(|run| run.join()));
    match tokio::time::timeout(std::time::Duration::from_secs(60), joined).await {
        Ok(joined) => joined.unwrap().map(|run| run.unwrap().unwrap()),
        Err(_) => panic!(
            "migrations still running after 60 s: {}",
            sessions(url).await
        ),
    }
}

#[derive(QueryableByName)]
struct Session {
    #[diesel(sql_type = Text)]
    line: String,
}

/// One line per session of `url`'s database: state, wait and statement.
async fn sessions(url: &str) -> String {
    use diesel_async::AsyncConnection;
    let Ok(mut conn) = diesel_async::AsyncPgConnection::establish(url).await else {
        return "cannot connect to look".into();
    };
    diesel::sql_query(
        "SELECT concat_ws(' | ', pid, state, wait_event_type, wait_event, query) AS line \
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .load::<Session>(&mut conn)
    .await
    .map(|rows| {
        rows.into_iter()
            .map(|row| row.line)
            .collect::<Vec<_>>()
            .join("; ")
    })
    .unwrap_or_else(|err| err.to_string())
}

#[actix_web::test]
async fn transactions_commit_on_ok_and_roll_back_on_error() {
    let test_db = TestDb::new().await;
    let db = Db::from_url(test_db.url(), 2, std::time::Duration::from_secs(5)).unwrap();
    {
        // Tables are created by the owner (as migrations do); the pool's
        // role gets its rights by default privileges.
        let mut conn =
            <diesel_async::AsyncPgConnection as diesel_async::AsyncConnection>::establish(
                test_db.url(),
            )
            .await
            .unwrap();
        diesel::sql_query("CREATE TABLE tx_probe (name text NOT NULL)")
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let failed: Result<(), AppError> = db
        .transaction(|conn| {
            Box::pin(async move {
                diesel::sql_query("INSERT INTO tx_probe VALUES ($1)")
                    .bind::<Text, _>("rolled back")
                    .execute(conn)
                    .await?;
                Err(AppError::bad_request("refused"))
            })
        })
        .await;
    assert_eq!(failed.unwrap_err().status(), 400);
    assert_eq!(count(&db).await, 0);

    let committed: Result<usize, AppError> = db
        .transaction(|conn| {
            Box::pin(async move {
                Ok(diesel::sql_query("INSERT INTO tx_probe VALUES ($1)")
                    .bind::<Text, _>("kept")
                    .execute(conn)
                    .await?)
            })
        })
        .await;
    assert_eq!(committed.unwrap(), 1);
    assert_eq!(count(&db).await, 1);
}

#[actix_web::test]
async fn an_unreachable_database_is_unavailable_not_a_hang() {
    let db = Db::from_url(
        "postgres://postgres@127.0.0.1:1/none",
        1,
        std::time::Duration::from_millis(300),
    )
    .unwrap();
    let err = AppError::from(db.ping().await.unwrap_err());
    assert_eq!(err.status(), 503);
}

#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct Prepared {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    at: String,
}

/// Named statements prepared on the connection whose text matches `pattern`
/// (bound, so this query never matches itself).
async fn prepared(db: &Db, pattern: &str) -> Vec<Prepared> {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(
        "SELECT name, prepare_time::text AS at FROM pg_prepared_statements \
         WHERE statement LIKE $1 ORDER BY name",
    )
    .bind::<Text, _>(pattern)
    .load(&mut *conn)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outbox_poll_is_prepared_once_per_connection() {
    use stoa_core::command::outbox::{Dispatcher, LogSubscriber};
    let test_db = TestDb::new().await;
    // One connection, so every poll runs where the statement cache lives.
    // Test fixtures: the dispatcher's and the check's connections are both
    // bypass connections (`Db::fixtures`), so the pool of one is shared.
    let db = Db::from_url(test_db.url(), 1, std::time::Duration::from_secs(10))
        .unwrap()
        .fixtures();
    let dispatcher = Dispatcher::new(db.clone(), vec![std::sync::Arc::new(LogSubscriber)]);
    assert_eq!(dispatcher.run_once().await.unwrap(), 0);
    let pattern = "%event_outbox%SKIP LOCKED%";
    let first = prepared(&db, pattern).await;
    assert_eq!(first.len(), 1, "the claim stays prepared: {first:?}");
    for _ in 0..3 {
        dispatcher.run_once().await.unwrap();
    }
    assert_eq!(
        prepared(&db, pattern).await,
        first,
        "and is never prepared again"
    );
}
