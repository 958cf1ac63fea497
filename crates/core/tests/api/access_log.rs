//! Access logs: one `access_reads` row per read, expanded by the
//! `access_logs` view; the commit mode never leaks into the session or into
//! a caller's transaction; kept answers' entries are written behind them,
//! each once, in bounded memory.

use std::sync::Arc;

use diesel::sql_types::{BigInt, Text, Uuid as SqlUuid};
use diesel::{QueryDsl, QueryableByName};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use stoa_core::command::Actor;
use stoa_core::command::access::{
    MAX_PENDING, ReadLog, log_behind, log_now, logged, record, settle,
};
use stoa_core::db::{Db, thread_queries};
use stoa_testkit::TestDb;
use uuid::Uuid;

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    synchronous_commit: String,
}

#[derive(QueryableByName, Debug, PartialEq)]
struct Entry {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    resource_id: String,
    #[diesel(sql_type = Text)]
    access_type: String,
}

async fn db() -> (TestDb, Db) {
    let test_db = TestDb::new().await;
    // Test fixtures: queries outside every scope bypass row-level security.
    let db = Db::from_url(test_db.url(), 2, std::time::Duration::from_secs(5))
        .unwrap()
        .fixtures();
    (test_db, db)
}

async fn count(conn: &mut AsyncPgConnection, sql: &str) -> i64 {
    diesel::sql_query(sql)
        .get_result::<Count>(conn)
        .await
        .unwrap()
        .n
}

async fn synchronous_commit(conn: &mut AsyncPgConnection) -> String {
    diesel::sql_query("SHOW synchronous_commit")
        .get_result::<Setting>(conn)
        .await
        .unwrap()
        .synchronous_commit
}

async fn entries(conn: &mut AsyncPgConnection) -> Vec<Entry> {
    diesel::sql_query("SELECT id, resource_id, access_type FROM access_logs ORDER BY resource_id")
        .load::<Entry>(conn)
        .await
        .unwrap()
}

/// Records a read of `ids` of kind `test.thing`.
async fn record_ids(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    ids: &[String],
) -> diesel::QueryResult<()> {
    record(conn, actor, "test.thing", ids, false, &["id"], None).await
}

/// A logged read of one generated id.
async fn read_one(conn: &mut AsyncPgConnection, actor: &Actor) -> diesel::QueryResult<Vec<Uuid>> {
    let query = diesel::select(diesel::dsl::sql::<SqlUuid>("gen_random_uuid()"));
    logged(query, actor, "test.thing", false, &["id"], "/api/things")
        .load(conn)
        .await
}

fn actor() -> Actor {
    Actor::api(Some(Uuid::new_v4()), Some(Uuid::new_v4()), None)
}

#[actix_web::test]
async fn a_read_of_several_records_is_one_row_and_one_entry_per_record() {
    let (_test_db, db) = db().await;
    let mut conn = db.conn().await.unwrap();
    let ids = ["b".to_string(), "a".to_string(), "b".to_string()];
    record_ids(&mut conn, &actor(), &ids).await.unwrap();
    assert_eq!(
        count(&mut conn, "SELECT count(*) AS n FROM access_reads").await,
        1
    );
    let listed = entries(&mut conn).await;
    assert_eq!(
        listed
            .iter()
            .map(|e| (e.resource_id.as_str(), e.access_type.as_str()))
            .collect::<Vec<_>>(),
        [("a", "read:list"), ("b", "read:list")],
        "each distinct record once"
    );
    assert_ne!(listed[0].id, listed[1].id, "every entry has its own id");
    // The ids are stable: the view reads them from the row.
    assert_eq!(entries(&mut conn).await, listed);
    // Nothing read, nothing written.
    record_ids(&mut conn, &actor(), &[]).await.unwrap();
    assert_eq!(
        count(&mut conn, "SELECT count(*) AS n FROM access_reads").await,
        1
    );
}

#[actix_web::test]
async fn a_logged_read_returns_its_rows_and_writes_their_entry() {
    let (_test_db, db) = db().await;
    let mut conn = db.conn().await.unwrap();
    let id = Uuid::new_v4();
    let query = diesel::select(diesel::dsl::sql::<SqlUuid>("").bind::<SqlUuid, _>(id));
    let actor = actor();
    let rows: Vec<Uuid> = logged(query, &actor, "test.thing", true, &["id"], "/api/things")
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows, [id]);
    let listed = entries(&mut conn).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            listed[0].resource_id.as_str(),
            listed[0].access_type.as_str()
        ),
        (id.to_string().as_str(), "read:item")
    );
    // An empty page writes nothing.
    let none = stoa_core::command::schema::action_logs::table
        .select(stoa_core::command::schema::action_logs::id);
    let rows: Vec<Uuid> = logged(none, &actor, "test.thing", false, &["id"], "/api/things")
        .load(&mut conn)
        .await
        .unwrap();
    assert!(rows.is_empty());
    assert_eq!(
        count(&mut conn, "SELECT count(*) AS n FROM access_reads").await,
        1
    );
}

#[actix_web::test]
async fn the_commit_mode_stays_with_the_logging_transaction() {
    let (_test_db, db) = db().await;
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query("SET synchronous_commit = on")
        .execute(&mut *conn)
        .await
        .unwrap();
    let ids = ["a".to_string()];
    // Outside a transaction the entry commits asynchronously, for its own
    // transaction only: the session's setting is back afterwards.
    record_ids(&mut conn, &actor(), &ids).await.unwrap();
    let actor = actor();
    read_one(&mut conn, &actor).await.unwrap();
    assert_eq!(synchronous_commit(&mut conn).await, "on");
    drop(conn);
    // Inside a caller's transaction the caller's durability applies to all of it.
    let actor_in_tx = actor.clone();
    let setting = db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                diesel::sql_query("SET LOCAL synchronous_commit = on")
                    .execute(conn)
                    .await?;
                record_ids(conn, &actor_in_tx, &ids).await?;
                read_one(conn, &actor_in_tx).await?;
                Ok(synchronous_commit(conn).await)
            })
        })
        .await
        .unwrap();
    assert_eq!(setting, "on");
    let mut conn = db.conn().await.unwrap();
    assert_eq!(
        count(&mut conn, "SELECT count(*) AS n FROM access_logs").await,
        4
    );
}

/// A kept answer's entry: `ids` of kind `kind`, read by `actor`.
fn kept(actor: &Actor, kind: &'static str, ids: &[&str]) -> Arc<ReadLog> {
    Arc::new(ReadLog {
        actor: actor.clone(),
        resource_kind: kind,
        ids: ids.iter().map(|id| id.to_string()).collect(),
        by_id: false,
        fields: &["id"],
        path: "/api/things",
    })
}

#[actix_web::test]
async fn kept_reads_are_written_behind_each_once_as_the_page_wrote_them() {
    let (_test_db, db) = db().await;
    let actor = actor();
    let mut conn = db.conn().await.unwrap();
    // The entry a page read writes in its own statement...
    let query = diesel::select(diesel::dsl::sql::<SqlUuid>("").bind::<SqlUuid, _>(Uuid::nil()));
    let _: Vec<Uuid> = logged(query, &actor, "test.thing", false, &["id"], "/api/things")
        .load(&mut conn)
        .await
        .unwrap();
    // ...and 100 uses of the kept answer, queued without a round trip.
    let log = kept(&actor, "test.thing", &[&Uuid::nil().to_string()]);
    let before = thread_queries();
    for _ in 0..100 {
        assert!(log_behind(&db, &log));
        // Reads stamped in one microsecond share a time (Postgres keeps
        // microseconds); 2 µs apart, each read's time is its own, and all
        // 100 still fall well within one span, so they share rows. (A sleep
        // would take 50 µs or more, and far more on a loaded machine.)
        let stamped = std::time::Instant::now();
        while stamped.elapsed() < std::time::Duration::from_micros(2) {
            std::hint::spin_loop();
        }
    }
    assert_eq!(thread_queries(), before, "queuing sends nothing");
    settle(&db).await.unwrap();
    assert_eq!(
        thread_queries(),
        before,
        "the writer's statements are not the caller's"
    );
    assert_eq!(db.access_queue().pending(), 0);
    // The repeated reads share rows (queued within microseconds of each
    // other, at most 8 reads a row), each read still its entry.
    let rows = count(&mut conn, "SELECT count(*) AS n FROM access_reads").await;
    assert!((14..=60).contains(&rows), "{rows} rows");
    assert_eq!(
        count(
            &mut conn,
            "SELECT sum(1 + coalesce(cardinality(repeat_ats), 0))::bigint AS n FROM access_reads"
        )
        .await,
        101
    );
    // Every row is the row the page wrote, with entry ids of its own.
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(DISTINCT (tenant_id, organization_id, actor_user_id, resource_kind, \
             resource_ids, access_type, fields, context_json)) AS n FROM access_reads"
        )
        .await,
        1
    );
    assert_eq!(
        count(&mut conn, "SELECT count(DISTINCT id) AS n FROM access_logs").await,
        101
    );
    // Written after the read, dated at the read: each read's own time, no
    // earlier than its row's and at most the span later.
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(*) AS n FROM access_logs WHERE created_at > now() \
             OR created_at < stored_at OR created_at > stored_at + interval '10 ms'"
        )
        .await,
        0
    );
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(DISTINCT created_at) AS n FROM access_logs"
        )
        .await,
        101,
        "one time per read"
    );
    // Nothing queued: settling sends nothing.
    let before = thread_queries();
    settle(&db).await.unwrap();
    assert_eq!(thread_queries(), before);
}

#[test]
fn entries_queued_when_the_writer_is_cancelled_are_written_by_settle_once() {
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    let (test_db, db) = runtime().block_on(db());
    let log = kept(&actor(), "test.thing", &["a", "b"]);
    // Queued on a runtime that ends before its writer ever runs.
    let first = runtime();
    first.block_on(async {
        for _ in 0..10 {
            assert!(log_behind(&db, &log));
        }
    });
    drop(first);
    assert_eq!(db.access_queue().pending(), 10);
    // The server's shutdown: settle on the runtime that remains.
    let last = runtime();
    last.block_on(async {
        settle(&db).await.unwrap();
        assert_eq!(db.access_queue().pending(), 0);
        let mut conn = db.conn().await.unwrap();
        assert_eq!(
            count(&mut conn, "SELECT count(*) AS n FROM access_logs").await,
            20
        );
    });
    drop(db);
    drop(test_db);
}

#[actix_web::test]
async fn a_full_queue_hands_the_entry_back_and_a_rejected_entry_blocks_nothing() {
    let (_test_db, db) = db().await;
    let actor = actor();
    // The writer cannot run while this task does not yield: the queue fills.
    let good = kept(&actor, "test.thing", &["a"]);
    for _ in 0..MAX_PENDING {
        assert!(log_behind(&db, &good));
    }
    assert!(
        !log_behind(&db, &good),
        "beyond the bound the read writes its own"
    );
    let mut conn = db.conn().await.unwrap();
    log_now(&mut conn, &good).await.unwrap();
    settle(&db).await.unwrap();
    let written = i64::try_from(MAX_PENDING).unwrap() + 1;
    assert_eq!(
        count(&mut conn, "SELECT count(*) AS n FROM access_logs").await,
        written
    );
    // Postgres refuses text with a NUL byte: that entry is dropped, the ones
    // queued with it are written.
    let bad = kept(&actor, "test.\0thing", &["b"]);
    assert!(log_behind(&db, &good));
    assert!(log_behind(&db, &bad));
    assert!(log_behind(&db, &good));
    settle(&db).await.unwrap();
    assert_eq!(db.access_queue().pending(), 0);
    assert_eq!(
        count(&mut conn, "SELECT count(*) AS n FROM access_logs").await,
        written + 2
    );
}
