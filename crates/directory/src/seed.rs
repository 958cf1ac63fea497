//! Benchmark seeding and measurements of the directory (`stoa seed users`,
//! `stoa seed action-logs`, used by `cargo xtask bench`). Never used by the
//! server's requests.

use std::time::Instant;

use diesel::sql_types::{BigInt, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use stoa_core::command::{self, Actor};
use stoa_core::db::Db;
use uuid::Uuid;

use crate::commands::UpdateOrganizationCommand;
use crate::dto::UpdateOrganization;
use crate::service::PgDirectory;

#[derive(diesel::QueryableByName)]
struct Branch {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

/// Adds `count` child organizations ("Bench branch 1", ...) under `parent`, a
/// root organization of `tenant`; returns their ids ordered by name.
pub async fn bench_branches(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    parent: Uuid,
    count: i64,
) -> Result<Vec<Uuid>, AppError> {
    let branches: Vec<Branch> = diesel::sql_query(
        "WITH added AS ( \
             INSERT INTO organizations (tenant_id, name, slug, root_id, parent_id, depth, ancestor_ids) \
             SELECT $1, 'Bench branch ' || i, 'bench-branch-' || i, $2, $2, 1, ARRAY[$2] \
             FROM generate_series(1, $3) AS i RETURNING id, name) \
         SELECT id FROM added ORDER BY name",
    )
    .bind::<SqlUuid, _>(tenant)
    .bind::<SqlUuid, _>(parent)
    .bind::<BigInt, _>(count)
    .load(conn)
    .await?;
    diesel::sql_query("VACUUM ANALYZE organizations")
        .execute(conn)
        .await?;
    Ok(branches.into_iter().map(|b| b.id).collect())
}

/// Milliseconds per organization rename, first as a bare write, then as a
/// command through the bus (action log + outbox in the same transaction),
/// `mutations` times each: the command bus's cost per mutation.
pub async fn command_cost(
    db: &Db,
    actor: &Actor,
    tenant: Uuid,
    organization: Uuid,
    mutations: u32,
) -> Result<(f64, f64), AppError> {
    let mutations = mutations.max(1);
    let update = |n: u32| UpdateOrganization {
        id: organization,
        tenant_id: None,
        name: Some(format!("Acme Corp {n}")),
        slug: None,
        logo_url: None,
        logo_preserve_aspect_ratio: None,
        is_active: None,
        parent_id: None,
        child_ids: None,
    };
    let started = Instant::now();
    for n in 0..mutations {
        let input = update(n);
        db.transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                PgDirectory
                    .update_organization(conn, tenant, &input)
                    .await
                    .map_err(AppError::from)
            })
        })
        .await?;
    }
    let bare = started.elapsed().as_secs_f64() * 1000.0 / f64::from(mutations);
    let started = Instant::now();
    for n in 0..mutations {
        let input = update(n + mutations);
        let actor = actor.clone();
        db.transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                command::execute(conn, &actor, UpdateOrganizationCommand { tenant, input })
                    .await
                    .map(|_| ())
            })
        })
        .await?;
    }
    let bus = started.elapsed().as_secs_f64() * 1000.0 / f64::from(mutations);
    Ok((bare, bus))
}
