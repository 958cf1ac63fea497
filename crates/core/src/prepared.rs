//! Keeping a statement diesel would re-prepare in the connection's statement cache.
//!
//! diesel caches the prepared statement of a query only when its SQL text can
//! never vary with its values. It refuses that for every `UPDATE` (a changeset
//! of `Option`s changes the SQL), for inserts with defaults and for `sql_query`,
//! so such a statement is parsed and planned by Postgres on every execution. For
//! a poll that runs every 250 ms on every worker (the job-queue claim, the
//! outbox), that is wasted work. [`Cached`] marks a query whose SQL is fixed as
//! cacheable: the first execution on a connection prepares it, later ones reuse
//! it.
//!
//! Only wrap queries whose SQL text is the same for every value: no `Option` in
//! a changeset, no `eq_any` over a list that is not bound as one array. (A query
//! whose text did vary would still be correct, only cached once per variant,
//! since the cache is keyed by the SQL text.)

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::QueryResult;

/// A query whose prepared statement is kept in the connection's cache.
#[derive(Debug, Clone, Copy)]
pub struct Cached<Q>(pub Q);

impl<Q: QueryId> QueryId for Cached<Q> {
    type QueryId = Cached<Q::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = Q::HAS_STATIC_QUERY_ID;
}

impl<Q: Query> Query for Cached<Q> {
    type SqlType = Q::SqlType;
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Cached<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, _: &Pg) -> QueryResult<bool> {
        Ok(true)
    }
}
