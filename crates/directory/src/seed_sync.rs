//! Seed sync: a module's per-tenant seed data reaches tenants that existed
//! before the module, once.
//!
//! Provisioning runs every registered [`stoa_acl::TenantSeeder`] for a new
//! tenant and records each in `tenant_seed_ledger` ([`record_tenant`]).
//! [`sync`] (run by `stoa migrate` and `stoa seed sync`) runs, for every live
//! tenant, the seeders its ledger does not list — with the tenant's root
//! organization and no first users — and records them. What a seeder
//! created and an administrator later deleted stays deleted: the ledger
//! says the seeder ran. A seeder that only fits brand-new tenants
//! (`syncs_existing() == false`, stoa-auth's first users) is recorded
//! without running.

use diesel::sql_types::{Array, BigInt, Text, Uuid as SqlUuid};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use stoa_acl::{NewTenant, Registry};
use stoa_core::AppError;
use uuid::Uuid;

/// Serialises syncs across processes (a fixed key, not the grant sync's).
const SYNC_LOCK: i64 = 0x5354_4f41_5345_4544;

/// What a sync did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeedSyncReport {
    /// Seeder runs for existing tenants.
    pub seeded: u64,
    /// Ledger rows written without running (seeders for new tenants only).
    pub recorded: u64,
}

#[derive(QueryableByName)]
struct Pending {
    #[diesel(sql_type = SqlUuid)]
    tenant_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    organization_id: Uuid,
    #[diesel(sql_type = Text)]
    seeder_id: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Live tenants (with a live root organization) whose ledger lacks a seeder
/// of `$1`.
const PENDING_SQL: &str = "
SELECT t.id AS tenant_id, root.id AS organization_id, s.seeder_id
FROM tenants t
CROSS JOIN unnest($1::text[]) AS s(seeder_id)
JOIN LATERAL (
    SELECT o.id FROM organizations o
    WHERE o.tenant_id = t.id AND o.parent_id IS NULL AND o.deleted_at IS NULL
    ORDER BY o.created_at, o.id LIMIT 1
) root ON true
WHERE t.deleted_at IS NULL
  AND NOT EXISTS (
      SELECT 1 FROM tenant_seed_ledger l
      WHERE l.tenant_id = t.id AND l.seeder_id = s.seeder_id
  )
ORDER BY t.created_at, t.id
";

/// Records `seeders` as done for every tenant lacking them (without running).
const RECORD_ALL_SQL: &str = "
INSERT INTO tenant_seed_ledger (tenant_id, seeder_id)
SELECT t.id, s.seeder_id FROM tenants t CROSS JOIN unnest($1::text[]) AS s(seeder_id)
ON CONFLICT DO NOTHING
";

/// Runs the seeders existing tenants lack and records them, in one
/// transaction: a failing seeder rolls the whole sync back (data and ledger
/// rows), so the next run retries it. Idempotent; concurrent syncs queue on
/// a lock.
pub async fn sync(
    conn: &mut AsyncPgConnection,
    registry: &Registry,
) -> Result<SeedSyncReport, AppError> {
    let mut seeders = registry.seeders().to_vec();
    seeders.sort_by_key(|s| s.order());
    let (sync, only_new): (Vec<_>, Vec<_>) = seeders.into_iter().partition(|s| s.syncs_existing());
    let record_ids: Vec<String> = only_new.iter().map(|s| s.id().to_string()).collect();
    let sync_ids: Vec<String> = sync.iter().map(|s| s.id().to_string()).collect();
    conn.transaction(async move |conn| {
        sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<BigInt, _>(SYNC_LOCK)
            .execute(conn)
            .await?;
        let recorded = sql_query(RECORD_ALL_SQL)
            .bind::<Array<Text>, _>(&record_ids)
            .execute(conn)
            .await?;
        let pending: Vec<Pending> = sql_query(PENDING_SQL)
            .bind::<Array<Text>, _>(&sync_ids)
            .load(conn)
            .await?;
        let mut seeded = 0u64;
        // Seeders in their order (a later one may use an earlier one's data).
        for seeder in &sync {
            for row in pending.iter().filter(|p| p.seeder_id == seeder.id()) {
                let tenant = NewTenant {
                    tenant_id: row.tenant_id,
                    organization_id: row.organization_id,
                    users: Vec::new(),
                };
                seeder.seed(conn, registry, &tenant).await?;
                record(conn, row.tenant_id, std::slice::from_ref(&row.seeder_id)).await?;
                seeded += 1;
            }
        }
        Ok(SeedSyncReport {
            seeded,
            recorded: u64::try_from(recorded).unwrap_or(0),
        })
    })
    .await
}

async fn record(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    seeders: &[String],
) -> Result<(), AppError> {
    sql_query(
        "INSERT INTO tenant_seed_ledger (tenant_id, seeder_id) \
         SELECT $1, s FROM unnest($2::text[]) AS s ON CONFLICT DO NOTHING",
    )
    .bind::<SqlUuid, _>(tenant)
    .bind::<Array<Text>, _>(seeders)
    .execute(conn)
    .await?;
    Ok(())
}

/// Records every seeder of `registry` as run for a tenant provisioning just
/// seeded.
pub async fn record_tenant(
    conn: &mut AsyncPgConnection,
    registry: &Registry,
    tenant: Uuid,
) -> Result<(), AppError> {
    let ids: Vec<String> = registry
        .seeders()
        .iter()
        .map(|s| s.id().to_string())
        .collect();
    record(conn, tenant, &ids).await
}

/// How many seeders the ledger lists for `tenant` (tests, diagnostics).
pub async fn recorded(conn: &mut AsyncPgConnection, tenant: Uuid) -> Result<i64, AppError> {
    Ok(
        sql_query("SELECT count(*) AS n FROM tenant_seed_ledger WHERE tenant_id = $1")
            .bind::<SqlUuid, _>(tenant)
            .get_result::<Count>(conn)
            .await?
            .n,
    )
}
