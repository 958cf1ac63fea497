//! Generic plans for the reads over many partitions.
//!
//! Postgres plans a prepared statement anew for its values ("custom plans")
//! unless the plan it would keep ("generic") looks as cheap. For a page of a
//! partitioned table that comparison always loses: the generic plan cannot
//! see the page's `LIMIT`, so it is priced as if a tenth of the rows were
//! read, and the statement is planned again on every execution. Over the
//! action log's monthly partitions (15 months, 10 indexes each) that
//! planning is most of the request: at 10M entries a filtered page took
//! 8.7 ms to plan and 1.8 ms to run (docs/benchmarks.md, "Where the time
//! goes: the audit trail"). The generic plan is the same shape (one ordered
//! index scan per month, merged, stopping after the page) and is made once
//! per connection.

use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// Makes the prepared statements of the current transaction run on their
/// generic plan (`plan_cache_mode`, reset when the transaction ends).
///
/// Only for statements whose plan does not depend on the values: equality
/// filters over indexed columns, an ordered page. Call it first inside the
/// transaction; the statement must be one diesel keeps prepared (a query
/// built with the query builder, or wrapped in [`crate::prepared::Cached`]).
pub async fn generic_plans(conn: &mut AsyncPgConnection) -> diesel::QueryResult<()> {
    diesel::sql_query("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)")
        .execute(conn)
        .await
        .map(|_| ())
}
