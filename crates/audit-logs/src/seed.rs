//! Benchmark seeding of the action log (`stoa seed action-logs`, used by
//! `cargo xtask bench`): plain SQL, since a million entries through the API
//! would measure the API. Never used by the server's requests.

use std::time::Instant;

use diesel::sql_types::{BigInt, Uuid as SqlUuid};
use diesel_async::{AnsiTransactionManager, AsyncPgConnection, RunQueryDsl, TransactionManager};
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_core::AppError;
use stoa_core::command::{self, Actor, Command, Event, LogEntry};
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

/// A command whose entry is prepared in advance: measures recording only.
struct Prepared(LogEntry);

impl Command for Prepared {
    type Output = ();
    fn id(&self) -> &'static str {
        "bench.items.update"
    }
    fn execute<'a>(
        self,
        _: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move { Ok(((), self.0)) })
    }
}

/// `n` update entries, each with snapshots, a diff, an undo payload and one event.
fn bench_entries(n: usize) -> Vec<LogEntry> {
    (0..n)
        .map(|i| {
            let before = json!({"name": format!("Item {i}"), "price": i, "tags": ["a"]});
            let after = json!({"name": format!("Item {i}"), "price": i + 1, "tags": ["a", "b"]});
            LogEntry {
                action_label: Some("Update item".into()),
                resource_kind: Some("bench.item".into()),
                resource_id: Some(i.to_string()),
                undo: Some(json!({"id": i, "before": before, "after": after})),
                snapshot_before: Some(before),
                snapshot_after: Some(after),
                events: vec![Event {
                    name: "bench.items.updated".into(),
                    payload: json!({"id": i}),
                }],
                ..Default::default()
            }
        })
        .collect()
}

/// Milliseconds to record `count` entries one by one through
/// `command::execute`, then as one `command::record_batch`, each inside a
/// transaction that is rolled back (nothing stays). A first round of 100
/// prepares both paths' statements.
pub async fn record_timings(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    count: usize,
) -> Result<(f64, f64), AppError> {
    let mut timings = (0.0, 0.0);
    for n in [100, count] {
        AnsiTransactionManager::begin_transaction(conn).await?;
        let started = Instant::now();
        for entry in bench_entries(n) {
            command::execute(conn, actor, Prepared(entry)).await?;
        }
        let one_by_one = started.elapsed().as_secs_f64() * 1000.0;
        AnsiTransactionManager::rollback_transaction(conn).await?;
        let batch: Vec<_> = bench_entries(n)
            .into_iter()
            .map(|e| ("bench.items.update", e))
            .collect();
        AnsiTransactionManager::begin_transaction(conn).await?;
        let started = Instant::now();
        command::record_batch(conn, actor, batch).await?;
        let batched = started.elapsed().as_secs_f64() * 1000.0;
        AnsiTransactionManager::rollback_transaction(conn).await?;
        timings = (one_by_one, batched);
    }
    Ok(timings)
}
