//! Bulk seeding for benchmarks (`stoa seed users`, used by `cargo xtask
//! bench`): plain SQL, since seeding 100,000 rows through the API would
//! measure the API. Never used by the server's requests.

use diesel::sql_types::{Array, BigInt, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use uuid::Uuid;

/// The demo super admin (`superadmin@acme.com`, made by `stoa init --demo`):
/// where benchmark data goes.
#[derive(Clone, Copy, Debug, diesel::QueryableByName)]
pub struct DemoAdmin {
    #[diesel(sql_type = SqlUuid)]
    pub tenant_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    pub organization_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    pub user_id: Uuid,
}

/// The demo super admin; 400 with a hint when `stoa init --demo` has not run.
pub async fn demo_admin(conn: &mut AsyncPgConnection) -> Result<DemoAdmin, AppError> {
    let found: Option<DemoAdmin> = diesel::sql_query(
        "SELECT tenant_id, organization_id, id AS user_id FROM users \
         WHERE email = 'superadmin@acme.com' AND deleted_at IS NULL \
           AND tenant_id IS NOT NULL AND organization_id IS NOT NULL LIMIT 1",
    )
    .get_result(conn)
    .await
    .map(Some)
    .or_else(|e| match e {
        diesel::result::Error::NotFound => Ok(None),
        other => Err(other),
    })?;
    found.ok_or_else(|| AppError::bad_request("run `stoa init --demo` first"))
}

/// Adds `count` confirmed users to `tenant` (`user000001@bench.acme.com`, ...),
/// spread over `organizations` in turn, each holding the tenant's `employee`
/// role. Returns the number of users added.
pub async fn bench_users(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    organizations: &[Uuid],
    count: i64,
) -> Result<usize, AppError> {
    if organizations.is_empty() {
        return Err(AppError::bad_request("no organizations to place users in"));
    }
    let added = diesel::sql_query(
        "INSERT INTO users (tenant_id, organization_id, email, name, is_confirmed) \
         SELECT $1, ($2::uuid[])[1 + i % cardinality($2::uuid[])], \
             'user' || lpad(i::text, 6, '0') || '@bench.acme.com', 'Bench User ' || i, true \
         FROM generate_series(1, $3) AS i",
    )
    .bind::<SqlUuid, _>(tenant)
    .bind::<Array<SqlUuid>, _>(organizations)
    .bind::<BigInt, _>(count)
    .execute(conn)
    .await?;
    diesel::sql_query(
        "INSERT INTO user_roles (user_id, role_id) \
         SELECT u.id, r.id FROM users u JOIN roles r ON r.tenant_id = u.tenant_id AND r.name = 'employee' \
         WHERE u.tenant_id = $1 AND u.email LIKE '%@bench.acme.com' \
         ON CONFLICT DO NOTHING",
    )
    .bind::<SqlUuid, _>(tenant)
    .execute(conn)
    .await?;
    // The small ACL tables too: never analyzed, the planner guesses them at
    // thousands of rows and hashes every membership to find super admins.
    for table in ["users", "user_roles", "roles", "role_acls", "user_acls"] {
        diesel::sql_query(format!("VACUUM ANALYZE {table}"))
            .execute(conn)
            .await?;
    }
    Ok(added)
}

#[derive(diesel::QueryableByName)]
struct UserId {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

/// Up to `limit` live users of `tenant`, oldest first: the owners demo
/// records of other modules are spread over (`stoa seed demo`).
pub async fn tenant_users(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    limit: i64,
) -> Result<Vec<Uuid>, AppError> {
    let rows: Vec<UserId> = diesel::sql_query(
        "SELECT id FROM users WHERE tenant_id = $1 AND deleted_at IS NULL \
         ORDER BY created_at, id LIMIT $2",
    )
    .bind::<SqlUuid, _>(tenant)
    .bind::<BigInt, _>(limit)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}
