//! Grant sync: a module's default grants reach tenants that existed before it.
//!
//! The registry says which grants the built-in roles (`superadmin`, `admin`,
//! `employee`) get. Provisioning gives them to a new tenant and records each in
//! `role_grant_ledger`; [`sync`] (run by `stoa migrate` and `stoa grants sync`)
//! gives every existing tenant the defaults its ledger does not list yet and
//! records them too. A grant an administrator revoked later stays in the ledger,
//! so it is never added again. Tenants from before the ledger existed get their
//! missing defaults once (there is no telling a revocation from a grant that
//! never arrived), and everything they hold is recorded from then on.

use diesel::sql_types::{Array, BigInt, Text, Uuid as SqlUuid};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use stoa_acl::Registry;
use stoa_core::AppError;
use uuid::Uuid;

use crate::bootstrap::DEFAULT_ROLES;

/// Serialises syncs across processes (any fixed key; see `pg_advisory_xact_lock`).
const SYNC_LOCK: i64 = 0x5354_4f41_4752_4e54;

/// What a sync did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Grants added to roles.
    pub added: u64,
    /// Grants recorded in the ledger (added, or already held).
    pub recorded: u64,
}

/// `(role name, grant)` pairs the registry gives the built-in roles.
fn defaults(registry: &Registry) -> (Vec<String>, Vec<String>) {
    let mut roles = Vec::new();
    let mut grants = Vec::new();
    for role in DEFAULT_ROLES {
        for grant in registry.role_defaults(role) {
            roles.push(role.to_string());
            grants.push(grant.to_string());
        }
    }
    (roles, grants)
}

#[derive(QueryableByName)]
struct Counts {
    #[diesel(sql_type = BigInt)]
    added: i64,
    #[diesel(sql_type = BigInt)]
    recorded: i64,
}

/// Gives every tenant's built-in roles the registry defaults their ledger does
/// not list, and records them. Only auth's own tables are read (a soft-deleted
/// tenant's live roles are synced too: harmless, and ready if it is restored). Idempotent; concurrent syncs queue on a lock.
pub async fn sync(
    conn: &mut AsyncPgConnection,
    registry: &Registry,
) -> Result<SyncReport, AppError> {
    let (roles, grants) = defaults(registry);
    if roles.is_empty() {
        return Ok(SyncReport::default());
    }
    let counts: Counts = conn
        .transaction(async move |conn| locked_sync(conn, roles, grants).await)
        .await?;
    Ok(SyncReport {
        added: u64::try_from(counts.added).unwrap_or(0),
        recorded: u64::try_from(counts.recorded).unwrap_or(0),
    })
}

/// The sync statement, after taking the lock that serialises syncs.
async fn locked_sync(
    conn: &mut AsyncPgConnection,
    roles: Vec<String>,
    grants: Vec<String>,
) -> Result<Counts, AppError> {
    sql_query("SELECT pg_advisory_xact_lock($1)")
        .bind::<BigInt, _>(SYNC_LOCK)
        .execute(conn)
        .await?;
    Ok(sql_query(SYNC_SQL)
        .bind::<Array<Text>, _>(roles)
        .bind::<Array<Text>, _>(grants)
        .get_result::<Counts>(conn)
        .await?)
}

/// Records the registry defaults of one new tenant's built-in roles as given
/// (provisioning gives them all).
pub async fn record_tenant(
    conn: &mut AsyncPgConnection,
    registry: &Registry,
    tenant: Uuid,
) -> Result<(), AppError> {
    let (roles, grants) = defaults(registry);
    sql_query(
        "INSERT INTO role_grant_ledger (tenant_id, role_name, feature) \
         SELECT $1, w.role_name, w.feature FROM unnest($2::text[], $3::text[]) AS w(role_name, feature) \
         ON CONFLICT DO NOTHING",
    )
    .bind::<SqlUuid, _>(tenant)
    .bind::<Array<Text>, _>(roles)
    .bind::<Array<Text>, _>(grants)
    .execute(conn)
    .await?;
    Ok(())
}

/// Pending = defaults the ledger lacks for a live built-in role; the ones the
/// role does not hold yet are appended to its ACL; all pending are recorded.
const SYNC_SQL: &str = "
WITH wanted AS (
    SELECT * FROM unnest($1::text[], $2::text[]) AS w(role_name, feature)
), pending AS (
    SELECT r.id AS role_id, r.tenant_id, w.role_name, w.feature
    FROM roles r
    JOIN wanted w ON w.role_name = r.name
    WHERE r.deleted_at IS NULL
      AND NOT EXISTS (
          SELECT 1 FROM role_grant_ledger l
          WHERE l.tenant_id = r.tenant_id AND l.role_name = w.role_name AND l.feature = w.feature
      )
), recorded AS (
    INSERT INTO role_grant_ledger (tenant_id, role_name, feature)
    SELECT DISTINCT tenant_id, role_name, feature FROM pending
    ON CONFLICT DO NOTHING
    RETURNING 1
), missing AS (
    SELECT p.role_id, p.tenant_id, array_agg(DISTINCT p.feature) AS features
    FROM pending p
    JOIN role_acls a ON a.role_id = p.role_id AND a.tenant_id = p.tenant_id
    WHERE NOT (p.feature = ANY (a.features))
    GROUP BY p.role_id, p.tenant_id
), added AS (
    UPDATE role_acls a SET features = a.features || m.features
    FROM missing m
    WHERE a.role_id = m.role_id AND a.tenant_id = m.tenant_id
    RETURNING cardinality(m.features) AS n
)
SELECT COALESCE((SELECT sum(n) FROM added), 0)::bigint AS added,
       (SELECT count(*) FROM recorded)::bigint AS recorded
";
