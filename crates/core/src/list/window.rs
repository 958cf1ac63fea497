//! Choosing a list's page by id so that the statement stays fast when it is
//! prepared once and reused.
//!
//! A list whose rows carry per-row subqueries (names, roles) selects the
//! page's ids first and the columns second, so those subqueries run for the
//! page's rows only, not for every row an `OFFSET` skips. Written as
//! `id IN (<page>)`, Postgres plans a semi join; once the statement is cached
//! (see [`crate::prepared`]) Postgres may switch to a generic plan, where
//! `LIMIT $n` is unknown and guessed as 10% of the table: the semi join then
//! became a hash join over every row (265 ms at 100,000 users instead of 1).
//! [`in_page`] writes `id = ANY(ARRAY(<page>))` instead: the page is computed
//! once (an init plan) and the outer rows are always fetched by primary key,
//! whatever the planner guesses about the limit.

use diesel::expression::{AppearsOnTable, Expression, SelectableExpression, ValidGrouping};
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::result::QueryResult;
use diesel::sql_types::Bool;

/// `column = ANY(ARRAY(page))`; `page` selects one column of `column`'s type.
#[derive(Debug, Clone)]
pub struct InPage<C, Q> {
    column: C,
    page: Q,
}

/// Keeps the rows whose `column` is among those `page` selects (see the module docs).
pub fn in_page<C, Q>(column: C, page: Q) -> InPage<C, Q> {
    InPage { column, page }
}

impl<C, Q> Expression for InPage<C, Q> {
    type SqlType = Bool;
}

impl<C, Q, GB> ValidGrouping<GB> for InPage<C, Q> {
    type IsAggregate = diesel::expression::is_aggregate::Never;
}

impl<C: AppearsOnTable<QS>, Q, QS> AppearsOnTable<QS> for InPage<C, Q> {}

impl<C: SelectableExpression<QS>, Q, QS> SelectableExpression<QS> for InPage<C, Q> {}

impl<C, Q> QueryId for InPage<C, Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<C: QueryFragment<Pg>, Q: QueryFragment<Pg>> QueryFragment<Pg> for InPage<C, Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.column.walk_ast(out.reborrow())?;
        out.push_sql(" = ANY(ARRAY(");
        self.page.walk_ast(out.reborrow())?;
        out.push_sql("))");
        Ok(())
    }
}
