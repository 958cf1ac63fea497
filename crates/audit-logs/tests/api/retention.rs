//! Access-log retention: the recurring `audit_logs.prune_access` job deletes
//! reads of users and roles after 7 days and every other kind after 8 hours
//! (the reference's defaults), and nothing younger.

use std::time::Duration;

use diesel_async::RunQueryDsl;
use stoa_audit_logs::retention::{RetentionConfig, handlers};
use stoa_core::command::access::retention::{Retention, purge_expired};
use stoa_jobs::{WorkerConfig, Workers};

use super::support::*;

/// One access-log read of `kind` by `actor`, `age` old.
async fn read(db: &stoa_core::db::Db, acme: &Tenant, kind: &str, age: &str, id: &str) {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(format!(
        "INSERT INTO access_reads (tenant_id, organization_id, actor_user_id, resource_kind, \
         resource_ids, entry_ids, access_type, fields, created_at) \
         VALUES ('{}', '{}', '{}', '{kind}', ARRAY['{id}'], ARRAY[gen_random_uuid()], 'read', \
         ARRAY['id'], now() - interval '{age}')",
        acme.tenant_id, acme.organization_id, acme.admin
    ))
    .execute(&mut *conn)
    .await
    .unwrap();
}

/// The resource ids of every access-log entry left, straight from the view.
async fn left(db: &stoa_core::db::Db) -> Vec<String> {
    #[derive(diesel::QueryableByName)]
    struct Left {
        #[diesel(sql_type = diesel::sql_types::Text)]
        resource_id: String,
    }
    let mut conn = db.conn().await.unwrap();
    let left: Vec<Left> = diesel::sql_query("SELECT resource_id FROM access_logs")
        .load(&mut *conn)
        .await
        .unwrap();
    left.into_iter().map(|l| l.resource_id).collect()
}

/// The resource ids of the admin's entries the access-log API lists.
async fn listed<S: stoa_testkit::AppService>(
    app: &stoa_testkit::TestApp<S>,
    token: &str,
) -> Vec<String> {
    let res = app
        .send(get("/api/audit_logs/audit-logs/access?pageSize=200", token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let mut ids: Vec<String> = res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["resourceId"].as_str().map(str::to_owned))
        .collect();
    ids.sort();
    ids
}

#[actix_web::test]
async fn the_recurring_purge_deletes_what_outlived_its_kind_and_keeps_the_rest() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    read(&app.db, &acme, "auth.user", "8 days", "user-expired").await;
    read(&app.db, &acme, "auth.user", "6 days", "user-kept").await;
    read(
        &app.db,
        &acme,
        "auth.role",
        "7 days 1 minute",
        "role-expired",
    )
    .await;
    read(
        &app.db,
        &acme,
        "directory.tenant",
        "9 hours",
        "tenant-expired",
    )
    .await;
    read(&app.db, &acme, "directory.tenant", "7 hours", "tenant-kept").await;
    assert_eq!(listed(&app, &admin).await.len(), 5);

    let config = WorkerConfig {
        count: 1,
        ..WorkerConfig::default()
    };
    let workers = Workers::new(app.db.clone(), handlers(), config)
        .with_schedules(vec![RetentionConfig::default().schedule()]);
    workers.register_schedules().await.unwrap();
    assert_eq!(workers.enqueue_due().await.unwrap(), 1);
    while workers.run_one().await.unwrap() {}

    assert_eq!(listed(&app, &admin).await, ["tenant-kept", "user-kept"]);
    // The run is done, and the next is a period away.
    let mut conn = app.db.conn().await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Run {
        #[diesel(sql_type = diesel::sql_types::Text)]
        status: String,
    }
    let runs: Vec<Run> = diesel::sql_query(
        "SELECT status FROM job_queue WHERE schedule = 'audit_logs.prune_access'",
    )
    .load(&mut *conn)
    .await
    .unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "done");
    assert_eq!(workers.enqueue_due().await.unwrap(), 0);
}

#[actix_web::test]
async fn a_backlog_is_deleted_in_batches_until_none_is_left() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    for i in 0..5 {
        read(
            &app.db,
            &acme,
            "devices.user_device",
            "2 hours",
            &format!("d{i}"),
        )
        .await;
        read(&app.db, &acme, "auth.user", "2 days", &format!("u{i}")).await;
    }
    read(&app.db, &acme, "devices.user_device", "1 minute", "fresh").await;
    let retention = Retention {
        core_kinds: vec!["auth.user".into()],
        core_age: Duration::from_secs(86_400),
        other_age: Duration::from_secs(3_600),
    };
    let mut conn = app.db.conn().await.unwrap();
    // Batches of two: each kind takes several statements.
    assert_eq!(purge_expired(&mut conn, &retention, 2).await.unwrap(), 10);
    assert_eq!(purge_expired(&mut conn, &retention, 2).await.unwrap(), 0);
    assert_eq!(left(&app.db).await, ["fresh"]);
}

#[actix_web::test]
async fn a_row_is_kept_while_any_of_its_repeated_reads_is_younger_than_the_age() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let retention = Retention {
        core_kinds: vec![],
        core_age: Duration::from_secs(3_600),
        other_age: Duration::from_secs(3_600),
    };
    let (tenant, admin) = (acme.tenant_id, acme.admin);
    // One transaction: `now()` is the same for the rows and the purge.
    let deleted = app
        .db
        .transaction::<_, stoa_core::AppError, _>(move |conn| {
            let retention = retention.clone();
            Box::pin(async move {
                // A row 8 ms past the age whose repeat is 1 ms short of it,
                // and a row whose every read is past it.
                for (id, first, repeat) in [("kept", 8, 9), ("gone", 12, 10)] {
                    diesel::sql_query(format!(
                        "INSERT INTO access_reads (tenant_id, actor_user_id, resource_kind, \
                         resource_ids, entry_ids, access_type, created_at, repeat_bases, \
                         repeat_ats) \
                         SELECT '{tenant}', '{admin}', 'devices.user_device', ARRAY['{id}'], \
                         ARRAY[gen_random_uuid()], 'read', t, ARRAY[gen_random_uuid()], \
                         ARRAY[t + interval '{repeat} ms'] \
                         FROM (SELECT now() - interval '1 hour {first} ms' AS t) AS at"
                    ))
                    .execute(conn)
                    .await?;
                }
                Ok(purge_expired(conn, &retention, 100).await?)
            })
        })
        .await
        .unwrap();
    assert_eq!(deleted, 1);
    assert_eq!(
        left(&app.db).await,
        ["kept", "kept"],
        "both reads of the kept row"
    );
}
