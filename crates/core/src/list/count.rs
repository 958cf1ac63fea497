//! The capped count subquery that travels in the page query's select list.

use diesel::expression::{AppearsOnTable, Expression, SelectableExpression, ValidGrouping};
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::result::QueryResult;
use diesel::sql_types::BigInt;

/// `(SELECT count(*) FROM (<query> LIMIT n) AS stoa_counted)`: the number of
/// rows of `query`, looking at no more than `n` of them (`None`: all). An
/// uncorrelated scalar subquery: Postgres runs it once per statement, so it
/// can sit in the select list of the page query itself.
#[derive(Debug, Clone)]
pub struct CountUpTo<Q> {
    query: Q,
    limit: Option<i64>,
}

impl<Q> CountUpTo<Q> {
    /// Counts the rows of `query`, looking at no more than `limit` (`None`: all).
    pub fn new(query: Q, limit: Option<i64>) -> Self {
        Self { query, limit }
    }
}

impl<Q> Expression for CountUpTo<Q> {
    type SqlType = BigInt;
}

impl<Q, GB> ValidGrouping<GB> for CountUpTo<Q> {
    type IsAggregate = diesel::expression::is_aggregate::Never;
}

impl<Q, QS> AppearsOnTable<QS> for CountUpTo<Q> {}

impl<Q, QS> SelectableExpression<QS> for CountUpTo<Q> {}

impl<Q> QueryId for CountUpTo<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for CountUpTo<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("(SELECT count(*) FROM (");
        self.query.walk_ast(out.reborrow())?;
        if let Some(limit) = &self.limit {
            out.push_sql(" LIMIT ");
            out.push_bind_param::<BigInt, i64>(limit)?;
        }
        out.push_sql(") AS stoa_counted)");
        Ok(())
    }
}
