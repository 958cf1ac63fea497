//! Pipeline stages: reads and writes of single records, the list.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::model::{StageRow, StageState};
use crate::schema::customer_pipeline_stages;

#[derive(Insertable, AsChangeset)]
#[diesel(table_name = customer_pipeline_stages)]
#[diesel(treat_none_as_null = true)]
struct StageWrite<'a> {
    id: Uuid,
    tenant_id: Uuid,
    organization_id: Uuid,
    pipeline_id: Uuid,
    label: &'a str,
    position: i32,
    color: Option<&'a str>,
    icon: Option<&'a str>,
    created_at: OffsetDateTime,
}

pub async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<Option<StageRow>> {
    customer_pipeline_stages::table
        .find(id)
        .select(StageRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()
}

/// The stage `id` of `tenant`. Writers that set a deal's stage read it
/// `FOR SHARE`, so a stage deletion waits for them (and then fails on the
/// foreign key) rather than slipping between the check and the write.
pub async fn find(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    id: Uuid,
) -> QueryResult<Option<StageRow>> {
    customer_pipeline_stages::table
        .find(id)
        .filter(customer_pipeline_stages::tenant_id.eq(tenant))
        .select(StageRow::as_select())
        .for_share()
        .first(conn)
        .await
        .optional()
}

pub async fn upsert(conn: &mut AsyncPgConnection, state: &StageState) -> QueryResult<StageRow> {
    let row = StageWrite {
        id: state.id,
        tenant_id: state.tenant_id,
        organization_id: state.organization_id,
        pipeline_id: state.pipeline_id,
        label: &state.label,
        position: state.order,
        color: state.color.as_deref(),
        icon: state.icon.as_deref(),
        created_at: state.created_at,
    };
    diesel::insert_into(customer_pipeline_stages::table)
        .values(&row)
        .on_conflict(customer_pipeline_stages::id)
        .do_update()
        .set(&row)
        .returning(StageRow::as_returning())
        .get_result(conn)
        .await
}

pub async fn delete(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<usize> {
    diesel::delete(customer_pipeline_stages::table.find(id))
        .execute(conn)
        .await
}

/// The stages of `tenant` in the visible organizations, by pipeline and order.
pub async fn list(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    visible: Option<&[Uuid]>,
    pipeline: Option<Uuid>,
) -> QueryResult<Vec<StageRow>> {
    let mut query = customer_pipeline_stages::table
        .filter(customer_pipeline_stages::tenant_id.eq(tenant))
        .into_boxed();
    if let Some(orgs) = visible {
        query = query.filter(customer_pipeline_stages::organization_id.eq_any(orgs.to_vec()));
    }
    if let Some(pipeline) = pipeline {
        query = query.filter(customer_pipeline_stages::pipeline_id.eq(pipeline));
    }
    query
        .order((
            customer_pipeline_stages::pipeline_id,
            customer_pipeline_stages::position,
            customer_pipeline_stages::id,
        ))
        .limit(1000)
        .select(StageRow::as_select())
        .load(conn)
        .await
}
