//! Raw SQL against a test database: fixtures that simulate time passing or
//! another module's change, and counts of what a request left behind.

use diesel::sql_types::BigInt;
use diesel_async::RunQueryDsl;
use stoa_core::db::Db;

/// Runs `statement` (panics, naming it, when it fails).
pub async fn sql(db: &Db, statement: &str) {
    let mut conn = db.conn().await.expect("a test database connection");
    diesel::sql_query(statement)
        .execute(&mut *conn)
        .await
        .unwrap_or_else(|err| panic!("{statement}: {err}"));
}

/// The one bigint `query` selects, e.g. `SELECT count(*) FROM action_logs`
/// (the column's name does not matter; panics, naming the query, when it fails).
pub async fn count(db: &Db, query: &str) -> i64 {
    let mut conn = db.conn().await.expect("a test database connection");
    diesel::dsl::sql::<BigInt>(query)
        .get_result(&mut *conn)
        .await
        .unwrap_or_else(|err| panic!("{query}: {err}"))
}
