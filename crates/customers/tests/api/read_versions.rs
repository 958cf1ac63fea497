//! Read versions in shards: two writers of one tenant's deals do not queue on
//! the tenant's `customers.deals` version row until the first commits (the
//! two workers of a bulk job did), and every committed write still moves the
//! sum that kept answers compare.

use diesel_async::RunQueryDsl;
use uuid::Uuid;

use super::support::*;

#[derive(diesel::QueryableByName)]
struct Shard {
    #[diesel(sql_type = diesel::sql_types::SmallInt)]
    shard: i16,
}

async fn shard(conn: &mut diesel_async::AsyncPgConnection) -> i16 {
    diesel::sql_query("SELECT stoa_read_version_shard() AS shard")
        .get_result::<Shard>(conn)
        .await
        .unwrap()
        .shard
}

async fn version(db: &stoa_core::db::Db, tenant: Uuid) -> i64 {
    count(
        db,
        &format!(
            "SELECT COALESCE(sum(version), 0)::bigint AS n FROM read_versions \
             WHERE name IN ('customers.deals', 'customers.deals@{tenant}')"
        ),
    )
    .await
}

/// Renames the tenant's first deal by title in `order` (the two writers
/// take one deal each).
async fn retitle(
    conn: &mut diesel_async::AsyncPgConnection,
    tenant: Uuid,
    title: &str,
    order: &str,
) {
    diesel::sql_query(format!(
        "UPDATE customer_deals SET title = '{title}' WHERE id = \
         (SELECT id FROM customer_deals WHERE tenant_id = '{tenant}' ORDER BY title {order} LIMIT 1)"
    ))
    .execute(conn)
    .await
    .unwrap();
}

#[actix_web::test]
async fn writers_of_one_tenant_do_not_wait_on_its_read_version() {
    let app = start().await;
    let db = &app.db;
    let acme = seed(db, "Acme", "acme.com").await;
    demo_deals(db, &acme, 2).await;
    let before = version(db, acme.tenant_id).await;

    // The first writer keeps its transaction open after its update.
    let mut first = db.conn().await.unwrap();
    let first_shard = shard(&mut first).await;
    diesel::sql_query("BEGIN")
        .execute(&mut *first)
        .await
        .unwrap();
    retitle(&mut first, acme.tenant_id, "First", "ASC").await;

    // A second writer on a connection of another shard (pids are assigned
    // by the server: keep asking the pool until one differs).
    let mut held = Vec::new();
    let mut second = db.conn().await.unwrap();
    while shard(&mut second).await == first_shard {
        held.push(second);
        second = db.conn().await.unwrap();
    }
    diesel::sql_query("SET lock_timeout = '3s'")
        .execute(&mut *second)
        .await
        .unwrap();
    // Before the shards this waited for the first writer's commit and
    // failed with a lock timeout.
    retitle(&mut second, acme.tenant_id, "Second", "DESC").await;
    diesel::sql_query("RESET lock_timeout")
        .execute(&mut *second)
        .await
        .unwrap();
    drop(held);
    let after_second = version(db, acme.tenant_id).await;
    assert!(after_second > before, "a committed write moves the sum");

    diesel::sql_query("COMMIT")
        .execute(&mut *first)
        .await
        .unwrap();
    drop(first);
    drop(second);
    assert!(
        version(db, acme.tenant_id).await > after_second,
        "so does the second commit"
    );
}
