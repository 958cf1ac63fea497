//! Pipelines: reads and writes of single records, the list.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::http::read_cache::{ReadDeps, versions};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::model::{PipelineRow, PipelineState};
use crate::schema::customer_pipelines;

#[derive(Insertable, AsChangeset)]
#[diesel(table_name = customer_pipelines)]
struct PipelineWrite<'a> {
    id: Uuid,
    tenant_id: Uuid,
    organization_id: Uuid,
    name: &'a str,
    is_default: bool,
    created_at: OffsetDateTime,
}

impl<'a> From<&'a PipelineState> for PipelineWrite<'a> {
    fn from(state: &'a PipelineState) -> Self {
        Self {
            id: state.id,
            tenant_id: state.tenant_id,
            organization_id: state.organization_id,
            name: &state.name,
            is_default: state.is_default,
            created_at: state.created_at,
        }
    }
}

record_statements!(
    customer_pipelines,
    PipelineRow,
    PipelineState,
    PipelineWrite::from
);

/// Waits for any other transaction choosing a default pipeline of
/// (`tenant`, `organization`) and makes later ones wait for this one, until
/// it ends: two concurrent writes making a pipeline the default take turns,
/// so the second finds (and unsets) the first's default.
pub async fn lock_default_scope(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Uuid,
) -> QueryResult<()> {
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
        .bind::<diesel::sql_types::Text, _>(format!(
            "customers.default_pipeline:{tenant}:{organization}"
        ))
        .execute(conn)
        .await
        .map(|_| ())
}

/// The default pipelines of (`tenant`, `organization`) other than `except`,
/// locked (at most one while the one-default index stands).
pub async fn lock_defaults(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Uuid,
    except: Uuid,
) -> QueryResult<Vec<PipelineRow>> {
    customer_pipelines::table
        .filter(customer_pipelines::tenant_id.eq(tenant))
        .filter(customer_pipelines::organization_id.eq(organization))
        .filter(customer_pipelines::is_default.eq(true))
        .filter(customer_pipelines::id.ne(except))
        .order(customer_pipelines::id)
        .select(PipelineRow::as_select())
        .for_update()
        .load(conn)
        .await
}

/// The pipelines of `tenant` in the visible organizations (`None`: all),
/// oldest first.
pub async fn list(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    visible: Option<&[Uuid]>,
    is_default: Option<bool>,
    deps: ReadDeps,
) -> QueryResult<Vec<(PipelineRow, Vec<i64>)>> {
    let mut query = visible_records!(customer_pipelines, tenant, visible);
    if let Some(flag) = is_default {
        query = query.filter(customer_pipelines::is_default.eq(flag));
    }
    query
        .order((customer_pipelines::created_at, customer_pipelines::id))
        .limit(1000)
        .select((PipelineRow::as_select(), versions(deps)))
        .load(conn)
        .await
}
