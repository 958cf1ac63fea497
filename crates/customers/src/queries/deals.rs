//! Reads and writes of single deals, and the bulk statements of the jobs.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::money::Money;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::model::{DealRow, DealState};
use crate::schema::customer_deals;

/// A deal's columns as written from a state (every column, `None` as NULL),
/// for inserts and the upsert undo uses.
#[derive(Insertable, AsChangeset)]
#[diesel(table_name = customer_deals)]
#[diesel(treat_none_as_null = true)]
struct DealWrite<'a> {
    id: Uuid,
    tenant_id: Uuid,
    organization_id: Uuid,
    title: &'a str,
    description: Option<&'a str>,
    status: &'a str,
    pipeline_stage: Option<&'a str>,
    pipeline_id: Option<Uuid>,
    pipeline_stage_id: Option<Uuid>,
    value_amount: Option<Money>,
    value_currency: Option<&'a str>,
    probability: Option<i32>,
    expected_close_at: Option<OffsetDateTime>,
    owner_user_id: Option<Uuid>,
    source: Option<&'a str>,
    closure_outcome: Option<&'a str>,
    loss_notes: Option<&'a str>,
    created_at: OffsetDateTime,
}

impl<'a> From<&'a DealState> for DealWrite<'a> {
    fn from(s: &'a DealState) -> Self {
        Self {
            id: s.id,
            tenant_id: s.tenant_id,
            organization_id: s.organization_id,
            title: &s.title,
            description: s.description.as_deref(),
            status: &s.status,
            pipeline_stage: s.pipeline_stage.as_deref(),
            pipeline_id: s.pipeline_id,
            pipeline_stage_id: s.pipeline_stage_id,
            value_amount: s.value_amount,
            value_currency: s.value_currency.as_deref(),
            probability: s.probability,
            expected_close_at: s.expected_close_at,
            owner_user_id: s.owner_user_id,
            source: s.source.as_deref(),
            closure_outcome: s.closure_outcome.as_deref(),
            loss_notes: s.loss_notes.as_deref(),
            created_at: s.created_at,
        }
    }
}

record_statements!(customer_deals, DealRow, DealState, DealWrite::from);

/// What a bulk job's unit checks of each deal before changing it.
#[derive(Clone, Copy, Debug, PartialEq, Queryable, Selectable)]
#[diesel(table_name = customer_deals)]
#[diesel(check_for_backend(diesel::pg::Pg))]
pub struct DealCheck {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub pipeline_stage_id: Option<Uuid>,
    pub owner_user_id: Option<Uuid>,
}

/// The deals among `ids` (any tenant), locked in id order (so two jobs
/// touching the same deals cannot deadlock). Only the columns the checks
/// read: the unit's statement reads the rest itself (a fifth of the
/// columns to send and decode, 250 rows per unit).
pub async fn lock_many(conn: &mut AsyncPgConnection, ids: &[Uuid]) -> QueryResult<Vec<DealCheck>> {
    customer_deals::table
        .filter(customer_deals::id.eq_any(ids))
        .order(customer_deals::id)
        .select(DealCheck::as_select())
        .for_update()
        .load(conn)
        .await
}

/// The deals among `ids`, whole (already locked by [`lock_many`]).
pub async fn rows(conn: &mut AsyncPgConnection, ids: &[Uuid]) -> QueryResult<Vec<DealRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    customer_deals::table
        .filter(customer_deals::id.eq_any(ids))
        .select(DealRow::as_select())
        .load(conn)
        .await
}

/// Sets the owner of `ids` in one statement; the changed rows.
pub async fn set_owner(
    conn: &mut AsyncPgConnection,
    ids: &[Uuid],
    owner: Option<Uuid>,
) -> QueryResult<Vec<DealRow>> {
    diesel::update(customer_deals::table.filter(customer_deals::id.eq_any(ids)))
        .set((
            customer_deals::owner_user_id.eq(owner),
            // What the trigger would set; setting it skips the trigger
            // (migration customers_deals_updated_at_when).
            customer_deals::updated_at.eq(diesel::dsl::now),
        ))
        .returning(DealRow::as_returning())
        .get_results(conn)
        .await
}

/// Moves `ids` to `stage` (its pipeline and label too) in one statement.
pub async fn set_stage(
    conn: &mut AsyncPgConnection,
    ids: &[Uuid],
    stage: Uuid,
    pipeline: Uuid,
    label: &str,
) -> QueryResult<Vec<DealRow>> {
    diesel::update(customer_deals::table.filter(customer_deals::id.eq_any(ids)))
        .set((
            customer_deals::pipeline_stage_id.eq(stage),
            customer_deals::pipeline_id.eq(pipeline),
            customer_deals::pipeline_stage.eq(label),
            customer_deals::updated_at.eq(diesel::dsl::now),
        ))
        .returning(DealRow::as_returning())
        .get_results(conn)
        .await
}
