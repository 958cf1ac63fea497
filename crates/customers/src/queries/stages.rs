//! Pipeline stages: reads and writes of single records, the list.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::http::read_cache::{ReadDeps, versions};
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

// `find` reads the stage `FOR SHARE`: writers that set a deal's stage read
// it so, and a stage deletion then waits for them (and fails on the foreign
// key) rather than slipping between the check and the write.
impl<'a> From<&'a StageState> for StageWrite<'a> {
    fn from(state: &'a StageState) -> Self {
        Self {
            id: state.id,
            tenant_id: state.tenant_id,
            organization_id: state.organization_id,
            pipeline_id: state.pipeline_id,
            label: &state.label,
            position: state.order,
            color: state.color.as_deref(),
            icon: state.icon.as_deref(),
            created_at: state.created_at,
        }
    }
}

record_statements!(customer_pipeline_stages, StageRow, StageState, StageWrite::from; for_share);

/// The stages of `tenant` in the visible organizations, by pipeline and order.
pub async fn list(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    visible: Option<&[Uuid]>,
    pipeline: Option<Uuid>,
    deps: ReadDeps,
) -> QueryResult<Vec<(StageRow, Vec<i64>)>> {
    let mut query = visible_records!(customer_pipeline_stages, tenant, visible);
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
        .select((StageRow::as_select(), versions(deps)))
        .load(conn)
        .await
}
