//! Access logs: one `access_reads` row per read, expanded by the
//! `access_logs` view; the commit mode never leaks into the session or into
//! a caller's transaction.

use diesel::sql_types::{BigInt, Text, Uuid as SqlUuid};
use diesel::{QueryDsl, QueryableByName};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use stoa_core::command::Actor;
use stoa_core::command::access::{logged, record};
use stoa_core::db::Db;
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
    let db = Db::from_url(test_db.url(), 2, std::time::Duration::from_secs(5)).unwrap();
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
