//! Benchmark seeding of the action log (`stoa seed action-logs`, used by
//! `cargo xtask bench`): plain SQL, since a million entries through the API
//! would measure the API. Never used by the server's requests.

use diesel::sql_types::{BigInt, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use uuid::Uuid;

/// Adds `count` action-log entries by `actor` in `tenant` / `organization`,
/// one second apart going back from now, spread over four command kinds and
/// ten resource kinds; then refreshes the table's statistics.
pub async fn action_logs(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Uuid,
    actor: Uuid,
    count: i64,
) -> Result<usize, AppError> {
    let added = diesel::sql_query(
        "INSERT INTO action_logs (tenant_id, organization_id, actor_user_id, command_id, action_label, \
             action_type, resource_kind, resource_id, execution_state, changes_json, changed_fields, \
             primary_changed_field, source_key, created_at, updated_at) \
         SELECT $1, $2, $3, 'bench.items.' || (ARRAY['create','update','delete','assign'])[1 + i % 4], \
             'Bench', (ARRAY['create','edit','delete','assign'])[1 + i % 4], 'bench.kind' || (i % 10), \
             i::text, 'done', jsonb_build_object('name', jsonb_build_object('from', 'a', 'to', 'b')), \
             ARRAY['name'], 'name', 'api', now() - make_interval(secs => i), now() - make_interval(secs => i) \
         FROM generate_series(1, $4) AS i",
    )
    .bind::<SqlUuid, _>(tenant)
    .bind::<SqlUuid, _>(organization)
    .bind::<SqlUuid, _>(actor)
    .bind::<BigInt, _>(count)
    .execute(conn)
    .await?;
    diesel::sql_query("VACUUM ANALYZE action_logs")
        .execute(conn)
        .await?;
    Ok(added)
}
