//! Pool, transactions and migrations against a real database.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use stoa_core::AppError;
use stoa_core::db::{Db, run_migrations};
use stoa_testkit::TestDb;

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
    let first = run_migrations(test_db.url()).await.unwrap();
    assert!(!first.is_empty(), "a fresh database gets every migration");
    let second = run_migrations(test_db.url()).await.unwrap();
    assert!(second.is_empty(), "nothing left to apply: {second:?}");
    // Concurrent runs (several servers starting) serialise on the advisory lock.
    let url = test_db.url().to_string();
    let (a, b) = tokio::join!(run_migrations(&url), run_migrations(&url));
    assert!(a.unwrap().is_empty() && b.unwrap().is_empty());
}

#[actix_web::test]
async fn transactions_commit_on_ok_and_roll_back_on_error() {
    let test_db = TestDb::new().await;
    let db = Db::from_url(test_db.url(), 2, std::time::Duration::from_secs(5)).unwrap();
    {
        let mut conn = db.conn().await.unwrap();
        diesel::sql_query("CREATE TABLE tx_probe (name text NOT NULL)")
            .execute(&mut *conn)
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
    let db = Db::from_url(test_db.url(), 1, std::time::Duration::from_secs(10)).unwrap();
    let dispatcher = Dispatcher::new(db.clone(), vec![std::sync::Arc::new(LogSubscriber)]);
    assert_eq!(dispatcher.run_once().await.unwrap(), 0);
    let pattern = "%\"event_outbox\"%SKIP LOCKED%";
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
