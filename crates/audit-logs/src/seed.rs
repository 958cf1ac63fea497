//! Benchmark seeding of the action log (`stoa seed action-logs`, used by
//! `cargo xtask bench`): plain SQL, since ten million entries through the
//! API would measure the API. Never used by the server's requests.

use std::time::Instant;

use diesel::sql_types::{BigInt, Double, Uuid as SqlUuid};
use diesel_async::{AnsiTransactionManager, AsyncPgConnection, RunQueryDsl, TransactionManager};
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_core::AppError;
use stoa_core::command::{self, Actor, Command, Event, LogEntry};
use uuid::Uuid;

/// Rows one seeding statement inserts: each chunk is its own transaction.
const SEED_CHUNK: i64 = 500_000;

/// Adds `count` action-log entries by `actor` in `tenant` / `organization`,
/// going back from now: one second apart when `months` is 0, else evenly
/// spread over the last `months` months (10,000,000 over 12 months: one
/// every 3.2 s, in twelve monthly partitions and the current one). They are
/// spread over four command kinds and ten resource kinds; the monthly
/// partitions they need are created first, the rows go in by chunks of
/// [`SEED_CHUNK`] (`INSERT ... SELECT ... generate_series`), then the
/// table's statistics are refreshed.
pub async fn action_logs(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organization: Uuid,
    actor: Uuid,
    count: i64,
    months: u32,
) -> Result<usize, AppError> {
    let count = count.max(0);
    let spacing = if months == 0 || count == 0 {
        1.0
    } else {
        f64::from(months) * 30.44 * 86_400.0 / count as f64
    };
    diesel::sql_query(
        "SELECT stoa_log_partitions_ensure('action_logs',              now() - make_interval(secs => $1 * $2), now() + interval '1 month')",
    )
    .bind::<BigInt, _>(count)
    .bind::<Double, _>(spacing)
    .execute(conn)
    .await?;
    let mut added = 0;
    let mut from = 1;
    while from <= count {
        let to = (from + SEED_CHUNK - 1).min(count);
        added += diesel::sql_query(
            "INSERT INTO action_logs (tenant_id, organization_id, actor_user_id, command_id, action_label, \
                 action_type, resource_kind, resource_id, execution_state, changes_json, changed_fields, \
                 primary_changed_field, source_key, created_at, updated_at) \
             SELECT $1, $2, $3, 'bench.items.' || (ARRAY['create','update','delete','assign'])[1 + i % 4], \
                 'Bench', (ARRAY['create','edit','delete','assign'])[1 + i % 4], 'bench.kind' || (i % 10), \
                 i::text, 'done', jsonb_build_object('name', jsonb_build_object('from', 'a', 'to', 'b')), \
                 ARRAY['name'], 'name', 'api', at, at \
             FROM generate_series($4, $5) AS i, \
                 LATERAL (SELECT now() - make_interval(secs => i * $6) AS at) AS t",
        )
        .bind::<SqlUuid, _>(tenant)
        .bind::<SqlUuid, _>(organization)
        .bind::<SqlUuid, _>(actor)
        .bind::<BigInt, _>(from)
        .bind::<BigInt, _>(to)
        .bind::<Double, _>(spacing)
        .execute(conn)
        .await?;
        from = to + 1;
    }
    // As the tables' owner: the pool's role (`stoa_bypass`) owns nothing, and
    // Postgres skips a VACUUM or ANALYZE of a table its role does not own with
    // only a warning. That left the bench's 10M entries without statistics
    // (each month estimated at one row), so the list sorted all 500,000
    // matches for every page (issue 52: 1.7 s; 1 ms analyzed), until
    // autovacuum reached the months one by one during the run.
    diesel::sql_query("RESET ROLE").execute(conn).await?;
    let settled = diesel::sql_query("VACUUM ANALYZE action_logs")
        .execute(conn)
        .await;
    diesel::sql_query(format!("SET ROLE {}", stoa_core::rls::BYPASS_ROLE))
        .execute(conn)
        .await?;
    settled?;
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
