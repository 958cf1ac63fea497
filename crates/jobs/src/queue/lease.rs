//! The end of a job's lease as a SQL expression.

use diesel::pg::data_types::PgInterval;
use diesel::prelude::*;

/// `now() + <lease>`: the end of a lease, on the database clock like the
/// comparisons against it (diesel's `now` is typed `timestamp` and has no
/// `timestamptz` arithmetic). The interval is bound, so the SQL text never
/// changes and statements using it stay in the statement cache.
#[derive(Debug, Clone, Copy)]
pub(super) struct LeaseEnd(pub(super) PgInterval);

impl diesel::query_builder::QueryId for LeaseEnd {
    type QueryId = LeaseEnd;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<GB> diesel::expression::ValidGrouping<GB> for LeaseEnd {
    type IsAggregate = diesel::expression::is_aggregate::Never;
}

impl diesel::expression::Expression for LeaseEnd {
    type SqlType = diesel::sql_types::Timestamptz;
}

impl<QS> diesel::expression::SelectableExpression<QS> for LeaseEnd {}

impl<QS> diesel::expression::AppearsOnTable<QS> for LeaseEnd {}

impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for LeaseEnd {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        out.push_sql("now() + ");
        out.push_bind_param::<diesel::sql_types::Interval, _>(&self.0)
    }
}
